"""``odu-bench score``: score raw model outputs against scene records (issue contract, README)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..judge import JudgeUnavailableError
from ..judge.spec import add_judge_arguments, judge_from_args
from ..run import write_run
from ..schema import SchemaError, load_scenes, read_predictions
from ..scoring import score_scenes
from ..tables import table3
from .common import add_annotation_language, judge_accounting_line, judge_errors_exit_code, judge_note


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score model outputs (App A) and write summary.json + scenes.jsonl")
    p.add_argument("--scenes", required=True, help="scene records: JSON array or JSONL (release schema)")
    p.add_argument("--predictions", required=True, help='JSONL rows {"scene_id": ..., "output": "<raw model text>"}')
    p.add_argument("--out", required=True, help="output directory")
    add_judge_arguments(p)
    add_annotation_language(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(run=run)


def output_dir(path: str | Path) -> None:
    """Create ``path`` as a directory, so a bad ``--out`` fails before any scoring or judge call."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {out}: cannot create the directory ({exc.strerror or exc})") from None


def run(args: argparse.Namespace) -> int:
    try:
        scenes = load_scenes(args.scenes)
        outputs = read_predictions(args.predictions)
        output_dir(args.out)
        judge = judge_from_args(args)
        try:
            result = score_scenes(scenes, outputs, judge, args.annotation_language, progress=not args.no_progress)
        finally:
            judge.close()
    except (SchemaError, ValueError, JudgeUnavailableError) as exc:
        print(f"odu-bench score: error: {exc}", file=sys.stderr)
        return 2
    try:
        out = write_run(result, args.out)
    except OSError as exc:
        print(f"odu-bench score: error: cannot write the results to {args.out} ({exc})", file=sys.stderr)
        return 2
    summary = result.summary
    info = summary["judge"]
    print(table3({Path(args.predictions).stem: summary}, judge_note(info)))
    print(
        f"parse errors: {summary['parse_errors']}  no output: {summary['no_output']}  "
        f"judge errors: {summary['judge_errors']}  -> {out}"
    )
    if line := judge_accounting_line(info):
        print(line)
    missing = [s.scene_id for s in scenes if s.scene_id not in outputs]
    if missing:
        shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
        print(
            f"odu-bench score: {len(missing)} of {len(scenes)} scene(s) have no row in {args.predictions} "
            f"(scored as no output): {shown}",
            file=sys.stderr,
        )
    return judge_errors_exit_code(summary["judge_errors"], args, "score")
