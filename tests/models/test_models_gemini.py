"""The Gemini backend through the real ``google-genai`` SDK against the strict loopback fake of the
Gemini REST API (``tests/gemini_fake.py``; each refusal there cites the API's docs or its users'
reports): request layout (App D.1), inline media vs the Files API, thinking settings, retries,
inference errors, a refused key stopping the run, secrets; and the bundled sample end to end
through ``odu-bench eval --model gemini``, scored exactly as ``odu-replay`` scores the same outputs."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from support.backend_media import FAST_BACKOFF, GREEDY, loader, request
from support.gemini_fake import INLINE_LIMIT, GeminiFake
from support.openai_server import Fault, OpenAIServer
from support.sample_runs import assert_no_secret, assert_replay_scores_the_same, eval_sample, first_scene, read_json

from odu.core.prompts import AO_INSTRUCTION, AV_INSTRUCTION
from odu.models import gemini as gemini_module
from odu.models import make_backend
from odu.models.gemini import GeminiModel
from odu.models.remote import ModelUnavailableError

pytest.importorskip("google.genai")  # the backend's SDK (the fakes and modules import without it)

SECRET = "AIza-gemini-test-5f4e3d2c1b0a"
MODEL = "gemini-3.1-pro-preview"


@pytest.fixture(autouse=True)
def _gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    monkeypatch.setattr(gemini_module, "GEMINI_FILE_POLL_S", 0.01)


@pytest.fixture
def fake() -> GeminiFake:
    with OpenAIServer() as server:
        yield GeminiFake(None, key=SECRET, model=MODEL).attach(server)


def backend(fake: GeminiFake, **options: object) -> GeminiModel:
    assert fake.server is not None
    return GeminiModel(fake.model, base_url=fake.server.origin, progress=False, backoff=FAST_BACKOFF, **options)


def b64(data: str) -> bytes:
    return base64.urlsafe_b64decode(data.replace("+", "-").replace("/", "_") + "=" * (-len(data) % 4))


def inline_parts(body: dict) -> list[dict]:
    return [
        p["inlineData"] if "inlineData" in p else p["inline_data"]
        for c in body["contents"]
        for p in c["parts"]
        if "inlineData" in p or "inline_data" in p
    ]


def texts(content: dict) -> list[str]:
    return [p["text"] for p in content["parts"] if "text" in p]


def test_av_request_alternates_user_and_model_with_clips_in_order(fake: GeminiFake, media) -> None:
    gen = backend(fake).generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
    assert gen[0].error is None and json.loads(gen[0].text) == {"has_demand": False, "segments": []}
    [body] = fake.generate_requests
    assert body["systemInstruction"]["parts"][0]["text"] == AV_INSTRUCTION
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]  # App D.1: reply between the turns
    assert texts(body["contents"][1]) == ["First reply."]
    assert texts(body["contents"][0])[-1].startswith("[Turn 1")
    assert texts(body["contents"][2])[-1].startswith("Annotate only")  # closing instruction after the final clip
    blobs = inline_parts(body)
    assert [b.get("mimeType") or b.get("mime_type") for b in blobs] == ["video/mp4", "video/mp4"]
    assert [b64(b["data"]) for b in blobs] == [media["v1"].bytes, media["v2"].bytes]
    config = body["generationConfig"]
    assert config["temperature"] == 0 and config["maxOutputTokens"] == 4096 and "thinkingConfig" not in config


def test_audio_only_sends_documented_types_as_they_are(fake: GeminiFake, media) -> None:
    gen = backend(fake).generate([request(media, ["a1", "a2"], modality="audio-only")], loader(media), GREEDY)
    assert gen[0].error is None
    [body] = fake.generate_requests
    assert body["systemInstruction"]["parts"][0]["text"] == AO_INSTRUCTION
    blobs = inline_parts(body)
    # WAV and FLAC are both on https://ai.google.dev/gemini-api/docs/audio#supported-formats
    assert [b.get("mimeType") or b.get("mime_type") for b in blobs] == ["audio/wav", "audio/flac"]
    assert b64(blobs[1]["data"]) == media["a2"].bytes


def inline_body_size(fake: GeminiFake, media) -> int:
    """Bytes of the scene's request when all its media goes inline."""
    backend(fake).generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
    size = len(json.dumps(fake.generate_requests.pop()).encode())
    assert size > len(AV_INSTRUCTION.encode()) + len(media["v1"].bytes) + len(media["v2"].bytes)
    return size


