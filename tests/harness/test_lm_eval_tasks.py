"""Real lm-eval runs of the odu_* tasks on the bundled sample, with the loopback server playing the
omni model and the LLM judge: payloads, logged samples, scores equal to ``odu-bench score``,
``--use_cache`` reruns, malformed outputs and server errors counted, the text-only variant."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.asr_sidecar import write_sidecar as write_records_sidecar
from support.omni_fakes import FakeOmni, media_parts, part_bytes
from support.openai_server import OpenAIServer, Reply

from odu.cli import main as odu_main
from odu.core.prompts import AO_INSTRUCTION, instruction
from odu.data.sample import sample_dataset_dir
from odu.harness.folders import task_dir
from odu.harness.tasks import METRICS, doc_to_prompt, load_docs

SECRET = "sk-lm-eval-test-9f8e7d6c5b4a"
TABLE3 = ("m1", "m2", "m3", "m4", "m5", "avg", "ftr")


@pytest.fixture(scope="session")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample, prepared once for the session."""
    return sample_dataset_dir(tmp_path_factory.mktemp("sample-cache"))


@pytest.fixture(autouse=True)
def _env(sample_dataset: Path, hf_cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    monkeypatch.setenv("ODU_DATASET", str(sample_dataset))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("ODU_JUDGE", raising=False)
    monkeypatch.delenv("ODU_ASR", raising=False)


def run(
    tasks: list[str],
    model: str = "odu-openai",
    model_args: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    import odu.harness.models  # noqa: F401

    manager = TaskManager(include_path=str(task_dir()), include_defaults=False, metadata=metadata)
    return simple_evaluate(
        model=model,
        model_args={"preflight": False, **(model_args or {})},  # servers checked: tests/harness/test_run_control.py
        tasks=tasks,
        task_manager=manager,
        log_samples=True,
        bootstrap_iters=0,
        verbosity="ERROR",
        **options,
    )


def metric(results: dict[str, Any], task: str, name: str) -> Any:
    return results["results"][task][f"{name},odu"]


def by_scene(results: dict[str, Any], task: str) -> dict[str, dict[str, Any]]:
    return {s["doc"]["scene_id"]: s for s in results["samples"][task]}


@pytest.fixture
def openai_server(openai_server: OpenAIServer) -> OpenAIServer:
    """The shared strict server, keyed with this module's secret, serving the models named here."""
    openai_server.api_key = SECRET
    openai_server.models = ["omni-test", "judge-test", "gpt-test", "whisper-test"]
    return openai_server


def omni_args(server: OpenAIServer) -> dict[str, Any]:
    return {"model": "omni-test", "base_url": server.base_url, "retries": 1, "concurrency": 4, "progress": False}


def test_tasks_groups_and_settings() -> None:
    from lm_eval.tasks import TaskManager, get_task_dict

    manager = TaskManager(include_path=str(task_dir()), include_defaults=False)
    assert {
        "odu",
        "odu_lang",
        "odu_text",
        "odu_av",
        "odu_ao",
        "odu_av_en",
        "odu_av_zh",
        "odu_ao_en",
        "odu_ao_zh",
        "odu_av_text",
        "odu_ao_text",
    } <= set(manager.all_tasks)
    tasks = get_task_dict(["odu"], manager)
    [(group, members)] = tasks.items()
    assert sorted(t for t in members) == ["odu_ao", "odu_av"]
    av = members["odu_av"]
    assert av.config.generation_kwargs == {"until": [], "max_gen_toks": 4096, "do_sample": False, "temperature": 0.0}
    assert av.config.metadata["version"] == 1.0 and av.MULTIMODAL
    assert [m["metric"] for m in av.config.metric_list] == list(METRICS)
    assert {d["modality"] for d in av.eval_docs} == {"audio-visual"}
    assert {d["modality"] for d in members["odu_ao"].eval_docs} == {"audio-only"}


def test_omni_model_end_to_end(
    openai_server: OpenAIServer, sample_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeOmni(sample_dataset)
    av = [s for s, r in fake.records.items() if r["modality"] == "audio-visual"]
    multi = next(s for s in av if len(fake.records[s]["clips"]) > 2 and fake.records[s]["label"] == "positive")
    garbage = next(s for s in av if s != multi and fake.records[s]["label"] == "positive")
    broken = next(s for s in av if s not in (multi, garbage))
    think = next(s for s, r in fake.records.items() if r["modality"] == "audio-only" and r["label"] == "positive")
    fake.script = {garbage: "garbage", broken: "error", think: "think"}
    openai_server.responder = fake
    judge = f"openai:judge-test --judge-base-url {openai_server.base_url} --judge-cache {tmp_path / 'judge.sqlite'}"
    monkeypatch.setenv("ODU_JUDGE", judge)
    cache = str(tmp_path / "lm-cache")

    results = run(["odu_av", "odu_ao"], model_args=omni_args(openai_server), use_cache=cache)

    # --- payload: instruction, clips in order, replies between them, final clip last ---
    seen = set()
    for body in fake.model_requests:
        sid = fake.scene_of(body)
        seen.add(sid)
        record = fake.records[sid]
        assert body["messages"][0] == {"role": "system", "content": instruction(record["modality"])}
        assert body["temperature"] == 0 and body["max_tokens"] == 4096 and "stop" not in body
        parts = media_parts(body)
        if record["modality"] == "audio-visual":
            assert [hashlib.sha256(part_bytes(p)).hexdigest() for p in parts] == fake.clips[sid]
        assert len(parts) == len(record["clips"])
    assert seen == set(fake.records)
    [multi_body] = [b for b in fake.model_requests if fake.scene_of(b) == multi]
    content = multi_body["messages"][1]["content"]
    order = [p["type"] if p["type"] != "text" else p["text"] for p in content]
    media_at = [i for i, o in enumerate(order) if o == "video_url"]
    for k, clip in enumerate(fake.records[multi]["clips"][:-1]):
        between = order[media_at[k] + 1 : media_at[k + 1]]
        assert [f"[Turn {k + 1} · agent reply] {r}" for r in clip["replies"]] == [
            t for t in between if "agent reply" in t
        ]
    assert order[media_at[-1] - 1].endswith("(final turn, annotate this)]") and order[-1].startswith("Annotate only")

    # --- counted, not crashed: a malformed answer, a server that keeps failing ---
    assert metric(results, "odu_av", "inference_errors") == 1 and metric(results, "odu_av", "no_output") == 1
    assert metric(results, "odu_av", "parse_errors") == 1 and metric(results, "odu_ao", "parse_errors") == 0
    assert metric(results, "odu_av", "judge_requests") > 0 and metric(results, "odu_av", "judge_errors") == 0
    samples = by_scene(results, "odu_av")
    assert samples[garbage]["filtered_resps"][0]["raw_output"].startswith("Sorry")
    assert samples[garbage]["filtered_resps"][0]["prediction"]["parse_error"] is True
    failed = samples[broken]["filtered_resps"][0]
    assert failed["raw_output"] is None and "500" in failed["inference_error"] and failed["scene"]["no_output"]
    assert samples[broken]["resps"][0][0].startswith("<<odu-bench:inference-error>>")
    good = by_scene(results, "odu_ao")[think]["filtered_resps"][0]
    assert good["prediction"]["has_demand"] and not good["prediction"]["parse_error"]
    assert good["scene"]["s3"] == 1.0 and good["scene"]["s4"] == 1.0 and good["scene"]["key_points"]
    assert SECRET not in json.dumps(results, default=str)

    # --- the same outputs through `odu-bench score` give the same numbers ---
    predictions = tmp_path / "predictions.jsonl"
    with predictions.open("w", encoding="utf-8") as fh:
        for task in ("odu_av", "odu_ao"):
            for s in results["samples"][task]:
                scored = s["filtered_resps"][0]
                fh.write(json.dumps({"scene_id": scored["scene"]["scene_id"], "output": scored["raw_output"]}) + "\n")
    scored_dir = tmp_path / "scored"
    odu_main(
        [
            "score",
            "--scenes",
            str(sample_dataset / "scenes.jsonl"),
            "--predictions",
            str(predictions),
            "--out",
            str(scored_dir),
            "--no-progress",
            *judge.split()[1:],
            "--judge",
            judge.split()[0],
        ]
    )
    summary = json.loads((scored_dir / "summary.json").read_text(encoding="utf-8"))
    for task, modality in (("odu_av", "audio-visual"), ("odu_ao", "audio-only")):
        for name in (*TABLE3, "parse_errors", "no_output", "m2_errors_as_misses"):
            assert metric(results, task, name) == pytest.approx(summary[modality][name]), (task, name)

    # --- replaying the outputs through the pipeline reproduces the run ---
    replayed = run(["odu_av", "odu_ao"], model="odu-replay", model_args={"predictions": str(predictions)})
    for task in ("odu_av", "odu_ao"):
        for name in (*TABLE3, "parse_errors", "no_output", "inference_errors"):
            assert metric(replayed, task, name) == metric(results, task, name), (task, name)

    # --- --use_cache: only the failed scene is asked again, then nothing ---
    fake.script[broken] = "reference"
    fake.model_requests.clear()
    rerun = run(["odu_av", "odu_ao"], model_args=omni_args(openai_server), use_cache=cache)
    assert [fake.scene_of(b) for b in fake.model_requests] == [broken]
    assert metric(rerun, "odu_av", "inference_errors") == 0 and metric(rerun, "odu_av", "no_output") == 0
    fake.model_requests.clear()
    before = openai_server.count()
    again = run(["odu_av", "odu_ao"], model_args=omni_args(openai_server), use_cache=cache)
    assert fake.model_requests == [] and openai_server.count() == before  # model and judge: all cached
    assert metric(again, "odu_av", "judge_cache_hits") > 0
    for name in TABLE3:
        assert metric(again, "odu_av", name) == metric(rerun, "odu_av", name)


def write_sidecar(fake: FakeOmni, path: Path, modality: str = "audio-only") -> Path:
    """A sidecar ASR file for the scenes of ``modality``, every sentence naming its scene so that the
    fake knows what it is asked (:func:`support.asr_sidecar.write_sidecar`)."""
    return write_records_sidecar(fake.records, path, modality, tag=True)


def test_text_only_task_reads_sidecar_asr(openai_server: OpenAIServer, sample_dataset: Path, tmp_path: Path) -> None:
    fake = FakeOmni(sample_dataset)
    openai_server.responder = fake
    sidecar = write_sidecar(fake, tmp_path / "asr.jsonl")
    results = run(["odu_ao_text"], model_args=omni_args(openai_server), metadata={"asr": str(sidecar)})
    assert fake.model_requests and all(not media_parts(b) for b in fake.model_requests)
    for body in fake.model_requests:
        assert body["messages"][0]["content"] == AO_INSTRUCTION
        [user] = body["messages"][1:]
        assert isinstance(user["content"], str)
        assert "[No audio is provided for this clip. Below is the verbatim ASR transcript" in user["content"]
        assert re.search(r"\[\d+-\d+ ms\]( speaker 1)?: \(", user["content"])
    assert metric(results, "odu_ao_text", "m1") == 1.0 and metric(results, "odu_ao_text", "parse_errors") == 0
    with pytest.raises(ValueError, match="ASR input"):
        run(["odu_ao_text"], model_args=omni_args(openai_server))
    missing = tmp_path / "partial.jsonl"
    missing.write_text("".join(sidecar.read_text(encoding="utf-8").splitlines(keepends=True)[1:]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"ASR input .*partial.jsonl: no entry for 1 clip\(s\): \w+/v1$"):
        load_docs("ao", text_only=True, asr=str(missing))


def test_text_only_tasks_run_on_lm_eval_builtin_chat_models(
    openai_server: OpenAIServer, sample_dataset: Path, tmp_path: Path
) -> None:
    """``local-chat-completions`` gets the App D.2 prompt as text: the instruction as the system
    message, the user turn an ODU-Bench backend sends, word for word; same outputs, same numbers."""
    fake = FakeOmni(sample_dataset)
    av = next(s for s, r in fake.records.items() if r["modality"] == "audio-visual" and r["label"] == "positive")
    fake.script = {av: "garbage"}
    openai_server.responder = fake
    for modality in ("audio-only", "audio-visual"):
        write_sidecar(fake, tmp_path / f"{modality}.jsonl", modality)
    for task, modality in (("odu_ao_text", "audio-only"), ("odu_av_text", "audio-visual")):
        metadata = {"asr": str(tmp_path / f"{modality}.jsonl")}
        fake.model_requests.clear()
        builtin = run(
            [task],
            model="local-chat-completions",
            model_args={"model": "gpt-test", "base_url": f"{openai_server.base_url}/chat/completions"},
            metadata=metadata,
            apply_chat_template=True,
        )
        sent = {fake.scene_in_text(b): b for b in fake.model_requests}
        fake.model_requests.clear()
        ours = run([task], model_args=omni_args(openai_server), metadata=metadata)
        expected = {fake.scene_in_text(b): b for b in fake.model_requests}
        assert set(sent) == set(expected) == {s for s, r in fake.records.items() if r["modality"] == modality}
        for sid, body in sent.items():
            system, user = body["messages"]
            assert system["role"] == "system" and system["content"].rstrip() == instruction(modality)
            assert user == expected[sid]["messages"][1] and isinstance(user["content"], str)
            assert "scene_id" not in user["content"] and "sha256" not in user["content"]  # no scene reference
        for name in (*TABLE3, "parse_errors", "no_output", "inference_errors"):
            assert metric(builtin, task, name) == metric(ours, task, name), (task, name)
        assert metric(builtin, task, "parse_errors") == (1 if modality == "audio-visual" else 0)
        assert SECRET not in json.dumps(builtin, default=str)


def test_text_only_asr_transcribes_only_the_evaluated_scenes(openai_server: OpenAIServer) -> None:
    calls: list[bytes] = []

    def transcribe(req) -> Reply:
        calls.append(req.body)
        return Reply(
            body={
                "text": "turn it down",
                "language": "en",
                "duration": 1.0,
                "segments": [{"id": 0, "start": 0.25, "end": 1.1, "text": " turn it down"}],
            }
        )

    openai_server.route("POST", "/v1/audio/transcriptions", transcribe)
    metadata = {"asr": "openai:whisper-test", "asr_base_url": openai_server.base_url}
    docs = load_docs("ao", text_only=True, **metadata)["test"]
    assert calls == []  # nothing is sent when the docs load
    results = run(["odu_ao_text"], model="odu-never", metadata=metadata, limit=2)  # lm-eval renders docs[0] at load
    first_two = sum(len(d["clips"]) for d in docs.select(range(2)))
    assert len(calls) == first_two < sum(len(d["clips"]) for d in docs)  # --limit 2: two scenes' clips
    assert b"whisper-test" in calls[0] and b"RIFF" in calls[0]
    [sample, _] = results["samples"]["odu_ao_text"]
    prompt = sample["arguments"][0][0]
    assert prompt.startswith(AO_INSTRUCTION) and "[250-1100 ms]: turn it down" in prompt
    assert doc_to_prompt(docs[0]) in prompt
    assert len(calls) == first_two
    doc_to_prompt(docs[2])  # outside lm-eval: the doc's own clips, when asked
    assert len(calls) == first_two + len(docs[2]["clips"])


@pytest.mark.parametrize(
    "model, model_args",
    [("dummy", {}), ("local-chat-completions", {"model": "m", "base_url": "http://127.0.0.1:9/v1/chat/completions"})],
)
def test_native_tasks_refuse_lm_eval_builtin_models_before_any_request(model: str, model_args: dict) -> None:
    with pytest.raises(ValueError) as refused:
        run(["odu_ao", "odu_av_en"], model=model, model_args=model_args)
    message = str(refused.value)
    assert "odu_ao, odu_av_en" in message and "odu-openai" in message and "odu-never" in message
    assert "odu_ao_text" in message and "App D.2" in message


def test_models_are_registered_and_declared_as_entry_points() -> None:
    from importlib.metadata import entry_points

    from lm_eval.api.registry import get_model, model_registry

    from odu.harness.models import MODELS

    assert all(get_model(name) is cls for name, cls in MODELS.items())
    assert {e.name: e.load() for e in entry_points(group="lm_eval.models")} == MODELS
    assert "hf" in model_registry and "local-chat-completions" in model_registry  # built-ins kept
