"""``odu-bench score``: score raw model outputs against scene records (docs/scoring.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from ..core.caveats import run_caveats, summary_counts
from ..core.schema import Scene, SchemaError, iter_scenes, read_predictions
from ..io.console import error_text
from ..judge import JudgeUnavailableError
from ..judge.spec import add_judge_arguments, judge_from_args, judge_inputs
from ..runs.contract import SCENES_FILE, RunWriter
from ..runs.scoring import score_into
from .common import (
    add_annotation_language,
    add_no_progress,
    add_overwrite,
    judge_accounting_line,
    judge_errors_exit_code,
    runs_table,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score model outputs (App A) and write summary.json + scenes.jsonl")
    p.add_argument("--scenes", required=True, help="scene records: JSON array or JSONL (release schema)")
    p.add_argument("--predictions", required=True, help='JSONL rows {"scene_id": ..., "output": "<raw model text>"}')
    p.add_argument("--out", required=True, help="output directory (new or empty; see --overwrite)")
    add_overwrite(p)
    add_judge_arguments(p)
    add_annotation_language(p)
    add_no_progress(p)
    p.set_defaults(run=run)


class _Seen:
    """The scenes streamed to the scorer: how many, and which have no prediction row."""

    def __init__(self, scenes: Iterable[Scene], outputs: Mapping[str, object]) -> None:
        self.scenes, self.outputs = scenes, outputs
        self.count, self.missing = 0, 0
        self.first_missing: list[str] = []

    def __iter__(self) -> Iterator[Scene]:
        for scene in self.scenes:
            self.count += 1
            if scene.scene_id not in self.outputs:
                self.missing += 1
                if len(self.first_missing) < 3:
                    self.first_missing.append(scene.scene_id)
            yield scene


def run(args: argparse.Namespace) -> int:
    try:
        inputs = [args.scenes, args.predictions, *judge_inputs(args)]
        with RunWriter(args.out, args.overwrite, inputs=inputs) as writer:
            outputs = read_predictions(args.predictions)
            judge = judge_from_args(args)
            seen = _Seen(iter_scenes(args.scenes, args.annotation_language), outputs)
            try:
                with writer.jsonl(SCENES_FILE) as rows:
                    summary = score_into(
                        seen,
                        outputs,
                        judge,
                        rows.write_json,
                        args.annotation_language,
                        progress=not args.no_progress,
                        spool_dir=writer.folder,
                    )
            finally:
                judge.close()
            summary["caveats"] = run_caveats(summary["judge"], summary_counts(summary))
            out = writer.commit(summary)
    except (SchemaError, ValueError, JudgeUnavailableError) as exc:
        print(f"odu-bench score: error: {error_text(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"odu-bench score: error: cannot write the results to {args.out} ({exc})", file=sys.stderr)
        return 2
    info = summary["judge"]
    print(runs_table({Path(args.predictions).stem: summary}))
    print(
        f"parse errors: {summary['parse_errors']}  no output: {summary['no_output']}  "
        f"judge errors: {summary['judge_errors']}  -> {out}"
    )
    if line := judge_accounting_line(info):
        print(line)
    if seen.missing:
        shown = ", ".join(seen.first_missing) + (", ..." if seen.missing > 3 else "")
        print(
            f"odu-bench score: {seen.missing} of {seen.count} scene(s) have no row in {args.predictions} "
            f"(scored as no output): {shown}",
            file=sys.stderr,
        )
    return judge_errors_exit_code(summary["judge_errors"], args, "score")
