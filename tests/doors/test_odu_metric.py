"""``evaluate.load("odu_metric")``: same numbers as the core scorer, add/add_batch loops, dict and
text inputs, judges by spec (stored verdicts, loopback OpenAI-compatible server), clear errors,
and a two-process distributed run sharing an experiment id and cache dir."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

evaluate = pytest.importorskip("evaluate")

from support.judge_fakes import judge_responder  # noqa: E402
from support.predictions import predicted_segment  # noqa: E402

from odu.core.schema import SchemaError, load_scenes, scene_from_dict  # noqa: E402
from odu.judge import make_judge  # noqa: E402
from odu.runs.scoring import score_scenes  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
METRIC_DIR = REPO / "odu_metric"
RECORDS = json.loads((REPO / "tests" / "fixtures" / "demo_scenes.json").read_text(encoding="utf-8"))


def _outputs(seed: int = 0) -> list[dict]:
    """Parsed predictions built from the references, some flipped and some context dropped."""
    rng = random.Random(seed)
    out = []
    for s in RECORDS:
        ann = s["annotations"][s["language"]]["evaluation_targets"]
        if rng.random() < 0.25:
            out.append({"has_demand": not ann["has_demand"], "segments": []})
            continue
        out.append(
            {
                "has_demand": ann["has_demand"],
                "segments": [
                    predicted_segment(
                        g,
                        lambda: rng.random() < 0.5,
                        start_ms=g["start_ms"] + 120,
                        user_in_frame=g.get("user_in_frame", True),
                        user_age_group="adult",
                    )
                    for g in ann["segments"]
                ],
            }
        )
    return out


def _core_summary(outputs: list, judge: str = "lexical", language: str = "scene") -> dict:
    scenes = load_scenes(RECORDS)
    texts = {s.scene_id: json.dumps(o, ensure_ascii=False) for s, o in zip(scenes, outputs)}
    return score_scenes(scenes, texts, make_judge(judge), language).summary


@pytest.fixture
def metric():
    return evaluate.load(str(METRIC_DIR))


def test_load_by_name_from_the_repo_root(monkeypatch):
    monkeypatch.chdir(REPO)
    loaded = evaluate.load("odu_metric")
    assert loaded.name == "odu_metric"
    assert set(loaded.features) == {"predictions", "references"}


def test_compute_equals_the_core_scorer(metric):
    outputs = _outputs()
    result = metric.compute(predictions=outputs, references=RECORDS)
    assert result == _core_summary(outputs)
    assert result["judge"]["approximate"] is True
    assert {"audio-visual", "audio-only"} <= set(result)
    for key in ("m1", "m2", "m3", "m4", "m5", "avg", "ftr", "n_scenes", "parse_errors"):
        assert key in result["audio-visual"]


def test_add_and_add_batch_in_a_loop_give_the_one_shot_result(metric):
    outputs = _outputs(seed=1)
    expected = _core_summary(outputs)
    for i in range(0, len(RECORDS), 5):  # batches of dicts
        metric.add_batch(predictions=outputs[i : i + 5], references=RECORDS[i : i + 5])
    assert metric.compute() == expected
    for out, ref in zip(outputs, RECORDS):  # one at a time, as JSON text
        metric.add(prediction=json.dumps(out, ensure_ascii=False), reference=json.dumps(ref, ensure_ascii=False))
    assert metric.compute() == expected


def test_what_a_training_loop_holds_gives_the_core_numbers(metric, demo_dataset, hf_cache):
    """Dataset rows exactly as ``load_dataset`` yields them (media bytes, lazy clips), ``Scene`` objects
    and JSON text, in batches: the numbers of the core scorer (and of ``odu-bench score``)."""
    import datasets

    from odu.data.dataset import with_lazy_media

    outputs = _outputs(seed=6)
    by_id = {r["scene_id"]: o for r, o in zip(RECORDS, outputs)}
    expected = _core_summary(outputs)
    rows = datasets.load_dataset(str(demo_dataset), "all", split="test", cache_dir=hf_cache)
    assert len(rows) == len(RECORDS) and isinstance(rows[0]["turns"][0]["media"]["bytes"], bytes)
    for batch in (rows, with_lazy_media(rows)):
        for start in range(0, len(batch), 8):
            chunk = batch.select(range(start, min(start + 8, len(batch))))
            metric.add_batch(predictions=[by_id[r["scene_id"]] for r in chunk], references=list(chunk))
        assert metric.compute() == expected
    scenes = load_scenes(RECORDS)
    mixed = [s if i % 3 == 0 else json.dumps(r) if i % 3 == 1 else r for i, (s, r) in enumerate(zip(scenes, RECORDS))]
    assert metric.compute(predictions=outputs, references=mixed) == expected


def test_stored_references_keep_what_scoring_reads_and_no_media(demo_dataset, hf_cache):
    import datasets

    from odu.data.dataset import with_lazy_media
    from odu.metric.inputs import encode_reference, reference_record

    rows = datasets.load_dataset(str(demo_dataset), "all", split="test", cache_dir=hf_cache)
    row = rows[0]
    record = next(r for r in RECORDS if r["scene_id"] == row["scene_id"])
    stored = encode_reference(row, 0)
    media = sum(len(t["media"]["bytes"]) for t in row["turns"] if t["media"])
    assert len(stored) < len(json.dumps(record)) < media and stored.isascii()
    assert stored == encode_reference(with_lazy_media(rows)[0], 0) == encode_reference(record, 0)
    kept = reference_record(record, 0)
    assert set(record) - set(kept) == set(scene_from_dict(record).extra) != set()  # display fields go
    assert '"bytes"' not in stored and '"turns"' not in stored
    assert kept["annotations"] == reference_record(row, 0)["annotations"]
    with pytest.raises(ValueError, match="reference 3: a dataset row without the field 'annotations'"):
        encode_reference({k: v for k, v in row.items() if k != "annotations"}, 3)


def test_raw_text_outputs_and_missing_outputs(metric):
    texts = ["<think>the user asks</think> Sure! ```json\n" + json.dumps(o) + "\n```" for o in _outputs(seed=2)]
    texts[0], texts[1] = "I cannot help with that.", None
    result = metric.compute(predictions=texts, references=RECORDS)
    assert result["parse_errors"] == 1 and result["no_output"] == 1
    texts[0] = None  # None first in the column, too
    assert metric.compute(predictions=texts, references=RECORDS)["no_output"] == 2
    clean = metric.compute(predictions=_outputs(seed=2)[2:], references=RECORDS[2:])
    assert clean["parse_errors"] == 0


def test_stored_verdicts_judge_and_annotation_language(metric, tmp_path):
    outputs = _outputs(seed=3)
    lexical = _core_summary(outputs)
    scenes = load_scenes(RECORDS)
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text(
        "".join(
            json.dumps({"scene_id": s.scene_id, "segment": i, "qid": k.qid, "hit": True}) + "\n"
            for s in scenes
            for i, g in enumerate(s.annotation("en").segments)
            for k in g.key_points
        )
    )
    result = metric.compute(
        predictions=outputs, references=RECORDS, judge=f"verdicts:{verdicts}", annotation_language="en"
    )
    assert result == _core_summary(outputs, f"verdicts:{verdicts}", "en")
    assert result["annotation_language"] == "en"
    assert result["judge"]["name"] == "verdicts" and result["judge"]["approximate"] is False
    assert result["audio-visual"]["m2"] != lexical["audio-visual"]["m2"]


def test_openai_judge_with_options_on_a_loopback_server(metric, openai_server, tmp_path, monkeypatch):
    secret = "sk-metric-test-0c9b8a"
    monkeypatch.setenv("METRIC_JUDGE_KEY", secret)
    openai_server.api_key, openai_server.models = secret, ["loopback-judge"]
    openai_server.responder = judge_responder()
    options = {
        "base_url": openai_server.base_url,
        "api_key_env": "METRIC_JUDGE_KEY",
        "concurrency": 4,
        "cache_path": str(tmp_path / "verdicts.sqlite"),
        "progress": False,
    }
    outputs = _outputs(seed=4)
    result = metric.compute(
        predictions=outputs, references=RECORDS, judge="openai:loopback-judge", judge_options=options
    )
    assert result["judge"]["model"] == "loopback-judge" and result["judge"]["approximate"] is False
    assert result["judge_errors"] == 0 and openai_server.count() > 0
    assert all(r.headers["authorization"] == f"Bearer {secret}" for r in openai_server.requests)
    assert secret not in json.dumps(result)


@pytest.mark.parametrize(
    "references, error, message",
    [
        ([RECORDS[0], RECORDS[0]], SchemaError, "duplicate scene_id"),
        (["{not json"], ValueError, "reference 0"),
        ([None], ValueError, "reference 0: expected a scene record, a dataset row, a Scene or their JSON text"),
        ([{k: v for k, v in RECORDS[0].items() if k != "clips"}], SchemaError, f"scene {RECORDS[0]['scene_id']}"),
    ],
)
def test_bad_references_name_the_problem(metric, references, error, message):
    with pytest.raises(error, match=message):
        metric.compute(predictions=[None] * len(references), references=references)


def test_unknown_judge_spec_is_refused(metric):
    with pytest.raises(ValueError, match="unknown judge spec"):
        metric.compute(predictions=[None], references=[RECORDS[0]], judge="oracle")


_WORKER = textwrap.dedent(
    """
    import json, sys
    import evaluate
    metric_dir, cache_dir, data, pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    predictions, references = json.load(open(data, encoding="utf-8"))
    metric = evaluate.load(metric_dir, num_process=2, process_id=pid, experiment_id="odu-two-process",
                           cache_dir=cache_dir)
    for prediction, reference in zip(predictions, references):
        metric.add(prediction=prediction, reference=reference)
    print(json.dumps(metric.compute(judge="lexical")))
    """
)


def test_two_processes_share_one_result_and_any_unicode_survives(tmp_path):
    """Gathered from two processes' Arrow files: raw texts and references with CJK, emoji and lone
    surrogates (which UTF-8 cannot hold) come back as they went in: the core scorer's numbers."""
    records = json.loads(json.dumps(RECORDS))
    odd = "\ud800 \U0001f600 \u8bf7 \udfff"
    for record in records:
        for ann in record["annotations"].values():
            for segment in ann["evaluation_targets"]["segments"]:
                segment["transcript"] += f" {odd}"
    outputs = [f"{odd} ```json\n{json.dumps(o, ensure_ascii=False)}\n```" for o in _outputs(seed=5)]
    outputs[1] = None
    half = len(RECORDS) // 2
    shards = [(outputs[:half], records[:half]), (outputs[half:], records[half:])]
    procs = []
    for pid, shard in enumerate(shards):
        data = tmp_path / f"shard{pid}.json"
        data.write_text(json.dumps(shard), encoding="utf-8")  # ASCII escapes: lone surrogates travel
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", _WORKER, str(METRIC_DIR), str(tmp_path / "cache"), str(data), str(pid)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=tmp_path,
            )
        )
    results = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[1] is None  # only process 0 computes
    scenes = load_scenes(records)
    core = score_scenes(scenes, {s.scene_id: o for s, o in zip(scenes, outputs)}, make_judge("lexical")).summary
    assert results[0] == core and results[0]["no_output"] == 1 and results[0]["parse_errors"] == 0
    assert core != _core_summary(_outputs(seed=5))  # the odd text took part in the scoring (M4)
    with pytest.raises(UnicodeEncodeError):
        odd.encode("utf-8")  # what plain UTF-8 storage would have refused
