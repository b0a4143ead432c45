"""``--model openai`` against vLLM's own server (the vLLM lane, docs/real-lane.md "vLLM"): vLLM 0.32.0's
CPU build, in its own venv (``scripts/install_vllm_lane.sh``), on the tiny published Qwen2.5-Omni and
Qwen3-Omni layouts (``tools/tiny_checkpoints.py --for vllm``); each rule of the ``vllm`` profile shown on
the real server, and the loopback fake (``tests/support/provider_fakes.py`` ``VllmFake``) shown refusing
what it refuses, in its words.

One server runs at a time (:class:`support.vllm_lane.VllmServers`): the tests on the servers started with
``--trust-request-mm-kwargs`` (as docs/providers.md launches them) are grouped by checkpoint, those on a
server started without it come last."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support.provider_fakes import VllmFake
from support.real_lane import backend_card, first_scene_prompt_tokens, first_scene_seconds, run_eval
from support.sample_runs import read_json
from support.vllm_lane import TRUST_FLAG, VllmServed, VllmServers, post, vllm_servers  # noqa: F401  (fixture)
from support.vllm_requests import FLAG, SAMPLE_SCENES, chat_body, clip_parts

from odu.models.hearing import tone_part

#: Audio placeholder tokens a second at least, on both tiny checkpoints (a 1 s tone adds 27 on Qwen2.5-Omni,
#: 15 on Qwen3-Omni): what "the audio reached the prompt" means below.
MIN_AUDIO_TOKENS_PER_S = 10

pytestmark = pytest.mark.usefixtures("openai_key", "prepared_sample")


@pytest.fixture(scope="module", params=["qwen2_5_omni", "qwen3_omni_moe"])
def served(request: pytest.FixtureRequest, vllm_servers: VllmServers) -> VllmServed:  # noqa: F811
    """vLLM on a tiny checkpoint, started as docs/providers.md's ``vllm serve`` lines start it."""
    return vllm_servers.get(request.param)


@pytest.fixture
def untrusted(vllm_servers: VllmServers) -> VllmServed:  # noqa: F811
    """vLLM on the tiny Qwen2.5-Omni, started without ``--trust-request-mm-kwargs`` (vLLM's default)."""
    return vllm_servers.get("qwen2_5_omni", trusted=False)


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The 1 s clips with and without a sound track (:func:`support.vllm_requests.clip_parts`)."""
    return clip_parts(tmp_path_factory.mktemp("vllm-clips"))


def battery(videos: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Requests each rule is about, by name (bodies without the model)."""
    body = partial(chat_body, None)
    return {
        "short video with its sound, use_audio_in_video": body(videos["sound"], **FLAG),
        "audio only, use_audio_in_video": body(tone_part(), **FLAG),
        "soundless video, use_audio_in_video": body(videos["soundless"], **FLAG),
        "video and a separate audio part, use_audio_in_video": body(videos["sound"], tone_part(), **FLAG),
        "9 videos (limit 8)": body(*[videos["sound"]] * 9, **FLAG),
        "stop: []": body(stop=[]),
    }


