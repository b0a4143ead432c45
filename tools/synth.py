"""Writing synthetic media: drawn frames, tones and noise, encoded with PyAV and soundfile.

Build tooling, outside the runtime package. Used by the sample generator (``make_sample.py``
beside it), by tests and benchmarks, and by
:func:`synthesize_media`, which gives release records without media (such as the authors' demo
records) a clip of each clip's exact ``duration`` at its ``src``, so that they can go through
validation, ``prepare`` and ``load_dataset``.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import soundfile as sf

from odu.core.constants import AUDIO_VISUAL
from odu.data.media import DEFAULT_AUDIO_SAMPLE_RATE

#: Encoded container per file suffix; WAV/FLAC go through soundfile.
VIDEO_SUFFIXES = frozenset({".mp4", ".mov", ".m4v"})
AUDIO_CONTAINER_SUFFIXES = frozenset({".m4a"})
SOUNDFILE_SUFFIXES = {".wav": ("WAV", "PCM_16"), ".flac": ("FLAC", "PCM_16")}

_MS = Fraction(1, 1000)


@dataclass(frozen=True, slots=True)
class VideoSettings:
    """H.264 encoding of synthetic clips: small frames, low rate (defaults suit the sample)."""

    width: int = 192
    height: int = 108
    fps: int = 8
    crf: int = 30
    preset: str = "veryslow"
    gop: int = 16
    b_frames: int = 0
    audio_bitrate: int = 32_000
    aac_coder: str = "twoloop"  # FFmpeg's AAC search; "fast" is about twice as quick


#: Fast settings for throw-away media (tests, :func:`synthesize_media`).
FAST_VIDEO = VideoSettings(width=160, height=90, crf=35, preset="ultrafast", aac_coder="fast")


def encode_mp4(
    path: str | Path,
    frames: Iterable[np.ndarray] | None,
    audio: np.ndarray | None,
    duration_s: float,
    *,
    sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE,
    settings: VideoSettings = VideoSettings(),
) -> Path:
    """Write an MP4 (index at the front) lasting exactly ``duration_s`` (to the millisecond).

    ``frames`` yields RGB uint8 (H, W, 3) arrays at ``settings.fps``; the first
    ``ceil(duration_s * fps)`` are used and the last is shown until ``duration_s``. ``audio`` is
    float32 mono (n,) or (channels, n) and is cut or zero-padded to ``duration_s``. Either may be
    None (audio-only M4A or a silent video).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    end_ms = round(duration_s * 1000)
    if end_ms <= 0:
        raise ValueError(f"{path}: duration must be positive, got {duration_s!r}")
    with av.open(str(path), "w", format="mp4", options={"movflags": "+faststart"}) as out:
        vstream = None
        if frames is not None:
            vstream = out.add_stream(
                "libx264",
                rate=settings.fps,
                options={
                    "crf": str(settings.crf),
                    "preset": settings.preset,
                    "g": str(settings.gop),
                    "bf": str(settings.b_frames),
                    "threads": "1",  # bit-identical output run to run
                    **_x264_asm_cap(),
                },
            )
            vstream.width, vstream.height, vstream.pix_fmt = settings.width, settings.height, "yuv420p"
        astream = None
        if audio is not None:
            audio = np.atleast_2d(np.asarray(audio, dtype=np.float32))
            astream = out.add_stream(
                "aac",
                rate=sample_rate,
                layout="mono" if audio.shape[0] == 1 else "stereo",
                options={"aac_coder": settings.aac_coder},
            )
            astream.bit_rate = settings.audio_bitrate
        if vstream is not None:
            assert frames is not None
            _encode_video(out, vstream, frames, end_ms, settings.fps)
        if astream is not None:
            assert audio is not None
            _encode_audio(out, astream, audio, round(duration_s * sample_rate), sample_rate)
    return path


@functools.cache
def _x264_asm_cap() -> dict[str, str]:
    """x264 options that keep its output independent of the process it runs in.

    On CPUs with AVX-512, x264's AVX-512 routines (chosen automatically) made the H.264 stream
    depend on the state of the process: the committed sample's MP4s came out different (the
    bottom chroma rows of the 192x108 frames off by one) when regenerated inside a test process
    that had run other tests first, differently from run to run, while a fresh process always
    wrote the committed bytes. Capped at AVX2 the output is those same bytes, in any process (the
    x264 bundled with PyAV 18.1, libx264.so.165). CPUs without AVX-512 keep x264's own choice.
    """
    try:
        cpu = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    line = re.search(r"^flags\s*:(.*)$", cpu, re.M)
    flags = set(line.group(1).split()) if line else set()
    return {"x264-params": "asm=AVX2"} if {"avx512f", "avx2"} <= flags else {}


