"""The Realtime backend through the ``openai`` SDK's realtime client against the strict loopback
WebSocket fake (``tests/realtime_fake.py``; each refusal there cites openai-python's generated
types or users' reports): the session configuration, the App D.1 conversation (text items,
committed audio in turn order, assistant replies as ``output_text``), one response per scene,
retries, inference errors, a refused key stopping the run, secrets; and the bundled sample's
audio-only scenes end to end through ``odu-bench eval --model realtime``, scored exactly as
``odu-replay`` scores the same outputs."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from support.backend_media import FAST_BACKOFF, GREEDY, loader, request
from support.realtime_fake import RealtimeFake, Session
from support.sample_runs import assert_no_secret, assert_replay_scores_the_same, eval_sample, first_scene, read_json

from odu.core.prompts import AO_INSTRUCTION
from odu.models import make_backend
from odu.models.realtime import REALTIME_SAMPLE_RATE, RealtimeModel, pcm16
from odu.models.remote import ModelUnavailableError
from odu.transport.openai_client import MAX_RESPONSE_BYTES

pytest.importorskip("websockets")  # the backend's SDK (the fakes and modules import without it)

SECRET = "sk-realtime-test-9a8b7c6d5e4f"
MODEL = "gpt-realtime-2"


@pytest.fixture(autouse=True)
def _openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture
def fake() -> RealtimeFake:
    with RealtimeFake(None, key=SECRET, model=MODEL) as server:
        yield server


def backend(fake: RealtimeFake, **options: object) -> RealtimeModel:
    return RealtimeModel(MODEL, base_url=fake.base_url, progress=False, backoff=FAST_BACKOFF, timeout=20, **options)


def ao(media, ids: list[str], scene: str = "s1"):
    return request(media, ids, modality="audio-only", scene=scene)


def test_session_layout_and_one_text_response_per_scene(fake: RealtimeFake, media) -> None:
    [gen] = backend(fake).generate([ao(media, ["a1", "a2"])], loader(media), GREEDY)
    assert gen.error is None and json.loads(gen.text) == {"has_demand": False, "segments": []}
    [session] = fake.sessions
    assert not session.errors and session.responses == 1
    assert session.path.startswith("/v1/realtime?model=gpt-realtime-2")
    assert session.headers["authorization"] == f"Bearer {SECRET}" and "openai-beta" not in session.headers  # GA
    config = session.config
    assert config["output_modalities"] == ["text"] and config["instructions"] == AO_INSTRUCTION
    assert config["audio"]["input"]["turn_detection"] is None
    assert config["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24_000}
    assert config["max_output_tokens"] == 4096
    # App D.1: labels as user text, each clip committed in turn order, the reply as assistant text between
    layout = [(i["role"], [c["type"] for c in i["content"]]) for i in session.items]
    assert layout == [
        ("user", ["input_text", "input_text"]),
        ("user", ["input_audio"]),
        ("assistant", ["output_text"]),
        ("user", ["input_text"]),
        ("user", ["input_audio"]),
        ("user", ["input_text"]),
        ("assistant", ["output_text"]),
    ]  # the last one is the model's answer
    assert session.items[2]["content"][0]["text"] == "First reply."
    assert session.items[3]["content"][0]["text"].startswith("[Turn 2")
    assert session.items[5]["content"][0]["text"].startswith("Annotate only")
    assert session.audio == [pcm16(media[c].audio(REALTIME_SAMPLE_RATE)) for c in ("a1", "a2")]


def test_accounting_reaches_the_model_info(fake: RealtimeFake, media) -> None:
    model = backend(fake)
    model.generate([ao(media, ["a1"]), ao(media, ["a2"], scene="s2")], loader(media), GREEDY)
    info = model.info()
    stats = info["stats"]
    assert stats["scenes"] == stats["requests"] == 2 and stats["errors"] == 0 and stats["retries"] == 0
    seconds = sum(len(media[c].audio(REALTIME_SAMPLE_RATE)) for c in ("a1", "a2")) / REALTIME_SAMPLE_RATE
    assert stats["audio_seconds"] == pytest.approx(seconds, abs=1e-3) and stats["media_bytes"] == round(
        seconds * 48_000
    )
    assert stats["prompt_tokens"] > 0 and stats["completion_tokens"] > 0 and stats["input_audio_tokens"] > 0
    assert info["base_url"] == fake.base_url and info["generation"]["output_modalities"] == ["text"]
    assert SECRET not in json.dumps(info)


def test_long_clips_are_appended_in_chunks_and_short_ones_padded(fake: RealtimeFake, media, tmp_path: Path) -> None:
    from synth import write_audio_file

    from odu.data.media import LazyClip

    tiny = LazyClip(write_audio_file(tmp_path / "tiny.wav", np.zeros(400, dtype=np.float32)))  # 25 ms at 16 kHz
    long = LazyClip(write_audio_file(tmp_path / "long.wav", np.full(16_000 * 25, 0.1, dtype=np.float32)))
    clips = {**media, "tiny": tiny, "long": long}
    model = backend(fake)
    [gen] = model.generate([request(clips, ["long", "tiny"], modality="audio-only")], loader(clips), GREEDY)
    assert gen.error is None
    [session] = fake.sessions
    assert session.events.count("input_audio_buffer.append") == 3 + 1  # 25 s in 10 s chunks, then the tiny clip
    assert len(session.audio[1]) == 2 * REALTIME_SAMPLE_RATE // 10  # padded to the 100 ms the API requires
    assert model.info()["stats"]["padded_clips"] == 1 and any("padded" in p for p in model.pitfalls())


def test_fake_refuses_beta_shapes_and_wrong_content_types(fake: RealtimeFake) -> None:
    """Events the backend never sends, straight through the SDK: each gets an error event."""
    import asyncio

    from openai import AsyncOpenAI

    async def errors_for(*events: dict) -> list[dict]:
        client = AsyncOpenAI(api_key=SECRET, base_url=fake.base_url)
        async with client.realtime.connect(model=MODEL) as conn:
            await conn.recv_bytes()  # session.created
            for event in events:
                await conn.send(event)
            await conn.send({"type": "input_audio_buffer.commit"})  # always refused here: marks the end
            seen = []
            while True:
                event = json.loads(await conn.recv_bytes())
                if event["type"] == "error":
                    seen.append(event["error"])
                    if event["error"]["code"] == "input_audio_buffer_commit_empty":
                        return seen[:-1]
        await client.close()

    refused = asyncio.run(
        errors_for(
            {"type": "session.update", "session": {"modalities": ["text"], "instructions": "x"}},  # beta shape
            {"type": "session.update", "session": {"type": "realtime", "modalities": ["text"]}},
            {"type": "session.update", "session": {"type": "realtime", "output_modalities": ["text", "audio"]}},
            {
                "type": "session.update",
                "session": {"type": "realtime", "audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}},
            },
            {
                "type": "conversation.item.create",
                "item": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "beta content type"}],
                },
            },
            {
                "type": "conversation.item.create",
                "item": {"type": "message", "role": "user", "content": [{"type": "output_text", "text": "wrong role"}]},
            },
        )
    )
    assert [e["param"] for e in refused] == [
        "session.type",
        "session.modalities",
        "session.output_modalities",
        "session.audio.input.format.rate",
        "item.content[0].type",
        "item.content[0].type",
    ]


def test_a_session_left_in_its_defaults_answers_in_audio_and_by_itself(fake: RealtimeFake, media) -> None:
    """Guards the guard: without turning VAD off and asking for text, the fake answers every commit
    on its own and in audio (no output_text), as the API does by default."""
    import asyncio

    from openai import AsyncOpenAI

    async def talk() -> list[str]:
        client = AsyncOpenAI(api_key=SECRET, base_url=fake.base_url)
        async with client.realtime.connect(model=MODEL) as conn:
            await conn.send(
                {
                    "type": "input_audio_buffer.append",
                    "audio": base64.b64encode(pcm16(media["a1"].audio(REALTIME_SAMPLE_RATE))).decode(),
                }
            )
            await conn.send({"type": "input_audio_buffer.commit"})
            kinds = []
            while not kinds or kinds[-1] != "response.done":
                kinds.append(json.loads(await conn.recv_bytes())["type"])
        await client.close()
        return kinds

    kinds = asyncio.run(talk())
    assert "response.output_audio_transcript.delta" in kinds and "response.output_text.delta" not in kinds
    assert fake.sessions[0].responses == 1  # no response.create was sent


def test_transient_failures_are_retried_and_persistent_ones_become_inference_errors(fake: RealtimeFake, media) -> None:
    fake.inject("server_error", "drop")
    model = backend(fake)
    [gen] = model.generate([ao(media, ["a1"])], loader(media), GREEDY)
    assert gen.error is None and model.info()["stats"]["retries"] == 2 and len(fake.sessions) == 3
    fake.inject("server_error", "server_error", "server_error")
    [gen] = backend(fake, retries=2).generate([ao(media, ["a1"])], loader(media), GREEDY)
    assert gen.text is None and "model call failed" in gen.error and "server_error" in gen.error


def test_a_message_past_the_size_cap_is_an_inference_error(fake: RealtimeFake, media) -> None:
    fake.inject("huge")
    model = backend(fake, retries=0)
    [gen] = model.generate([ao(media, ["a1"])], loader(media), GREEDY)
    assert gen.text is None and f"reply larger than {MAX_RESPONSE_BYTES:,} bytes" in gen.error


def test_wrong_key_or_model_stops_the_run_naming_the_server_without_the_key(
    fake: RealtimeFake, media, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-00000000")
    with pytest.raises(ModelUnavailableError) as exc:
        backend(fake).generate([ao(media, ["a1"])], loader(media), GREEDY)
    assert "invalid_api_key" in str(exc.value) and "127.0.0.1" in str(exc.value)
    assert "sk-wrong-key-00000000" not in str(exc.value)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with pytest.raises(ModelUnavailableError, match="model_not_found"):
        RealtimeModel("gpt-realtime-9", base_url=fake.base_url, progress=False).generate(
            [ao(media, ["a1"])], loader(media), GREEDY
        )


def test_unreachable_server_is_an_inference_error_after_retries(media) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = RealtimeModel(
        MODEL, base_url=f"http://127.0.0.1:{port}/v1", progress=False, backoff=FAST_BACKOFF, retries=1
    )
    [gen] = model.generate([ao(media, ["a1"])], loader(media), GREEDY)
    assert gen.error and "model call failed" in gen.error and model.info()["stats"]["retries"] == 1


def test_audio_visual_scenes_are_refused_with_a_clear_message(fake: RealtimeFake, media) -> None:
    with pytest.raises(ValueError, match="audio-only scenes"):
        backend(fake).generate([request(media, ["v1"])], loader(media), GREEDY)
    assert not fake.sessions


def test_missing_key_and_bad_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        make_backend("realtime", model=MODEL)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with pytest.raises(ValueError, match="max_output_tokens"):
        RealtimeModel(MODEL, max_output_tokens=8192)


# --- the bundled sample end to end -------------------------------------------------------------------


def test_sample_end_to_end_scores_equal_replay_of_the_same_outputs(
    tmp_path: Path, prepared_sample: Path, capsys: pytest.CaptureFixture
) -> None:
    script = {first_scene(prepared_sample, "ao"): "garbage"}
    with RealtimeFake(prepared_sample, key=SECRET, model=MODEL, script=script) as fake:
        folder = eval_sample(tmp_path / "rt", "realtime", "odu_ao", f"model={MODEL},base_url={fake.base_url}")
    sessions: list[Session] = fake.sessions
    assert sessions and all(not s.errors and s.responses == 1 for s in sessions)
    summary = read_json(folder / "summary.json")
    assert summary["inference_errors"] == 0 and summary["parse_errors"] == 1  # the scripted garbage answer
    assert summary["audio-only"]["n_scenes"] == len(sessions)
    backend_info = read_json(folder / "run_card.json")["model"]["backend"]
    assert backend_info["backend"] == "realtime" and backend_info["stats"]["requests"] == len(sessions)
    out = capsys.readouterr()
    assert_no_secret(folder, SECRET, out.out, out.err)
    assert_replay_scores_the_same(folder, "odu_ao", tmp_path / "replay")
