"""The ``evaluate`` metric takes any model output and any scene text (issue 12 item 7): a lone
surrogate is stored and scored, never a ``UnicodeEncodeError``."""

from __future__ import annotations

import json
from pathlib import Path

import evaluate

from odu.core.schema import load_scenes
from odu.judge import LexicalJudge
from odu.runs.scoring import score_scenes

REPO = Path(__file__).resolve().parents[2]


def test_a_lone_surrogate_is_scored_as_odu_bench_score_scores_it() -> None:
    records = [json.loads(line) for line in (REPO / "odu/data/sample/scenes.jsonl").read_text().split("\n") if line]
    records = records[:4]
    first = records[0]["annotations"][records[0]["language"]]["evaluation_targets"]["segments"][0]
    first["key_points"][0]["point"] += " \udc00"
    outputs = [
        "today \ud83d " + json.dumps(dict(r["annotations"][r["language"]]["evaluation_targets"], note="cut \ud83d"))
        for r in records
    ]
    metric = evaluate.load(str(REPO / "odu_metric"))
    metric.add_batch(predictions=outputs[:2], references=records[:2])
    result = metric.compute(predictions=outputs[2:], references=[json.dumps(r) for r in records[2:]])
    expected = score_scenes(load_scenes(records), {r["scene_id"]: o for r, o in zip(records, outputs)}, LexicalJudge())
    assert result == expected.summary