def _encode_video(out: Any, stream: Any, frames: Iterable[np.ndarray], end_ms: int, fps: int) -> None:
    count = max(1, math.ceil(end_ms * fps / 1000 - 1e-9))
    pending = None

    def mux(packets: list[Any]) -> None:
        nonlocal pending
        for packet in packets:
            if pending is not None:
                out.mux(pending)
            pending = packet

    written = 0
    for index, image in zip(range(count), frames):
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image, dtype=np.uint8), format="rgb24")
        frame.pts = index
        mux(stream.encode(frame))
        written += 1
    if written == 0:
        raise ValueError("no video frames given")
    mux(stream.encode(None))
    # The last frame lasts until the clip's end: re-time the last packet in milliseconds.
    assert pending is not None and pending.time_base is not None
    tb = pending.time_base
    pts_ms, dts_ms = round(pending.pts * tb / _MS), round(pending.dts * tb / _MS)
    pending.time_base = _MS
    pending.pts, pending.dts, pending.duration = pts_ms, dts_ms, max(1, end_ms - pts_ms)
    out.mux(pending)


def _encode_audio(out: Any, stream: Any, audio: np.ndarray, n_samples: int, sample_rate: int) -> None:
    signal = np.zeros((audio.shape[0], n_samples), dtype=np.float32)
    signal[:, : min(n_samples, audio.shape[1])] = audio[:, :n_samples]
    layout = "mono" if audio.shape[0] == 1 else "stereo"
    step = 1024
    for start in range(0, n_samples, step):
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(signal[:, start : start + step]), format="fltp", layout=layout
        )
        frame.sample_rate, frame.pts, frame.time_base = sample_rate, start, Fraction(1, sample_rate)
        out.mux(stream.encode(frame))
    out.mux(stream.encode(None))


