"""Media decoding speed: sampled frames and audio against naive decoding that gives the same output.

Makes its own realistic clips with PyAV (10 s, 640x360, 30 fps H.264 at about 2 Mb/s, x264
"veryfast" with up to 3 B-frames and a 2 s GOP, 48 kHz stereo AAC; a 16 kHz mono WAV), then times,
in the same run, each of ours against a naive baseline that produces the same output (asserted):

* every frame: ``odu.data.media.decode_frames(clip)`` vs decoding every frame with PyAV and
  converting each to RGB (equal arrays and timestamps);
* frames sampled at 1 and 2 fps: ``decode_frames(clip, fps)`` (auto rule, forced sequential,
  forced seek) vs the naive way: decode every frame, keep the one on screen at each sampling
  instant, convert those to RGB (equal arrays and timestamps, for every method);
* a GOP sweep (keyframe every 250 ... 6 frames) timing sequential vs seek (equal frames), from which
  the cost of one seek in decoded-frame equivalents is fitted (the basis of
  ``FRAME_SEEK_COST_FRAMES``), and the strategy the auto rule picks from the packet index (its time
  is that strategy's time; ``auto_vs_best`` is the worst ratio to the faster of the two);
* ``odu.data.media.decode_audio`` on the WAV (soundfile) and the MP4 track (PyAV) to 16 and 24 kHz
  mono vs the naive way: decode the whole track, average the channels with numpy, resample the
  whole signal once with libswresample (equal within 1e-4: the order of float operations differs).

Run: ``python benchmarks/bench_media.py [--repeats 7] [--json out.json]``. Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import av
import numpy as np
import soundfile as sf
from av.video.frame import PictureType

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # build tooling: synth

from _figures import add_json_option, write_json  # noqa: E402
from _timing import best_of  # noqa: E402
from synth import VideoSettings, encode_mp4, write_audio_file  # noqa: E402

from odu.core.tables import render  # noqa: E402
from odu.data.media import (  # noqa: E402
    _TIME_EPS_S,
    FRAME_SEEK_COST_FRAMES,
    FRAME_SEEK_MIN_SAVING,
    VideoFrames,
    _resample,
    _seek_plan,
    _seeking_pays,
    _stream_duration,
    decode_audio,
    decode_frames,
    probe,
    sample_times,
)

WIDTH, HEIGHT, FPS, SECONDS = 640, 360, 30, 10.0
GOP_SWEEP = (250, 60, 30, 12, 6)
SAMPLE_RATES = (1.0, 2.0)


def _frames(seed: int = 0):
    """A slow camera pan over a textured scene with moving colour fields, a moving disc and sensor
    grain: encodes at about 2 Mb/s with x264 choosing I, P and (mostly) B frames, like camera video."""
    rng = np.random.default_rng(seed)
    ys, xs = np.mgrid[:HEIGHT, :WIDTH].astype(np.float32)
    texture = rng.integers(0, 40, (HEIGHT + 64, WIDTH + 64, 1), dtype=np.uint8)
    grain = rng.integers(0, 5, (8, HEIGHT, WIDTH, 1), dtype=np.uint8)
    k = 0
    while True:
        t = k / FPS / 2
        image = np.empty((HEIGHT, WIDTH, 3), dtype=np.float32)
        image[..., 0] = 128 + 90 * np.sin(xs / 60 + t)
        image[..., 1] = 128 + 90 * np.sin(ys / 45 - 0.7 * t)
        image[..., 2] = 128 + 90 * np.sin((xs + ys) / 80 + 1.3 * t)
        cx, cy = WIDTH * (0.5 + 0.35 * np.sin(t)), HEIGHT * (0.5 + 0.3 * np.cos(0.8 * t))
        image[(xs - cx) ** 2 + (ys - cy) ** 2 < 50**2] = (250, 240, 30)
        dx, dy = int(32 + 30 * np.sin(0.5 * t)), int(32 + 30 * np.cos(0.4 * t))
        out = np.clip(image, 0, 215).astype(np.uint8) + texture[dy : dy + HEIGHT, dx : dx + WIDTH]
        yield out + grain[k % len(grain)]
        k += 1


def make_clip(path: Path, gop: int) -> Path:
    rng = np.random.default_rng(1)
    n = int(SECONDS * 48_000)
    t = np.arange(n) / 48_000
    audio = np.stack([0.2 * np.sin(2 * np.pi * 220 * t), 0.2 * np.sin(2 * np.pi * 330 * t)])
    audio += 0.02 * rng.standard_normal(audio.shape)
    settings = VideoSettings(
        width=WIDTH, height=HEIGHT, fps=FPS, crf=23, preset="veryfast", gop=gop, b_frames=3, audio_bitrate=128_000
    )
    return encode_mp4(path, _frames(), audio.astype(np.float32), SECONDS, sample_rate=48_000, settings=settings)


def timed(fn: Callable[[], Any], repeats: int) -> float:
    """Best CPU time (all threads of this process) of ``repeats`` calls, in seconds, after one
    warm-up call. CPU time measures the decoding work and is far less disturbed than wall time
    by other load on a shared machine; the minimum is the least disturbed run."""
    return best_of(repeats, fn, clock=time.process_time, warm_up=True)


def naive_frames(path: Path, fps: float | None = None) -> VideoFrames:
    """The naive baseline: decode every frame; every one to RGB, or (with ``fps``) the one on screen
    at each sampling instant (the last frame starting at or before it)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        start = float(stream.start_time * stream.time_base) if stream.start_time else 0.0
        decoded = [(f.time - start, f) for f in container.decode(stream)]
        if fps is None:
            return VideoFrames(
                np.stack([f.to_ndarray(format="rgb24") for _, f in decoded]), np.array([t for t, _ in decoded])
            )
        duration = _stream_duration(stream)
    assert duration is not None
    times = sample_times(duration, fps)
    assert times is not None
    shown = [decoded[max(0, bisect_right([t for t, _ in decoded], s + _TIME_EPS_S) - 1)] for s in times]
    rgb: dict[int, np.ndarray] = {}
    frames = np.stack([rgb.setdefault(id(f), f.to_ndarray(format="rgb24")) for _, f in shown])
    return VideoFrames(frames, np.array([t for t, _ in shown]))


