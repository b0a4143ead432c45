"""``--model openai`` against vLLM's own server on the tiny published Nemotron 3 Nano Omni layout (the vLLM lane,
docs/real-lane.md "vLLM"; ``tools/tiny_checkpoints.py --kind nemotron_omni --for vllm``), started as
docs/providers.md's ``vllm serve`` line starts it (``--trust-remote-code``, ``--trust-request-mm-kwargs``,
``--no-enable-prefix-caching``): both tasks answered scene by scene with each video's own track fed by
``use_audio_in_video``, what reaches the model measured in prompt tokens, and ``VllmFake`` shown answering as the
real server does (rules vllm.nemotron.audio-in-video, vllm.audio-in-video.counts, vllm.soundless-video,
vllm.limit-mm-per-prompt, vllm.hearing)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support.provider_fakes import VllmFake
from support.real_lane import first_scene_prompt_tokens, run_eval
from support.vllm_lane import VllmServed, VllmServers, post, vllm_servers  # noqa: F401  (fixture)
from support.vllm_requests import FLAG, SAMPLE_SCENES, chat_body, check_sample_run, clip_parts

from odu.models.hearing import tone_part

pytestmark = pytest.mark.usefixtures("openai_key", "prepared_sample")


@pytest.fixture(scope="module")
def nemotron(vllm_servers: VllmServers) -> VllmServed:  # noqa: F811
    """vLLM on the tiny Nemotron 3 Nano Omni checkpoint, started as docs/providers.md's ``vllm serve`` line."""
    return vllm_servers.get("nemotron_omni")


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """``video_url`` parts (data URLs) of a 1 s clip with a sound track and of the same clip without one."""
    return clip_parts(tmp_path_factory.mktemp("nemotron-clips"))


def test_eval_sample_on_vllm_nemotron_omni(nemotron: VllmServed, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    """Every sample scene of both tasks answered by vLLM's Nemotron 3 Nano Omni (0 refusals, 0 inference errors),
    the family found from the model name, each video sent with ``use_audio_in_video`` and no separate part (rule
    vllm.nemotron.audio-in-video), the server check hearing the tone and keeping to max_tokens."""
    code, folder = run_eval(tmp_path / "run", nemotron, "odu_av,odu_ao", max_tokens=8)
    err = capfd.readouterr().err
    assert code == 0, err[-3000:]
    card = check_sample_run(nemotron, folder, SAMPLE_SCENES, "nemotron-omni", "vllm.nemotron.audio-in-video")
    assert card["media"]["audio_in_video"] == "native" and card["extra_body"] == FLAG


def test_a_sample_clips_track_reaches_nemotron_only_with_the_flag(nemotron: VllmServed, tmp_path: Path) -> None:
    """Rule vllm.nemotron.audio-in-video on the sample's first audio-visual scene: its prompt holds the clip's
    track under ``use_audio_in_video`` (the profile's default); with the flag off it is as long as with the
    track dropped (``audio_in_video=none``): vLLM reads the video's frames only and loses the track without an
    error."""

    def tokens(name: str, **model_args: Any) -> int:
        return first_scene_prompt_tokens(tmp_path / name, nemotron, max_tokens=4, **model_args)

    native = tokens("native")
    off = tokens("off", extra_body={"mm_processor_kwargs": {"use_audio_in_video": False}})
    dropped = tokens("none", audio_in_video="none")
    assert off == dropped < native, (native, off, dropped)


def test_the_fake_answers_as_the_real_nemotron_server(nemotron: VllmServed, videos: dict[str, dict[str, Any]]) -> None:
    """The same status and ``error`` from vLLM 0.32.0 and ``VllmFake`` (started alike) for text, one and two audio
    parts, a video with its track under the flag, an audio-only request with the flag, a soundless video under
    the flag (400 "No audio stream found.", rule vllm.soundless-video), a separate audio part beside the flag
    (rule vllm.audio-in-video.counts), 9 videos against the limit of 8 (rule vllm.limit-mm-per-prompt) and
    ``stop: []``. A 1 s tone adds prompt tokens as an audio part and as a video's track under the flag (rule
    vllm.hearing); without the flag the real server takes the video and drops its track (the same prompt tokens
    as ``use_audio_in_video: false``), which the fake refuses on purpose."""
    body = partial(chat_body, nemotron.model)
    battery = {
        "text": body(),
        "one audio": body(tone_part()),
        "two audios": body(tone_part(), tone_part()),
        "video with its sound, flag": body(videos["sound"], **FLAG),
        "audio only, flag": body(tone_part(), **FLAG),
        "soundless video, flag": body(videos["soundless"], **FLAG),
        "video and a separate audio part, flag": body(videos["sound"], tone_part(), **FLAG),
        "9 videos (limit 8)": body(*[videos["sound"]] * 9, **FLAG),
        "stop: []": body(tone_part(), stop=[]),
    }
    answers = {}
    with VllmFake(
        models=(nemotron.model,), limit_mm_per_prompt={"video": 8, "audio": 8}, trust_request_mm_kwargs=True
    ) as fake:
        for name, request in battery.items():
            real, mine = post(nemotron.base_url, request), post(fake.base_url, request)
            assert real[0] == mine[0] and real[1].get("error") == mine[1].get("error"), (name, real, mine)
            answers[name] = real
    assert [name for name, (status, _) in answers.items() if status != 200] == [
        "soundless video, flag",
        "video and a separate audio part, flag",
        "9 videos (limit 8)",
    ]
    assert answers["soundless video, flag"][1]["error"]["message"] == "No audio stream found."
    assert answers["video and a separate audio part, flag"][1]["error"]["message"].startswith(
        "use_audio_in_video requires equal number of audio and video items"
    )

    def tokens(name: str) -> int:
        return int(answers[name][1]["usage"]["prompt_tokens"])

    assert tokens("one audio") > tokens("text") and tokens("two audios") > tokens("one audio")
    status, no_flag = post(nemotron.base_url, body(videos["sound"]))
    status_off, off = post(nemotron.base_url, body(videos["sound"], mm_processor_kwargs={"use_audio_in_video": False}))
    assert status == status_off == 200
    frames_only = no_flag["usage"]["prompt_tokens"]
    assert off["usage"]["prompt_tokens"] == frames_only < tokens("video with its sound, flag")
