"""Model backends on their own: the OpenAI-compatible omni backend against the loopback server (real
sockets; payload shape, media handling, retries, inference errors, secrets), the scene request
format, replay and the floor baselines."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from support.backend_media import FAST_BACKOFF, GREEDY, loader, request
from support.openai_server import Fault, OpenAIServer, Reply, chat_completion

from odu.core.parse import parse_output
from odu.core.prompts import AO_INSTRUCTION, AV_INSTRUCTION, PROMPT_VERSION
from odu.data.media import LazyClip, MediaError, sample_times
from odu.io.cache import cache_dir
from odu.models import AlwaysTrigger, NeverTrigger, Replay, make_backend
from odu.models.base import Generation, decode_output, encode_output
from odu.models.openai_omni import OpenAIOmni
from odu.models.remote import ModelUnavailableError

SECRET = "sk-model-0a1b2c3d4e5f6a7b"
MODEL = "omni-test"
ANSWER = '{"has_demand": false, "segments": []}'


def backend(server: OpenAIServer, **options: object) -> OpenAIOmni:
    """The backend on ``server`` with the plain request shape (``provider=generic``: no ``GET /models``
    probe; the profiles are tested in ``test_providers.py``)."""
    options = {"provider": "generic", **options}
    return OpenAIOmni(MODEL, base_url=server.base_url, progress=False, backoff=FAST_BACKOFF, **options)


def media_parts(body: dict) -> list[dict]:
    kinds = ("video_url", "image_url", "input_audio", "audio_url")
    return [p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"] if p["type"] in kinds]


def data_of(part: dict) -> bytes:
    if part["type"] == "input_audio":
        return base64.b64decode(part["input_audio"]["data"])
    url = part[part["type"]]["url"]
    return base64.b64decode(url.split(",", 1)[1])


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture
def openai_server(openai_server: OpenAIServer) -> OpenAIServer:
    """The shared strict server, keyed with this module's secret and serving its model."""
    openai_server.api_key, openai_server.models = SECRET, [MODEL]
    return openai_server


# --- the OpenAI-compatible backend ---------------------------------------------------------------------


def test_av_request_carries_instruction_clips_in_order_and_replies_between(openai_server, media) -> None:
    openai_server.responder = lambda body: ANSWER
    model = backend(openai_server)
    [generation] = model.generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
    assert generation == Generation(ANSWER)
    [req] = openai_server.requests
    body = req.json
    assert req.headers["authorization"] == f"Bearer {SECRET}"
    assert body["model"] == "omni-test" and body["temperature"] == 0 and body["max_tokens"] == 4096
    assert "stop" not in body and "stream" not in body
    assert body["messages"][0] == {"role": "system", "content": AV_INSTRUCTION}
    [user] = body["messages"][1:]
    content = user["content"]
    expected = [
        "You will receive multiple video clips",
        "[Turn 1 · user video]",
        "video_url",
        "[Turn 1 · agent reply] First reply.",
        "[Turn 2 · user video (final turn, annotate this)]",
        "video_url",
        "Annotate only the user’s demand in the final video clip",
    ]
    assert len(content) == len(expected)
    assert all((p["type"] == e) if p["type"] != "text" else p["text"].startswith(e) for p, e in zip(content, expected))
    assert [data_of(p) for p in media_parts(body)] == [media["v1"].bytes, media["v2"].bytes]  # final clip last
    assert all(p["video_url"]["url"].startswith("data:video/mp4;base64,") for p in media_parts(body))
    info = model.info()
    assert info["stats"]["requests"] == 1 and info["media"]["audio_in_video"] == "native"
    assert SECRET not in json.dumps(info) + json.dumps(model.pitfalls())


