"""Provider profiles of the OpenAI-compatible backend (``odu/models/providers.py``) against the strict
fakes of ``tests/support/provider_fakes.py``: each documented rule (cited in both files) is sent as
the real server takes it, the fakes refuse the shapes the real servers refuse, and the issue's two
acceptance runs (Qwen3-Omni on vLLM, GPT-5.4 text-only with Whisper ASR) end with no inference error."""

from __future__ import annotations

import base64
import io
from dataclasses import replace
from pathlib import Path

import pytest
from support.backend_media import GREEDY, loader, request, text_request
from support.cli import argv
from support.omni_fakes import FakeOmni
from support.openai_rules import API_KEY
from support.provider_fakes import DashScopeFake, OpenAIFake, SglangFake, VllmFake, sample_transcripts
from support.provider_runs import (
    ANSWER,
    QWEN3_OMNI,
    chat_bodies,
    eval_sample,
    omni,
    strict_fake_key,  # noqa: F401  (autouse fixture)
    summary_of,
)
from support.sample_runs import prepared_sample  # noqa: F401  (fixture)

from odu.cli import main
from odu.models.openai_omni import JOINED_AUDIO_GAP_S, OpenAIOmni
from odu.models.providers import (
    DASHSCOPE_MAX_ITEM_B64,
    USE_AUDIO_IN_VIDEO,
    detect,
    developer,
    profile,
    provider_of_host,
)

# --- auto: host, GET /models, model name ------------------------------------------------------------


def test_auto_reads_the_host_then_the_model_list_then_the_model_name() -> None:
    # hosts of the providers' documented base URLs
    assert provider_of_host("https://dashscope.aliyuncs.com/compatible-mode/v1") == "dashscope"
    assert provider_of_host("https://dashscope-intl.aliyuncs.com/compatible-mode/v1") == "dashscope"
    assert provider_of_host("https://ws-1.cn-beijing.maas.aliyuncs.com/compatible-mode/v1") == "dashscope"
    assert provider_of_host("https://api.openai.com/v1") == provider_of_host(None) == "openai"
    assert provider_of_host("https://ark.cn-beijing.volces.com/api/v3") == "ark"
    assert provider_of_host("https://evil.example/ark.cn-beijing.volces.com") is None

    def listed(owner: str):
        return lambda: [{"id": "m", "object": "model", "owned_by": owner}]

    def unreachable():
        raise LookupError("APIConnectionError: Connection error.")

    local = "http://10.0.0.5:8000/v1"
    assert detect(local, "m", listed("vllm")) == ("vllm", 'GET /models owned_by "vllm"')  # vLLM's ModelCard
    assert detect(local, "m", listed("sglang"))[0] == "sglang"  # SGLang's ModelCard
    assert detect(local, "gpt-5.4", listed("openai"))[0] == "openai"  # name rule
    assert detect(local, "o3-mini", unreachable)[0] == detect(local, "gpt-4.1", unreachable)[0] == "openai"
    assert detect(local, "openai/gpt-oss-120b", unreachable)[0] == "generic"  # open weights, served anywhere
    provider, how = detect(local, "some-model", unreachable)
    assert provider == "generic" and "Connection error" in how
    assert detect("https://api.openai.com/v1", "gpt-4o", unreachable) == ("openai", "host of base_url")
    replicas = (
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1|https://dashscope.aliyuncs.com/compatible-mode/v1"
    )
    assert (
        OpenAIOmni("qwen3.5-omni-plus", base_url=replicas).resolve().provider == "dashscope"
    )  # the first replica's host


def test_a_models_list_that_is_no_list_falls_back_to_the_name_rule(media, capsys) -> None:
    from support.openai_server import OpenAIServer, Reply

    with OpenAIServer(lambda body: ANSWER, models=["omni-x"]) as server:
        server.route("GET", "/v1/models", lambda req: Reply(body={"object": "list"}))  # no "data"
        model = omni(server, "omni-x")
        [ok] = model.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    assert ok.text == ANSWER and model.profile is not None and model.profile.provider == "generic"
    assert "GET /models failed (ValueError: GET /models answered no model list)" in capsys.readouterr().err


