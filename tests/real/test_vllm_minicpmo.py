"""``--model openai`` against vLLM's own server on the tiny published MiniCPM-o 4.5 layout (the vLLM lane,
docs/real-lane.md "vLLM"; ``tools/tiny_checkpoints.py --kind minicpmo --for vllm``), started as
docs/providers.md's ``vllm serve`` line starts it (``--trust-remote-code``): both tasks answered scene by scene,
what reaches the model of a video's sound measured, and ``VllmFake`` shown answering as the real server does
(rules vllm.minicpm-o.track-part, vllm.separate-track, vllm.limit-mm-per-prompt, vllm.hearing)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support.provider_fakes import VllmFake
from support.real_lane import first_scene_prompt_tokens, first_scene_seconds, run_eval
from support.vllm_lane import VllmServed, VllmServers, post, vllm_servers  # noqa: F401  (fixture)
from support.vllm_requests import FLAG, SAMPLE_SCENES, chat_body, check_sample_run, clip_parts

from odu.models.hearing import tone_part

#: MiniCPM-o's audio tokens a second at least (each 1 s chunk: 100 mel frames, halved by the encoder, pooled by
#: ``audio_pool_step`` 5; vllm/model_executor/models/minicpmo.py ``get_max_audio_tokens_per_chunk``).
AUDIO_TOKENS_PER_S = 10

pytestmark = pytest.mark.usefixtures("openai_key", "prepared_sample")


@pytest.fixture(scope="module")
def minicpmo(vllm_servers: VllmServers) -> VllmServed:  # noqa: F811
    """vLLM on the tiny MiniCPM-o checkpoint, started as docs/providers.md's ``vllm serve`` line starts it."""
    return vllm_servers.get("minicpmo")


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """``video_url`` parts (data URLs) of a 1 s clip whose track is a 1 s tone, and of the same clip without one."""
    return clip_parts(tmp_path_factory.mktemp("minicpmo-clips"))


def test_eval_sample_on_vllm_minicpmo(minicpmo: VllmServed, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    """Every sample scene of both tasks answered by vLLM's MiniCPM-o (0 refusals, 0 inference errors), the
    family found from the model name, each video followed by its track as an audio part (rule
    vllm.minicpm-o.track-part), the server check hearing the tone and seeing answers kept to max_tokens."""
    code, folder = run_eval(tmp_path / "run", minicpmo, "odu_av,odu_ao", max_tokens=8)
    err = capfd.readouterr().err
    assert code == 0, err[-3000:]
    card = check_sample_run(minicpmo, folder, SAMPLE_SCENES, "minicpm-o", "vllm.minicpm-o.track-part")
    assert card["media"]["audio_in_video"] == "separate" and not card["extra_body"]


def test_a_sample_clips_track_reaches_minicpmo_as_its_own_part(minicpmo: VllmServed, tmp_path: Path) -> None:
    """Rules vllm.minicpm-o.track-part and vllm.separate-track on the sample's first audio-visual scene: the prompt
    vLLM builds grows by the track's audio tokens when the track follows the video as an audio part (the
    default) over the video alone (audio_in_video=none)."""

    def tokens(name: str, **model_args: Any) -> int:
        return first_scene_prompt_tokens(tmp_path / name, minicpmo, max_tokens=4, **model_args)

    separate, dropped = tokens("separate"), tokens("none", audio_in_video="none")
    assert separate - dropped >= AUDIO_TOKENS_PER_S * first_scene_seconds(), (separate, dropped)


def test_the_fake_answers_as_the_real_minicpmo_server(minicpmo: VllmServed, videos: dict[str, dict[str, Any]]) -> None:
    """The same status and ``error`` from vLLM 0.32.0 and ``VllmFake`` (started alike) for text, audio parts,
    a video followed by its track, the video under use_audio_in_video (the chat parser reads its audio: the
    same prompt tokens as the track sent as a part), a soundless video under it (400 "No audio stream
    found.") and more items than ``--limit-mm-per-prompt`` (rules vllm.minicpm-o.track-part,
    vllm.limit-mm-per-prompt). Where the fake is stricter on purpose, the real server's silence is shown: a video
    alone is answered with its frames only, soundless or not (rule vllm.separate-track)."""
    body = partial(chat_body, minicpmo.model)
    battery = {
        "text": body(),
        "one audio": body(tone_part()),
        "two audios": body(tone_part(), tone_part()),
        "video and its track": body(videos["sound"], tone_part()),
        "video, use_audio_in_video": body(videos["sound"], **FLAG),
        "soundless video, use_audio_in_video": body(videos["soundless"], **FLAG),
        "9 audios (limit 8)": body(*[tone_part()] * 9),
        "9 videos with their tracks (limit 8)": body(*[videos["sound"], tone_part()] * 9),
        "stop: []": body(tone_part(), stop=[]),
    }
    answers = {}
    with VllmFake(
        models=(minicpmo.model,), limit_mm_per_prompt={"video": 8, "audio": 8}, trust_request_mm_kwargs=True
    ) as fake:
        for name, request in battery.items():
            real, mine = post(minicpmo.base_url, request), post(fake.base_url, request)
            assert real[0] == mine[0] and real[1].get("error") == mine[1].get("error"), (name, real, mine)
            answers[name] = real
    refused = {name: answer["error"]["message"] for name, (status, answer) in answers.items() if status != 200}
    assert refused == {
        "soundless video, use_audio_in_video": "No audio stream found.",
        "9 audios (limit 8)": "At most 8 audio(s) may be provided in one prompt. (parameter=audio)",
        "9 videos with their tracks (limit 8)": "At most 8 video(s) may be provided in one prompt. (parameter=video)",
    }
    tokens = {name: answer["usage"]["prompt_tokens"] for name, (status, answer) in answers.items() if status == 200}
    tone = tokens["one audio"] - tokens["text"]
    assert tone > 0 and tokens["two audios"] - tokens["one audio"] == tone, tokens  # rule vllm.hearing
    assert tokens["video, use_audio_in_video"] == tokens["video and its track"], tokens
    frames_only = {}
    for name in ("sound", "soundless"):
        status, answer = post(minicpmo.base_url, body(videos[name]))
        assert status == 200, answer
        frames_only[name] = answer["usage"]["prompt_tokens"]
    assert frames_only["sound"] == frames_only["soundless"] == tokens["video and its track"] - tone, frames_only
