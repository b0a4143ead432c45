"""Shard checks of ``odu-bench merge`` (``odu/runs/shards.py``), as promised: ``--shard K/N`` splits by
the SHA-256 of the scene id; merge takes only the N parts of one run (same run, one split, each
shard once, none missing, each scene in its own shard, once, every scene of the dataset as many as
each run card says), checks every field it reads of a shard's files (exit 2 naming file, line and
field), and rebuilds the files of the unsharded run with its exact numbers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import printed_table
from support.shard_runs import copy_shards, eval_always, lines, merge, rehash, write_lines

from odu.cli import main
from odu.runs.shards import in_shard, parse_shard, shard_index


def test_shard_k_of_n_is_the_sha256_of_the_scene_id_modulo_n() -> None:
    for sid in ("avp_gen_000001", "aon_hr_000042", "x"):
        digest = int(hashlib.sha256(sid.encode()).hexdigest(), 16)
        assert shard_index(sid, 3) == digest % 3 + 1 and in_shard(sid, (digest % 5 + 1, 5))
        assert in_shard(sid, None)
    assert {shard_index(f"s{i}", 2) for i in range(20)} == {1, 2}


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2", "2/-2"])
def test_a_shard_is_k_of_n_with_1_le_k_le_n(text: str) -> None:
    with pytest.raises(ValueError, match="K/N"):
        parse_shard(text)


def test_parse_shard() -> None:
    assert parse_shard("1/1") == (1, 1) and parse_shard("3/4") == (3, 4)


def _summary(folder: Path) -> dict:
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    summary.pop("run_id")
    for entry in summary["files"].values():
        entry.pop("sha256")
    return summary


def _rows(path: Path) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "run_id"} for row in lines(path)]


def test_the_merged_run_is_the_unsharded_one(
    shards: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ODU_CACHE_DIR", str(shards / "cache"))  # the shards' dataset, prepared there
    assert eval_always(tmp_path / "full") == 0
    printed = printed_table(capsys.readouterr().out)
    one, two = shards / "s1" / "always", shards / "s2" / "always"
    assert merge(two, one, tmp_path / "merged") == 0  # any order
    assert printed_table(capsys.readouterr().out) == printed  # the mark and the caveats too (issue 31)
    full, merged = tmp_path / "full" / "always", tmp_path / "merged"
    assert _summary(merged) == _summary(full)
    for name in ("scenes.jsonl", "predictions.jsonl"):  # the samples differ in the judge's per-batch accounting
        assert _rows(merged / name) == _rows(full / name), name
    results = json.loads((merged / "results.json").read_text(encoding="utf-8"))
    expected = json.loads((full / "results.json").read_text(encoding="utf-8"))
    assert results["n-samples"] == expected["n-samples"] and results["results"] == expected["results"]
    card = json.loads((merged / "run_card.json").read_text(encoding="utf-8"))
    assert card["dataset"] == json.loads((full / "run_card.json").read_text(encoding="utf-8"))["dataset"]
    assert [m["shard"] for m in card["merged_from"]] == ["1/2", "2/2"] and "shard" not in card


def test_the_merged_judge_block_sums_the_counters_and_keeps_the_settings() -> None:
    from types import SimpleNamespace

    from odu.runs.shards import merged_judge

    blocks = [
        {"name": "openai", "model": "j", "segments": 3, "requests": 2, "wall_time_s": 1.25, "retries": 0},
        {"name": "openai", "model": "j", "segments": 4, "requests": 4, "wall_time_s": 2.5},
    ]
    merged = merged_judge([SimpleNamespace(summary={"judge": b}) for b in blocks])  # type: ignore[misc]
    assert merged == {"name": "openai", "model": "j", "segments": 7, "requests": 6, "wall_time_s": 3.75, "retries": 0}


def test_parts_of_one_split_each_once_none_missing(shards: Path, tmp_path: Path, capsys) -> None:
    one = shards / "s1" / "always"
    assert main(["merge", str(one), "--out", str(tmp_path / "m")]) == 2
    assert "shard(s) 2/2 missing" in capsys.readouterr().err
    assert main(["merge", str(one), str(one), "--out", str(tmp_path / "m")]) == 2
    assert "shard 1/2 given twice" in capsys.readouterr().err
    assert eval_always(tmp_path / "t1", "--shard", "1/3") == 0
    capsys.readouterr()
    assert main(["merge", str(one), str(tmp_path / "t1" / "always"), "--out", str(tmp_path / "m")]) == 2
    assert "shards of different splits: N = 2, 3" in capsys.readouterr().err
    assert eval_always(tmp_path / "full") == 0
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "full" / "always"), str(one), "--out", str(tmp_path / "m")]) == 2
    assert "not a shard (its run card names no --shard K/N)" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
    assert eval_always(tmp_path / "l", "--shard", "1/2", "--limit", "2") == 2
    assert "--limit with --shard" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "differ"),
    [
        (lambda card: card["model"]["model_args"].update(temperature=0.7), "model.model_args"),
        (lambda card: card["lm_eval"].update(limit=5), "lm_eval.limit"),
        (lambda card: card.update(prompt="other prompt"), "prompt"),
    ],
)
def test_shards_of_different_runs_are_refused(
    change: Callable[[dict], None], differ: str, shards: Path, tmp_path: Path, capsys
) -> None:
    one, two = copy_shards(shards, tmp_path)
    card = json.loads((two / "run_card.json").read_text(encoding="utf-8"))
    change(card)
    (two / "run_card.json").write_text(json.dumps(card, indent=2), encoding="utf-8")
    rehash(two)
    assert merge(one, two, tmp_path / "m") == 2
    assert f"are shards of different runs: their {differ} differ" in capsys.readouterr().err


def test_shards_of_another_judge_are_refused_its_counters_are_not_settings(
    shards: Path, tmp_path: Path, capsys
) -> None:
    one, two = copy_shards(shards, tmp_path)
    summary = json.loads((two / "summary.json").read_text(encoding="utf-8"))
    summary["judge"]["name"] = "other"
    (two / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    assert merge(one, two, tmp_path / "m") == 2
    assert "their judge differ" in capsys.readouterr().err


def _add_scene(to: Path, source: Path, duplicate: bool = False) -> str:
    """The first scene of ``source`` (a shard) added to every file of ``to`` (``duplicate``: ``to``'s
    own first scene again), its summary recomputed, its run card's count and file hashes made to agree."""
    from odu.runs.contract import summarize_run

    giver = source if not duplicate else to
    sid = lines(giver / "scenes.jsonl")[0]["scene_id"]
    run_id = json.loads((to / "summary.json").read_text(encoding="utf-8"))["run_id"]
    for name in ("scenes.jsonl", "predictions.jsonl", *(p.name for p in to.glob("samples_*.jsonl"))):
        rows = [r for r in lines(giver / name) if sid in (r.get("scene_id"), r.get("doc", {}).get("scene_id"))]
        extra = [{**r, "run_id": run_id} for r in rows]
        write_lines(to / name, lines(to / name) + (extra if name.startswith("samples_") or not duplicate else []))
    summary = json.loads((to / "summary.json").read_text(encoding="utf-8"))
    fresh = summarize_run(lines(to / "scenes.jsonl"), summary["judge"], summary["annotation_language"])
    summary |= {k: v for k, v in fresh.items() if k not in ("judge", "annotation_language")}
    (to / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    card = json.loads((to / "run_card.json").read_text(encoding="utf-8"))
    for name in to.glob("samples_*.jsonl"):
        key = "av" if "odu_av" in name.name else "ao"
        card["dataset"][key]["n_scenes"] = len(lines(name))
    (to / "run_card.json").write_text(json.dumps(card, indent=2), encoding="utf-8")
    rehash(to)
    return sid


def test_a_scene_in_the_wrong_shard_is_refused(shards: Path, tmp_path: Path, capsys) -> None:
    one, two = copy_shards(shards, tmp_path)
    sid = _add_scene(one, two)
    assert merge(one, two, tmp_path / "m") == 2
    assert f"scene {sid} of task" in (err := capsys.readouterr().err) and "does not belong to shard 1/2" in err


def test_a_scene_twice_is_refused(shards: Path, tmp_path: Path, capsys) -> None:
    one, two = copy_shards(shards, tmp_path)
    sid = _add_scene(one, one, duplicate=True)
    assert merge(one, two, tmp_path / "m") == 2
    assert f"scene {sid} of task" in (err := capsys.readouterr().err) and f"is in {one} and in {one}" in err


def test_judge_counters_differ_between_shards_and_are_summed(shards: Path, tmp_path: Path) -> None:
    one, two = copy_shards(shards, tmp_path)
    for shard, requests in ((one, 3), (two, 5)):
        summary = json.loads((shard / "summary.json").read_text(encoding="utf-8"))
        summary["judge"] |= {"requests": requests, "wall_time_s": 0.5}
        (shard / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    assert merge(one, two, tmp_path / "m") == 0
    judge = json.loads((tmp_path / "m" / "summary.json").read_text(encoding="utf-8"))["judge"]
    assert judge["requests"] == 8 and judge["wall_time_s"] == 1.0


def test_a_shard_that_lost_a_scene_is_refused(shards: Path, tmp_path: Path, capsys) -> None:
    """A scene dropped from every file of a shard, its summary recomputed and hashes too: merging it
    would give a run over fewer scenes than the dataset holds."""
    from odu.runs.contract import summarize_run

    one, two = copy_shards(shards, tmp_path)
    first = lines(one / "scenes.jsonl")[0]
    dropped, key = first["scene_id"], "av" if first["modality"] == "audio-visual" else "ao"
    for name in ("scenes.jsonl", "predictions.jsonl", *(p.name for p in one.glob("samples_*.jsonl"))):
        rows = [r for r in lines(one / name) if dropped not in (r.get("scene_id"), r.get("doc", {}).get("scene_id"))]
        write_lines(one / name, rows)
    summary = json.loads((one / "summary.json").read_text(encoding="utf-8"))
    fresh = summarize_run(lines(one / "scenes.jsonl"), summary["judge"], summary["annotation_language"])
    summary |= {k: v for k, v in fresh.items() if k not in ("judge", "annotation_language")}
    (one / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    rehash(one)
    assert merge(one, two, tmp_path / "merged") == 2
    err = capsys.readouterr().err
    assert "holds" in err and "its run card says" in err and not (tmp_path / "merged").exists()
    card = json.loads((one / "run_card.json").read_text(encoding="utf-8"))
    card["dataset"][key]["n_scenes"] -= 1  # the run card made to agree: the dataset is still not covered
    (one / "run_card.json").write_text(json.dumps(card, indent=2), encoding="utf-8")
    rehash(one)
    assert merge(one, two, tmp_path / "merged") == 2
    assert "the shards hold" in capsys.readouterr().err


def test_samples_and_scene_rows_of_a_shard_must_hold_the_same_scenes(shards: Path, tmp_path: Path, capsys) -> None:
    one, two = copy_shards(shards, tmp_path)
    rows = lines(one / "scenes.jsonl")
    write_lines(one / "scenes.jsonl", rows[1:])
    summary = json.loads((one / "summary.json").read_text(encoding="utf-8"))
    from odu.runs.contract import summarize_run

    fresh = summarize_run(
        [{k: v for k, v in r.items() if k != "run_id"} for r in rows[1:]],
        summary["judge"],
        summary["annotation_language"],
    )
    summary |= {k: v for k, v in fresh.items() if k not in ("judge", "annotation_language")}
    (one / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    rehash(one)
    assert merge(one, two, tmp_path / "m") == 2
    assert "its samples files and scenes.jsonl hold different scenes" in capsys.readouterr().err


# --- merge: every field of a shard's files ------------------------------------------------------------------


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
    rows = lines(path)
    change(rows)
    write_lines(path, rows)


def _set(obj: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        obj = obj[part]
    obj[last] = value


#: The malformed shard files the issue met (each a traceback before), and what the refusal names.
SHAPES: dict[str, tuple[Callable[[Path], None], str]] = {
    "a string shard count": (lambda r: _card(r, lambda c: _set(c, "shard.count", "2")), "run_card.json: shard.count"),
    "a boolean shard index": (
        lambda r: _card(r, lambda c: _set(c, "shard.index", True)),
        "run_card.json: shard.index must be an integer, got bool true",
    ),
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
    one, two = copy_shards(shards, tmp_path)
    damage, said = SHAPES[shape]
    damage(one)
    rehash(one)
    code = merge(one, two, tmp_path / "merged")
    err = capsys.readouterr().err
    assert code == 2 and said in err, err
    assert "Traceback" not in err and not (tmp_path / "merged").exists()