def test_profiles_hold_the_documented_request_shapes() -> None:
    # OpenAI: max_tokens deprecated, refused by reasoning models, which take only temperature 1
    # (platform.openai.com/docs/api-reference/chat/create; openai/openai-python#2046; autohandai/code-cli#77)
    gpt5 = profile("openai", "gpt-5.4")
    assert (gpt5.limit_field, gpt5.sampling, gpt5.takes_video) == ("max_completion_tokens", False, False)
    assert profile("openai", "gpt-4.1").sampling is True
    # DashScope (help.aliyun.com/zh/model-studio/qwen-omni): "stream 必须设置为 True"; local files as
    # "data:;base64,..."; "仅支持输入一个视频文件" / "仅支持输入一个音频文件"; 10 MB per Base64 item
    qwen = profile("dashscope", "qwen3.5-omni-plus")
    assert qwen.stream and qwen.audio_data_url and qwen.video_data_prefix == "data:;base64,"
    assert (qwen.max_videos, qwen.max_audios, qwen.max_item_b64) == (
        None,
        None,
        10 * 2**20,
    )  # rule dashscope.qwen3.5-files
    flash = profile("dashscope", "qwen3-omni-flash")
    assert (flash.max_videos, flash.max_audios) == (1, 1)  # rule dashscope.one-file: Qwen3-Omni-Flash / Turbo rows
    assert qwen.one_modality_per_message  # "content 数组可以包含文本和一种其他模态"
    # vLLM drops a Qwen-Omni video's audio without use_audio_in_video (vllm#33605, vllm#47788): the switch
    # goes with native audio only (rule vllm.audio-in-video.counts); other models' video loaders read frames only
    qwen25 = profile("vllm", "Qwen/Qwen2.5-Omni-7B")
    assert (qwen25.native_switch, qwen25.extra_body, qwen25.audio_in_video) == (USE_AUDIO_IN_VIDEO, {}, "native")
    assert profile("vllm", "openbmb/MiniCPM-o-4_5").audio_in_video == "separate"
    # SGLang: audio_url parts, the track separate (rules sglang.audio-url, sglang.audio-in-video)
    for model in ("Qwen/Qwen3-Omni-30B-A3B-Instruct", "openbmb/MiniCPM-o-4_5"):
        sglang = profile("sglang", model)
        assert (sglang.audio_in_video, sglang.extra_body, sglang.audio_part) == ("separate", {}, "audio_url")
    assert profile("generic", "x").audio_part == "input_audio" and profile("ark", "x").audio_part == "audio_url"


# --- vLLM ---------------------------------------------------------------------------------------------


def test_qwen_omni_on_vllm_feeds_the_video_audio_and_says_so_at_start(media, capsys) -> None:
    with VllmFake(lambda body: ANSWER, models=(QWEN3_OMNI,), trust_request_mm_kwargs=True) as fake:
        model = omni(fake, QWEN3_OMNI)
        [generation] = model.generate([request(media, ["v1", "v2"])], loader(media), GREEDY)
        assert generation.text == ANSWER and fake.refusals == []
        [body] = chat_bodies(fake)
        assert body["mm_processor_kwargs"] == {"use_audio_in_video": True} and body["max_tokens"] == 4096
        chat = "/v1/chat/completions"  # the server check's two probes (rule vllm.hearing), then the scene
        assert [r.path for r in fake.requests] == ["/v1/models", "/version", chat, chat, chat]
    err = capsys.readouterr().err
    assert f'model {QWEN3_OMNI}: provider vllm (GET /models owned_by "vllm"; GET /version version 0.32.0)' in err
    assert "use_audio_in_video=true" in err and "pitfall" not in err
    assert "the server must run with --trust-request-mm-kwargs" in err and "server check: audio heard" in err
    assert model.info()["provider"]["name"] == "vllm" and model.pitfalls() == []


