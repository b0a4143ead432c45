"""``odu-bench export``: scored runs as Hub eval results, Every Eval Ever records or Inspect AI eval
logs (docs/export.md)."""

from __future__ import annotations

import argparse
import sys

from ..io.console import error_text, inert
from .common import add_bootstrap_options, add_run_dirs, check_resamples


def add_parser(sub: argparse._SubParsersAction) -> None:
    from ..export import EVALUATOR_RELATIONSHIPS, FORMATS

    p = sub.add_parser(
        "export",
        help="scored runs as Hugging Face eval results (hub), Every Eval Ever records (eee) or Inspect AI logs (inspect)",
        description="Write scored runs in a format others read: the Hub's .eval_results YAML and eval.yaml "
        "(--format hub), Every Eval Ever 0.3.0 aggregate JSON + instance JSONL (--format eee), or Inspect AI "
        "eval logs (--format inspect).",
    )
    add_run_dirs(p, "`odu-bench score` / `eval` output directory, or an lm-eval output folder (--log_samples)")
    p.add_argument("--format", required=True, choices=FORMATS, dest="fmt", help="export format")
    p.add_argument(
        "--out", required=True, help="output directory (files of an earlier export of the same runs are replaced)"
    )
    p.add_argument(
        "--dataset-id",
        metavar="ORG/NAME",
        help="the Hub dataset the results belong to: required for hub; eee and inspect name it when given (a run "
        "card's dataset source is never taken for it: it may be a local folder)",
    )
    p.add_argument(
        "--model-ids",
        nargs="+",
        metavar="DEVELOPER/MODEL",
        help="eee, inspect: each run's model id, one per run, - for the run card's (default: the run card's model; "
        "required where it has no developer)",
    )
    p.add_argument(
        "--source-url",
        metavar="URL",
        help="hub: where each run's files are published, the results' http(s) source link; the text {name} (the "
        "run's folder name) and {run_id} is replaced per run, nothing else; default: no source link",
    )
    p.add_argument("--organization", default="", help="eee (required): the organization that ran the evaluation")
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
    from ..export import ExportSettings, build_export, export_notices, load_export_runs, write_export

    try:
        check_resamples(args)
        runs = load_export_runs(args.run_dirs, args.names, args.allow_failed_steps, args.model_ids)
        settings = ExportSettings(
            args.resamples, args.seed, args.dataset_id, args.organization, args.relationship, args.source_url
        )
        files = build_export(runs, args.fmt, settings)
        written = write_export(files, args.out, inputs=args.run_dirs)
    except (ValueError, OSError) as exc:
        print(f"odu-bench export: error: {error_text(exc)}", file=sys.stderr)
        return 2
    for notice in export_notices(args.fmt):
        print(f"odu-bench export: WARNING: {notice}", file=sys.stderr)
    for r in runs:
        if r.failed_steps:
            print(
                f"odu-bench export: {inert(r.system.name)}: exported WITH FAILED STEPS: {inert('; '.join(r.failed_steps))}",
                file=sys.stderr,
            )
    print(f"wrote {len(written)} files to {args.out}:")
    print("\n".join(f"  {inert(p.relative_to(args.out).as_posix())}" for p in written))
    return 0
