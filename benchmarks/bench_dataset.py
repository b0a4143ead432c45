"""The dataset path: ``load_dataset`` + iteration against reading the same parquet with pyarrow,
and lazy against eager media decoding; each pair does the same work and must give the same output.

Builds, from the bundled sample (``odu.data.sample``), a release at 1x and at ``--scale`` times its
size (each copy of a scene under a new id, media shared) and prepares both with
``odu.data.prepare.prepare``. Then, each in a fresh process (so time and memory are its own, the
interpreter's start included), over the whole ``all`` split:

Iteration (issue 13 item 4: where ``datasets`` adds cost):

* ``datasets``: ``import datasets``, ``load_dataset(DIR, "all", split="test")`` (Arrow cache already
  built), then every row through :func:`odu.data.dataset.with_lazy_media`: its release record
  (:func:`~odu.data.dataset.row_to_record`) and its clips' durations (no decoding);
* ``pyarrow``: the same parquet files read with ``pyarrow.parquet`` in the same row order, every
  row to a dict (``to_pylist``), then the same record and durations.

Both report a digest of every record and duration, which must be equal, and the time of each
phase (imports, load, iteration).

Decoding (memory):

* ``lazy-decode``: per row, the final clip decoded as a model backend feeds it (frames at 1 fps for
  audio-visual scenes, 16 kHz mono audio), used and dropped;
* ``eager-decode``: the same clips decoded for every row first, kept in a list, then used.

Both report the same checksum of the decoded arrays. Memory, over the process's state right after
``load_dataset``: peak heap (anonymous RSS: Python objects and decoded arrays, sampled per row)
and peak RSS (``ru_maxrss``, which also counts the pages of the memory-mapped Arrow table that
iteration touched: file-backed, shared with the page cache and reclaimable).

Run: ``python benchmarks/bench_dataset.py [--scale 10] [--repeats 3] [--json out.json]``. Prints
JSON, then two tables.
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

from _figures import add_json_option, write_json

ITERATION_MODES = ("datasets", "pyarrow")
DECODING_MODES = ("lazy-decode", "eager-decode")


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
    """The bundled sample's records with every scene repeated ``scale`` times (ids suffixed); the
    media stays in the sample folder, the media root to prepare it with."""
    from odu.core.schema import read_json_records
    from odu.data.release import find_records
    from odu.data.sample import sample_dir

    source = sample_dir()
    records = read_json_records(find_records(source))
    out.mkdir(parents=True)
    with (out / "scenes.jsonl").open("w", encoding="utf-8") as fh:
        for copy in range(scale):
            for record in records:
                renamed = {**record, "scene_id": f"{record['scene_id']}{'' if copy == 0 else f'_x{copy}'}"}
                fh.write(json.dumps(renamed, ensure_ascii=False) + "\n")
    return out


class _Clock:
    """Wall and CPU seconds of consecutive phases."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, float]] = {}
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def lap(self, name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.phases[name] = {"wall_s": wall - self._wall, "cpu_s": cpu - self._cpu}
        self._wall, self._cpu = wall, cpu


def _digest(records: list[str]) -> str:
    import hashlib

    return hashlib.sha256("\n".join(records).encode()).hexdigest()


def iterate(dataset_dir: str, mode: str, cache: str) -> dict[str, Any]:
    """One iteration measurement (run in a fresh process by :func:`main`)."""
    clock = _Clock()
    seen: list[str] = []
    if mode == "datasets":
        from datasets import load_dataset

        from odu.data.dataset import row_clips, row_to_record, with_lazy_media

        clock.lap("imports")
        ds = load_dataset(dataset_dir, "all", split="test", cache_dir=cache)
        clock.lap("load")
        for row in with_lazy_media(ds):
            durations = [clip.duration for clip in row_clips(row)]
            seen.append(json.dumps([row_to_record(row), durations], sort_keys=True))
        clock.lap("iterate")
    else:
        import pyarrow.parquet as pq

        from odu.data.dataset import get_config, row_to_record

        clock.lap("imports")
        files = [
            f for leaf in get_config("all").leaves for f in sorted(Path(dataset_dir, "data", leaf).glob("*.parquet"))
        ]
        clock.lap("load")
        for path in files:
            for batch in pq.ParquetFile(path).iter_batches():
                for row in batch.to_pylist():
                    durations = [t["duration"] for t in row["turns"] if t["role"] == "user"]
                    seen.append(json.dumps([row_to_record(row), durations], sort_keys=True))
        clock.lap("iterate")
    return {"mode": mode, "rows": len(seen), "digest": _digest(seen), "phases": clock.phases}


def decode(dataset_dir: str, mode: str, cache: str) -> dict[str, Any]:
    """One decoding measurement (run in a fresh process by :func:`main`)."""
    import numpy as np
    from datasets import load_dataset

    from odu.data.dataset import row_clips, with_lazy_media

    ds = with_lazy_media(load_dataset(dataset_dir, "all", split="test", cache_dir=cache))
    baseline, anon_baseline = rss_mb(), rss_mb("RssAnon")
    anon = AnonPeak()
    start = time.perf_counter()

    def final_clip(row: dict[str, Any]) -> tuple[Any, Any]:
        clip = row_clips(row)[-1]
        frames = clip.frames(fps=1).frames if row["modality"] == "audio-visual" else None
        return frames, clip.audio(16_000)

    def used(frames: Any, audio: Any) -> float:
        return float(audio.astype(np.float64).sum()) + (
            float(frames.sum(dtype=np.int64)) if frames is not None else 0.0
        )

    checksum, rows = 0.0, 0
    if mode == "eager-decode":
        decoded = []
        for row in ds:
            decoded.append(final_clip(row))
            anon.sample()
        for frames, audio in decoded:
            checksum += used(frames, audio)
            rows += 1
    else:
        for row in ds:
            checksum += used(*final_clip(row))
            rows += 1
            anon.sample()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "mode": mode,
        "rows": rows,
        "seconds": seconds,
        "rows_per_s": rows / seconds,
        "peak_over_load_mb": peak - baseline,
        "peak_anon_over_load_mb": anon.peak - anon_baseline,
        "checksum": checksum,
    }