def naive_audio(path: Path, rate: int) -> np.ndarray:
    """The naive baseline for audio: the whole track decoded to one array, channels averaged with
    numpy, the mono signal resampled in one go (libswresample), cut to the track's duration."""
    if path.suffix == ".wav":
        data, native = sf.read(str(path), dtype="float32", always_2d=True)
        return _resample(np.ascontiguousarray(data.mean(axis=1, dtype=np.float32)), native, rate)
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        native = stream.rate
        planes = np.concatenate([f.to_ndarray() for f in container.decode(stream)], axis=1)
        length = _stream_duration(stream)
    mono = _resample(np.ascontiguousarray(planes.mean(axis=0, dtype=np.float32)), native, rate)
    return mono[: round(length * rate)] if length is not None else mono


def same_frames(a: VideoFrames, b: VideoFrames, what: str) -> None:
    if not (np.array_equal(a.frames, b.frames) and np.allclose(a.timestamps, b.timestamps, atol=1e-9)):
        raise SystemExit(f"bench_media: {what}: the frames differ")


def same_audio(a: np.ndarray, b: np.ndarray, what: str) -> float:
    """Largest sample difference of two decodings of the same audio (it must stay below 1e-4)."""
    if a.shape != b.shape:
        raise SystemExit(f"bench_media: {what}: {a.shape} samples against {b.shape}")
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    if diff > 1e-4:
        raise SystemExit(f"bench_media: {what}: samples differ by up to {diff:g}")
    return diff


