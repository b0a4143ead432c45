"""Iterating a prepared split with lazy media vs a naive eager loader: rows/s and peak RSS.

Builds, from the bundled sample (``odu.data.sample``), a release at 1x and at 10x its size (the 10x
copy repeats every scene under new ids, each row embedding its own media bytes), prepares both
with ``odu.data.prepare.prepare`` and loads the ``all`` config with ``datasets.load_dataset``. Then,
each in a fresh process (so peak RSS is its own), over the whole split:

* ``lazy-meta``: :func:`odu.data.dataset.with_lazy_media`; per row the clips' durations and the
  scene record (nothing decoded) — what a scorer or a cache-key pass touches;
* ``lazy-decode``: the same, and the final clip decoded as a model backend would feed it: video
  frames at 1 fps (audio-visual) and 16 kHz mono audio, used and dropped;
* ``eager`` (naive baseline): every clip of every row decoded in full (all frames, audio) into a
  list first, then iterated — what decoding the media column up front amounts to.

Memory, over the process's state right after ``load_dataset``: peak heap (anonymous RSS: Python
objects and decoded arrays, sampled per row) and peak RSS (``ru_maxrss``, which also counts the
pages of the memory-mapped Arrow table that iteration touched: file-backed, shared with the page
cache and reclaimable, so they grow with the split however it is read). Goal: lazy heap flat
from 1x to 10x.

Run: ``python benchmarks/bench_dataset.py [--scale 10] [--modes ...] [--json out.json]``. Prints JSON,
then a table.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODES = ("lazy-meta", "lazy-decode", "eager")


def rss_mb(field: str = "VmRSS") -> float:
    """A line of ``/proc/self/status`` in MB: ``VmRSS`` (all resident pages), ``RssAnon`` (heap:
    Python objects, decoded arrays) or ``RssFile`` (file pages, e.g. the memory-mapped Arrow table)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


class AnonPeak:
    """Peak anonymous RSS, sampled once per row (the kernel keeps no peak of it)."""

    def __init__(self) -> None:
        self.peak = rss_mb("RssAnon")

    def sample(self) -> None:
        self.peak = max(self.peak, rss_mb("RssAnon"))


def build_release(out: Path, scale: int) -> Path:
    """The bundled sample with every scene repeated ``scale`` times (ids suffixed), media shared."""
    from odu.data.release import find_records
    from odu.data.sample import sample_dir
    from odu.schema import read_json_records

    source = sample_dir()
    records = read_json_records(find_records(source))
    out.mkdir(parents=True)
    (out / "media").symlink_to(source / "media")
    with (out / "scenes.jsonl").open("w", encoding="utf-8") as fh:
        for copy in range(scale):
            for record in records:
                renamed = {**record, "scene_id": f"{record['scene_id']}{'' if copy == 0 else f'_x{copy}'}"}
                fh.write(json.dumps(renamed, ensure_ascii=False) + "\n")
    return out


def iterate(dataset_dir: str, mode: str, cache: str) -> dict[str, Any]:
    """One measurement (run in a fresh process by :func:`main`)."""
    import numpy as np
    from datasets import load_dataset

    from odu.data.dataset import row_clips, row_to_scene, with_lazy_media
    from odu.data.media import decode_audio, decode_frames

    ds = load_dataset(dataset_dir, "all", split="test", cache_dir=cache)
    baseline, anon_baseline = rss_mb(), rss_mb("RssAnon")
    anon = AnonPeak()
    start = time.perf_counter()
    checksum = 0.0
    if mode == "eager":
        decoded = []
        for row in ds:
            clips = []
            for turn in row["turns"]:
                if turn["role"] != "user":
                    continue
                data = turn["media"]["bytes"]
                frames = decode_frames(data).frames if row["modality"] == "audio-visual" else None
                clips.append((frames, decode_audio(data)))
            decoded.append((row["scene_id"], clips))
            anon.sample()
        for _, clips in decoded:
            frames, audio = clips[-1]
            checksum += float(audio.mean()) + (float(frames.mean()) if frames is not None else 0.0)
    else:
        for row in with_lazy_media(ds):
            clips = row_clips(row)
            checksum += sum(c.duration for c in clips) + len(row_to_scene(row).clips)
            if mode == "lazy-decode":
                final = clips[-1]
                if row["modality"] == "audio-visual":
                    checksum += float(np.mean(final.frames(fps=1).frames))
                checksum += float(final.audio(16_000).mean())
            anon.sample()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "mode": mode,
        "rows": len(ds),
        "seconds": seconds,
        "rows_per_s": len(ds) / seconds,
        "rss_after_load_mb": baseline,
        "peak_rss_mb": peak,
        "peak_over_load_mb": peak - baseline,
        "peak_anon_over_load_mb": anon.peak - anon_baseline,
        "file_rss_end_mb": rss_mb("RssFile"),
        "checksum": checksum,
    }


def measure(dataset_dir: Path, mode: str, cache: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(dataset_dir), mode, str(cache)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| scale | rows | mode | rows/s | peak heap (anon RSS) over load, MB | peak RSS over load, MB |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['scale']}x | {r['rows']} | {r['mode']} | {r['rows_per_s']:.1f} | {r['peak_anon_over_load_mb']:.1f} | "
        f"{r['peak_over_load_mb']:.1f} |"
        for r in results
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=10, help="size of the large copy, in sample sizes")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="modes to run")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--child", nargs=3, metavar=("DIR", "MODE", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(iterate(*args.child)))
        return

    from odu.data.prepare import prepare

    results = []
    with tempfile.TemporaryDirectory(prefix="odu-bench-dataset-") as tmp:
        for scale in (1, args.scale):
            release = build_release(Path(tmp) / f"release-{scale}x", scale)
            prepared = Path(tmp) / f"prepared-{scale}x" / "odu-bench"
            prepare(release, prepared)
            cache = Path(tmp) / f"cache-{scale}x"
            measure(prepared, "lazy-meta", cache)  # warm: build the Arrow cache once, untimed
            for mode in args.modes:
                results.append({"scale": scale, **measure(prepared, mode, cache)})
            shutil.rmtree(release)
    summary = {"results": results}
    text = json.dumps(summary, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