def test_separate_audio_track_and_frames_mode(openai_server, media) -> None:
    openai_server.responder = lambda body: ANSWER
    backend(openai_server, audio_in_video="separate").generate([request(media, ["v1"])], loader(media), GREEDY)
    parts = media_parts(openai_server.requests[-1].json)
    assert [p["type"] for p in parts] == ["video_url", "input_audio"]
    audio, rate = sf.read(io.BytesIO(data_of(parts[1])))
    assert rate == 16_000 and abs(len(audio) / rate - 2.0) < 0.05 and np.abs(audio).max() > 0.1

    model = backend(openai_server, video_mode="frames", fps=2.0, max_frames=3)
    model.generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
    parts = media_parts(openai_server.requests[-1].json)
    per_clip = [len(sample_times(c.duration, 2.0, 3)) for c in (media["v1"], media["v2"])]
    assert per_clip == [3, 3]
    assert [p["type"] for p in parts] == ["image_url"] * 3 + ["input_audio"] + ["image_url"] * 3 + ["input_audio"]
    assert data_of(parts[0])[:3] == b"\xff\xd8\xff"  # JPEG
    assert model.info()["media"] == {
        "media_url": "data",
        "video_mode": "frames",
        "audio_in_video": "separate",
        "audio_part": "input_audio",
        "fps": 2.0,
        "max_frames": 3,
        "audio_sample_rate": 16_000,
    }
    with pytest.raises(ValueError, match="carry no audio"):
        backend(openai_server, video_mode="frames", audio_in_video="native")


def test_audio_only_sends_wav_as_is_and_transcodes_other_codecs(openai_server, media) -> None:
    openai_server.responder = lambda body: ANSWER
    backend(openai_server).generate([request(media, ["a1", "a2"], "audio-only")], loader(media), GREEDY)
    body = openai_server.requests[-1].json
    assert body["messages"][0]["content"] == AO_INSTRUCTION
    wav, flac = media_parts(body)
    assert wav["input_audio"]["format"] == "wav" and data_of(wav) == media["a1"].bytes
    assert flac["input_audio"]["format"] == "wav" and data_of(flac)[:4] == b"RIFF"
    assert "[Turn 1 · user audio]" in json.dumps(body, ensure_ascii=False)


def test_file_urls_point_at_content_addressed_copies(openai_server, media, tmp_path: Path) -> None:
    openai_server.responder = lambda body: ANSWER
    openai_server.local_media_root = cache_dir() / "media"  # vLLM: --allowed-local-media-path
    in_memory = {k: LazyClip(v.bytes) for k, v in media.items()}  # like dataset rows: bytes, no path
    backend(openai_server, media_url="file").generate([request(in_memory, ["v1"])], loader(in_memory), GREEDY)
    [part] = media_parts(openai_server.requests[-1].json)
    url = part["video_url"]["url"]
    assert url.startswith("file://") and url.endswith(f"{media['v1'].sha256}.mp4")
    assert Path(url.removeprefix("file://")).read_bytes() == media["v1"].bytes


def test_roles_layout_puts_replies_in_assistant_messages(openai_server, media) -> None:
    openai_server.responder = lambda body: ANSWER
    backend(openai_server, history="roles").generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
    roles = [
        (m["role"], m["content"] if isinstance(m["content"], str) else len(m["content"]))
        for m in openai_server.requests[-1].json["messages"]
    ]
    assert roles == [("system", AV_INSTRUCTION), ("user", 3), ("assistant", "First reply."), ("user", 3)]


def test_transient_failures_are_retried_to_the_answer(openai_server, media) -> None:
    openai_server.responder = lambda body: ANSWER
    openai_server.inject(Fault.server_error(503), Fault.rate_limit(retry_after=0.01), Fault.dropped())
    model = backend(openai_server, retries=3)
    assert model.generate([request(media, ["v1"])], loader(media), GREEDY) == [Generation(ANSWER)]
    assert model.info()["stats"]["retries"] == 3 and openai_server.count() == 4


def test_persistent_failures_become_inference_errors_not_empty_answers(openai_server, media) -> None:
    def responder(body: dict) -> str | Fault:
        return Fault.server_error() if data_of(media_parts(body)[-1]) == media["v2"].bytes else ANSWER

    openai_server.responder = responder
    model = backend(openai_server, retries=1)
    reqs = [request(media, ["v1"], scene="ok"), request(media, ["v2"], scene="broken")]
    ok, broken = model.generate(reqs, loader(media), GREEDY)
    assert ok == Generation(ANSWER)
    assert broken.text is None and "after 2 attempts" in broken.error and "500" in broken.error
    assert decode_output(encode_output(broken)) == broken and encode_output(broken) != ""
    assert model.info()["stats"]["errors"] == 1


@pytest.mark.parametrize("status", [401, 404])
def test_wrong_key_or_model_stops_the_run_without_leaking_the_key(status: int, openai_server, media) -> None:
    """401 (key) or 404 (unknown model: vLLM and OpenAI answer 404): the run stops at the first
    answer, no retry, no scene left to fail one by one."""
    openai_server.responder = lambda body: Reply(status=status, body={"error": {"message": f"no: {SECRET}"}})
    reqs = [request(media, ["a1"], "audio-only", scene=f"s{i}") for i in range(6)]
    with pytest.raises(ModelUnavailableError) as err:
        backend(openai_server, concurrency=1).generate(reqs, loader(media), GREEDY)
    assert f"HTTP {status}" in str(err.value) and SECRET not in str(err.value)
    assert openai_server.count() == 1


