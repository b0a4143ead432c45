"""Issue 35 item 5: the docs run as written, tried as a new user tries them.

Every fenced ``bash`` / ``sh`` / ``python`` block of README.md, docs/*.md and the metric card
(``support.doc_blocks``) runs, in page order, from a folder that starts empty, one folder per page
(a page's blocks share it, as a reader's terminal does), with the wheel built from this tree
installed by pip into a fresh venv (``support.wheel.installed_by_pip``): offline, no API key, no
``PYTHONPATH``, private caches, the venv's commands first on ``PATH``. A ``pip install`` of
odu-bench in a block installs that wheel with the extras it names. A block that cannot run here
(it needs a GPU, a remote API, a server, the Hub, a checkout's tools) carries a marker in the page's
source, ``<!-- not run: REASON -->`` right above its fence, and only such a block is left out; any
other block that exits non-zero fails its page's test, naming the page, the line and the output.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.doc_blocks import Block, page_blocks, with_wheel_installs
from support.wheel import REPO, WheelEnv, installed_by_pip, user_env

#: The pages a reader copies commands from.
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "odu_metric" / "README.md"]
#: Seconds one block may take (the slowest, ``odu-bench selftest``, takes about a minute).
BLOCK_TIMEOUT_S = 900
#: Keys a reader of the offline blocks has not set (a block that needs one is marked).
KEYS = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "DASHSCOPE_API_KEY", "ARK_API_KEY", "HF_TOKEN")


def runnable_pages() -> list[Path]:
    return [page for page in PAGES if any(b.not_run is None for b in page_blocks(page))]


def _page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def test_every_page_parses_its_markers_above_code_blocks_with_reasons() -> None:
    blocks = [block for page in PAGES for block in page_blocks(page)]
    marked = [b for b in blocks if b.not_run is not None]
    assert len(blocks) > len(marked) >= 1 and all(b.not_run for b in marked)


def test_a_marker_is_read_only_right_above_its_fence(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- not run: needs a model server -->\n<!-- route: x -->\n```sh\nserve\n```\n"
        "```text\nout\n```\n<!-- a note -->\n```bash\nodu-bench eval --sample\n```\n```python\nprint(1)\n```\n",
        encoding="utf-8",
    )
    assert [(b.line, b.language, b.not_run) for b in page_blocks(page)] == [
        (3, "sh", "needs a model server"),
        (10, "bash", None),
        (13, "python", None),
    ]
    for text, error in (
        ("<!-- not run: far away -->\n\n```bash\nx\n```\n", "above no code block"),
        ("<!-- not run:  -->\n```bash\nx\n```\n", "gives no reason"),
        ("<!-- not run: why -->\n```text\nx\n```\n", "above a text block"),
        ("<!-- not run: why -->\ntext\n", "above no code block"),
        ("```bash\nx\n", "never closed"),
    ):
        page.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=error):
            page_blocks(page)


def test_a_pip_install_of_odu_bench_installs_the_built_wheel(tmp_path: Path) -> None:
    wheel, pip = tmp_path / "odu_bench-0.1.0-py3-none-any.whl", ["py", "-m", "pip"]
    script = 'pip install -e . && odu-bench eval --sample\npip install -e ".[test,torch]"\n'
    script += 'pip install "odu_bench-0.1.0-py3-none-any.whl[selftest]"\n'
    assert with_wheel_installs(script, pip, wheel).splitlines() == [
        f"py -m pip install -q --no-index {wheel} && odu-bench eval --sample",
        f"py -m pip install -q --no-index '{wheel}[test,torch]'",
        f"py -m pip install -q --no-index '{wheel}[selftest]'",
    ]
    with pytest.raises(ValueError, match="reaches a package index"):
        with_wheel_installs("pip install git+https://github.com/MoonshotAI/Kimi-Audio\n", pip, wheel)


@pytest.fixture(scope="module")
def reader(wheel_env: WheelEnv) -> tuple[WheelEnv, dict[str, str]]:
    """The wheel installed by pip into a fresh venv (its dependencies' commands beside its own, as
    pip installs them with the dependencies), and a reader's environment: offline, private caches
    and home, no key, the venv's ``bin`` first on ``PATH`` and no other Python environment's."""
    venv, installed = installed_by_pip(wheel_env, "docs-run", wheel_env.wheel.name)
    assert installed.returncode == 0, installed.stderr[-3000:]
    _dependency_commands(venv.python.parent)
    environ, home = user_env(venv, "reader")
    ours = [str(Path(sys.prefix) / "bin")] if sys.prefix != sys.base_prefix else []  # the tests' own venv
    path = [str(venv.python.parent), *(p for p in environ["PATH"].split(os.pathsep) if p not in ours)]
    (home.parent / "home").mkdir()
    environ |= {"PATH": os.pathsep.join(path), "HOME": str(home.parent / "home"), "MPLBACKEND": "Agg"}
    for key in KEYS:
        environ.pop(key, None)
    return venv, environ


def _dependency_commands(bin_dir: Path) -> None:
    """A launcher in ``bin_dir`` for each command of the installed distributions (``lm_eval`` ...)
    that it lacks, running that venv's Python, as pip writes them (pip's own left out: blocks
    install through :func:`support.doc_blocks.with_wheel_installs`)."""
    python = bin_dir / "python"
    for entry in importlib.metadata.entry_points(group="console_scripts"):
        target = bin_dir / entry.name
        if target.exists() or entry.name.startswith("pip") or "/" in entry.name:
            continue
        head, _, rest = entry.attr.partition(".")
        call = f"{head}.{rest}" if rest else head
        target.write_text(
            f"#!{python}\nimport sys\nfrom {entry.module} import {head}\nsys.exit({call}())\n", encoding="utf-8"
        )
        target.chmod(0o755)


def run_block(block: Block, venv: WheelEnv, environ: dict[str, str], folder: Path) -> subprocess.CompletedProcess[str]:
    """``block`` run in ``folder``: a shell block by bash (stopping at its first failing command), a
    Python block by the venv's Python reading it from stdin."""
    if block.kind == "python":
        args, stdin = [str(venv.python), "-"], block.text
    else:
        pip = [sys.executable, "-m", "pip", "--python", str(venv.python)]
        script = with_wheel_installs(block.text, pip, venv.wheel)
        args, stdin = [shutil.which("bash") or "bash", "-e", "-o", "pipefail", "-c", script], ""
    return subprocess.run(
        args, input=stdin, cwd=folder, env=environ, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S
    )


@pytest.mark.parametrize("page", runnable_pages(), ids=_page_id)
def test_the_page_runs_as_written(page: Path, reader: tuple[WheelEnv, dict[str, str]]) -> None:
    venv, environ = reader
    folder = venv.home / "pages" / _page_id(page).replace("/", "__")
    folder.mkdir(parents=True)
    for block in page_blocks(page):
        if block.not_run is not None:
            continue
        started = time.perf_counter()
        proc = run_block(block, venv, environ, folder)
        print(f"{block.where(REPO)} ({block.language}): exit {proc.returncode}, {time.perf_counter() - started:.1f} s")
        if proc.returncode != 0:
            pytest.fail(
                f"{block.where(REPO)}: the {block.language} block exits {proc.returncode} "
                f"(if it cannot run here, mark it <!-- not run: REASON -->):\n{block.text}"
                f"--- stdout ---\n{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}"
            )