def test_request_above_the_inline_limit_goes_through_the_files_api(fake: GeminiFake, media) -> None:
    """The fake refuses bodies above its limit (the API's 20 MB); with the backend's inline budget
    below the scene's size, the largest clips are uploaded (resumable protocol), waited for until
    ACTIVE, referenced as fileData and deleted at the end of the run."""
    fake.inline_limit = inline_body_size(fake, media) - 1  # the scene inline would be refused
    smaller = min(len(media["v1"].bytes), len(media["v2"].bytes))
    budget_mb = (len(AV_INSTRUCTION.encode()) + 2000 + 1.4 * smaller) / 1e6  # room for the smaller clip only
    model = backend(fake, inline_limit_mb=budget_mb)
    gen = model.generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
    assert gen[0].error is None, gen[0].error
    [body] = fake.generate_requests
    refs = [
        p.get("fileData") or p.get("file_data")
        for c in body["contents"]
        for p in c["parts"]
        if "fileData" in p or "file_data" in p
    ]
    assert len(refs) == 1 and (refs[0].get("mimeType") or refs[0].get("mime_type")) == "video/mp4"
    assert fake.deleted and not fake.files  # cleaned up at the end of the run
    starts = [r for r in fake.server.requests if r.path.startswith("/upload/") and "sessions" not in r.path]
    assert len(starts) == 1 and starts[0].headers["x-goog-upload-protocol"] == "resumable"
    polls = [r for r in fake.server.requests if r.method == "GET" and "/files/" in r.path]
    assert len(polls) == 2  # PROCESSING once, then ACTIVE
    stats = model.info()["stats"]
    assert stats["uploaded_files"] == 1 and stats["uploaded_bytes"] == max(
        len(media["v1"].bytes), len(media["v2"].bytes)
    )


def test_the_default_inline_budget_fits_the_api_limit(fake: GeminiFake) -> None:
    """20 MB of base64 media + text stays below the 20 MiB the API's payload error names."""
    assert fake.inline_limit == INLINE_LIMIT == 20 * 1024 * 1024
    assert GeminiModel(MODEL).inline_limit <= INLINE_LIMIT


def test_a_body_above_the_limit_is_refused_by_the_fake(fake: GeminiFake, media) -> None:
    """Guards the guard: the same scene sent inline to a fake with a smaller limit is an inference error."""
    fake.inline_limit = inline_body_size(fake, media) - 1
    gen = backend(fake, retries=0).generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
    assert gen[0].error and "payload size exceeds the limit" in gen[0].error


def test_thinking_settings_reach_the_request_and_bad_pairs_are_refused(fake: GeminiFake, media) -> None:
    backend(fake, thinking_level="low").generate([request(media, ["a1"], modality="audio-only")], loader(media), GREEDY)
    thinking = fake.generate_requests[-1]["generationConfig"]["thinkingConfig"]
    assert str(thinking.get("thinkingLevel") or thinking.get("thinking_level")).lower() == "low"
    with pytest.raises(ValueError, match="not both"):
        backend(fake, thinking_level="low", thinking_budget=128)
    with pytest.raises(ValueError, match="thinking_budget, not thinking_level"):
        GeminiModel("gemini-2.5-flash", thinking_level="low")


def test_fake_refuses_what_the_api_refuses(fake: GeminiFake) -> None:
    """Requests the backend never sends, straight through the SDK: the fake answers them 400."""
    from google import genai
    from google.genai import errors, types

    client = genai.Client(
        api_key=SECRET,
        http_options=types.HttpOptions(base_url=fake.server.origin, retry_options=types.HttpRetryOptions(attempts=1)),
    )

    def refused(contents, config=None) -> str:
        with pytest.raises(errors.ClientError) as exc:
            client.models.generate_content(model=MODEL, contents=contents, config=config)
        return exc.value.message

    user = types.Content(role="user", parts=[types.Part.from_text(text="hi")])
    model = types.Content(role="model", parts=[types.Part.from_text(text="ok")])
    assert "alternate" in refused([user, user])
    assert "ends with a user role" in refused([user, model])
    assert "valid role" in refused([types.Content(role="assistant", parts=[types.Part.from_text(text="x")])])
    assert "Unsupported MIME" in refused(
        [types.Content(role="user", parts=[types.Part.from_bytes(data=b"RIFF", mime_type="audio/x-m4a")])]
    )
    both = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(thinking_level="low", thinking_budget=64))
    assert "both" in refused([user], both)
    bad_key = genai.Client(
        api_key="wrong",
        http_options=types.HttpOptions(base_url=fake.server.origin, retry_options=types.HttpRetryOptions(attempts=1)),
    )
    with pytest.raises(errors.ClientError) as exc:
        bad_key.models.generate_content(model=MODEL, contents=[user])
    assert exc.value.code == 400 and "API_KEY_INVALID" in str(exc.value.details)


def test_a_file_used_before_it_is_active_is_refused(fake: GeminiFake, media) -> None:
    import io

    from google import genai
    from google.genai import errors, types

    fake.processing_polls = 5
    client = genai.Client(
        api_key=SECRET,
        http_options=types.HttpOptions(base_url=fake.server.origin, retry_options=types.HttpRetryOptions(attempts=1)),
    )
    file = client.files.upload(file=io.BytesIO(media["a1"].bytes), config={"mime_type": "audio/wav"})
    assert file.state.value == "PROCESSING"
    with pytest.raises(errors.ClientError) as exc:
        client.models.generate_content(
            model=MODEL,
            contents=[
                types.Content(
                    role="user",
                    parts=[
                        types.Part.from_uri(file_uri=file.uri, mime_type="audio/wav"),
                        types.Part.from_text(text="?"),
                    ],
                )
            ],
        )
    assert exc.value.status == "FAILED_PRECONDITION"


