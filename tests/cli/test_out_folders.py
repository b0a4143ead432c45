"""Issue 23 item 1: a command's output folder holds only its output (:mod:`odu.runs.outdir`).

``--overwrite`` (and the implicit replacement of ``view``, ``report`` and ``prepare``) replaces a
folder only when everything in it is an earlier output of the same command; ``--out`` may never
be, contain or lie inside an input; nothing is written through a link. Each case reproduced as the
issue found it: before the fix, each of these deleted or changed something that was not a run."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import argv
from support.view_support import build_view, sample_records, write_predictions

from odu.cli import main
from odu.data.sample import sample_dir

SAMPLE_SCENES = sample_dir() / "scenes.jsonl"


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (links as their target's name) by relative path."""
    return {
        str(p.relative_to(folder)): (str(p.readlink()).encode() if p.is_symlink() else p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def _predictions(path: Path) -> Path:
    return write_predictions({r["scene_id"]: None for r in sample_records()}, path)


def _score(out: Path, predictions: Path, *extra: str) -> int:
    return main([*argv("score", scenes=SAMPLE_SCENES, predictions=predictions, out=out, no_progress=True), *extra])


def _eval(out: Path, *extra: str) -> int:
    return main([*argv("eval", sample=True, model="always", out=out), *extra])


# --- the cases the issue reproduced ----------------------------------------------------------------


def test_score_out_holding_its_own_predictions_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    predictions = _predictions(out / "predictions.jsonl")
    before = _tree(out)
    assert _score(out, predictions, "--overwrite") == 2
    assert "contains the input" in capsys.readouterr().err
    assert _tree(out) == before


def test_eval_overwrite_on_the_parent_of_earlier_runs_deletes_nothing(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    assert _eval(runs / "20260101-000000") == 0
    before = _tree(runs)
    assert _eval(runs, "--overwrite") == 2
    err = capsys.readouterr().err
    assert "not part of the runs of odu-bench eval" in err and "20260101-000000/always" in err
    assert _tree(runs) == before


def test_merge_out_on_the_parent_of_its_shards_is_refused(shards: Path, tmp_path: Path, capsys) -> None:
    parent = tmp_path / "parent"
    shutil.copytree(shards, parent)
    before = _tree(parent)
    given = [str(parent / "s1" / "always"), str(parent / "s2" / "always")]
    assert main(["merge", *given, "--out", str(parent), "--overwrite"]) == 2
    assert "contains the input" in capsys.readouterr().err
    assert _tree(parent) == before


def test_view_over_a_folder_with_a_users_notes_deletes_nothing(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    site = tmp_path / "site"
    assert build_view(site, runs["a"]) == 0
    (site / "notes.md").write_text("my notes")
    before = _tree(site)
    assert build_view(site, runs["a"]) == 2
    assert "(notes.md)" in capsys.readouterr().err
    assert _tree(site) == before


def test_prepare_over_a_stray_manifest_keeps_the_users_files(demo_release: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "paper"
    out.mkdir()
    (out / "media_manifest.json").write_text("{}")
    (out / "paper.tex").write_text("\\documentclass{article}")
    before = _tree(out)
    assert main(["prepare", str(demo_release), "--out", str(out), "--no-progress"]) == 2
    assert "paper.tex" in capsys.readouterr().err
    assert _tree(out) == before


@pytest.mark.parametrize("where", ["the release folder", "inside it"])
def test_prepare_never_writes_over_or_into_its_release(demo_release: Path, tmp_path: Path, where: str, capsys) -> None:
    release = tmp_path / "release"
    shutil.copytree(demo_release, release)
    before = _tree(release)
    out = release if where == "the release folder" else release / "prepared"
    assert main(["prepare", str(release), "--out", str(out), "--no-progress"]) == 2
    assert "the input" in capsys.readouterr().err
    assert _tree(release) == before


def test_report_never_writes_through_a_link(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("not the report's")
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.json").write_text("{}")
    (out / "report.md").symlink_to(elsewhere)
    code = main(["report", str(runs["a"]), "--out", str(out), "--resamples", "20", "--no-plots"])
    assert code == 2 and "report.md" in capsys.readouterr().err
    assert elsewhere.read_text() == "not the report's" and (out / "report.md").is_symlink()


def test_an_out_that_is_a_link_is_refused(tmp_path: Path, capsys) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert _score(tmp_path / "link", _predictions(tmp_path / "p.jsonl")) == 2
    assert "is a symbolic link" in capsys.readouterr().err and not any(real.iterdir())


def test_a_report_replaces_an_earlier_report_whole(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = ["report", str(runs["a"]), "--out", str(out), "--resamples", "20", "--no-plots"]
    assert main(args) == 0
    first = _tree(out)
    assert any(name.endswith(".csv") for name in first)
    assert main(args) == 0  # every file the earlier report wrote, unchanged: replaced whole
    assert _tree(out).keys() == first.keys() and (out / "report.md").is_file()


# --- issue 30 item 3: only the files the command wrote, as it wrote them (its manifest, with hashes) ------


def test_a_report_rerun_keeps_a_users_csv_and_png(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "rep"
    args = ["report", str(runs["a"]), "--out", str(out), "--resamples", "20", "--no-plots"]
    assert main(args) == 0
    (out / "my-table.csv").write_text("mine")  # names the report's own patterns matched
    (out / "figure.png").write_bytes(b"\x89PNG mine")
    before = _tree(out)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "figure.png" in err and "my-table.csv" in err and len(err.strip().splitlines()) == 1
    assert _tree(out) == before


def test_a_report_file_changed_since_written_is_never_replaced(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "rep"
    args = ["report", str(runs["a"]), "--out", str(out), "--resamples", "20", "--no-plots"]
    assert main(args) == 0
    (out / "report.md").write_text("my edits to the report")
    before = _tree(out)
    assert main(args) == 2
    assert "report.md" in capsys.readouterr().err and _tree(out) == before


@pytest.mark.parametrize("folder", ["media", "assets"])
def test_a_view_rerun_keeps_user_files_under_its_folders(
    runs: dict[str, Path], tmp_path: Path, folder: str, capsys
) -> None:
    site = tmp_path / "site"
    assert build_view(site, runs["a"]) == 0
    (site / folder / "mine.mp4").write_bytes(b"my clip")
    before = _tree(site)
    assert build_view(site, runs["a"]) == 2
    assert f"{folder}/mine.mp4" in capsys.readouterr().err
    assert _tree(site) == before


def _planted(out: Path, thesis: bytes, sha256: str) -> None:
    """A folder holding a user's file and a ``summary.json`` that names it as a run's file."""
    out.mkdir()
    (out / "thesis.pdf").write_bytes(thesis)
    files = {"thesis.pdf": {"sha256": sha256}, "scenes.jsonl": {"sha256": "0" * 64, "rows": 0}}
    (out / "summary.json").write_text(json.dumps({"run_id": "x", "files": files}))
    (out / "scenes.jsonl").write_text("")


@pytest.mark.parametrize("hashed", [False, True])
def test_overwrite_never_trusts_a_planted_summary(tmp_path: Path, hashed: bool, capsys) -> None:
    thesis = b"%PDF-1.7 three years of work"
    out = tmp_path / "run"
    _planted(out, thesis, hashlib.sha256(thesis).hexdigest() if hashed else "0" * 64)
    before = _tree(out)
    assert _score(out, _predictions(tmp_path / "p.jsonl"), "--overwrite") == 2
    err = capsys.readouterr().err
    assert "thesis.pdf" in err and "scenes.jsonl" in err  # named: not a run's file, and not as written
    assert _tree(out) == before


def test_overwrite_never_replaces_a_run_file_edited_since(tmp_path: Path, capsys) -> None:
    out, predictions = tmp_path / "run", _predictions(tmp_path / "p.jsonl")
    assert _score(out, predictions) == 0
    with (out / "scenes.jsonl").open("a") as fh:
        fh.write("my note\n")
    before = _tree(out)
    assert _score(out, predictions, "--overwrite") == 2
    assert "scenes.jsonl" in capsys.readouterr().err and _tree(out) == before


# --- every command that writes a folder: a foreign file is never deleted --------------------------------


def _score_into(out: Path, tmp: Path) -> int:
    return _score(out, _predictions(tmp / "p.jsonl"), "--overwrite")


def _eval_into(out: Path, tmp: Path) -> int:
    return _eval(out, "--overwrite")


def _merge_into(out: Path, tmp: Path, shards: Path) -> int:
    return main(
        ["merge", str(shards / "s1" / "always"), str(shards / "s2" / "always"), "--out", str(out), "--overwrite"]
    )


def _view_into(out: Path, tmp: Path, runs: dict[str, Path]) -> int:
    return build_view(out, runs["a"])


def _report_into(out: Path, tmp: Path, runs: dict[str, Path]) -> int:
    return main(["report", str(runs["a"]), "--out", str(out), "--resamples", "20", "--no-plots"])


def _prepare_into(out: Path, tmp: Path, release: Path) -> int:
    return main(["prepare", str(release), "--out", str(out), "--no-progress"])


@pytest.mark.parametrize("command", ["score", "eval", "merge", "view", "report", "prepare"])
def test_an_earlier_output_with_a_foreign_file_is_never_replaced(
    command: str, tmp_path: Path, shards: Path, runs: dict[str, Path], demo_release: Path, capsys
) -> None:
    write: Callable[[Path, Path], int] = {
        "score": _score_into,
        "eval": _eval_into,
        "merge": lambda out, tmp: _merge_into(out, tmp, shards),
        "view": lambda out, tmp: _view_into(out, tmp, runs),
        "report": lambda out, tmp: _report_into(out, tmp, runs),
        "prepare": lambda out, tmp: _prepare_into(out, tmp, demo_release),
    }[command]
    out = tmp_path / "out"
    assert write(out, tmp_path) == 0, capsys.readouterr().err
    assert write(out, tmp_path) == 0  # an earlier output of the same command is replaced
    (out / "keep.txt").write_text("mine")
    before = _tree(out)
    assert write(out, tmp_path) == 2
    assert "keep.txt" in capsys.readouterr().err
    assert _tree(out) == before


# --- export: adds each run's files to its folder -----------------------------------------------------------


def _export(out: Path, *runs: Path) -> int:
    return main(
        argv("export", *runs, format="eee", out=out, organization="lab", model_ids=[f"lab/{r.name}" for r in runs])
    )


def test_export_never_writes_into_or_over_its_runs(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["a"], run)
    before = _tree(run)
    for out in (run, run / "export", tmp_path):
        assert _export(out, run) == 2
        assert "the input" in capsys.readouterr().err
    assert _tree(run) == before


def test_export_never_writes_through_a_link_and_deletes_nothing(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "export"
    assert _export(out, runs["a"]) == 0
    (out / "keep.txt").write_text("mine")
    written = sorted(p for p in out.rglob("*.json*") if p.is_file())
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("not the export's")
    written[0].unlink()
    written[0].symlink_to(elsewhere)  # a file of the export made a link: replaced, never followed
    assert _export(out, runs["a"]) == 0
    assert elsewhere.read_text() == "not the export's" and not written[0].is_symlink()
    assert (out / "keep.txt").read_text() == "mine"
    folder = written[0].parent
    shutil.rmtree(folder)
    (tmp_path / "other").mkdir()
    folder.symlink_to(tmp_path / "other")  # a folder on the way made a link: refused
    assert _export(out, runs["a"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err and not any((tmp_path / "other").iterdir())


def test_judge_audit_out_is_never_a_runs_file_nor_written_through_a_link(
    runs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["a"], run)
    before = _tree(run)
    assert main(["judge-audit", "--run", str(run), "--judge", "lexical", "--out", str(run / "summary.json")]) == 2
    assert "the input" in capsys.readouterr().err and _tree(run) == before
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("not the audit's")
    (tmp_path / "audit.json").symlink_to(elsewhere)
    assert main(["judge-audit", "--run", str(run), "--judge", "lexical", "--out", str(tmp_path / "audit.json")]) == 0
    assert elsewhere.read_text() == "not the audit's" and not (tmp_path / "audit.json").is_symlink()
