"""Media decoding speed: sampled frames vs decoding every frame, seek vs sequential, audio loads.

Makes its own realistic clips with PyAV (10 s, 640x360, 30 fps H.264 at about 2 Mb/s, x264
"veryfast" with up to 3 B-frames and a 2 s GOP, 48 kHz stereo AAC; a 16 kHz mono WAV), then times,
in the same run:

* ``decode-all``: the naive baseline, every frame decoded and converted to RGB;
* ``odu.data.media.decode_frames`` at 1 and 2 fps (auto rule), and forced sequential / forced seek;
* a GOP sweep (keyframe every 250 ... 6 frames) timing sequential vs seek, from which the cost of
  one seek in decoded-frame equivalents is fitted (the basis of ``FRAME_SEEK_COST_FRAMES``), and
  the strategy the auto rule picks from the packet index (its time is that strategy's time);
* ``odu.data.media.decode_audio`` on the WAV (soundfile) and the MP4 track (PyAV), against reading
  the samples without downmix or resampling.

Run: ``python benchmarks/bench_media.py [--repeats 7] [--json out.json]``. Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import av
import numpy as np
import soundfile as sf
from av.video.frame import PictureType

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # build tooling: synth

from _timing import best_of  # noqa: E402
from synth import VideoSettings, encode_mp4, write_audio_file  # noqa: E402

from odu.data.media import (  # noqa: E402
    FRAME_SEEK_COST_FRAMES,
    FRAME_SEEK_MIN_SAVING,
    _seek_plan,
    _seeking_pays,
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


def decode_all(path: Path) -> int:
    """The naive baseline: decode every frame and convert each one to RGB."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        return len([f.to_ndarray(format="rgb24") for f in container.decode(stream)])


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
        t_all = timed(lambda: decode_all(main), repeats)
        result["decode_all_s"] = t_all
        result["frames"] = {}
        for fps in SAMPLE_RATES:
            row = {}
            for method in ("auto", "sequential", "seek"):
                t = timed(lambda fps=fps, method=method: decode_frames(main, fps=fps, method=method), repeats)
                row[method] = {"s": t, "vs_decode_all": t / t_all}
            row["n_frames"] = len(decode_frames(main, fps=fps))
            result["frames"][f"{fps:g} fps"] = row

        sweep = []
        for gop in GOP_SWEEP:
            clip = main if gop == 60 else make_clip(tmp_path / f"gop{gop}.mp4", gop)
            for fps in SAMPLE_RATES:
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
        for name, path, baseline in (
            ("wav 16k mono (soundfile)", wav, lambda: sf.read(str(wav), dtype="float32")),
            ("mp4 48k stereo AAC (PyAV)", main, lambda: _decode_track(main)),
        ):
            base = timed(baseline, repeats)
            for rate in (16_000, 24_000):
                t = timed(lambda path=path, rate=rate: decode_audio(path, rate), repeats)
                audio[f"{name} -> {rate // 1000} kHz"] = {
                    "s": t,
                    "baseline_s": base,
                    "vs_baseline": t / base,
                    "x_realtime": SECONDS / t,
                }
        result["audio"] = audio
        result["clip_duration_s"] = info.duration_s
    return result


def _decode_track(path: Path) -> int:
    """Baseline for audio: decode the track to arrays, no downmix, no resampling."""
    with av.open(str(path)) as container:
        return sum(f.to_ndarray().shape[-1] for f in container.decode(audio=0))


def table(r: dict[str, Any]) -> str:
    lines = [
        f"clip: {r['clip']}, {r['clip_bytes'] / 1e6:.2f} MB, frames {r['frame_types']}; probe {r['probe_ms']:.2f} ms",
        f"decode-all (every frame to RGB): {r['decode_all_s'] * 1000:.0f} ms",
        "",
        "| sampling | frames | auto | sequential | seek |",
        "|---|---|---|---|---|",
    ]
    for name, row in r["frames"].items():
        cells = [
            f"{row[m]['s'] * 1000:.0f} ms ({row[m]['vs_decode_all']:.2f}x)" for m in ("auto", "sequential", "seek")
        ]
        lines.append(f"| {name} | {row['n_frames']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| GOP | fps | sequential | seek | auto (picked) | seek-plan frames / seeks |",
        "|---|---|---|---|---|---|",
    ]
    for s in r["gop_sweep"]:
        picked = "seek" if s["auto_seeks"] else "sequential"
        lines.append(
            f"| {s['gop']} | {s['fps']:g} | {s['sequential_s'] * 1000:.0f} ms | {s['seek_s'] * 1000:.0f} ms | "
            f"{s['auto_s'] * 1000:.0f} ms ({picked}) | {s['seek_frames']:.0f} of {s['straight_frames']} / {s['seeks']} |"
        )
    lines += [
        "",
        f"per frame of a straight read {r['per_frame_ms']:.2f} ms; rough per-seek overhead "
        f"{r['fitted_seek_cost_frames']:.1f} such frames "
        f"(FRAME_SEEK_COST_FRAMES = {r['frame_seek_cost_frames']:g}, FRAME_SEEK_MIN_SAVING = "
        f"{r['frame_seek_min_saving']:g}); auto within {r['auto_vs_best']:.2f}x of the best",
        "",
        "| audio | decode_audio | baseline | ratio | x realtime |",
        "|---|---|---|---|---|",
    ]
    for name, a in r["audio"].items():
        lines.append(
            f"| {name} | {a['s'] * 1000:.1f} ms | {a['baseline_s'] * 1000:.1f} ms | {a['vs_baseline']:.2f}x | {a['x_realtime']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    result = run(args.repeats)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    print()
    print(table(result))


if __name__ == "__main__":
    main()
