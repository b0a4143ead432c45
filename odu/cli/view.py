"""``odu-bench view``: write a static offline web viewer of scored runs (docs/viewer.md)."""

from __future__ import annotations

import argparse
import json
import sys

from ..io.console import error_text, inert
from .common import add_bootstrap_options, add_no_progress, add_run_dirs, check_resamples


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view",
        help="write a static web viewer (opens from disk) of scored runs for error analysis",
        description="A static site over `odu-bench score` / `eval` directories or lm-eval output folders: "
        "index of every scene, scene pages with media, timeline, edits and verdicts, systems side by side.",
    )
    add_run_dirs(p, "scored run directory or lm-eval output folder")
    p.add_argument(
        "--predictions",
        nargs="+",
        metavar="FILE",
        help="raw outputs (JSONL, the `score --predictions` file) one per RUN_DIR, '-' for none "
        "(default: RUN_DIR/predictions.jsonl when present)",
    )
    data = p.add_mutually_exclusive_group(required=True)
    data.add_argument(
        "--dataset",
        metavar="DIR|REPO",
        help="prepared dataset directory, Hub repo, or raw release (records without media: no players)",
    )
    data.add_argument("--sample", action="store_true", help="the bundled offline sample")
    p.add_argument("--out", required=True, metavar="SITE", help="output folder (replaced if it holds an earlier view)")
    add_bootstrap_options(p, " of the headline CIs")
    p.add_argument("--json", action="store_true", help="print what was built as JSON instead of lines")
    add_no_progress(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..report.view import build_site, load_dataset_scenes, load_runs

    try:
        check_resamples(args)
        runs = load_runs(args.run_dirs, args.names, args.predictions)
        dataset = load_dataset_scenes(args.dataset, args.sample)
        result = build_site(
            runs,
            dataset,
            args.out,
            resamples=args.resamples,
            seed=args.seed,
            progress=not args.no_progress,
            warn=lambda message: print(f"odu-bench view: {inert(message)}", file=sys.stderr),
            inputs=[*args.run_dirs, *(args.predictions or []), args.dataset],
        )
    except (ValueError, OSError) as exc:
        print(f"odu-bench view: error: {error_text(exc)}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
    else:
        print(
            f"{result.n_scenes} scenes, {len(result.systems)} system(s) ({', '.join(result.systems)}), "
            f"{result.n_media_files} media files ({result.media_bytes / 1e6:.1f} MB), {len(result.problems)} problem(s)"
        )
        print(f"open {(result.out / 'index.html').resolve().as_uri()}")
    return 1 if result.problems else 0
