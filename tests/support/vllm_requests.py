"""What the vLLM lane's tests send and check, shared by the families' test files (``tests/real/test_vllm_*.py``):
the 1 s clips of the side-by-side batteries, a chat body, and the checks of an ``eval --sample`` run on a
family's server."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
from synth import FAST_VIDEO, encode_mp4

from .real_lane import Served, backend_card
from .sample_runs import read_json

#: The bundled sample: 12 audio-visual and 9 audio-only scenes.
SAMPLE_SCENES = {"odu_av": 12, "odu_ao": 9}
#: The per-request switch that has vLLM read a video's audio (rules vllm.qwen-omni.audio-in-video,
#: vllm.nemotron.audio-in-video, vllm.minicpm-o.track-part).
FLAG = {"mm_processor_kwargs": {"use_audio_in_video": True}}
#: The question every battery request asks.
PROBE_TEXT = {"type": "text", "text": "Is there any sound?"}
#: Each task's block in the run's ``summary.json``.
SUMMARY_KEYS = {"odu_av": "audio-visual", "odu_ao": "audio-only"}


def clip_parts(folder: Path) -> dict[str, dict[str, Any]]:
    """``video_url`` parts (data URLs) of a 1 s clip whose track is a 1 s tone (``sound``; 25 frames: fewer than
    vLLM's 32-frame loader default, rule vllm.short-clips) and of the same clip without one (``soundless``)."""
    frames = [np.full((90, 160, 3), 20 * i % 255, np.uint8) for i in range(25)]
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(16_000) / 16_000)).astype(np.float32)
    parts = {}
    for name, audio in (("sound", tone), ("soundless", None)):
        path = encode_mp4(folder / f"{name}.mp4", iter(frames), audio, 1.0, settings=FAST_VIDEO)
        url = "data:video/mp4;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
        parts[name] = {"type": "video_url", "video_url": {"url": url}}
    return parts


def chat_body(model: str | None, *parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """One user turn of :data:`PROBE_TEXT` and ``parts``, one output token; no ``model`` field when None."""
    body = {"messages": [{"role": "user", "content": [PROBE_TEXT, *parts]}], "max_tokens": 1, **extra}
    return body if model is None else {"model": model, **body}


def check_sample_run(served: Served, folder: Path, tasks: dict[str, int], family: str, rule: str) -> dict[str, Any]:
    """The checks every family's ``eval --sample`` run passes: each task's scenes answered with 0 inference
    errors, the provider and family found (vLLM 0.32.0) with the family's rule, the server check hearing the tone
    and seeing ``max_tokens`` kept, one request a scene, no 400 or 500 in the server's log. The run card's
    backend, for the family's own checks."""
    summary = read_json(folder / "summary.json")
    assert summary["inference_errors"] == 0
    assert {task: summary[SUMMARY_KEYS[task]]["n_scenes"] for task in tasks} == tasks
    card = backend_card(folder)
    provider = card["provider"]
    assert (provider["name"], provider["family"], provider["server_version"]) == ("vllm", family, "0.32.0")
    assert rule in provider["rules"]
    hearing = card["hearing_check"]
    assert hearing["heard"] is True and hearing["ignores_max_tokens"] is False, hearing
    assert card["stats"]["requests"] == sum(tasks.values()) and card["stats"]["errors"] == 0
    assert '" 400' not in served.log_text() and '" 500' not in served.log_text()
    return card