def test_use_audio_in_video_turned_off_is_a_console_pitfall_and_a_visible_refusal(media, capsys) -> None:
    off = {"mm_processor_kwargs": {"use_audio_in_video": False}}
    with VllmFake(lambda body: ANSWER, models=(QWEN3_OMNI,), trust_request_mm_kwargs=True) as fake:
        model = omni(fake, QWEN3_OMNI, extra_body=off)
        [generation] = model.generate([request(media, ["v1"])], loader(media), GREEDY)
    assert generation.text is None and "use_audio_in_video is off" in generation.error
    err = capsys.readouterr().err
    assert "pitfall: use_audio_in_video is off on vllm" in err  # before the first scene, not only in run_card.json
    assert any("use_audio_in_video is off" in p for p in model.pitfalls())


def test_the_word_none_in_key_value_model_args(prepared_sample: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    """lm-eval's ``key=value`` parser reads ``none`` as Python None, which used to leave ``audio_in_video=none``
    unset, so the default (the audio sent) ran instead: a text argument gets the word back, one that does not
    take it refuses it by name, and a non-text argument (``max_tokens=none``) stays unset."""
    from odu.harness.models import backend_options

    assert backend_options({"audio_in_video": None, "max_tokens": None, "batch_size": None}, "openai") == {
        "audio_in_video": "none"
    }
    args = f"model={QWEN3_OMNI},base_url={{}},trust_request_mm_kwargs=true,max_tokens=none"
    with VllmFake(FakeOmni(prepared_sample), models=(QWEN3_OMNI,), trust_request_mm_kwargs=True) as fake:
        code = eval_sample(args.format(fake.base_url) + ",audio_in_video=none", tmp_path / "a", tasks="odu_av", limit=1)
        err = capsys.readouterr().err
        assert code == 1 and "audio of audio-visual clips not sent (audio_in_video=none)" in err
        assert summary_of(tmp_path / "a", "run_card.json")["model"]["backend"]["media"]["audio_in_video"] == "none"
        body = chat_bodies(fake)[-1]  # after the preflight probe
        assert "mm_processor_kwargs" not in body and body["max_tokens"] == 4096
        assert "use_audio_in_video is off" in fake.refusals[-1]  # the fake shows the audio dropped
        assert eval_sample(args.format(fake.base_url) + ",media_url=none", tmp_path / "b", tasks="odu_av", limit=1) == 2
        assert "media_url must be one of ('data', 'file', 'http'), got 'none'" in capsys.readouterr().err


def test_other_models_on_vllm_get_the_track_as_separate_audio(media) -> None:
    """Rule vllm.separate-track: a model of no known family (here Baichuan-Omni-1.5) gets each video followed by
    its track as an audio part; sent inside the video, the fake refuses it as vLLM's frames-only loader would
    drop it."""
    other = "baichuan-inc/Baichuan-Omni-1d5"
    assert profile("vllm", other).family == "other"
    with VllmFake(lambda body: ANSWER, models=(other,)) as fake:
        [ok] = omni(fake, other).generate([request(media, ["v1"])], loader(media), GREEDY)
        [lost] = omni(fake, other, audio_in_video="native").generate([request(media, ["v1"])], loader(media), GREEDY)
    assert ok.text == ANSWER and "frames only" in lost.error
    kinds = [p["type"] for p in chat_bodies(fake)[0]["messages"][1]["content"] if p["type"] != "text"]
    assert kinds == ["video_url", "input_audio"]


def test_minicpmo_on_vllm_is_its_own_family_and_sends_the_track_as_a_part(media) -> None:
    """Rule vllm.minicpm-o.track-part (vllm/model_executor/models/minicpmo.py, vllm/renderers/chat_utils.py; run on
    vLLM 0.32.0): MiniCPM-o's family and developer from its name, each video followed by its track as an audio
    part without mm_processor_kwargs; the fake, like the real server, feeds a MiniCPM-o video's audio under
    use_audio_in_video (counted in the prompt) instead of refusing it as dropped."""
    from support.vllm_lane import post

    minicpmo = "openbmb/MiniCPM-o-4_5"
    chosen = profile("vllm", minicpmo)
    assert (chosen.family, developer(minicpmo, "vllm"), chosen.native_switch) == ("minicpm-o", "openbmb", {})
    assert "vllm.minicpm-o.track-part" in chosen.rules
    with VllmFake(lambda body: ANSWER, models=(minicpmo,), trust_request_mm_kwargs=True) as fake:
        [ok] = omni(fake, minicpmo).generate([request(media, ["v1"])], loader(media), GREEDY)
        parts = chat_bodies(fake)[0]["messages"][1]["content"]
        video, track = (next(p for p in parts if p["type"] == kind) for kind in ("video_url", "input_audio"))
        text = {"type": "text", "text": "Is there any sound?"}

        def body(*media: dict) -> dict:
            return {"model": minicpmo, "messages": [{"role": "user", "content": [text, *media]}], "max_tokens": 1}

        answers = [post(fake.base_url, b) for b in (body(video) | USE_AUDIO_IN_VIDEO, body(video, track), body(video))]
    assert ok.text == ANSWER and not chat_bodies(fake)[0].get("mm_processor_kwargs")
    (switched, by_switch), (parted, by_part), (alone, _) = answers
    assert (switched, parted, alone) == (200, 200, 400)
    assert by_switch["usage"]["prompt_tokens"] == by_part["usage"]["prompt_tokens"]


def test_minicpmo_inside_the_video_is_dropped_only_without_the_switch(media) -> None:
    """Rule vllm.minicpm-o.track-part: under ``use_audio_in_video`` vLLM's chat parser reads a MiniCPM-o video's
    audio itself, so ``audio_in_video=native`` with the switch in ``extra_body`` says no "dropped" pitfall;
    without the switch the video loader's frames are all that reach the model, and the pitfall says so."""
    minicpmo = "openbmb/MiniCPM-o-4_5"
    switch = {"mm_processor_kwargs": {"use_audio_in_video": True}}
    with VllmFake(lambda body: ANSWER, models=(minicpmo,), trust_request_mm_kwargs=True) as fake:
        fed = omni(fake, minicpmo, audio_in_video="native", extra_body=switch)
        [ok] = fed.generate([request(media, ["v1"])], loader(media), GREEDY)
        bare = omni(fake, minicpmo, audio_in_video="native")
        bare.generate([request(media, ["v1"])], loader(media), GREEDY)
    assert ok.text == ANSWER and chat_bodies(fake)[0]["mm_processor_kwargs"] == switch["mm_processor_kwargs"]
    assert not [p for p in fed.pitfalls() if "dropped" in p]
    [dropped] = [p for p in bare.pitfalls() if "dropped" in p]
    assert "minicpm-o" in dropped and "rule vllm.separate-track" in dropped


def test_kimi_audio_on_vllm_gets_one_audio_part_one_scene_at_a_time(media, capsys) -> None:
    """Rules vllm.kimi-audio.one-audio and vllm.kimi-audio.serial (vllm/model_executor/models/kimi_audio.py; run on
    vLLM 0.32.0): a scene of two clips goes as one audio part, the clips one after another with the gap between,
    where the last clip stands; scenes go one at a time; an audio-visual scene is refused before sending. The
    fake refuses a second audio part, as the real server does."""
    import soundfile as sf

    kimi = "moonshotai/Kimi-Audio-7B-Instruct"
    with VllmFake(lambda body: ANSWER, models=(kimi,), limit_mm_per_prompt={"audio": 8}) as fake:
        model = omni(fake, kimi, concurrency=4)
        [ok] = model.generate([request(media, ["a1", "a2"], "audio-only")], loader(media), GREEDY)
        [two] = omni(fake, kimi, provider="generic").generate(
            [request(media, ["a1", "a2"], "audio-only")], loader(media), GREEDY
        )
        with pytest.raises(ValueError, match="takes audio only"):
            omni(fake, kimi).generate([request(media, ["v1"])], loader(media), GREEDY)
    assert ok.text == ANSWER and model.in_flight() == 1, ok.error
    assert "At most 1 audio(s) may be provided in one prompt." in str(two.error)
    content = chat_bodies(fake)[0]["messages"][1]["content"]
    audio = [p for p in content if p["type"] == "input_audio"]
    texts = [p["text"] for p in content if p["type"] == "text"]
    assert len(audio) == 1 and content[-2] == audio[0] and any("First reply." in t for t in texts), content
    samples, rate = sf.read(io.BytesIO(base64.b64decode(audio[0]["input_audio"]["data"])))
    assert len(samples) == round((1.2 + JOINED_AUDIO_GAP_S + 1.0) * rate)
    assert "one scene at a time" in capsys.readouterr().err


def test_qwen_omni_on_sglang_gets_the_track_as_separate_audio(media, capsys) -> None:
    with SglangFake(lambda body: ANSWER, models=(QWEN3_OMNI,)) as fake:
        [ok] = omni(fake, QWEN3_OMNI).generate([request(media, ["v1"])], loader(media), GREEDY)
        forced = omni(fake, QWEN3_OMNI, audio_in_video="native")
        [lost] = forced.generate([request(media, ["v1"])], loader(media), GREEDY)
    assert ok.text == ANSWER and "mm_processor_kwargs" not in chat_bodies(fake)[0]
    assert [p["type"] for p in chat_bodies(fake)[0]["messages"][1]["content"] if p["type"] != "text"] == [
        "video_url",
        "audio_url",
    ]
    assert "drop it silently" in lost.error
    err = capsys.readouterr().err
    assert (
        'provider sglang (GET /models owned_by "sglang"; GET /server_info version 0.5.9)' in err
        and "pitfall: audio inside the video is left to sglang" in err
    )


# --- OpenAI ----------------------------------------------------------------------------------------


def test_gpt5_gets_max_completion_tokens_and_no_temperature(media, capsys) -> None:
    """Rules openai.max-completion-tokens and openai.default-sampling (openai/openai-python#2046)."""
    with OpenAIFake(lambda body: ANSWER, models=("gpt-5.4",)) as fake:
        model = omni(fake, "gpt-5.4")
        [ok] = model.generate([text_request(media, ["a1"])], loader(media), GREEDY)
        [refused] = omni(fake, "gpt-5.4", provider="generic").generate(
            [text_request(media, ["a1"])], loader(media), GREEDY
        )
    assert ok.text == ANSWER
    body = chat_bodies(fake)[0]
    assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body and "temperature" not in body
    assert "HTTP 400" in refused.error and "max_completion_tokens" in refused.error  # the old shape: every scene failed
    err = capsys.readouterr().err
    assert "provider openai" in err and "model name 'gpt-5.4'" in err and "max_completion_tokens" in err


def test_audio_visual_scenes_reach_openai_as_frames_only(media) -> None:
    with OpenAIFake(lambda body: ANSWER, models=("gpt-4o-audio-preview",)) as fake:
        with pytest.raises(ValueError, match="takes no video_url parts"):
            omni(fake, "gpt-4o-audio-preview").generate([request(media, ["v1"])], loader(media), GREEDY)
        assert fake.count() == 0
        frames = omni(fake, "gpt-4o-audio-preview", video_mode="frames", max_frames=2)
        [ok] = frames.generate([request(media, ["v1"])], loader(media), GREEDY)
    kinds = [p["type"] for p in chat_bodies(fake)[0]["messages"][1]["content"] if p["type"] != "text"]
    assert ok.text == ANSWER and kinds == ["image_url", "image_url", "input_audio"]
    assert chat_bodies(fake)[0]["temperature"] == 0  # not a reasoning model: greedy, as asked


def test_a_users_processor_kwargs_add_to_the_profiles(media) -> None:
    with VllmFake(lambda body: ANSWER, models=(QWEN3_OMNI,), trust_request_mm_kwargs=True) as fake:
        model = omni(fake, QWEN3_OMNI, extra_body={"mm_processor_kwargs": {"fps": 1}})
        [ok] = model.generate([request(media, ["v1"])], loader(media), GREEDY)
    assert ok.text == ANSWER and chat_bodies(fake)[0]["mm_processor_kwargs"] == {"use_audio_in_video": True, "fps": 1}


def test_the_openai_fake_refuses_what_openai_refuses() -> None:
    import openai

    with OpenAIFake(lambda body: ANSWER, models=("gpt-5.4", "gpt-4.1", "gpt-4o-transcribe")) as fake:
        client = openai.OpenAI(base_url=fake.base_url, api_key=API_KEY, max_retries=0)
        say = [{"role": "user", "content": "hi"}]
        with pytest.raises(openai.BadRequestError, match="Only the default"):
            client.chat.completions.create(model="gpt-5.4", messages=say, temperature=0)
        with pytest.raises(openai.BadRequestError, match="'video_url'"):
            client.chat.completions.create(
                model="gpt-4.1",
                messages=[
                    {
                        "role": "user",
                        "content": [{"type": "video_url", "video_url": {"url": "data:video/mp4;base64,AAAA"}}],
                    }
                ],
            )
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="gpt-9", messages=say)
        assert client.chat.completions.create(model="gpt-4.1", messages=say, temperature=0, max_tokens=5)
        with pytest.raises(openai.BadRequestError, match="verbose_json"):
            client.audio.transcriptions.create(
                model="gpt-4o-transcribe", file=("a.wav", b"RIFF", "audio/wav"), response_format="verbose_json"
            )