def test_the_servers_own_model_not_found_stops_the_run(openai_server, media) -> None:
    openai_server.models = ["another-model"]  # the server's own 404 model_not_found: no retry either
    with pytest.raises(ModelUnavailableError) as err:
        backend(openai_server, retries=3).generate([request(media, ["v1"])], loader(media), GREEDY)
    assert "HTTP 404" in str(err.value) and openai_server.count() == 1


def test_unreadable_media_is_an_inference_error_and_sends_nothing(openai_server, media) -> None:
    def broken(req, ref):
        raise MediaError(f"scene {req.scene_id} clip {ref.id}: corrupt")

    [generation] = backend(openai_server).generate([request(media, ["v1"])], broken, GREEDY)
    assert generation.text is None and "corrupt" in generation.error and openai_server.count() == 0


def test_generation_settings_and_their_pitfalls(openai_server, media) -> None:
    openai_server.responder = lambda body: ANSWER
    model = backend(openai_server)
    assert model.pitfalls() == []  # no video sent yet: no pitfall about its audio
    model.generate(
        [request(media, ["v1"])],
        loader(media),
        {"until": ["\n\n"], "max_gen_toks": 256, "do_sample": True, "temperature": 0.7},
    )
    body = openai_server.requests[-1].json
    assert body["temperature"] == 0.7 and body["stop"] == ["\n\n"] and body["max_tokens"] == 256
    joined = " ".join(model.pitfalls())
    assert "sampling on" in joined and "may cut the JSON" in joined
    assert "audio inside the video is left to the server" in joined
    openai_server.extra_fields = {"mm_processor_kwargs"}  # a vLLM extra
    quiet = backend(openai_server, extra_body={"mm_processor_kwargs": {"use_audio_in_video": True}})
    quiet.generate([request(media, ["v1"])], loader(media), GREEDY)
    assert openai_server.requests[-1].json["mm_processor_kwargs"] == {"use_audio_in_video": True}
    assert quiet.pitfalls() == []
    deaf = backend(openai_server, audio_in_video="none")
    deaf.generate([request(media, ["v1"])], loader(media), GREEDY)
    assert any("audio_in_video=none" in p for p in deaf.pitfalls())


def test_answers_cut_at_the_token_limit_are_counted_and_flagged(openai_server, media) -> None:
    """``finish_reason: "length"`` (the OpenAI chat API's mark of an answer stopped at ``max_tokens``)."""

    def cut(body) -> Reply:
        completion = chat_completion(body, '{"has_demand": tr')
        completion["choices"][0]["finish_reason"] = "length"
        return Reply(body=completion)

    openai_server.responder = cut
    model = backend(openai_server)
    [gen] = model.generate([request(media, ["a1"], modality="audio-only")], loader(media), GREEDY)
    assert gen.text == '{"has_demand": tr' and model.info()["stats"]["truncated"] == 1
    assert gen.truncated  # the scene's own answer is marked (issue 21): it reads as cut, not as malformed
    assert "1 answer(s) stopped at max_tokens=4096" in model.pitfalls()
    # concurrent scenes: only the cut one is marked
    openai_server.responder = lambda body: (
        Reply(body=chat_completion(body, ANSWER)) if "video" in json.dumps(body) else cut(body)
    )
    both = model.generate(
        [request(media, ["a1"], modality="audio-only"), request(media, ["v1"])], loader(media), GREEDY
    )
    assert [g.truncated for g in both] == [True, False]


def test_another_ranks_counts_are_added_to_info_and_pitfalls(openai_server) -> None:
    """Under torchrun rank 0's backend adds what the other ranks counted (``odu.harness.models``):
    its run card and pitfalls then speak for the whole run."""
    model = backend(openai_server)
    other = dict(model.info()["stats"], scenes=3, requests=3, truncated=2, prompt_tokens=120, wall_time_s=1.5)
    model.add_counts(other)
    model.add_counts({"scenes": 1, "truncated": 1})
    stats = model.info()["stats"]
    assert (stats["scenes"], stats["requests"], stats["truncated"], stats["prompt_tokens"]) == (4, 3, 3, 120)
    assert stats["wall_time_s"] == 1.5 and "3 answer(s) stopped at max_tokens=4096" in model.pitfalls()


