"""The lmms-eval tasks' hooks (``lmms_eval_tasks/odu`` -> ``odu.harness.lmms``) on the bundled sample,
called as lmms-eval 0.7.3 calls them (no lmms-eval needed: tests/lmms/test_lmms_eval_run.py runs the
real one): the docs replacing the placeholder, the App D.1 messages with the clips as files and the
audio of videos routed per backend, the simple backends' text and media, the pitfalls, and scores
equal to ``odu-bench score`` on the same outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from odu.cli import main as odu_main
from odu.core.prompts import instruction
from odu.core.schema import scene_from_dict
from odu.data.media import probe
from odu.data.sample import sample_dataset_dir
from odu.harness import lmms
from odu.harness.folders import lmms_task_dir
from odu.harness.tasks import METRICS
from odu.selftest import perfect_output

TABLE3 = ("m1", "m2", "m3", "m4", "m5", "avg", "ftr")


@pytest.fixture(scope="module")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_dataset_dir(tmp_path_factory.mktemp("sample-cache"))


@pytest.fixture(autouse=True)
def _env(sample_dataset: Path, hf_cache: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    monkeypatch.setenv("ODU_DATASET", str(sample_dataset))
    monkeypatch.setenv("ODU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    monkeypatch.delenv("ODU_JUDGE", raising=False)


def docs(config: str) -> list[dict[str, Any]]:
    return list(lmms.process_docs(config)(None))


def kwargs(backend: str) -> dict[str, str]:
    """``lmms_eval_specific_kwargs`` as lmms-eval resolves them from the YAML for ``--model backend``."""
    table = yaml.safe_load(
        (Path(lmms_task_dir()) / "odu" / "_odu_base_yaml").read_text(encoding="utf-8").replace("!function ", "")
    )
    specific = table["lmms_eval_specific_kwargs"]
    return specific[backend] if backend in specific else {**specific, **specific["default"]}


def test_the_yaml_names_every_backend_of_the_table() -> None:
    table = yaml.safe_load(
        (Path(lmms_task_dir()) / "odu" / "_odu_base_yaml").read_text(encoding="utf-8").replace("!function ", "")
    )
    specific = table["lmms_eval_specific_kwargs"]
    assert set(specific) - {"default"} == set(lmms.BACKENDS)
    assert all(specific[name] == {lmms.BACKEND_KEY: name} for name in lmms.BACKENDS)
    assert table["generation_kwargs"]["until"] == []  # lmms-eval would add "\n\n", cutting the JSON
    assert {m["metric"] for m in table["metric_list"]} == set(METRICS)
    assert lmms.backend_name(kwargs("some_new_model")) == ""


def test_av_messages_keep_the_paper_layout_and_route_the_sound_track() -> None:
    av = docs("av")
    doc = max(av, key=lambda d: len(d["clips"]))
    assert len(doc["clips"]) > 1
    messages = lmms.doc_to_messages(doc, kwargs("qwen2_5_omni"))
    assert messages[0] == {"role": "system", "content": [{"type": "text", "text": instruction("audio-visual")}]}
    [user] = messages[1:]
    content = user["content"]
    videos = [i for i, c in enumerate(content) if c["type"] == "video"]
    assert len(videos) == len(doc["clips"])
    for n, (i, clip) in enumerate(zip(videos, doc["clips"])):
        video, audio = content[i], content[i + 1]
        assert audio["type"] == "audio"  # the track, right after its video (use_audio_in_video=False there)
        info = probe(video["url"])
        assert info.has_video and not info.has_audio  # the video without it: never heard twice
        sound = probe(audio["url"])
        assert sound.has_audio and sound.sample_rate == 16_000
        assert abs(sound.duration_s - clip["duration_ms"] / 1000) < 0.1
        label = content[i - 1]["text"]
        assert label.startswith(f"[Turn {n + 1} · user video")
        if n + 1 < len(doc["clips"]):
            between = [c["text"] for c in content[i + 2 : videos[n + 1]] if "agent reply" in c.get("text", "")]
            assert between == [f"[Turn {n + 1} · agent reply] {r}" for r in clip["replies"]]
    assert content[videos[-1] - 1]["text"].endswith("(final turn, annotate this)]")
    assert content[-1]["text"].startswith("Annotate only")
    # a backend that reads the video's track itself gets it whole, and no separate part
    native = lmms.doc_to_messages(doc, kwargs("gemini"))[1]["content"]
    assert [c["type"] for c in native if c["type"] != "text"] == ["video"] * len(doc["clips"])
    assert all(probe(c["url"]).has_audio for c in native if c["type"] == "video")


def test_ao_messages_and_the_simple_backends_inputs() -> None:
    doc = max(docs("ao"), key=lambda d: len(d["clips"]))
    content = lmms.doc_to_messages(doc, kwargs("qwen2_5_omni"))[1]["content"]
    audios = [c["url"] for c in content if c["type"] == "audio"]
    assert len(audios) == len(doc["clips"]) and not any(c["type"] == "video" for c in content)
    assert all(probe(a).sample_rate == 16_000 for a in audios)
    # simple backends (kimi_audio): the same texts in order, the clips as lmms-eval audio dicts
    text = lmms.doc_to_text(doc, kwargs("kimi_audio"))
    assert text.startswith(instruction("audio-only")) and "[Turn 1 · user audio]" in text
    visual = lmms.doc_to_visual(doc, kwargs("kimi_audio"))
    assert [v["sampling_rate"] for v in visual] == [16_000] * len(doc["clips"])
    assert all(isinstance(v["array"], np.ndarray) and v["array"].ndim == 1 for v in visual)
    av = docs("av")[0]
    assert [Path(p).suffix for p in lmms.doc_to_visual(av, kwargs("video_salmonn_2"))] == [".mp4"] * len(av["clips"])


def test_pitfalls_name_what_a_backend_misses(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lmms, "_FLAGGED", set())
    assert lmms.pitfalls("qwen2_5_omni", "audio-visual") == []
    assert lmms.pitfalls("kimi_audio", "audio-only") == []
    [deaf] = lmms.pitfalls("video_salmonn_2", "audio-visual")
    assert "sees the frames of each video only, no audio" in deaf and "video_salmonn_2.py" in deaf
    [none] = lmms.pitfalls("video_salmonn_2", "audio-only")
    assert "cannot take audio" in none
    [frames] = lmms.pitfalls("vllm", "audio-only")
    assert "cannot take audio" in frames and "TODO" in frames
    [unknown] = lmms.pitfalls("llava_onevision", "audio-visual")
    assert "not in the toolkit's table" in unknown
    lmms.doc_to_messages(docs("av")[0], kwargs("video_salmonn_2"))
    lmms.doc_to_messages(docs("av")[1], kwargs("video_salmonn_2"))
    err = capsys.readouterr().err
    assert err.count("odu-bench: pitfall (lmms-eval video_salmonn_2): ") == 1  # once per backend and modality
    # a simple class that sends one clip per request (--force_simple), given a multi-clip scene
    multi = max(docs("ao"), key=lambda d: len(d["clips"]))
    lmms.doc_to_visual(multi, kwargs("qwen2_5_omni"))
    assert "sends the first clip of a scene only" in capsys.readouterr().err
    lmms.doc_to_visual(multi, kwargs("kimi_audio"))  # sends every clip
    assert capsys.readouterr().err == ""


def test_scores_equal_odu_bench_score_on_the_same_outputs(sample_dataset: Path, tmp_path: Path) -> None:
    """process_results + the aggregations, as lmms-eval calls them, against ``odu-bench score`` on
    predictions written from the samples as lmms-eval logs them (the stripped answer as
    ``filtered_resps``, the items); an empty answer is an inference error (no output)."""
    results: dict[str, dict[str, Any]] = {}
    samples: list[dict[str, Any]] = []
    for config in ("av", "ao"):
        task_docs = docs(config)
        answers = []
        for i, doc in enumerate(task_docs):
            scene = scene_from_dict(json.loads(doc["record"]))
            answers.append(
                ["", "Sorry, I cannot help.", perfect_output(scene)][i % 3] if i < 6 else perfect_output(scene)
            )
        items = {m: [] for m in METRICS}  # type: dict[str, list[Any]]
        for doc, answer in zip(task_docs, answers):
            per_doc = lmms.process_results(doc, [answer.strip()])  # lmms-eval strips every answer
            samples.append({"doc_id": doc["scene_id"], "filtered_resps": answer.strip(), **per_doc})
            assert all(
                item == {"scene_id": doc["scene_id"], "output_sha256": item["output_sha256"]}
                for item in per_doc.values()
            )
            for m, item in per_doc.items():
                items[m].append(item)
        results[config] = {m: lmms.aggregation(m)(items[m]) for m in METRICS}
    assert results["av"]["inference_errors"] == 2 and results["av"]["no_output"] == 2
    assert results["av"]["parse_errors"] == 2 and results["ao"]["inference_errors"] == 2
    samples_file = tmp_path / "samples_odu_av.jsonl"
    samples_file.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    assert lmms.write_predictions(str(samples_file), str(predictions)) == len(samples)
    scored = tmp_path / "scored"
    odu_main(["score", "--scenes", str(sample_dataset / "scenes.jsonl"), "--predictions", str(predictions),
              "--out", str(scored), "--no-progress", "--annotation-language", "scene"])  # fmt: skip
    summary = json.loads((scored / "summary.json").read_text(encoding="utf-8"))
    for config, modality in (("av", "audio-visual"), ("ao", "audio-only")):
        for name in (*TABLE3, "parse_errors", "no_output", "m2_errors_as_misses"):
            assert results[config][name] == pytest.approx(summary[modality][name]), (config, name)


# --- issue 30 item 9: hostile docs, items and samples get one clear error naming the doc and field ---------


def _hostile(field: str, value: Any) -> dict[str, Any]:
    """The first audio-only doc of the sample with ``field`` (``clips.0.sha256``: a dotted path)
    set to ``value`` (``DROP``: removed)."""
    doc = json.loads(json.dumps(docs("ao")[0]))
    *path, last = field.split(".")
    holder = doc
    for key in path:
        holder = holder[int(key) if isinstance(holder, list) else key]
    if value is DROP:
        del holder[last]
    else:
        holder[int(last) if isinstance(holder, list) else last] = value
    return doc


DROP = object()
#: (field changed, value, what the error must name)
HOSTILE_DOCS = [
    ("clips", DROP, "clips"),
    ("clips", "v1", "clips"),
    ("clips", [], "clips"),
    ("clips.0", "v1", "clips[0]"),
    ("clips.0.id", 7, "clips[0].id"),
    ("clips.0.sha256", "../../escaped", "clips[0].sha256"),
    ("clips.0.sha256", DROP, "clips[0].sha256"),
    ("clips.0.duration_ms", "long", "clips[0].duration_ms"),
    ("clips.0.replies", "Sure.", "clips[0].replies"),
    ("modality", "smell", "modality"),
]


@pytest.mark.parametrize("hook", ["doc_to_messages", "doc_to_text", "doc_to_visual"])
@pytest.mark.parametrize(("field", "value", "named"), HOSTILE_DOCS)
def test_a_hostile_doc_is_named_with_its_field(hook: str, field: str, value: Any, named: str, tmp_path: Path) -> None:
    doc = _hostile(field, value)
    with pytest.raises(ValueError) as caught:
        getattr(lmms, hook)(doc, kwargs("qwen2_5_omni"))
    message = str(caught.value)
    assert f"scene {doc['scene_id']}" in message and named in message, message
    assert len(message.splitlines()) == 1
    assert not list(tmp_path.parent.rglob("escaped*"))  # nothing written outside the media cache


def test_a_doc_without_a_scene_id_is_named_by_its_field() -> None:
    doc = _hostile("scene_id", DROP)
    with pytest.raises(ValueError, match=r"'scene_id'"):
        lmms.doc_to_text(doc, kwargs("kimi_audio"))
    with pytest.raises(ValueError, match=r"'scene_id'"):
        lmms.process_results(doc, ["{}"])


@pytest.mark.parametrize("media", ["not json", "[]", '{"dataset": 3, "config": "ao", "row": 0}', "row -1"])
@pytest.mark.parametrize("hook", ["doc_to_messages", "doc_to_visual"])
def test_a_doc_whose_media_locator_is_not_one_is_named(hook: str, media: str) -> None:
    own = json.loads(docs("ao")[0]["media"])
    doc = _hostile("media", json.dumps({**own, "row": -1}) if media == "row -1" else media)
    with pytest.raises(ValueError) as caught:
        getattr(lmms, hook)(doc, kwargs("qwen2_5_omni"))
    message = str(caught.value)
    assert f"scene {doc['scene_id']}" in message and "media" in message, message


def test_a_clip_is_spooled_only_under_a_sha256_name(tmp_path: Path) -> None:
    from odu.data.media import LazyClip, MediaError
    from odu.models.clips import spool_clip

    clip = LazyClip(b"RIFF....WAVE")
    with pytest.raises(MediaError, match=r"not a SHA-256"):
        spool_clip(clip, "../../escaped", tmp_path / "media")
    assert not list(tmp_path.rglob("escaped*"))


def test_an_aggregation_over_items_process_results_never_saw_is_named() -> None:
    doc = docs("ao")[0]
    [item, *_] = lmms.process_results(doc, ["{}"]).values()
    aggregate = lmms.aggregation("m1")
    for bad, named in (
        ({"scene_id": "no-such-scene", "output_sha256": item["output_sha256"]}, "no-such-scene"),
        ({"scene_id": doc["scene_id"], "output_sha256": "0" * 64}, "output_sha256"),
        ({"scene_id": doc["scene_id"]}, "output_sha256"),
        ("m1", "item 2"),
    ):
        with pytest.raises(ValueError, match=named):
            aggregate([item, bad])


def test_a_lone_surrogate_answer_follows_the_surrogate_rule() -> None:
    """An answer with half a UTF-16 pair (a JSON escape cut in two) is text like any other: hashed and
    scored as every file the toolkit writes keeps it (odu.io.jsonio.SURROGATE_RULE: U+FFFD)."""
    doc = docs("ao")[0]
    cut = lmms.process_results(doc, ['{"has_demand": false, "segments": [], "note": "\ud83d"}'])["m1"]
    whole = lmms.process_results(doc, ['{"has_demand": false, "segments": [], "note": "\ufffd"}'])["m1"]
    assert cut["output_sha256"] == whole["output_sha256"]
    assert lmms.aggregation("m1")([cut]) == lmms.aggregation("m1")([whole])


@pytest.mark.parametrize(
    ("sample", "named"),
    [
        ([], "not a JSON object"),
        ({"m1": {"scene_id": "s"}}, "filtered_resps"),
        ({"filtered_resps": "{}"}, "m1"),
        ({"filtered_resps": "{}", "m1": "s"}, "m1"),
        ({"filtered_resps": "{}", "m1": {"scene_id": 5}}, "scene_id"),
    ],
)
def test_write_predictions_names_a_malformed_sample(sample: Any, named: str, tmp_path: Path) -> None:
    samples = tmp_path / "samples_odu_ao.jsonl"
    good = {"filtered_resps": "{}", "m1": {"scene_id": "s0"}}
    samples.write_text(json.dumps(good) + "\n" + json.dumps(sample) + "\n", encoding="utf-8")
    out = tmp_path / "predictions.jsonl"
    with pytest.raises(ValueError, match=rf"{samples.name}:2: .*{named}"):
        lmms.write_predictions(samples, out)
    assert not out.exists()


def test_results_json_gets_the_pitfalls_of_each_task_with_media() -> None:
    """``noting_pitfalls`` (the bridge puts it around lmms-eval's ``simple_evaluate``) adds, under ``"odu"``,
    what the named backend misses of each ODU-Bench task with media, found by its ``process_docs`` hook as
    lmms-eval's results keep it (``str`` of the function); other tasks and text-only ones get nothing."""
    configs = {
        task: {"task": task, "process_docs": str(hook)}
        for task, hook in (
            ("odu_av", lmms.process_docs("av")),
            ("odu_ao_zh", lmms.process_docs("ao_zh")),
            ("odu_av_text", lmms.process_docs("av", text_only=True)),
        )
    }
    configs["mme"] = {"task": "mme", "process_docs": "<function mme_docs at 0x7f>"}
    configs["odu_mine"] = {"task": "odu_mine", "process_docs": "<function odu_mine_docs at 0x7f>"}  # not a config

    def simple_evaluate(model: Any, **settings: Any) -> dict[str, Any]:
        return {"config": {"model": model if isinstance(model, str) else type(model).__name__}, "configs": configs}

    noted = lmms.noting_pitfalls(simple_evaluate)
    pitfalls = noted(model="video_salmonn_2")[lmms.RESULTS_KEY]["pitfalls"]
    assert pitfalls == {
        "odu_av": lmms.pitfalls("video_salmonn_2", "audio-visual"),
        "odu_ao_zh": lmms.pitfalls("video_salmonn_2", "audio-only"),
    }
    assert "frames of each video only" in pitfalls["odu_av"][0]
    assert noted("qwen2_5_omni")[lmms.RESULTS_KEY]["pitfalls"] == {"odu_av": [], "odu_ao_zh": []}  # positional too
    assert lmms.RESULTS_KEY not in noted(model=object())  # an instance: no --model name to look up