# --- DashScope --------------------------------------------------------------------------------------


def test_dashscope_streams_data_urls_and_refuses_scenes_beyond_its_limits(media, capsys) -> None:
    with DashScopeFake(lambda body: ANSWER, models=("qwen3-omni-flash",)) as fake:
        model = omni(fake, "qwen3-omni-flash", provider="dashscope")
        one, two = model.generate(
            [request(media, ["a1"], "audio-only"), request(media, ["a1", "a2"], "audio-only")], loader(media), GREEDY
        )
        [body] = chat_bodies(fake)
        assert one.text == ANSWER and fake.refusals == [] and body["stream"] is True
        [audio] = [p for p in body["messages"][1]["content"] if p["type"] == "input_audio"]
        assert audio["input_audio"]["data"].startswith("data:;base64,UklGR")  # WAV, as the docs' data URL
        assert "2 audio part(s)" in two.error and "limit of 1 per request" in two.error
        assert two.error.startswith("media: scene ") and "help.aliyun.com" in two.error
        [video] = model.generate([request(media, ["v1"])], loader(media), GREEDY)
        [url] = [p["video_url"]["url"] for p in chat_bodies(fake)[-1]["messages"][1]["content"] if "video_url" in p]
        assert video.text == ANSWER and url.startswith("data:;base64,")
        model.profile = replace(model.profile, max_item_b64=1000)  # the per-item rule, on a small limit
        [big] = model.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
        assert "clip a1" in big.error and "MB per item" in big.error and len(chat_bodies(fake)) == 2
        anyway = omni(fake, "qwen3-omni-flash", provider="dashscope", media_limits=False)
        [refused] = anyway.generate([request(media, ["a1", "a2"], "audio-only")], loader(media), GREEDY)
        assert "HTTP 400" in refused.error and "one audio file" in refused.error  # the server's word, then
        assert any("media_limits=false" in p for p in anyway.pitfalls())
    assert (
        "media limits per request: video file(s) 1, audio part(s) 1, 10 MB Base64 per item" in capsys.readouterr().err
    )
    with pytest.raises(ValueError, match="streamed requests only"):
        OpenAIOmni("qwen3-omni-flash", provider="dashscope", stream=False)
    with pytest.raises(ValueError, match="one non-text modality per user message"):
        OpenAIOmni("qwen3-omni-flash", provider="dashscope", audio_in_video="separate")


