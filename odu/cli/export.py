"""``odu-bench export``: scored runs as Hub eval results or Every Eval Ever records (docs/export.md)."""

from __future__ import annotations

import argparse
import sys

from .common import add_bootstrap_options, add_run_dirs, check_resamples


def add_parser(sub: argparse._SubParsersAction) -> None:
    from ..export import EVALUATOR_RELATIONSHIPS, FORMATS

    p = sub.add_parser(
        "export",
        help="scored runs as Hugging Face eval results (hub) or Every Eval Ever records (eee)",
        description="Write scored runs in a format others read: the Hub's .eval_results YAML and eval.yaml "
        "(--format hub) or Every Eval Ever 0.2.0 aggregate JSON + instance JSONL (--format eee).",
    )
    add_run_dirs(p, "`odu-bench score` / `eval` output directory")
    p.add_argument("--format", required=True, choices=FORMATS, dest="fmt", help="export format")
    p.add_argument(
        "--out", required=True, help="output directory (files of an earlier export of the same runs are replaced)"
    )
    p.add_argument(
        "--dataset-id",
        metavar="ORG/NAME",
        help="the Hub dataset the results belong to (default: the one the run card names; required for hub "
        "when it names none)",
    )
    p.add_argument(
        "--source-url",
        metavar="URL",
        help="hub: where each run's files are published, the results' source link ({name} and {run_id} are "
        "filled in per run); default: no source link",
    )
    p.add_argument("--organization", default="", help="eee: the organization that ran the evaluation")
    p.add_argument(
        "--relationship",
        default="third_party",
        choices=EVALUATOR_RELATIONSHIPS,
        help="eee: the evaluator's relationship to the model (default third_party)",
    )
    p.add_argument(
        "--allow-failed-steps",
        action="store_true",
        help="export runs with judge errors, inference errors, missing M2 or files that disagree (default: "
        "refuse them); every number then names the failed steps, and Avg is left out where the report shows none",
    )
    add_bootstrap_options(p, of=" of the eee intervals")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..export import EeeSettings, build_export, load_export_runs, write_export

    try:
        check_resamples(args)
        runs = load_export_runs(args.run_dirs, args.names, args.allow_failed_steps)
        settings = EeeSettings(args.resamples, args.seed, args.dataset_id, args.organization, args.relationship)
        files = build_export(runs, args.fmt, settings, args.source_url)
    except ValueError as exc:
        print(f"odu-bench export: error: {exc}", file=sys.stderr)
        return 2
    written = write_export(files, args.out)
    for r in runs:
        if r.failed_steps:
            print(
                f"odu-bench export: {r.system.name}: exported WITH FAILED STEPS: {'; '.join(r.failed_steps)}",
                file=sys.stderr,
            )
    print(f"wrote {len(written)} files to {args.out}:")
    print("\n".join(f"  {p.relative_to(args.out).as_posix()}" for p in written))
    return 0