def test_transient_failures_are_retried_and_persistent_ones_become_inference_errors(fake: GeminiFake, media) -> None:
    fake.server.inject(Fault.server_error(503), Fault.rate_limit(retry_after=0.01))
    model = backend(fake)
    [gen] = model.generate([request(media, ["a1"], modality="audio-only")], loader(media), GREEDY)
    assert gen.error is None and model.info()["stats"]["retries"] == 2
    fake.server.inject(*[Fault.server_error(500)] * 3)
    [gen] = backend(fake, retries=2).generate([request(media, ["a1"], modality="audio-only")], loader(media), GREEDY)
    assert gen.text is None and "model call failed" in gen.error and "500" in gen.error


def test_blocked_answers_and_thought_parts(media, tmp_path: Path) -> None:
    with OpenAIServer() as server:
        fake = GeminiFake(None, key=SECRET, model=MODEL).attach(server)
        fake._final = {}
        model = backend(fake)
        fake.script[""] = "blocked"
        [gen] = model.generate([request(media, ["a1"], modality="audio-only")], loader(media), GREEDY)
        assert gen.error and "SAFETY" in gen.error
        fake.script[""] = "think"
        [gen] = model.generate([request(media, ["a1"], modality="audio-only")], loader(media), GREEDY)
        assert gen.text == '{"has_demand": false, "segments": []}'  # the thought part is not the answer
        assert model.info()["stats"]["thoughts_tokens"] == 7


def test_wrong_key_or_model_stops_the_run_naming_the_server_without_the_key(
    fake: GeminiFake, media, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-wrong-key-0000")
    with pytest.raises(ModelUnavailableError) as exc:
        backend(fake).generate([request(media, ["a1"], modality="audio-only")], loader(media), GREEDY)
    assert fake.server.origin.split("//")[1] in str(exc.value) and "AIza-wrong-key-0000" not in str(exc.value)
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    with pytest.raises(ModelUnavailableError, match="404"):
        GeminiModel("gemini-9-ultra", base_url=fake.server.origin, progress=False).generate(
            [request(media, ["a1"], modality="audio-only")], loader(media), GREEDY
        )


def test_missing_key_names_both_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ValueError, match="GOOGLE_API_KEY or GEMINI_API_KEY"):
        make_backend("gemini", model=MODEL)


def test_accounting_reaches_the_model_info(fake: GeminiFake, media) -> None:
    model = backend(fake)
    model.generate(
        [request(media, ["v1", "v2"]), request(media, ["a1"], modality="audio-only", scene="s2")], loader(media), GREEDY
    )
    info = model.info()
    stats = info["stats"]
    assert stats["scenes"] == 2 and stats["requests"] == 2 and stats["errors"] == 0
    assert stats["prompt_tokens"] == 200 and stats["completion_tokens"] == 40
    assert stats["media_bytes"] == len(media["v1"].bytes) + len(media["v2"].bytes) + len(media["a1"].bytes)
    assert info["base_url"] == fake.server.origin and info["api_key_env"] == "GEMINI_API_KEY"
    assert SECRET not in json.dumps(info)


# --- the bundled sample end to end -------------------------------------------------------------------


def test_sample_end_to_end_scores_equal_replay_of_the_same_outputs(
    tmp_path: Path, prepared_sample: Path, capsys: pytest.CaptureFixture
) -> None:
    script = {first_scene(prepared_sample, "ao"): "garbage"}
    with OpenAIServer() as server:
        fake = GeminiFake(prepared_sample, key=SECRET, model=MODEL, script=script).attach(server)
        model_args = f"model={MODEL},base_url={server.origin},thinking_level=high"
        folder = eval_sample(tmp_path / "gemini", "gemini", "odu_av,odu_ao", model_args)
    assert not fake.refusals
    summary = read_json(folder / "summary.json")
    assert summary["inference_errors"] == 0 and summary["parse_errors"] == 1  # the scripted garbage answer
    backend_info = read_json(folder / "run_card.json")["model"]["backend"]
    assert backend_info["backend"] == "gemini" and backend_info["thinking"] == {"thinking_level": "high"}
    assert backend_info["stats"]["scenes"] == len(fake.generate_requests) > 0
    out = capsys.readouterr()
    assert_no_secret(folder, SECRET, out.out, out.err)
    assert_replay_scores_the_same(folder, "odu_av,odu_ao", tmp_path / "replay")


def test_the_sdks_load_only_when_a_native_backend_runs() -> None:
    """Importing the toolkit, the CLI and even these backends' modules loads neither google-genai nor websockets."""
    import subprocess
    import sys

    code = (
        "import sys, odu, odu.models, odu.cli.eval, odu.models.gemini, odu.models.realtime; "
        "print(sorted(m for m in ('google.genai', 'websockets', 'aiohttp') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
