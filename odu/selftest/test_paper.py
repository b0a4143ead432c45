"""The scorer against the paper: App A.5's worked example (scene ``avp_gen_000139``, Seed 2.0 Lite's
answer and the judge's verdicts, as the paper prints them) through ``odu-bench score``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from odu.cli import main
from odu.core.parse import parse_output
from odu.judge import candidate_text
from odu.selftest import DATA

EXAMPLE: dict[str, Any] = json.loads((DATA / "worked_example_a5.json").read_text(encoding="utf-8"))


def test_the_worked_example_of_app_a5_scores_as_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """App A.5: S2 = 2/3 (two of three key points), S3 = IoU 0.8995, S4 = 1 (transcript exact),
    S5 = 2/3 (in frame and gender right, age group wrong). Files named relative to the test's own
    folder (``conftest.py``), as a user names them."""
    scenes, predictions, verdicts = Path("scenes.json"), Path("predictions.jsonl"), Path("verdicts.jsonl")
    scenes.write_text(json.dumps([EXAMPLE["scene"]]), encoding="utf-8")
    row = {"scene_id": "avp_gen_000139", "output": EXAMPLE["model_output"]}
    predictions.write_text(json.dumps(row) + "\n", encoding="utf-8")
    verdicts.write_text("".join(json.dumps(v) + "\n" for v in EXAMPLE["verdicts"]), encoding="utf-8")
    out = Path("run")
    args = ["score", "--scenes", str(scenes), "--predictions", str(predictions), "--out", str(out)]
    assert main([*args, "--judge", f"verdicts:{verdicts}", "--no-progress"]) == 0
    scored = json.loads((out / "scenes.jsonl").read_text(encoding="utf-8"))
    assert scored["s2"] == pytest.approx(2 / 3)
    assert scored["s3"] == pytest.approx(0.8995, abs=5e-5)
    assert scored["s4"] == pytest.approx(1.0)
    assert scored["s5"] == pytest.approx(2 / 3)
    assert [k["hit"] for k in scored["key_points"]] == [True, True, False]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["judge"]["name"] == "verdicts" and summary["judge"]["approximate"] is False
    assert "avp_gen_000139" not in capsys.readouterr().err  # the scene has its row


def test_the_judge_reads_the_candidate_text_of_app_a5() -> None:
    """App A.5: the judge is shown "<intent> | <type>: <description>" for each context item."""
    prediction = parse_output(EXAMPLE["model_output"], "audio-visual")
    assert candidate_text(prediction.segments[0]) == EXAMPLE["candidate_text"]
