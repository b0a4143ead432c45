"""``--model openai`` against a real ``transformers serve`` on tiny checkpoints: the server's own code
answers every request the toolkit builds (docs/real-lane.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.real_lane import Served, first_scene_prompt_tokens, first_scene_seconds, request_fault_status, run_eval
from support.real_lane import backend_card as backend
from support.sample_runs import read_json

#: The bundled sample: 12 audio-visual and 9 audio-only scenes.
SAMPLE_SCENES = {"odu_av": 12, "odu_ao": 9}


@pytest.mark.usefixtures("openai_key", "prepared_sample")
def test_eval_sample_on_transformers_serve(omni_server: Served, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    """Every sample scene answered by the real server (0 inference errors), found by provider=auto; the
    server check heard audio and saw the published layout answer past max_tokens."""
    code, folder = run_eval(tmp_path / "run", omni_server, "odu_av,odu_ao")
    err = capfd.readouterr().err
    assert code == 0, err[-3000:]
    summary = read_json(folder / "summary.json")
    assert summary["inference_errors"] == 0
    assert (summary["audio-visual"]["n_scenes"], summary["audio-only"]["n_scenes"]) == tuple(SAMPLE_SCENES.values())
    card = backend(folder)
    assert card["provider"]["name"] == "transformers" and "status object" in card["provider"]["detected_by"]
    assert card["media"]["media_url"] == "http" and card["media"]["audio_in_video"] == "separate"
    assert card["extra_body"] == {"chat_template_kwargs": {"num_frames": None, "fps": 2.0}}
    hearing = card["hearing_check"]
    assert hearing["heard"] is True and hearing["ignores_max_tokens"] is True and hearing["completion_tokens"] == 1024
    assert card["stats"]["requests"] == sum(SAMPLE_SCENES.values()) and card["stats"]["errors"] == 0
    assert "server check: audio heard" in err and "the server ignores max_tokens" in err


@pytest.mark.usefixtures("openai_key", "prepared_sample")
def test_the_audio_of_a_video_reaches_the_served_model(thinker_server: Served, tmp_path: Path) -> None:
    """The prompt the server builds for a video with a sound track holds its audio: the default route
    (separate) and the server's own interleaving (native) both count ~25 audio tokens a second more
    than the same scene with its audio dropped (none). A default that dropped the audio would fail here."""

    def tokens(name: str, **model_args: Any) -> int:
        args = {"provider": "transformers", "hearing_check": False, "max_tokens": 4, **model_args}
        return first_scene_prompt_tokens(tmp_path / name, thinker_server, **args)

    dropped = tokens("none", audio_in_video="none")
    default = tokens("default")
    native = tokens("native", audio_in_video="native")
    seconds = first_scene_seconds()
    assert default - dropped >= 0.8 * 25 * seconds, (default, dropped, seconds)
    assert native - dropped >= 0.8 * 25 * seconds, (native, dropped, seconds)


@pytest.mark.usefixtures("openai_key", "prepared_sample")
def test_thinker_only_checkpoint_keeps_to_max_tokens(thinker_server: Served, tmp_path: Path) -> None:
    """A thinker-only checkpoint (served as a multimodal LM) hears audio and stops at max_tokens."""
    code, folder = run_eval(tmp_path / "run", thinker_server, "odu_ao", limit=3, max_tokens=8)
    assert code == 0
    card = backend(folder)
    assert card["hearing_check"]["heard"] is True and card["hearing_check"]["ignores_max_tokens"] is False
    assert card["stats"]["completion_tokens"] <= 3 * 8


@pytest.mark.usefixtures("openai_key", "prepared_sample")
@pytest.mark.parametrize(
    ("model_args", "server_error", "request_fault"),
    [
        # transformers/video_utils.py load_video: neither http(s) nor a file on the server's disk (a TypeError: 500)
        ({"media_url": "data"}, "Incorrect format used for video", False),
        # transformers/video_utils.py: the server's own num_frames=32 next to the request's fps (a ValueError)
        ({"extra_body": {"chat_template_kwargs": {"num_frames": 32}}}, "mutually exclusive", True),
    ],
)
def test_what_the_real_server_refuses(
    thinker_server: Served,
    tmp_path: Path,
    capfd: pytest.CaptureFixture,
    model_args: dict[str, Any],
    server_error: str,
    request_fault: bool,
) -> None:
    """The rules the profile keeps, shown on the server itself: a video as a data: URL, and num_frames
    beside fps, fail every such request with the server's own message: HTTP 500 and the message in its
    log, or (a request's fault, from transformers 5.25: ``request_fault_status``) HTTP 400 with the
    message in the reply, which reaches the user's inference error line."""
    code, folder = run_eval(
        tmp_path / "run",
        thinker_server,
        "odu_av",
        limit=1,
        provider="transformers",
        retries=0,
        max_tokens=4,
        **model_args,
    )
    err = capfd.readouterr().err
    assert code == 1  # an inference error, reported
    assert read_json(folder / "summary.json")["inference_errors"] == 1
    status = request_fault_status() if request_fault else 500
    assert f"HTTP {status}: Error code: {status}" in err
    assert server_error in (err if status == 400 else thinker_server.log_text())