def write_audio_file(path: str | Path, audio: np.ndarray, sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE) -> Path:
    """Write mono float audio as 16-bit WAV or FLAC (by suffix) with soundfile."""
    path = Path(path)
    try:
        fmt, subtype = SOUNDFILE_SUFFIXES[path.suffix.lower()]
    except KeyError:
        raise ValueError(f"{path}: audio files are written as {sorted(SOUNDFILE_SUFFIXES)}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.clip(audio, -1.0, 1.0), sample_rate, format=fmt, subtype=subtype)
    return path


# --- drawing ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    """A filled shape in relative coordinates (0..1): "disc" (x, y = centre, w = diameter as a
    fraction of the height) or "rect" (x, y = top-left, w, h). ``dx``/``dy`` move it per second."""

    kind: str
    color: tuple[int, int, int]
    x: float
    y: float
    w: float
    h: float = 0.0
    dx: float = 0.0
    dy: float = 0.0


def draw_frame(
    width: int, height: int, background: tuple[int, int, int], shapes: Sequence[Shape], t: float
) -> np.ndarray:
    """One RGB frame of ``shapes`` over ``background`` at time ``t`` (seconds)."""
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = background
    for s in shapes:
        x, y = s.x + s.dx * t, s.y + s.dy * t
        if s.kind == "disc":
            cx, cy, radius = x * width, y * height, s.w * height / 2
            x0, x1 = max(0, int(cx - radius)), min(width, int(cx + radius) + 1)
            y0, y1 = max(0, int(cy - radius)), min(height, int(cy + radius) + 1)
            if x1 <= x0 or y1 <= y0:
                continue
            ys, xs = np.ogrid[y0:y1, x0:x1]
            mask = (xs - cx) ** 2 + (ys - cy) ** 2 <= radius**2
            image[y0:y1, x0:x1][mask] = s.color
        elif s.kind == "rect":
            x0, y0 = int(round(x * width)), int(round(y * height))
            x1, y1 = int(round((x + s.w) * width)), int(round((y + s.h) * height))
            image[max(0, y0) : max(0, y1), max(0, x0) : max(0, x1)] = s.color
        else:
            raise ValueError(f"unknown shape kind {s.kind!r}")
    return image


def person(x: float, shirt: tuple[int, int, int], mouth_open: bool) -> list[Shape]:
    """A seated figure at horizontal position ``x``: body, head, and a mouth that opens while
    the person speaks."""
    skin, mouth = (224, 186, 150), (120, 30, 30)
    return [
        Shape("rect", shirt, x - 0.09, 0.62, 0.18, 0.38),
        Shape("disc", skin, x, 0.45, 0.30),
        Shape("rect", mouth, x - 0.025, 0.50, 0.05, 0.045 if mouth_open else 0.012),
    ]


# --- tones and noise --------------------------------------------------------------------------------


def _scene_seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "little")


def tone_track(
    duration_s: float, bursts: Sequence[tuple[float, float]], seed: int, sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE
) -> np.ndarray:
    """A quiet noise floor with a voice-band tone pattern during each ``(start_s, end_s)`` burst:
    stand-in speech whose timing follows the annotations."""
    rng = np.random.default_rng(seed)
    n = round(duration_s * sample_rate)
    audio = (rng.standard_normal(n) * 0.003).astype(np.float32)
    t = np.arange(n) / sample_rate
    base = 140.0 + 80.0 * rng.random()
    for start, end in bursts:
        i0, i1 = max(0, round(start * sample_rate)), min(n, round(end * sample_rate))
        if i1 <= i0:
            continue
        seg = t[i0:i1]
        syllables = 0.5 * (1 - np.cos(2 * np.pi * 4.0 * (seg - start)))  # ~4 syllables per second
        pitch = base * (1 + 0.1 * np.sin(2 * np.pi * 0.7 * seg))
        phase = 2 * np.pi * np.cumsum(pitch) / sample_rate
        voiced = np.sin(phase) + 0.5 * np.sin(2 * phase) + 0.25 * np.sin(3 * phase)
        audio[i0:i1] += (0.12 * syllables * voiced).astype(np.float32)
    return audio


# --- media for release records --------------------------------------------------------------------


def _bursts(record: Mapping[str, Any], duration_s: float) -> list[tuple[float, float]]:
    """Reference segment spans of the final clip (scene language), in seconds."""
    annotations = record.get("annotations") or {}
    block = annotations.get(record.get("language")) or next(iter(annotations.values()), {})
    segments = (block.get("evaluation_targets") or {}).get("segments") or []
    return [(s["start_ms"] / 1000, min(duration_s, s["end_ms"] / 1000)) for s in segments]


def _clip_frames(seed: int, settings: VideoSettings, bursts: Sequence[tuple[float, float]]) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    background = tuple(int(v) for v in rng.integers(40, 200, 3))
    thing = Shape("disc", tuple(int(v) for v in rng.integers(0, 256, 3)), 0.2, 0.3, 0.25, dx=0.05)
    shirt = tuple(int(v) for v in rng.integers(0, 256, 3))
    for k in itertools.count():
        t = k / settings.fps
        speaking = any(a <= t < b for a, b in bursts)
        yield draw_frame(settings.width, settings.height, background, [thing, *person(0.7, shirt, speaking)], t)


def synthesize_media(
    records: Iterable[Mapping[str, Any]],
    out_dir: str | Path,
    *,
    settings: VideoSettings = FAST_VIDEO,
    sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE,
) -> dict[tuple[str, str], Path]:
    """Write a synthetic clip for every clip of every release record, at ``out_dir / clip.src``,
    lasting the clip's exact ``duration``: drawn frames (audio-visual MP4) or audio only (WAV,
    FLAC, M4A, by the ``src`` suffix), with tone "speech" during the final clip's reference
    segments. Deterministic. Returns ``{(scene_id, clip_id): path}``.
    """
    out_dir = Path(out_dir)
    written: dict[tuple[str, str], Path] = {}
    for record in records:
        sid, clips = record["scene_id"], record["clips"]
        for index, clip in enumerate(clips):
            cid, src, duration = clip["id"], clip.get("src") or "", float(clip["duration"])
            if not src:
                raise ValueError(f"scene {sid}: clip {cid}: no 'src' to write media to")
            target = out_dir / src
            if not target.resolve().is_relative_to(out_dir.resolve()):
                raise ValueError(f"scene {sid}: clip {cid}: src {src!r} leaves the output folder")
            seed = _scene_seed(sid, cid)
            bursts = _bursts(record, duration) if index == len(clips) - 1 else [(0.5, min(duration, 2.5))]
            audio = tone_track(duration, bursts, seed, sample_rate)
            suffix = target.suffix.lower()
            if suffix in SOUNDFILE_SUFFIXES:
                write_audio_file(target, audio, sample_rate)
            elif suffix in VIDEO_SUFFIXES | AUDIO_CONTAINER_SUFFIXES:
                visual = suffix in VIDEO_SUFFIXES and record.get("modality", AUDIO_VISUAL) == AUDIO_VISUAL
                frames = _clip_frames(seed, settings, bursts) if visual else None
                encode_mp4(target, frames, audio, duration, sample_rate=sample_rate, settings=settings)
            else:
                raise ValueError(f"scene {sid}: clip {cid}: cannot synthesise media for suffix {suffix!r}")
            written[(sid, cid)] = target
    return written


__all__ = [
    "FAST_VIDEO",
    "Shape",
    "VideoSettings",
    "draw_frame",
    "encode_mp4",
    "person",
    "synthesize_media",
    "tone_track",
    "write_audio_file",
]
