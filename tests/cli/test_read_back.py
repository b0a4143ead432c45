"""Issue 23 item 3: trust nothing read back. ``report``, ``view`` and ``merge`` refuse a summary its
scene rows do not give, scene rows with a score that is not one (NaN), and shard files of any
other shape, each with exit 2 naming the file (and line) and the field; a judge's verdict naming a
key twice is a judge error, never its last value."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import argv
from support.view_support import build_view

from odu.cli import main
from odu.judge import JudgeRequest, OpenAIJudge
from odu.schema import KeyPoint


def _eval(out: Path, *extra: str) -> int:
    return main([*argv("eval", sample=True, model="always", out=out), *extra])


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``odu-bench eval --shard 1/2`` and ``2/2`` (the always-trigger floor): ``<root>/s1/always``, ``s2/always``."""
    root = tmp_path_factory.mktemp("shards")
    for k in (1, 2):
        assert _eval(root / f"s{k}", "--shard", f"{k}/2") == 0
    return root


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write_lines(path: Path, rows: list[Any]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def rehash(run: Path) -> None:
    """Rewrite ``summary.json``'s file list to match the files as they are now (what an editor
    who knows the format does after changing them)."""
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    for name, entry in summary["files"].items():
        data = (run / name).read_bytes()
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        if "rows" in entry:
            entry["rows"] = sum(1 for line in data.split(b"\n") if line.strip())
    (run / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


def _copy(shards: Path, tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(shards, tmp_path / "shards")
    return tmp_path / "shards" / "s1" / "always", tmp_path / "shards" / "s2" / "always"


def _merge(one: Path, two: Path, out: Path) -> int:
    return main(["merge", str(one), str(two), "--out", str(out)])


# --- a summary its scene rows do not give ---------------------------------------------------------------


def _tampered(shards: Path, tmp_path: Path) -> Path:
    """A run whose summary says Avg 99.9 % (its hashes still right: only the numbers lie)."""
    run, _ = _copy(shards, tmp_path)
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
    run, _ = _copy(shards, tmp_path)
    text = (run / "scenes.jsonl").read_text(encoding="utf-8")
    first, rest = text.split("\n", 1)
    row = json.loads(first)
    row["s3"] = 0.5  # a defined score, made NaN below (json.dumps would write NaN too)
    (run / "scenes.jsonl").write_text(json.dumps(row).replace('"s3": 0.5', '"s3": NaN') + "\n" + rest)
    rehash(run)
    assert main(["report", str(run), "--out", str(tmp_path / "r"), "--no-plots", "--allow-incomplete"]) == 2
    err = capsys.readouterr().err
    assert "scenes.jsonl:1: NaN is not JSON" in err


def test_a_score_outside_0_1_is_refused_naming_line_and_field(shards: Path, tmp_path: Path, capsys) -> None:
    run, _ = _copy(shards, tmp_path)
    rows = _lines(run / "scenes.jsonl")
    rows[2]["s4"] = 1.5
    _write_lines(run / "scenes.jsonl", rows)
    rehash(run)
    assert main(["report", str(run), "--out", str(tmp_path / "r"), "--no-plots", "--allow-incomplete"]) == 2
    assert "scenes.jsonl:3: not a scene row: 's4' must be a score in [0, 1] or null, got 1.5" in capsys.readouterr().err


# --- merge: every field of a shard's files ------------------------------------------------------------------


def test_a_shard_that_lost_a_scene_is_refused(shards: Path, tmp_path: Path, capsys) -> None:
    """A scene dropped from every file of a shard, summary recomputed and hashes too: merging it
    would give a run over fewer scenes than the dataset holds."""
    from odu.run import summarize_run

    one, two = _copy(shards, tmp_path)
    dropped = _lines(one / "scenes.jsonl")[0]["scene_id"]
    for name in ("scenes.jsonl", "predictions.jsonl", *(p.name for p in one.glob("samples_*.jsonl"))):
        rows = [r for r in _lines(one / name) if dropped not in (r.get("scene_id"), r.get("doc", {}).get("scene_id"))]
        _write_lines(one / name, rows)
    summary = json.loads((one / "summary.json").read_text(encoding="utf-8"))
    rows = _lines(one / "scenes.jsonl")
    fresh = summarize_run(rows, summary["judge"], summary["annotation_language"])
    summary |= {k: v for k, v in fresh.items() if k not in ("judge", "annotation_language")}
    (one / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    rehash(one)
    assert _merge(one, two, tmp_path / "merged") == 2
    err = capsys.readouterr().err
    assert "holds" in err and "its run card says" in err and not (tmp_path / "merged").exists()


def _card(run: Path, change: Callable[[dict[str, Any]], None]) -> None:
    card = json.loads((run / "run_card.json").read_text(encoding="utf-8"))
    change(card)
    (run / "run_card.json").write_text(json.dumps(card, indent=2), encoding="utf-8")


def _results(run: Path, change: Callable[[dict[str, Any]], None]) -> None:
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    change(results)
    (run / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")


def _samples(run: Path, change: Callable[[list[Any]], None]) -> None:
    [path] = run.glob("samples_odu_av.jsonl")
    rows = _lines(path)
    change(rows)
    _write_lines(path, rows)


def _set(obj: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        obj = obj[part]
    obj[last] = value


#: The malformed shard files the issue met (each a traceback before), and what the refusal names.
SHAPES: dict[str, tuple[Callable[[Path], None], str]] = {
    "a string shard count": (lambda r: _card(r, lambda c: _set(c, "shard.count", "2")), "run_card.json: shard.count"),
    "a list dataset": (lambda r: _card(r, lambda c: _set(c, "dataset", [1])), "run_card.json: dataset must be"),
    "a non-object n-samples": (
        lambda r: _results(r, lambda x: _set(x, "n-samples", {"odu_av": 3})),
        "results.json: n-samples.odu_av must be",
    ),
    "a sample without doc": (lambda r: _samples(r, lambda s: s[0].pop("doc")), "samples_odu_av.jsonl:1: doc must be"),
    "empty filtered_resps": (
        lambda r: _samples(r, lambda s: _set(s[1], "filtered_resps", [])),
        "samples_odu_av.jsonl:2: filtered_resps must hold",
    ),
    "an integer scene id": (
        lambda r: _samples(r, lambda s: _set(s[0], "doc.scene_id", 7)),
        "samples_odu_av.jsonl:1: doc.scene_id must be text",
    ),
    "array lines": (
        lambda r: _samples(r, lambda s: s.__setitem__(0, [1, 2])),
        "samples_odu_av.jsonl:1: the line must be",
    ),
    "undecodable media JSON": (
        lambda r: _samples(r, lambda s: _set(s[0], "doc.media", "{row: 1")),
        "samples_odu_av.jsonl:1: doc.media must be a JSON dataset locator",
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_merge_answers_every_malformed_shard_shape_with_exit_2_naming_file_and_field(
    shape: str, shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    one, two = _copy(shards, tmp_path)
    damage, said = SHAPES[shape]
    damage(one)
    rehash(one)
    code = _merge(one, two, tmp_path / "merged")
    err = capsys.readouterr().err
    assert code == 2 and said in err, err
    assert "Traceback" not in err and not (tmp_path / "merged").exists()


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