def test_the_dashscope_fake_refuses_what_dashscope_refuses() -> None:
    import openai

    def audio(data: str) -> dict:
        return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}

    video = {"type": "video_url", "video_url": {"url": "data:;base64,AAAA"}}
    with DashScopeFake(lambda body: ANSWER, models=("qwen3-omni-flash",)) as fake:
        client = openai.OpenAI(base_url=fake.base_url, api_key=API_KEY, max_retries=0)

        def send(content: list, stream: bool = True) -> str:
            messages = [{"role": "user", "content": content}]
            try:
                reply = client.chat.completions.create(model="qwen3-omni-flash", messages=messages, stream=stream)
                return "".join(c.choices[0].delta.content or "" for c in reply if c.choices) if stream else "?"
            except openai.BadRequestError as exc:
                return exc.message

        assert send([audio("data:;base64,UklGRg==")]) == ANSWER
        assert "only support stream mode" in send([audio("data:;base64,UklGRg==")], stream=False)
        assert "must be a URL or a data URL" in send([audio("UklGRg==")])
        assert "one non-text modality" in send([video, audio("data:;base64,UklGRg==")])
        assert "one video file" in send([video, video])
        assert "exceeds 10 MB" in send([audio("data:;base64," + "A" * (DASHSCOPE_MAX_ITEM_B64 + 4))])