def plan_numbers(path: Path, fps: float) -> dict[str, float]:
    """Frames decoded and seeks made by the pure-seek plan and by a straight read."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        times = sample_times(float(stream.duration * stream.time_base), fps)
        seeks, cost, straight = _seek_plan(stream, 0.0, times, 0.0)
        auto = _seek_plan(stream, 0.0, times, FRAME_SEEK_COST_FRAMES)
    use_seek = auto is not None and _seeking_pays(auto)
    return {"seek_frames": cost, "seeks": sum(seeks), "straight_frames": straight, "auto_seeks": use_seek}


def run(repeats: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "clip": f"{SECONDS:g} s {WIDTH}x{HEIGHT} {FPS} fps H.264 (I/P/B, 2 s GOP), 48 kHz stereo AAC",
        "repeats": repeats,
        "frame_seek_cost_frames": FRAME_SEEK_COST_FRAMES,
        "frame_seek_min_saving": FRAME_SEEK_MIN_SAVING,
    }
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        main = make_clip(tmp_path / "gop60.mp4", 60)
        info = probe(main)
        result["clip_bytes"] = main.stat().st_size
        with av.open(str(main)) as container:
            types = Counter(PictureType(f.pict_type).name for f in container.decode(video=0))
        result["frame_types"] = dict(sorted(types.items()))
        result["probe_ms"] = 1000 * timed(lambda: probe(main), repeats)
        same_frames(decode_frames(main), naive_frames(main), "every frame")
        t_all = timed(lambda: naive_frames(main), repeats)
        t_ours = timed(lambda: decode_frames(main), repeats)
        result["every_frame"] = {"naive_s": t_all, "ours_s": t_ours, "ratio": t_ours / t_all}
        result["frames"] = {}
        for fps in SAMPLE_RATES:
            expected = naive_frames(main, fps)
            t_naive = timed(lambda fps=fps: naive_frames(main, fps), repeats)
            row: dict[str, Any] = {"naive": {"s": t_naive}, "n_frames": len(expected.frames)}
            for method in ("auto", "sequential", "seek"):
                same_frames(decode_frames(main, fps=fps, method=method), expected, f"{fps:g} fps, {method}")
                t = timed(lambda fps=fps, method=method: decode_frames(main, fps=fps, method=method), repeats)
                row[method] = {"s": t, "vs_naive": t / t_naive}
            result["frames"][f"{fps:g} fps"] = row

        sweep = []
        for gop in GOP_SWEEP:
            clip = main if gop == 60 else make_clip(tmp_path / f"gop{gop}.mp4", gop)
            for fps in SAMPLE_RATES:
                same_frames(
                    decode_frames(clip, fps=fps, method="seek"),
                    decode_frames(clip, fps=fps, method="sequential"),
                    f"GOP {gop}, {fps:g} fps, seek vs sequential",
                )
                t_seq = timed(lambda clip=clip, fps=fps: decode_frames(clip, fps=fps, method="sequential"), repeats)
                t_seek = timed(lambda clip=clip, fps=fps: decode_frames(clip, fps=fps, method="seek"), repeats)
                plan = plan_numbers(clip, fps)
                t_auto = t_seek if plan["auto_seeks"] else t_seq
                sweep.append(
                    {"gop": gop, "fps": fps, "sequential_s": t_seq, "seek_s": t_seek, "auto_s": t_auto, **plan}
                )
        # Per-frame time of the straight reads and, from the seek runs, a rough per-seek overhead in
        # those frames (rough: skipped B-frames make straight-read frames cheaper than seek ones).
        per_frame = statistics.median(r["sequential_s"] / r["straight_frames"] for r in sweep)
        overheads = [(r["seek_s"] - per_frame * r["seek_frames"]) / r["seeks"] / per_frame for r in sweep if r["seeks"]]
        result["gop_sweep"] = sweep
        result["per_frame_ms"] = 1000 * per_frame
        result["fitted_seek_cost_frames"] = statistics.median(overheads)
        result["auto_vs_best"] = max(r["auto_s"] / min(r["sequential_s"], r["seek_s"]) for r in sweep)

        wav = write_audio_file(tmp_path / "speech.wav", (0.1 * np.random.default_rng(2).standard_normal(160_000)))
        audio = {}
        for name, path in (("wav 16k mono (soundfile)", wav), ("mp4 48k stereo AAC (PyAV)", main)):
            for rate in (16_000, 24_000):
                diff = same_audio(decode_audio(path, rate), naive_audio(path, rate), f"{name} -> {rate}")
                base = timed(lambda path=path, rate=rate: naive_audio(path, rate), repeats)
                t = timed(lambda path=path, rate=rate: decode_audio(path, rate), repeats)
                audio[f"{name} -> {rate // 1000} kHz"] = {
                    "s": t,
                    "naive_s": base,
                    "vs_naive": t / base,
                    "x_realtime": SECONDS / t,
                    "max_difference": diff,
                }
        result["audio"] = audio
        result["clip_duration_s"] = info.duration_s
    return result


def table(r: dict[str, Any]) -> str:
    every = r["every_frame"]
    frames = [
        [name, str(row["n_frames"]), f"{row['naive']['s'] * 1000:.0f} ms"]
        + [f"{row[m]['s'] * 1000:.0f} ms ({row[m]['vs_naive']:.2f}x)" for m in ("auto", "sequential", "seek")]
        for name, row in r["frames"].items()
    ]
    gops = [
        [
            str(s["gop"]),
            f"{s['fps']:g}",
            f"{s['sequential_s'] * 1000:.0f} ms",
            f"{s['seek_s'] * 1000:.0f} ms",
            f"{s['auto_s'] * 1000:.0f} ms ({'seek' if s['auto_seeks'] else 'sequential'})",
            f"{s['seek_frames']:.0f} of {s['straight_frames']} / {s['seeks']}",
        ]
        for s in r["gop_sweep"]
    ]
    audio = [
        [
            name,
            f"{a['s'] * 1000:.1f} ms",
            f"{a['naive_s'] * 1000:.1f} ms",
            f"{a['vs_naive']:.2f}x",
            f"{a['x_realtime']:.0f}",
            f"{a['max_difference']:.1e}",
        ]
        for name, a in r["audio"].items()
    ]
    return "\n".join(
        [
            f"clip: {r['clip']}, {r['clip_bytes'] / 1e6:.2f} MB, frames {r['frame_types']}; "
            f"probe {r['probe_ms']:.2f} ms",
            f"every frame to RGB: naive {every['naive_s'] * 1000:.0f} ms, decode_frames {every['ours_s'] * 1000:.0f} ms "
            f"({every['ratio']:.2f}x)",
            "",
            render(["sampling", "frames", "naive (decode all, pick)", "auto", "sequential", "seek"], frames),
            "",
            render(["GOP", "fps", "sequential", "seek", "auto (picked)", "seek-plan frames / seeks"], gops),
            "",
            f"per frame of a straight read {r['per_frame_ms']:.2f} ms; rough per-seek overhead "
            f"{r['fitted_seek_cost_frames']:.1f} such frames "
            f"(FRAME_SEEK_COST_FRAMES = {r['frame_seek_cost_frames']:g}, FRAME_SEEK_MIN_SAVING = "
            f"{r['frame_seek_min_saving']:g}); auto within {r['auto_vs_best']:.2f}x of the best",
            "",
            render(["audio", "decode_audio", "naive", "ratio", "x realtime", "max difference"], audio),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    add_json_option(parser)
    args = parser.parse_args()
    result = run(args.repeats)
    write_json(args.json, result)
    print(json.dumps(result, indent=2))
    print()
    print(table(result))


if __name__ == "__main__":
    main()
