"""Issue 30 item 8: ``odu-bench report A B`` pairs scenes by id only when both runs scored the same
scene. Every scene row records ``scene_sha256`` (the scene as the model sees it: clips, replies,
labels, axes) and ``reference_sha256`` (the reference it was scored against, with its language); a
report over runs that scored different content under one id is refused (exit 2, the scene named)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import argv
from support.view_support import sample_records, write_predictions

from odu.cli import main
from odu.io.jsonio import iter_jsonl


def _score(tmp_path: Path, name: str, records: list[dict[str, Any]], *extra: str) -> Path:
    scenes = tmp_path / f"{name}.scenes.jsonl"
    scenes.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    predictions = write_predictions({r["scene_id"]: None for r in records}, tmp_path / f"{name}.p.jsonl")
    out = tmp_path / name
    assert main([*argv("score", scenes=scenes, predictions=predictions, out=out, no_progress=True), *extra]) == 0
    return out


def _report(tmp_path: Path, *runs: Path) -> int:
    return main(["report", *map(str, runs), "--out", str(tmp_path / "report"), "--resamples", "20", "--no-plots"])


def _rows(run: Path) -> dict[str, dict[str, Any]]:
    return {row["scene_id"]: row for _, row in iter_jsonl(run / "scenes.jsonl")}


def _changed(records: list[dict[str, Any]], sid: str, edit: str) -> list[dict[str, Any]]:
    out = json.loads(json.dumps(records))
    record = next(r for r in out if r["scene_id"] == sid)
    if edit == "reply":
        clip = next(c for c in record["clips"] if c["replies"]) if any(c["replies"] for c in record["clips"]) else None
        if clip is None:
            record["clips"][0]["replies"] = ["A reply the first run never had."]
        else:
            clip["replies"][0] += " (rewritten)"
    else:  # the reference's first key point, in the scene's own language
        targets = record["annotations"][record["language"]]["evaluation_targets"]
        targets["segments"][0]["key_points"][0]["point"] += " (rewritten)"
    return out


def _positive(records: list[dict[str, Any]]) -> str:
    return next(r["scene_id"] for r in records if r["label"] == "positive")


def test_every_scene_row_records_its_content_hashes(tmp_path: Path) -> None:
    records = sample_records()
    rows = _rows(_score(tmp_path, "a", records))
    assert all(len(r["scene_sha256"]) == 64 and len(r["reference_sha256"]) == 64 for r in rows.values())
    assert len({r["scene_sha256"] for r in rows.values()}) == len(rows)  # one per scene


@pytest.mark.parametrize("edit", ["reply", "key point"])
def test_a_report_refuses_runs_that_scored_different_content_under_one_id(
    tmp_path: Path, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    records = sample_records()
    sid = _positive(records)
    a = _score(tmp_path, "a", records)
    b = _score(tmp_path, "b", _changed(records, sid, edit))
    assert _report(tmp_path, a, b) == 2
    err = capsys.readouterr().err
    assert f"scene {sid}" in err and ("reference" if edit == "key point" else "clips") in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "report").exists()


def test_the_same_scenes_pair_whatever_reference_language(tmp_path: Path) -> None:
    records = sample_records()
    a = _score(tmp_path, "a", records)
    assert _report(tmp_path, a, _score(tmp_path, "b", records)) == 0
    en = _score(tmp_path, "en", records, "--annotation-language", "en")  # zh scenes against en: a note, not a refusal
    assert _report(tmp_path, a, en) == 0
    assert "different reference languages" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def test_the_hashes_do_not_depend_on_the_door(tmp_path: Path) -> None:
    """A scene scored from the release records (``score``) and from the prepared dataset through
    lm-eval (``eval --sample``) has the same hashes: such runs pair."""
    scored = _rows(_score(tmp_path, "score", sample_records()))
    assert main(argv("eval", sample=True, model="always", out=tmp_path / "eval")) == 0
    evaluated = _rows(tmp_path / "eval" / "always")
    assert {s: (r["scene_sha256"], r["reference_sha256"]) for s, r in scored.items()} == {
        s: (r["scene_sha256"], r["reference_sha256"]) for s, r in evaluated.items()
    }