def child(kind: str, dataset_dir: Path, mode: str, cache: Path) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; adds the whole process's wall time."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(dataset_dir), mode, str(cache)],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_wall_s": wall}


def _best_iteration(runs: list[dict[str, Any]]) -> dict[str, Any]:
    best = dict(runs[0])
    best["process_wall_s"] = min(r["process_wall_s"] for r in runs)
    best["phases"] = {
        phase: {k: min(r["phases"][phase][k] for r in runs) for k in ("wall_s", "cpu_s")} for phase in runs[0]["phases"]
    }
    return best


def iteration_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| scale | rows | mode | imports s | load s | iterate s | µs / row | whole process s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        p = r["phases"]
        lines.append(
            f"| {r['scale']}x | {r['rows']} | {r['mode']} | {p['imports']['wall_s']:.3f} | {p['load']['wall_s']:.3f} | "
            f"{p['iterate']['wall_s']:.3f} | {1e6 * p['iterate']['wall_s'] / r['rows']:.0f} | {r['process_wall_s']:.2f} |"
        )
    return "\n".join(lines)


def decoding_table(results: list[dict[str, Any]]) -> str:
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
    parser.add_argument("--repeats", type=int, default=3, help="best of N for the iteration figures")
    parser.add_argument("--no-decoding", action="store_true", help="iteration figures only")
    add_json_option(parser)
    parser.add_argument("--child", nargs=4, metavar=("KIND", "DIR", "MODE", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        print(json.dumps((iterate if kind == "iterate" else decode)(*rest)))
        return

    from odu.data.prepare import prepare
    from odu.data.sample import sample_dir

    iteration, decoding = [], []
    with tempfile.TemporaryDirectory(prefix="odu-bench-dataset-") as tmp:
        for scale in (1, args.scale):
            release = build_release(Path(tmp) / f"release-{scale}x", scale)
            prepared = Path(tmp) / f"prepared-{scale}x" / "odu-bench"
            prepare(release, prepared, media_root=sample_dir())
            cache = Path(tmp) / f"cache-{scale}x"
            child("iterate", prepared, "datasets", cache)  # warm: build the Arrow cache once, untimed
            runs: dict[str, list[dict[str, Any]]] = {m: [] for m in ITERATION_MODES}
            for _ in range(args.repeats):  # interleaved: both see the same machine conditions
                for mode in ITERATION_MODES:
                    runs[mode].append(child("iterate", prepared, mode, cache))
            best = {mode: _best_iteration(r) for mode, r in runs.items()}
            assert best["datasets"]["digest"] == best["pyarrow"]["digest"], f"{scale}x: different rows"
            iteration += [{"scale": scale, **best[mode]} for mode in ITERATION_MODES]
            if not args.no_decoding:
                pair = [{"scale": scale, **child("decode", prepared, mode, cache)} for mode in DECODING_MODES]
                assert abs(pair[0]["checksum"] - pair[1]["checksum"]) <= 1e-6 * abs(pair[0]["checksum"]), pair
                decoding += pair
            shutil.rmtree(release)
    summary = {"iteration": iteration, "decoding": decoding}
    print(json.dumps(summary, indent=1))
    write_json(args.json, summary)
    print(iteration_table(iteration))
    if decoding:
        print(decoding_table(decoding))


if __name__ == "__main__":
    main()
