"""What the backend tests share (OpenAI-compatible, Gemini, Realtime): short clips made here, a
scene request over them, a clip loader by hash, the task's greedy generation settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from synth import FAST_VIDEO, encode_mp4, write_audio_file

from odu.core.prompts import AsrSentence, ClipRef, Turn
from odu.data.media import LazyClip
from odu.models.base import SceneRequest

#: The generation kwargs of the odu_* tasks (greedy).
GREEDY = {"until": [], "max_gen_toks": 4096, "do_sample": False, "temperature": 0.0}
#: Retry backoff of the backend tests: (first wait, factor, cap) in seconds, short.
FAST_BACKOFF = (0.01, 2.0, 0.05)


def tone(seconds: float, rate: int = 16_000, hz: float = 440.0) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LazyClip]:
    """Two short MP4s with an audio track, a WAV and a FLAC, made here."""
    root = tmp_path_factory.mktemp("backend-media")
    frames = lambda n: (np.full((90, 160, 3), 40 * i % 255, np.uint8) for i in range(n))  # noqa: E731
    return {
        "v1": LazyClip(encode_mp4(root / "v1.mp4", frames(16), tone(2.0), 2.0, settings=FAST_VIDEO)),
        "v2": LazyClip(encode_mp4(root / "v2.mp4", frames(12), tone(1.5, hz=660), 1.5, settings=FAST_VIDEO)),
        "a1": LazyClip(write_audio_file(root / "a1.wav", tone(1.2))),
        "a2": LazyClip(write_audio_file(root / "a2.flac", tone(1.0))),
    }


def request(
    media: dict[str, LazyClip],
    ids: list[str],
    modality: str = "audio-visual",
    scene: str = "s1",
    replies: tuple[str, ...] = ("First reply.",),
) -> SceneRequest:
    """A scene of the clips ``ids`` in order, ``replies`` after every clip but the last."""
    turns = tuple(
        Turn(ClipRef(i, cid, media[cid].sha256, round(media[cid].duration * 1000)), replies if i < len(ids) - 1 else ())
        for i, cid in enumerate(ids)
    )
    return SceneRequest(scene, modality, turns)


def text_request(media: dict[str, LazyClip], ids: list[str], modality: str = "audio-only") -> SceneRequest:
    """:func:`request` as the text-only tasks send it (App D.2): one ASR sentence per clip, no media."""
    plain = request(media, ids, modality)
    sentence = (AsrSentence(0, 900, "could you turn it down"),)
    return replace(plain, turns=tuple(replace(t, asr=sentence) for t in plain.turns), text_only=True)


def loader(media: dict[str, LazyClip]) -> Callable[[SceneRequest, ClipRef], LazyClip]:
    by_hash = {c.sha256: c for c in media.values()}
    return lambda req, ref: by_hash[ref.sha256]
