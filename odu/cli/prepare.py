"""``odu-bench prepare``: validate a raw release and write the script-free dataset directory."""

from __future__ import annotations

import argparse
import sys

from ..core.schema import SchemaError
from ..data.release import ReleaseError
from ..io.console import error_text, inert
from .common import add_no_progress


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prepare",
        help="validate a raw release and write the parquet dataset directory load_dataset reads",
        description="Write DIR/README.md (card + configs), DIR/data/<config>/test-*.parquet (media embedded), "
        "DIR/media_manifest.json and DIR/scenes.jsonl, then print the load_dataset call that reads it. Load "
        "it by its path: a bare name such as 'odu-bench' resolves to that folder only from its parent, and "
        "elsewhere datasets may serve an older cached copy.",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("raw", nargs="?", help="release records file (JSON array / JSONL) or its folder")
    source.add_argument("--sample", action="store_true", help="use the bundled offline sample")
    p.add_argument("--out", required=True, help="output directory (replaced if it holds a prepared dataset)")
    p.add_argument("--media-root", help="folder the clips' src paths are relative to (default: the records' folder)")
    p.add_argument("--skip-invalid", action="store_true", help="leave out invalid scenes and report them")
    add_no_progress(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..data.hub import load_dataset_call
    from ..data.prepare import prepare

    if args.sample:
        from ..data.sample import sample_dir

        raw = sample_dir()
    else:
        raw = args.raw
    try:
        result = prepare(
            raw, args.out, media_root=args.media_root, skip_invalid=args.skip_invalid, progress=not args.no_progress
        )
    except ReleaseError as exc:
        print(
            f"odu-bench prepare: error: {error_text(exc)}\n(use --skip-invalid to leave these scenes out)",
            file=sys.stderr,
        )
        return 2
    except (SchemaError, ValueError, OSError) as exc:
        print(f"odu-bench prepare: error: {error_text(exc)}", file=sys.stderr)
        return 2
    for problem in result.problems:
        print(f"skipped: {inert(problem)}", file=sys.stderr)
    counts = "  ".join(f"{name}={n}" for name, n in result.rows.items() if n)
    print(f"{result.rows['all']} scenes, {result.media_files} clips, {len(result.shards)} shard(s) -> {result.out}")
    print(f"rows per config: {counts}")
    present = [name for name, n in result.rows.items() if n]
    print(f"load with: {load_dataset_call(result.out, present[0])}  (configs: {', '.join(present)})")
    if result.problems:
        print(f"{len(result.problems)} problem(s): invalid scenes left out (listed above)")
    return 0