def test_streaming_servers_are_read_chunk_by_chunk(openai_server, media) -> None:
    def sse(req) -> Reply:
        assert req.json["stream"] is True
        chunks = [
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
            for piece in ('{"has_demand": ', "false, ", '"segments": []}')
        ]
        chunks.append(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
            }
        )
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return Reply(body=body, content_type="text/event-stream")

    openai_server.route("POST", "/v1/chat/completions", sse)
    model = backend(openai_server, stream=True)
    assert model.generate([request(media, ["v1"])], loader(media), GREEDY) == [Generation(ANSWER)]
    assert model.info()["stats"]["completion_tokens"] == 3


def test_calls_overlap_up_to_the_concurrency_bound(media) -> None:
    with OpenAIServer(lambda body: ANSWER, latency=0.2, api_key=SECRET, models=[MODEL]) as server:
        model = backend(server, concurrency=3)
        reqs = [request(media, ["v1"], scene=f"s{i}") for i in range(7)]
        done: list[int] = []
        out = model.generate(reqs, loader(media), GREEDY, on_done=lambda i, g: done.append(i))
    assert out == [Generation(ANSWER)] * 7 and sorted(done) == list(range(7))
    assert server.max_in_flight == 3


def test_missing_key_without_base_url_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAIOmni("gpt-audio")


# --- requests, replay, floors ---------------------------------------------------------------------------


def test_scene_request_is_a_reference_tagged_with_the_prompt_version(media) -> None:
    req = request(media, ["v1", "v2"])
    text = req.to_context()
    assert text == req.to_context()  # deterministic: lm-eval's cache keys on it
    assert media["v1"].sha256 in text and len(text) < 1000  # references, not media
    body = json.loads(text)
    assert body["prompt_version"] == PROMPT_VERSION and body["scene_id"] == req.scene_id


def test_floor_baselines(media) -> None:
    reqs = [request(media, ["v1", "v2"]), request(media, ["a1"], "audio-only")]
    never = [parse_output(g.text, r.modality) for g, r in zip(NeverTrigger().generate(reqs), reqs)]
    assert [p.has_demand for p in never] == [False, False] and not any(p.issues for p in never)
    always = [parse_output(g.text, r.modality) for g, r in zip(AlwaysTrigger().generate(reqs), reqs)]
    spans = [(p.segments[0].start_ms, p.segments[0].end_ms) for p in always]
    assert spans == [(0, round(media["v2"].duration * 1000)), (0, round(media["a1"].duration * 1000))]
    seg = always[0].segments[0]
    assert (seg.transcript, seg.structured_intent, seg.required_context, seg.user_gender) == ("", "", (), "unknown")
    assert always[1].issues == ()  # audio-only: no user_in_frame asked


def test_replay_reads_outputs_and_reports_missing_scenes(media, tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text(
        json.dumps({"scene_id": "s1", "output": ANSWER})
        + "\n"
        + json.dumps({"scene_id": "other-task", "output": "x"})
        + "\n",
        encoding="utf-8",
    )
    replay = make_backend("replay", predictions=str(path))
    assert isinstance(replay, Replay)
    hit, miss = replay.generate([request(media, ["v1"]), request(media, ["v1"], scene="s2")])
    assert hit == Generation(ANSWER) and miss.text is None and str(path) in miss.error
    path.write_text(json.dumps({"scene_id": "s1", "output": 3}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="row 1"):
        Replay(path)
    with pytest.raises(ValueError, match="unknown backend"):
        make_backend("gpt-9")


def test_qwen_omni_backend_builds_processor_conversations(media) -> None:
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from odu.models.qwen_omni import THINKERS, QwenOmniLocal

    for model_cls, processor_cls in THINKERS.values():
        assert hasattr(transformers, model_cls) and hasattr(transformers, processor_cls)
    local = object.__new__(QwenOmniLocal)  # no weights offline: exercise the conversation only
    local.history = "inline"
    conversation = local.conversation(request(media, ["v1", "v2"]), loader(media))
    assert conversation[0]["content"] == [{"type": "text", "text": AV_INSTRUCTION}]
    videos = [p for p in conversation[1]["content"] if p["type"] == "video"]
    assert [Path(v["path"]).read_bytes() for v in videos] == [media["v1"].bytes, media["v2"].bytes]
