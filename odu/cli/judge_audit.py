"""``odu-bench judge-audit``: re-judge stored candidate texts with several judges (App E.2, Table 7)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..core.constants import MODALITIES
from ..core.schema import SchemaError, load_scenes, read_predictions
from ..io.console import inert
from ..io.files import replace_file
from ..io.jsonio import json_text, utf8
from ..judge import Judge, JudgeUnavailableError
from ..judge.audit import audit, audit_table
from ..judge.spec import add_judge_arguments, judges_from_args
from ..runs.contract import PREDICTIONS_FILE, read_run
from ..runs.outdir import check_apart
from .common import add_annotation_language, add_no_progress, judge_accounting_line, judge_errors_exit_code


def _run_arg(text: str) -> tuple[str, Path]:
    name, sep, path = text.partition("=")
    return (name, Path(path)) if sep and name else (Path(text).name, Path(text))


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "judge-audit",
        help="re-judge stored candidate texts with several judges: coverage, range, ordering, recoverability (App E.2)",
        description="Table 7 of the paper for your runs: Panel B re-judges the candidate texts stored in "
        "scored runs (scenes.jsonl) with every --judge; Panel A (needs --scenes) judges each reference "
        "annotation's own intent + context against its key points.",
    )
    p.add_argument(
        "--run",
        dest="runs",
        action="append",
        default=[],
        type=_run_arg,
        metavar="[NAME=]DIR",
        help="a scored run directory (odu-bench score --out); repeat for several systems",
    )
    p.add_argument("--scenes", help="scene records, for Panel A (target recoverability) and --reference-shift")
    p.add_argument(
        "--reference-shift",
        action="store_true",
        help="instead of Table 7: M2 of the zh scenes against their zh and their en reference, same outputs "
        "and judge (needs --scenes and outputs: --predictions, or --run DIRs holding predictions.jsonl)",
    )
    p.add_argument(
        "--predictions",
        action="append",
        default=[],
        type=_run_arg,
        metavar="[NAME=]PATH",
        help="raw model outputs (odu-bench score format) for --reference-shift; repeat for several systems",
    )
    p.add_argument(
        "--modality",
        choices=MODALITIES,
        help="restrict to one modality (the paper's audit uses audio-visual); default all",
    )
    add_annotation_language(p, "reference annotation for Panel A (default: the scene's own language)")
    p.add_argument("--out", help="write the JSON report here (default: print it)")
    add_no_progress(p)
    add_judge_arguments(p, multiple=True, default=None)
    p.set_defaults(run=run)


def _check_out(args: argparse.Namespace) -> None:
    """``--out`` may not be one of the command's inputs (a run's file, the scenes or predictions it
    reads: :func:`odu.runs.outdir.check_apart`); it is replaced when written, never written through a link."""
    if args.out:
        check_apart(args.out, [*(path for _, path in args.runs), args.scenes, *(path for _, path in args.predictions)])


def _labels(specs: list[str]) -> list[str]:
    """Judge specs as column labels, numbered when repeated."""
    return [spec if specs.count(spec) == 1 else f"{spec} #{specs[: i + 1].count(spec)}" for i, spec in enumerate(specs)]


def run(args: argparse.Namespace) -> int:
    if args.reference_shift:
        return _reference_shift(args)
    if args.predictions:
        return _error("--predictions is for --reference-shift")
    if not args.runs and not args.scenes:
        return _error("give --run DIR (Panel B) and/or --scenes PATH (Panel A)")
    names = [name for name, _ in args.runs]
    if len(set(names)) != len(names):
        return _error(f"two runs are named alike ({', '.join(names)}); use NAME=DIR")
    try:
        _check_out(args)
        runs = {name: read_run(path).scenes for name, path in args.runs}
        scenes = load_scenes(args.scenes) if args.scenes else None
        with _judges(args) as judges:
            result = audit(runs, judges, scenes, args.modality, args.annotation_language)
    except (OSError, SchemaError, ValueError, KeyError, JudgeUnavailableError) as exc:
        return _error(str(exc))
    _show(args, result, audit_table(result))
    return judge_errors_exit_code(sum(result["judge_error_points"].values()), args, "judge-audit", "key point")


def _reference_shift(args: argparse.Namespace) -> int:
    """``--reference-shift``: the JSON (``--out`` or printed) and the table; exit 1 on judge errors."""
    from ..report.reference_shift import judge_error_points, reference_shift, shift_table

    sources = [(name, path / PREDICTIONS_FILE) for name, path in args.runs] + list(args.predictions)
    problem = (
        "--reference-shift needs --scenes (with both en and zh annotations)"
        if not args.scenes
        else "--reference-shift needs outputs: --predictions [NAME=]PATH or --run DIR holding predictions.jsonl"
        if not sources
        else "two output sets are named alike; use NAME=PATH"
        if len({name for name, _ in sources}) != len(sources)
        else None
    )
    if problem:
        return _error(problem)
    try:
        _check_out(args)
        outputs = {name: read_predictions(path) for name, path in sources}
        scenes = load_scenes(args.scenes)
        with _judges(args) as judges:
            result = reference_shift(outputs, scenes, judges, args.modality)
    except (OSError, SchemaError, ValueError, JudgeUnavailableError) as exc:
        return _error(str(exc))
    _show(args, result, shift_table(result))
    return judge_errors_exit_code(judge_error_points(result), args, "judge-audit", "key point")


def _error(message: str) -> int:
    """Exit status 2, ``message`` said on stderr."""
    print(f"odu-bench judge-audit: error: {inert(message)}", file=sys.stderr)
    return 2


@contextmanager
def _judges(args: argparse.Namespace) -> Iterator[dict[str, Judge]]:
    """The ``--judge`` judges by column label (:func:`_labels`), closed on leaving."""
    judges = judges_from_args(args)
    try:
        yield dict(zip(_labels(args.judge), judges))
    finally:
        for judge in judges:
            judge.close()


def _show(args: argparse.Namespace, result: Mapping[str, Any], table: str) -> None:
    """The JSON report (written to ``--out``, else printed), then ``table`` and each judge's accounting line."""
    report = json_text(result, indent=2)
    if args.out:
        replace_file(args.out, utf8(report + "\n"))
    else:
        print(report)
    print(table)
    for info in result["judges"].values():
        if line := judge_accounting_line(info):
            print(line)
