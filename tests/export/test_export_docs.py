"""docs/export.md's worked example runs as written and prints what it shows (issue 31 item 6): every
``console`` block of the section is a command (``odu-bench ...`` or ``head -n N FILE``) and its
stdout; ``...`` lines stand for lines left out; run ids, dates, uuids and log ids are compared as
their shapes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from odu.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "export.md"
SECTION = "## Worked example on the bundled sample"
#: What differs from run to run, and its placeholder.
VARYING = (
    (re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8}"), "<run id>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d(\+00:00)?"), "<date>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"_[0-9a-f]{22}\.json"), "_<log id>.json"),
)


def shapes(text: str) -> str:
    for pattern, placeholder in VARYING:
        text = pattern.sub(placeholder, text)
    return text


def console_blocks(doc: str) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) of each ``console`` block of the worked example."""
    section = doc[doc.index(SECTION) :]
    blocks = re.findall(r"```console\n(.*?)```", section, flags=re.S)
    found = []
    for block in blocks:
        first, *shown = block.rstrip("\n").split("\n")
        assert first.startswith("$ "), first
        found.append((first[2:], shown))
    return found


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether ``printed`` is ``shown`` with each ``...`` standing for any lines (none included)."""
    pattern = "".join(r"(?:.*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in shown)
    return (
        re.fullmatch(pattern + (r"(?:.*\n)*" if shown and shown[-1] == "..." else ""), "\n".join(printed) + "\n")
        is not None
    )


def run(command: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    args = shlex.split(command)
    if args[0] == "head":
        assert args[1] == "-n"
        return Path(args[3]).read_text(encoding="utf-8").splitlines()[: int(args[2])]
    assert args[0] == "odu-bench", command
    capsys.readouterr()
    assert main(args[1:]) == 0, command
    return capsys.readouterr().out.splitlines()


def test_the_worked_example_prints_what_the_doc_shows(tmp_path, monkeypatch, capsys, hf_cache):
    import datasets

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ODU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    blocks = console_blocks(DOC.read_text(encoding="utf-8"))
    assert [c.split()[1] for c, _ in blocks if c.startswith("odu-bench")] == [
        "eval",
        "report",
        "export",
        "export",
        "export",
    ]
    for command, shown in blocks:
        printed = [shapes(line) for line in run(command, capsys)]
        expected = [shapes(line) for line in shown]
        assert matches(expected, printed), (
            f"{command}\n--- the doc shows:\n" + "\n".join(shown) + ("\n--- it prints:\n" + "\n".join(printed))
        )


def test_the_matcher_tells_a_stale_block_from_a_true_one():
    printed = ["a", "b", "c", "d"]
    assert matches(["a", "...", "d"], printed) and matches(["...", "c", "..."], printed)
    assert not matches(["a", "c"], printed) and not matches(["...", "x", "..."], printed)
    assert shapes("run 20261205T085522Z-b09e89cc at 2026-12-05T08:55:22+00:00") == "run <run id> at <date>"
