"""Issue 23 item 3: trust nothing read back. ``report``, ``view`` and ``merge`` refuse a summary its
scene rows do not give, scene rows with a score that is not one (NaN), and shard files of any
other shape, each with exit 2 naming the file (and line) and the field; a judge's verdict naming a
key twice is a judge error, never its last value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.shard_runs import copy_shards, lines, rehash, write_lines
from support.view_support import build_view

from odu.cli import main
from odu.core.schema import KeyPoint
from odu.judge import JudgeRequest, OpenAIJudge

# --- a summary its scene rows do not give ---------------------------------------------------------------


def _tampered(shards: Path, tmp_path: Path) -> Path:
    """A run whose summary says Avg 99.9 % (its hashes still right: only the numbers lie)."""
    run, _ = copy_shards(shards, tmp_path)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    summary["audio-visual"]["avg"] = 0.999
    (run / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return run


@pytest.mark.parametrize("command", ["report", "view", "judge-audit"])
def test_a_summary_its_scene_rows_do_not_give_is_refused(
    command: str, shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = _tampered(shards, tmp_path)
    out = tmp_path / "out"
    args = {
        "report": ["report", str(run), "--out", str(out), "--no-plots", "--resamples", "20", "--allow-incomplete"],
        "judge-audit": ["judge-audit", "--run", str(run), "--judge", "lexical"],
    }
    code = build_view(out, run) if command == "view" else main(args[command])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "summary.json disagrees with scenes.jsonl" in err and "audio-visual avg is 0.999" in err
    assert not out.exists()


def test_a_nan_scene_score_is_refused(shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run, _ = copy_shards(shards, tmp_path)
    text = (run / "scenes.jsonl").read_text(encoding="utf-8")
    first, rest = text.split("\n", 1)
    row = json.loads(first)
    row["s3"] = 0.5  # a defined score, made NaN below (json.dumps would write NaN too)
    (run / "scenes.jsonl").write_text(json.dumps(row).replace('"s3": 0.5', '"s3": NaN') + "\n" + rest)
    rehash(run)
    assert main(["report", str(run), "--out", str(tmp_path / "r"), "--no-plots", "--allow-incomplete"]) == 2
    err = capsys.readouterr().err
    assert "scenes.jsonl:1: not a scene row: 's3' must be a score in [0, 1] or null, got nan" in err


def test_a_score_outside_0_1_is_refused_naming_line_and_field(shards: Path, tmp_path: Path, capsys) -> None:
    run, _ = copy_shards(shards, tmp_path)
    rows = lines(run / "scenes.jsonl")
    rows[2]["s4"] = 1.5
    write_lines(run / "scenes.jsonl", rows)
    rehash(run)
    assert main(["report", str(run), "--out", str(tmp_path / "r"), "--no-plots", "--allow-incomplete"]) == 2
    assert "scenes.jsonl:3: not a scene row: 's4' must be a score in [0, 1] or null, got 1.5" in capsys.readouterr().err


# --- the judge: a key named twice ---------------------------------------------------------------------------


def test_a_verdict_naming_hit_twice_is_a_judge_error(openai_server, openai_key, tmp_path: Path) -> None:
    point = KeyPoint("kp01", "The user wants the sound muted", "intent", ("T1",))
    openai_server.responder = lambda body: '[{"qid": "kp01", "hit": true, "hit": false, "reason": "both"}]'
    judge = OpenAIJudge("loopback", base_url=openai_server.base_url, reasks=1, cache_path=tmp_path / "c.sqlite")
    try:
        [verdict] = judge.judge([JudgeRequest("s1", 0, "mute the sound", (point,))])
    finally:
        judge.close()
    assert verdict.hits is None and "names 'hit' twice" in (verdict.error or "")
    assert openai_server.count() == 2  # asked again once, then a judge error