# --- the acceptance runs -------------------------------------------------------------------


def test_acceptance_qwen3_omni_on_a_strict_vllm_fake(prepared_sample: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    with VllmFake(FakeOmni(prepared_sample), models=(QWEN3_OMNI,), trust_request_mm_kwargs=True) as fake:
        code = eval_sample(f"model={QWEN3_OMNI},base_url={fake.base_url}", tmp_path / "out", tasks="odu_av")
        assert fake.refusals == [] and fake.count() > 0
    err = capsys.readouterr().err
    assert code == 0, err[-2000:]
    assert summary_of(tmp_path / "out")["inference_errors"] == 0
    assert "provider vllm" in err and "use_audio_in_video=true" in err
    card = summary_of(tmp_path / "out", "run_card.json")
    assert card["model"]["backend"]["provider"]["name"] == "vllm"
    assert [p for p in card["pitfalls"] if "lexical judge" not in p] == []  # the offline judge's is the only one
    assert card["model"]["backend"]["extra_body"] == {"mm_processor_kwargs": {"use_audio_in_video": True}}


def test_acceptance_gpt54_text_only_on_a_strict_openai_fake(prepared_sample: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    transcripts = sample_transcripts(prepared_sample, ("ao",))
    with OpenAIFake(FakeOmni(prepared_sample), models=("gpt-5.4", "whisper-1"), transcripts=transcripts) as fake:
        code = main(
            argv(
                "eval",
                sample=True,
                model="openai",
                tasks="odu_ao_text",
                model_args=f"model=gpt-5.4,base_url={fake.base_url}",
                asr="openai:whisper-1",
                asr_base_url=fake.base_url,
                out=tmp_path / "out",
            )
        )
        assert fake.refusals == [] and fake.count("/v1/audio/transcriptions") > 0
        assert all("max_completion_tokens" in b and "temperature" not in b for b in chat_bodies(fake))
    err = capsys.readouterr().err
    assert code == 0, err[-2000:]
    assert summary_of(tmp_path / "out")["inference_errors"] == 0
    provider = summary_of(tmp_path / "out", "run_card.json")["model"]["backend"]["provider"]
    assert (provider["name"], provider["limit_field"], provider["sampling_sent"]) == (
        "openai",
        "max_completion_tokens",
        False,
    )
