"""Peak memory of ``odu-bench prepare`` on a large records file (issue 12 item 12: a 200 MB record
file peaked at 2.5 GB).

Builds a release whose records file holds ``--mb`` megabytes: copies of the bundled sample's
records under new ids, each padded with a display field of ``--record-kb`` kilobytes (display
fields are kept verbatim, so the records file and the prepared rows carry them), every clip
pointing at one short WAV (soundfile) so that media adds little. Then runs
:func:`odu.data.prepare.prepare` on it in a fresh process and reports that process's peak RSS
(``ru_maxrss``: Python objects, Arrow buffers, the interpreter and its imports), the records file's
size and the time taken, and checks that the prepared ``scenes.jsonl`` holds every record as written.

Run: ``python benchmarks/bench_prepare_memory.py [--mb 200] [--record-kb 10] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _figures import add_json_option, write_json

CLIP_SECONDS = 0.5
CLIP_RATE = 8_000


def build_release(root: Path, megabytes: float, record_kb: float) -> tuple[Path, int]:
    """The release folder and its scene count: audio-only copies of the sample's scenes, ids
    ``bench-NNNNNNN``, one ``CLIP_SECONDS`` WAV for every clip, a padded display field."""
    import numpy as np
    import soundfile as sf

    from odu.data.sample import sample_dir

    root.mkdir(parents=True)
    t = np.arange(int(CLIP_SECONDS * CLIP_RATE)) / CLIP_RATE
    sf.write(str(root / "clip.wav"), 0.2 * np.sin(2 * np.pi * 440 * t), CLIP_RATE, subtype="PCM_16")
    with (sample_dir() / "scenes.jsonl").open(encoding="utf-8") as fh:
        templates = [_audio_only(json.loads(line)) for line in fh if line.strip()]
    pad = "x" * int(record_kb * 1000)
    target, written, count = megabytes * 1e6, 0, 0
    with (root / "scenes.jsonl").open("w", encoding="utf-8") as fh:
        while written < target:
            record = {**templates[count % len(templates)], "scene_id": f"bench-{count:07d}", "notes": pad}
            line = json.dumps(record, ensure_ascii=False) + "\n"
            fh.write(line)
            written += len(line.encode())
            count += 1
    return root, count


def _audio_only(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` as an audio-only scene with one ``CLIP_SECONDS`` clip and segments inside it."""
    record = json.loads(json.dumps(record))
    record["modality"] = "audio-only"
    record["clips"] = [{"id": "v1", "src": "clip.wav", "duration": CLIP_SECONDS}]
    for annotation in record["annotations"].values():
        for segment in annotation["evaluation_targets"]["segments"]:
            segment.update(start_ms=0, end_ms=int(CLIP_SECONDS * 1000))
            segment.pop("user_in_frame", None)
    return record


def child(release: str, out: str) -> dict[str, Any]:
    """Prepare ``release`` into ``out`` (in a fresh process) and report time and peak RSS."""
    from odu.data.prepare import prepare

    start = time.perf_counter()
    result = prepare(release, out)
    return {
        "seconds": time.perf_counter() - start,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "scenes": result.rows["all"],
    }


def _digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.sha256(b"".join(json.dumps(json.loads(line)).encode() + b"\n" for line in fh)).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=200.0, help="size of the records file (MB)")
    parser.add_argument("--record-kb", type=float, default=10.0, help="display-field padding per record (kB)")
    add_json_option(parser)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    with tempfile.TemporaryDirectory(prefix="odu-bench-prepare-") as tmp:
        release, scenes = build_release(Path(tmp) / "release", args.mb, args.record_kb)
        out = Path(tmp) / "odu-bench"
        run = subprocess.run(
            [sys.executable, __file__, "--child", str(release), str(out)], capture_output=True, text=True, check=True
        )
        figures = json.loads(run.stdout.strip().splitlines()[-1])
        assert figures["scenes"] == scenes, (figures, scenes)
        assert _digest(out / "scenes.jsonl") == _digest(release / "scenes.jsonl"), "records changed on the way"
        size_mb = (release / "scenes.jsonl").stat().st_size / 1e6
    report = {"records_mb": round(size_mb, 1), "record_kb": args.record_kb, **figures}
    print(json.dumps(report))
    print(
        f"records file {size_mb:.0f} MB ({scenes} scenes): peak RSS {figures['peak_rss_mb']:.0f} MB, "
        f"{figures['seconds']:.0f} s"
    )
    write_json(args.json, report)


if __name__ == "__main__":
    main()
