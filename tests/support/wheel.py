"""The built wheel, installed (not editable) into a fresh virtual environment, and a user's empty
folder to run it in: what the door tests meet as a new user does (tests/doors/).

The wheel is built once per test session (``pip wheel --no-deps``); the venv gets only the wheel
(``--no-deps``) and reaches the dependencies already installed through a path entry to this
environment's site-packages (a ``.pth`` line: the editable install's finder there is never activated).
"""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.process import fresh_env

REPO = Path(__file__).resolve().parents[2]
#: What the wheel build reads from the tree (everything else stays behind).
BUILD_INPUTS = (
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "MANIFEST.in",
    "README.md",
    "odu",
    "odu_metric",
    "lm_eval_tasks",
    "lmms_eval_tasks",
    "odu_bench.py",
    "odu_lm_eval_bridge.py",
    "odu_lm_eval_bridge.pth",
)
SECRET = "sk-acceptance-5e4d3c2b1a"


@dataclass(frozen=True)
class WheelEnv:
    python: Path
    site_packages: Path
    home: Path  # an empty folder per command is made under it
    wheel: Path  # the wheel built from this tree


def _build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for name in BUILD_INPUTS:
        path = REPO / name
        (shutil.copytree(path, src / name, ignore=ignore) if path.is_dir() else shutil.copy2(path, src / name))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [wheel] = (tmp / "dist").glob("odu_bench-*.whl")
    return wheel


def _venv(folder: Path) -> tuple[Path, str]:
    """A new venv without pip at ``folder``: its python and its purelib folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=300)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return python, purelib


@pytest.fixture(scope="session")
def wheel_env(tmp_path_factory: pytest.TempPathFactory) -> WheelEnv:
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(tmp)
    python, purelib = _venv(tmp / "venv")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", purelib, str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    # the dependencies: this environment's site-packages, after the venv's own (its .pth files are not run)
    Path(purelib, "zz_test_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    return WheelEnv(python, Path(purelib), tmp, wheel)


def user_env(env: WheelEnv, name: str, **extra: str) -> tuple[dict[str, str], Path]:
    """A user's environment (offline, private caches, nothing of the repository on the path: no
    ``PYTHONPATH``, no ``VIRTUAL_ENV``, no API key) and an empty folder to run in."""
    folder = env.home / name
    (folder / "empty").mkdir(parents=True)
    environ = fresh_env(folder, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    for key in ("PYTHONPATH", "VIRTUAL_ENV", "OPENAI_API_KEY"):
        environ.pop(key, None)
    return environ | extra, folder / "empty"


def start(env: WheelEnv, args: list[str], environ: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(env.python), *args], env=environ, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(proc: subprocess.Popen[str], timeout: float = 900) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def without_packages(env: WheelEnv, hidden: tuple[str, ...], name: str) -> WheelEnv:
    """``env``'s wheel in a second venv whose dependencies lack the distributions named ``hidden``
    (their import packages and ``.dist-info``): a machine without an extra, though this one has it.
    Its path reaches the wheel's folder and a folder of links to this environment's site-packages
    entries but those (neither folder's ``.pth`` files run)."""
    root = env.home / name
    shadow = _linked_site_packages(root, lambda entry: entry.split("-")[0].split(".")[0].lower() not in hidden)
    python, purelib = _venv(root / "venv")
    Path(purelib, "zz_test_dependencies.pth").write_text(f"{env.site_packages}\n{shadow}\n", encoding="utf-8")
    return WheelEnv(python, Path(purelib), root, env.wheel)


def _linked_site_packages(root: Path, keep: Callable[[str], bool]) -> Path:
    """A folder of links to the entries of this environment's site-packages whose names ``keep``
    takes (a ``.pth`` file there never runs)."""
    shadow = root / "lib" / "site-packages"  # so named: dill pickles modules under such a folder by reference
    shadow.mkdir(parents=True)
    for site_dir in filter(Path.is_dir, map(Path, site.getsitepackages())):  # Debian's list names absent folders
        for entry in site_dir.iterdir():
            if keep(entry.name) and not (shadow / entry.name).exists():
                (shadow / entry.name).symlink_to(entry)
    return shadow


def _not_ours(entry: str) -> bool:
    """An entry of site-packages that is not odu-bench's (its modules, ``.pth``, editable finder, metadata)."""
    ours = entry == "odu" or entry.startswith(("odu_", "odu.", "odu-"))  # odu, odu_metric, odu_bench-*.dist-info, ...
    return not (ours or entry.startswith("__editable__") and "odu_bench" in entry)


def installed_by_pip(env: WheelEnv, name: str, requirement: str) -> tuple[WheelEnv, subprocess.CompletedProcess[str]]:
    """A fresh venv that reaches this environment's dependencies but nothing of odu-bench, and
    ``pip install REQUIREMENT`` run into it as a user runs it, from a folder holding a copy of the
    wheel (``<home>/<name>/user``): ``pip --python`` (the venv has no pip of its own) with
    ``--no-index`` (offline: every dependency is already in reach). Its console scripts are in its
    ``bin``, next to its python."""
    root = env.home / name
    shadow = _linked_site_packages(root, _not_ours)
    python, purelib = _venv(root / "venv")
    Path(purelib, "zz_test_dependencies.pth").write_text(f"{shadow}\n", encoding="utf-8")
    (root / "user").mkdir()
    shutil.copy2(env.wheel, root / "user" / env.wheel.name)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index", requirement],
        cwd=root / "user",
        capture_output=True,
        text=True,
        timeout=600,
    )
    return WheelEnv(python, Path(purelib), root, env.wheel), proc
