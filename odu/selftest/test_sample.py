"""The bundled sample end to end: its own references score full marks, and the floors of
``odu-bench eval --sample`` (run through lm-eval) score what App A.3-A.4's formulas give for
predictions that never or always trigger; ``odu-bench score`` of eval's answers gives eval's numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from odu.cli import main
from odu.core.schema import load_scenes
from odu.data.sample import sample_dir
from odu.selftest import perfect_output

MODALITIES = ("audio-visual", "audio-only")
#: App A.4 Eq. 6, as the paper prints them.
PAPER_WEIGHTS = {"m1": 0.15, "m2": 0.60, "m3": 0.10, "m4": 0.10, "m5": 0.05}


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def f1(tp: int, fp: int, fn: int) -> float:
    """One class's F1 (App A.3 Eq. 1), 2TP / (2TP + FP + FN)."""
    return 2 * tp / (2 * tp + fp + fn)


def test_the_sample_s_own_references_score_full_marks(tmp_path: Path) -> None:
    """Every scene answered with its reference annotation and every key point judged a hit: M1-M5
    and Avg are 1 in both modalities, FTR 0, nothing counted as an error."""
    scenes_file = sample_dir() / "scenes.jsonl"
    scenes = load_scenes(scenes_file)
    predictions, verdicts = tmp_path / "predictions.jsonl", tmp_path / "verdicts.jsonl"
    predictions.write_text(
        "".join(json.dumps({"scene_id": s.scene_id, "output": perfect_output(s)}) + "\n" for s in scenes),
        encoding="utf-8",
    )
    hits = [
        {"scene_id": s.scene_id, "segment": i, "qid": k.qid, "hit": True}
        for s in scenes
        for i, segment in enumerate(s.annotation().segments)
        for k in segment.key_points
    ]
    verdicts.write_text("".join(json.dumps(v) + "\n" for v in hits), encoding="utf-8")
    out = tmp_path / "run"
    args = ["score", "--scenes", str(scenes_file), "--predictions", str(predictions), "--out", str(out)]
    assert main([*args, "--judge", f"verdicts:{verdicts}", "--no-progress"]) == 0
    summary = read(out / "summary.json")
    assert (summary["parse_errors"], summary["no_output"], summary["judge_errors"]) == (0, 0, 0)
    for modality in MODALITIES:
        block = summary[modality]
        assert [block[m] for m in (*PAPER_WEIGHTS, "avg")] == pytest.approx([1.0] * 6), modality
        assert block["ftr"] == 0.0, modality


def test_eval_sample_scores_the_floors_as_app_a3_says(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Never-trigger: M1 is the macro-F1 of all-negative predictions, M2-M5 and FTR 0; always-trigger:
    M1 that of all-positive ones, FTR 1, M2 and M4 0 (no intent, no transcript); Avg is Eq. 6 of M1-M5.
    The rows are marked as resting on a small sample, and ``odu-bench score`` of eval's answers gives
    eval's numbers."""
    runs = tmp_path / "runs"
    assert main(["eval", "--sample", "--out", str(runs)]) == 0
    printed = capsys.readouterr().out
    for floor in ("floor: always-trigger *", "floor: never-trigger *"):
        assert f"| {floor} " in printed, floor
    assert "audio-visual scenes: a small sample (< 30)" in printed
    never, always = read(runs / "never" / "summary.json"), read(runs / "always" / "summary.json")
    for modality in MODALITIES:
        n_pos, n_neg = never[modality]["n_positive"], never[modality]["n_negative"]
        assert n_pos > 0 and n_neg > 0, modality
        expected_never = {"m1": (f1(n_neg, n_pos, 0) + f1(0, 0, n_pos)) / 2, "m2": 0, "m3": 0, "m4": 0, "m5": 0}
        assert {m: never[modality][m] for m in expected_never} == pytest.approx(expected_never), modality
        assert never[modality]["ftr"] == 0.0
        block = always[modality]
        assert block["m1"] == pytest.approx((f1(0, n_pos, n_neg) + f1(n_pos, n_neg, 0)) / 2), modality
        assert (block["ftr"], block["m2"], block["m4"]) == (1.0, 0.0, 0.0), modality
        for summary in (never[modality], block):
            assert summary["avg"] == pytest.approx(sum(w * summary[m] for m, w in PAPER_WEIGHTS.items()))
    rescored = tmp_path / "rescored"
    scenes = sample / "scenes.jsonl"
    predictions = runs / "always" / "predictions.jsonl"
    assert main(["score", "--scenes", str(scenes), "--predictions", str(predictions), "--out", str(rescored)]) == 0
    again = read(rescored / "summary.json")
    for modality in MODALITIES:  # every number score writes (eval adds its inference_errors count)
        assert again[modality] == {k: always[modality][k] for k in again[modality]}, modality
