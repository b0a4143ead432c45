"""Run folders and every output folder, as ``odu/runs/outdir.py`` and ``odu.runs.contract`` promise: written whole
and swapped in, an existing folder replaced only when everything in it is an earlier output of the
same kind, as it was written (a run: ``summary.json`` and the files it lists, with their hashes;
``eval``'s folder: runs only; the viewer, report and prepared dataset: the files their manifest
lists, with their hashes), never a link, never with ``--overwrite`` missing, and a killed writer's
leftovers removed only once its process is gone."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from odu.runs.contract import RUN, RUNS, RunError, RunWriter, ScoredRun, listed_files, write_run
from odu.runs.outdir import (
    MANIFEST_NAME,
    ManifestKind,
    OutDirError,
    check_target,
    clear,
    remove_leftovers,
    swap_in,
    work_dir,
    writing,
)

KIND = ManifestKind("a test output")


def _run(path: Path) -> Path:
    return write_run(ScoredRun({"judge": {}}, []), path)


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


# --- what counts as an earlier output -------------------------------------------------------------------


def test_a_run_is_its_summary_and_the_files_it_lists(tmp_path: Path) -> None:
    run = _run(tmp_path / "r")
    assert set(listed_files(run) or ()) == {"scenes.jsonl"} and RUN.foreign(run) == []
    (run / "predictions.jsonl").write_text("{}")  # a run's file name, but not this run's
    assert RUN.foreign(run) == ["predictions.jsonl"]


def test_a_run_file_is_its_own_only_as_written(tmp_path: Path) -> None:
    run = _run(tmp_path / "r")
    (run / "scenes.jsonl").write_text("\n")  # changed since the run wrote it
    assert RUN.foreign(run) == ["scenes.jsonl"]


def test_a_summary_vouches_only_for_run_files_with_their_hashes(tmp_path: Path) -> None:
    run = _run(tmp_path / "r")
    summary = json.loads((run / "summary.json").read_text())
    (run / "thesis.pdf").write_bytes(b"mine")
    digest = hashlib.sha256(b"mine").hexdigest()
    summary["files"]["thesis.pdf"] = {"sha256": digest}  # right hash, but no name a run writes
    (run / "summary.json").write_text(json.dumps(summary))
    assert RUN.foreign(run) == ["thesis.pdf"]
    (run / "predictions.jsonl").write_bytes(b"mine")
    summary["files"]["predictions.jsonl"] = {"rows": 1}  # a run's name, but no hash
    (run / "summary.json").write_text(json.dumps(summary))
    assert RUN.foreign(run) == ["predictions.jsonl", "thesis.pdf"]
    del summary["run_id"]  # not a run's summary: nothing is its own
    (run / "summary.json").write_text(json.dumps(summary))
    assert RUN.foreign(run) == ["predictions.jsonl", "scenes.jsonl", "summary.json", "thesis.pdf"]


def test_without_a_readable_summary_nothing_is_a_runs(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "scenes.jsonl").write_text("")
    assert RUN.foreign(folder) == ["scenes.jsonl"]
    (folder / "summary.json").write_text("not json")
    assert RUN.foreign(folder) == ["scenes.jsonl", "summary.json"]


def test_a_link_or_a_folder_in_a_run_is_foreign(tmp_path: Path) -> None:
    run = _run(tmp_path / "r")
    (run / "scenes.jsonl").unlink()
    (run / "scenes.jsonl").symlink_to(tmp_path / "elsewhere")
    assert RUN.foreign(run) == ["scenes.jsonl"]


def test_evals_folder_holds_runs_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(out / "always")
    assert RUNS.foreign(out) == []
    (out / "notes.md").write_text("mine")
    (out / "empty").mkdir()
    _run(out / "dated" / "always")  # a folder of runs is not a run
    assert RUNS.foreign(out) == ["dated/always", "empty", "notes.md"]


def _sealed(out: Path) -> Path:
    """A finished output of :data:`KIND`: two files, one in a sub-folder, and its manifest."""
    (out / "sub").mkdir(parents=True)
    (out / "a.csv").write_text("x")
    (out / "sub" / "b.txt").write_text("y")
    KIND.seal(out)
    return out


def test_a_manifest_kind_owns_what_its_manifest_lists_as_written(tmp_path: Path) -> None:
    out = _sealed(tmp_path / "o")
    assert KIND.foreign(out) == []
    (out / "sub" / "c.md").write_text("x")
    (out / "d.csv").write_text("x")  # a name like its own, not listed
    (out / "deep").mkdir()
    (out / "deep" / "x.csv").write_text("x")
    assert KIND.foreign(out) == ["d.csv", "deep", "sub/c.md"]


def test_a_file_changed_since_written_or_made_a_link_is_foreign(tmp_path: Path) -> None:
    out = _sealed(tmp_path / "o")
    (out / "sub" / "b.txt").write_text("edited")
    assert KIND.foreign(out) == ["sub/b.txt"]
    (out / "sub" / "b.txt").unlink()
    (out / "sub" / "b.txt").symlink_to(out / "a.csv")
    assert KIND.foreign(out) == ["sub/b.txt"]


def test_without_its_own_manifest_nothing_is_a_manifest_kinds(tmp_path: Path) -> None:
    out = _sealed(tmp_path / "o")
    assert ManifestKind("another output").foreign(out) == [MANIFEST_NAME, "a.csv", "sub"]
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    for broken in ({**manifest, "files": {**manifest["files"], "a.csv": "../x"}}, [manifest], "not json"):
        (out / MANIFEST_NAME).write_text(broken if isinstance(broken, str) else json.dumps(broken))
        assert KIND.foreign(out) == [MANIFEST_NAME, "a.csv", "sub"]
    (out / MANIFEST_NAME).unlink()
    assert KIND.foreign(out) == ["a.csv", "sub"]


# --- check_target ----------------------------------------------------------------------------------------


def test_a_new_or_empty_target_takes_the_output(tmp_path: Path) -> None:
    assert check_target(tmp_path / "new", RUN) is False
    (tmp_path / "empty").mkdir()
    assert check_target(tmp_path / "empty", RUN, overwrite=False) is False


def test_an_earlier_output_needs_overwrite(tmp_path: Path) -> None:
    run = _run(tmp_path / "r")
    with pytest.raises(OutDirError, match=r"holds a run \(scenes.jsonl, summary.json\); pass --overwrite"):
        check_target(run, RUN, overwrite=False)
    assert check_target(run, RUN, overwrite=True) is True


def test_foreign_files_are_never_replaced_even_with_overwrite(tmp_path: Path) -> None:
    run = _run(tmp_path / "r")
    (run / "notes.txt").write_text("mine")
    for overwrite in (False, True):
        with pytest.raises(OutDirError, match=r"not part of a run \(notes.txt\)"):
            check_target(run, RUN, overwrite=overwrite)


def test_a_target_that_is_a_link_or_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OutDirError, match="is a symbolic link"):
        check_target(tmp_path / "link", RUN)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutDirError, match="exists and is not a directory"):
        check_target(tmp_path / "file", RUN)


# --- writing, swapping, clearing ----------------------------------------------------------------------------------


def test_writing_swaps_in_whole_and_replaces_only_an_earlier_output(tmp_path: Path) -> None:
    out = tmp_path / "o"
    with writing(out, KIND) as work:
        assert work.parent == tmp_path and work.name.startswith(".o.partial-") and not out.exists()
        (work / "a.csv").write_text("1")
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_NAME, "a.csv"] and KIND.foreign(out) == []
    with writing(out, KIND) as work:
        (work / "b.csv").write_text("2")
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_NAME, "b.csv"]  # the earlier output went whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]  # no work folder, nothing set aside left


def test_a_failed_write_leaves_the_target_as_it_was(tmp_path: Path) -> None:
    out = _sealed(tmp_path / "o")
    with pytest.raises(RuntimeError), writing(out, KIND) as work:
        (work / "a.csv").write_text("new")
        raise RuntimeError("stop")
    assert (out / "a.csv").read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_the_swap_checks_again_what_it_replaces(tmp_path: Path) -> None:
    out = _sealed(tmp_path / "o")
    work = work_dir(out)
    (out / "keep.txt").write_text("written meanwhile")
    with pytest.raises(OutDirError, match="keep.txt"):
        swap_in(work, out, KIND)
    assert (out / "keep.txt").read_text() == "written meanwhile"


def test_clear_deletes_only_an_earlier_output(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    _run(out / "always")
    clear(out, RUNS)
    assert not out.exists()
    _run(out / "always")
    (out / "notes.md").write_text("mine")
    with pytest.raises(OutDirError, match="notes.md"):
        clear(out, RUNS)
    assert (out / "notes.md").exists()


def test_a_run_writer_refuses_a_run_written_meanwhile_without_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "r"
    with RunWriter(out) as writer:
        _run(out)  # another run lands there first
        with pytest.raises(RunError, match="another run wrote into it meanwhile"):
            writer.commit({"judge": {}})
    with RunWriter(out, overwrite=True) as writer:
        writer.commit({"judge": {}})
    assert listed_files(out) == {}


# --- leftovers of killed writers ------------------------------------------------------------------------------------


def test_leftovers_of_dead_writers_go_those_of_live_ones_and_other_targets_stay(tmp_path: Path) -> None:
    dead, live = _dead_pid(), os.getppid()
    gone = [tmp_path / f".o.partial-{dead}-x", tmp_path / f".o.replaced-{dead}-y"]
    kept = [tmp_path / f".o.partial-{live}-x", tmp_path / f".other.partial-{dead}-x", tmp_path / f".o.tmp-{dead}"]
    for path in gone + kept:
        path.mkdir()
    assert sorted(remove_leftovers(tmp_path / "o")) == sorted(gone)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in gone)
