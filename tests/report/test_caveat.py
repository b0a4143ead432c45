"""The caveat on every Table 3-style table (odu.core.tables.table3_caveat): what comparability with the
paper's Table 3 rests on, each claim backed by the paper's own words, shown by `score` (here), `report`
(tests/report/test_report.py), the viewer (test_view.py) and `eval` (tests/harness/test_lm_eval_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import argv
from support.paper import paper_passage

from odu.cli import main
from odu.core.tables import PAPER_JUDGE, table3_caveat
from odu.selftest import DATA

OPENAI = {"name": "openai", "model": "qwen3.6-flash", "prompt_version": "odu-f4-en-1", "approximate": False}


def test_caveat_names_judge_instruction_thresholds_and_reference_language() -> None:
    lines = table3_caveat([{"judge": OPENAI, "annotation_language": "en"}])
    judge, thresholds, reference = lines[1:]
    assert "What comparability with Table 3 rests on" in lines[0]
    assert "openai (qwen3.6-flash, prompt odu-f4-en-1)" in judge and PAPER_JUDGE in judge
    assert "App F.4 prints only an English rendering" in judge and "App D.3" in judge
    assert "unpublished (App A.2)" in thresholds and "docs/scoring.md" in thresholds
    assert reference.startswith("- reference language: en for every scene;") and "App E.1" in reference
    assert "judge-audit --reference-shift" in reference
    own = table3_caveat([{"judge": {"name": "lexical", "model": "lexical-overlap", "approximate": True}}])
    assert "lexical (lexical-overlap, APPROXIMATE)" in own[1]
    assert "each scene's own (zh scenes against the zh reference)" in own[3]  # no annotation_language: "scene"
    mixed = table3_caveat(
        [{"judge": OPENAI, "annotation_language": "scene"}, {"judge": OPENAI, "annotation_language": "zh"}]
    )
    assert mixed[1].count("qwen3.6-flash") == 1 and "each scene's own" in mixed[3] and "zh for every scene" in mixed[3]


def test_each_claim_is_the_papers() -> None:
    assert "Qwen3.6-Flash with thinking enabled" in paper_passage("as the semantic judge")  # App D.3
    assert PAPER_JUDGE.split()[0] == "Qwen3.6-Flash"
    assert (
        "The judge instruction below is its English rendering; the scoring implementation retains the original instruction"
        in paper_passage("English rendering")
    )  # App F
    assert (
        "Detailed matching thresholds and merging rules are provided in the released evaluation code"
        in paper_passage("matching thresholds")
    )  # App A.2
    assert "To compare with English reference points" in paper_passage("English reference points")  # App E.1


def test_score_prints_the_caveat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = json.loads((DATA / "worked_example_a5.json").read_text(encoding="utf-8"))
    scenes, preds = tmp_path / "scenes.json", tmp_path / "p.jsonl"
    scenes.write_text(json.dumps([example["scene"]]), encoding="utf-8")
    preds.write_text(json.dumps({"scene_id": "avp_gen_000139", "output": example["model_output"]}) + "\n")
    out = tmp_path / "run"
    assert (
        main(argv("score", scenes=scenes, predictions=preds, out=out, annotation_language="en", no_progress=True)) == 0
    )
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert "\n".join(table3_caveat([summary])) in printed
    assert "reference language: en for every scene" in printed