def test_eval_sample_on_vllm(served: VllmServed, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    """Every sample scene answered by vLLM (0 refusals, 0 inference errors), the server found by
    provider=auto with its version (rule vllm.version), the video's audio fed by use_audio_in_video, data:
    video URLs taken (rule vllm.video-data-urls); the server check (rule vllm.hearing) heard the tone and
    saw the server keep to max_tokens."""
    code, folder = run_eval(tmp_path / "run", served, "odu_av,odu_ao", max_tokens=8)
    err = capfd.readouterr().err
    assert code == 0, err[-3000:]
    summary = read_json(folder / "summary.json")
    assert summary["inference_errors"] == 0
    assert (summary["audio-visual"]["n_scenes"], summary["audio-only"]["n_scenes"]) == tuple(SAMPLE_SCENES.values())
    card = backend_card(folder)
    provider = card["provider"]
    assert provider["name"] == "vllm" and provider["server_version"] == "0.32.0"
    assert 'GET /models owned_by "vllm"; GET /version version 0.32.0' in provider["detected_by"]
    assert card["media"]["media_url"] == "data" and card["media"]["audio_in_video"] == "native"
    assert card["extra_body"] == FLAG
    hearing = card["hearing_check"]
    assert hearing["heard"] is True and hearing["ignores_max_tokens"] is False
    assert card["stats"]["requests"] == sum(SAMPLE_SCENES.values()) and card["stats"]["errors"] == 0
    assert card["stats"]["completion_tokens"] <= 8 * sum(SAMPLE_SCENES.values())
    assert "server check: audio heard" in err and f"the server must run with {TRUST_FLAG}" in err
    assert '" 400' not in served.log_text()  # no request refused, the server check's included


def test_the_audio_of_a_video_reaches_vllm_only_with_the_flag(served: VllmServed, tmp_path: Path) -> None:
    """Rules vllm.qwen-omni.audio-in-video and vllm.separate-track: the prompt vLLM builds for a video with a
    sound track holds its audio with use_audio_in_video (the default) or with the track as a separate part;
    with the flag off it is the same length as with the audio dropped (audio_in_video=none): the video loader
    reads frames only, and the track is lost without an error."""

    def tokens(name: str, **model_args: Any) -> int:
        return first_scene_prompt_tokens(tmp_path / name, served, max_tokens=4, **model_args)

    native = tokens("native")
    off = tokens("off", extra_body={"mm_processor_kwargs": {"use_audio_in_video": False}})
    dropped = tokens("none", audio_in_video="none")
    separate = tokens("separate", audio_in_video="separate")
    least = MIN_AUDIO_TOKENS_PER_S * first_scene_seconds()
    assert off == dropped, (off, dropped)
    assert native - dropped >= least and separate - dropped >= least, (native, separate, dropped, least)


def test_the_fake_refuses_as_the_real_server(served: VllmServed, videos: dict[str, dict[str, Any]]) -> None:
    """Each request of :func:`battery` gets the same status and error from vLLM 0.32.0 and from ``VllmFake``
    started alike (rules vllm.soundless-video: "No audio stream found." for both Qwen generations,
    vllm.audio-in-video.counts, vllm.limit-mm-per-prompt, vllm.short-clips, vllm.empty-stop; an audio-only
    request with the flag is taken). Where the fake is stricter on purpose, the real server's silence is shown:
    an unknown field is taken (rule vllm.extra-fields) and a video without the flag is taken with its audio
    dropped (the fake refuses both, making the silent loss visible)."""
    answers = {}
    with VllmFake(
        models=(served.model,), limit_mm_per_prompt={"video": 8, "audio": 8}, trust_request_mm_kwargs=True
    ) as fake:
        for name, body in battery(videos).items():
            real, mine = (
                post(served.base_url, {"model": served.model, **body}),
                post(fake.base_url, {"model": served.model, **body}),
            )
            assert real[0] == mine[0] and real[1].get("error") == mine[1].get("error"), (name, real, mine)
            answers[name] = real
    assert {name for name, (status, _) in answers.items() if status == 200} == {
        "short video with its sound, use_audio_in_video",
        "audio only, use_audio_in_video",
        "stop: []",
    }
    assert answers["soundless video, use_audio_in_video"][1]["error"]["message"] == "No audio stream found."
    text = [{"type": "text", "text": "Is there any sound?"}]
    status, _ = post(
        served.base_url, {"model": served.model, "messages": [{"role": "user", "content": text}], "no_such_field": 1}
    )
    assert status == 200
    video_only = {
        "model": served.model,
        "messages": [{"role": "user", "content": [*text, videos["sound"]]}],
        "max_tokens": 1,
    }
    status, without = post(served.base_url, video_only)
    with_flag = answers["short video with its sound, use_audio_in_video"][1]
    assert status == 200 and without["usage"]["prompt_tokens"] < with_flag["usage"]["prompt_tokens"]


def test_a_server_without_the_launch_flag_stops_the_run_in_one_line(
    untrusted: VllmServed, tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    """Rule vllm.trust-request-mm-kwargs on vLLM 0.32.0 started without ``--trust-request-mm-kwargs``: the
    request carrying use_audio_in_video gets the same 400 from the server and its fake; ``odu-bench eval``
    stops at preflight with one line naming the flag (exit 2), and without preflight at the first refusal
    (not 9 of 9 scenes refused); ``trust_request_mm_kwargs=false`` runs the whole sample with each video's
    track as a separate part, every scene answered, the audio heard."""
    body = {"model": untrusted.model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, **FLAG}
    with VllmFake(models=(untrusted.model,)) as fake:
        real, mine = post(untrusted.base_url, body), post(fake.base_url, body)
    assert real[0] == mine[0] == 400 and real[1]["error"] == mine[1]["error"], (real, mine)
    assert f"Start the server with {TRUST_FLAG}" in real[1]["error"]["message"]
    code, _ = run_eval(tmp_path / "preflight", untrusted, "odu_ao", max_tokens=4)
    lines = [ln for ln in capfd.readouterr().err.splitlines() if "error:" in ln]
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("odu-bench eval: error: preflight: model server") and "vLLM 0.32.0 refuses" in lines[0]
    assert f"restart the server with {TRUST_FLAG}" in lines[0] and "trust_request_mm_kwargs=false" in lines[0]
    code, _ = run_eval(tmp_path / "no-preflight", untrusted, "odu_ao", max_tokens=4, flags={"no_preflight": True})
    err = capfd.readouterr().err
    assert code == 2 and f"restart the server with {TRUST_FLAG}" in err and "inference error" not in err
    code, folder = run_eval(
        tmp_path / "separate", untrusted, "odu_av,odu_ao", max_tokens=8, trust_request_mm_kwargs=False
    )
    assert code == 0, capfd.readouterr().err[-3000:]
    assert read_json(folder / "summary.json")["inference_errors"] == 0
    card = backend_card(folder)
    assert card["media"]["audio_in_video"] == "separate" and "mm_processor_kwargs" not in card["extra_body"]
    assert card["hearing_check"]["heard"] is True and card["stats"]["requests"] == sum(SAMPLE_SCENES.values())
