"""What a run folder's files are, as docs/scoring.md ("Files of a run") and the docstrings of
``odu.runs.contract`` and ``odu.io.files`` promise: a run is one unit, so a block that ends without
a commit (an exception or not) leaves nothing behind; ``summary.json`` vouches only for the names a
run writes (``scenes.jsonl``, ``predictions.jsonl``, ``run_card*.json``, ``results*.json``,
``samples_*.jsonl``), at the top of the folder, each listed with a SHA-256 (64 lowercase hex digits)
its bytes still have; and an output file is replaced, never written through a link."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from odu.io.files import is_sha256, replace_file, sha256_file
from odu.runs.contract import RUN, SCENES_FILE, RunWriter, ScoredRun, is_run_file, listed_files, write_run


def _files_beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def test_a_run_left_without_a_commit_and_without_an_exception_is_discarded(tmp_path: Path) -> None:
    with RunWriter(tmp_path / "run") as writer:
        with writer.jsonl(SCENES_FILE) as rows:
            rows.write({"scene_id": "s1"})
        writer.json("run_card.json", {"system": "demo"})
    assert list(tmp_path.iterdir()) == []  # no work folder, no target


def test_an_uncommitted_run_leaves_the_run_it_would_replace_as_it_was(tmp_path: Path) -> None:
    old = write_run(ScoredRun({"judge": {}}, []), tmp_path / "run")
    before = {p.name: p.read_bytes() for p in old.iterdir()}
    with RunWriter(old, overwrite=True) as writer:
        with writer.jsonl(SCENES_FILE) as rows:
            rows.write({"scene_id": "new"})
    assert {p.name: p.read_bytes() for p in old.iterdir()} == before and _files_beside(old) == ["run"]


RUN_NAMES = [
    "summary.json",
    "scenes.jsonl",
    "predictions.jsonl",
    "run_card.json",
    "run_card_av.json",
    "results.json",
    "results_2026-05-01T08-05-35.json",
    "samples_odu_av.jsonl",
]
OTHER_NAMES = [
    "thesis.pdf",
    "notes.json",
    "scenes.jsonl.bak",
    "predictions.json",
    "samples.jsonl",
    "samples_odu_av.json",
    "results.txt",
    "my_run_card.json",
    "old_results.json",
    "summary.json~",
]


@pytest.mark.parametrize("name", RUN_NAMES)
def test_the_names_a_run_writes_are_run_files(name: str) -> None:
    assert is_run_file(name)


@pytest.mark.parametrize("name", OTHER_NAMES)
def test_no_other_name_is_a_run_file(name: str) -> None:
    assert not is_run_file(name)


def _listing(run: Path, files: dict[str, bytes], hashes: dict[str, str] | None = None) -> None:
    """Put ``files`` in ``run`` and list them in its ``summary.json`` (with ``hashes`` where given,
    else their true SHA-256)."""
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    for name, data in files.items():
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_bytes(data)
        summary["files"][name] = {"sha256": (hashes or {}).get(name, hashlib.sha256(data).hexdigest())}
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


@pytest.mark.parametrize("name", [n for n in RUN_NAMES if n not in ("summary.json", SCENES_FILE)])
def test_a_summary_vouches_for_each_name_a_run_writes(name: str, tmp_path: Path) -> None:
    run = write_run(ScoredRun({"judge": {}}, []), tmp_path / "r")
    _listing(run, {name: b"{}\n"})
    assert name in (listed_files(run) or {}) and RUN.foreign(run) == []


@pytest.mark.parametrize("name", OTHER_NAMES[:4])
def test_a_summary_vouches_for_no_other_name(name: str, tmp_path: Path) -> None:
    run = write_run(ScoredRun({"judge": {}}, []), tmp_path / "r")
    _listing(run, {name: b"mine"})
    assert name not in (listed_files(run) or {}) and RUN.foreign(run) == [name]


def test_a_summary_vouches_for_no_file_below_the_top_of_the_run(tmp_path: Path) -> None:
    run = write_run(ScoredRun({"judge": {}}, []), tmp_path / "r")
    _listing(run, {"samples_odu/av.jsonl": b"{}\n"})  # the pattern's * would take the "/"
    assert "samples_odu/av.jsonl" not in (listed_files(run) or {}) and RUN.foreign(run) == ["samples_odu"]


@pytest.mark.parametrize(
    "shown",
    [
        lambda digest: digest.upper(),  # hex, but not as sha256_file gives it
        lambda digest: digest[:-1],  # 63 digits
        lambda digest: digest + "0",  # 65 digits
        lambda digest: digest + "\n",
        lambda digest: "../" + digest[3:],
    ],
    ids=["upper-case", "63-digits", "65-digits", "newline", "a-path"],
)
def test_a_file_is_the_runs_only_when_listed_with_its_sha256_as_sha256_file_writes_it(shown, tmp_path: Path) -> None:
    run = write_run(ScoredRun({"judge": {}}, []), tmp_path / "r")
    data = b"{}\n"
    digest = hashlib.sha256(data).hexdigest()
    assert is_sha256(digest) and not is_sha256(shown(digest))
    _listing(run, {"predictions.jsonl": data}, {"predictions.jsonl": shown(digest)})
    assert "predictions.jsonl" not in (listed_files(run) or {}) and RUN.foreign(run) == ["predictions.jsonl"]


def test_sha256_file_is_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    data = bytes(range(256)) * 5000  # more than one 1 MiB read
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f") == hashlib.sha256(data).hexdigest()


def test_replace_file_replaces_a_link_and_never_writes_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").symlink_to(victim)
    replace_file(out / "results.json", b"new")
    assert victim.read_bytes() == b"keep me"
    assert not (out / "results.json").is_symlink() and (out / "results.json").read_bytes() == b"new"
    assert [p.name for p in out.iterdir()] == ["results.json"]  # no half-written file left beside it
