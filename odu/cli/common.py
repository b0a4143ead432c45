"""What several subcommands share: the ``--annotation-language``, bootstrap, ``--no-progress`` and Hub
repo options, and what they print about the judge (its note and accounting line, the judge-error exit code)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from ..core.constants import LANGUAGES
from ..io.console import inert


def add_annotation_language(
    parser: argparse.ArgumentParser, help: str = "reference annotation: the scene's own language (default), or en / zh"
) -> None:
    """Add ``--annotation-language`` (``scene``, the default, or one of the dataset's languages)."""
    parser.add_argument("--annotation-language", choices=("scene", *LANGUAGES), default="scene", help=help)


def add_run_dirs(parser: argparse.ArgumentParser, what: str = "`odu-bench score` output directory") -> None:
    """Add the ``RUN_DIR`` arguments (one system each) and ``--names`` (one per run; default: the
    run card's model, else the folder, :mod:`odu.report.runs`)."""
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help=what)
    parser.add_argument("--names", nargs="+", metavar="NAME", help="system names, one per RUN_DIR")


def add_no_progress(parser: argparse.ArgumentParser) -> None:
    """Add ``--no-progress``: the command draws no progress bars."""
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def add_hub_repo(parser: argparse.ArgumentParser, kind: str, example: str, created: bool = False) -> None:
    """Add the ``repo`` argument: the id of a Hub repo of ``kind`` (``dataset``, ``Space``), and
    whether the command creates it when missing."""
    parser.add_argument("repo", help=f"{kind} repo id, e.g. {example}" + (" (created if missing)" if created else ""))


def add_overwrite(parser: argparse.ArgumentParser) -> None:
    """Add ``--overwrite``: replace a run already in ``--out`` (:func:`odu.runs.contract.check_out_dir`)."""
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run already in --out (only a run's files are ever cleared; default: refuse)",
    )


#: How to (re)install lm-eval (setup.cfg's requirement), said when it cannot be imported.
LM_EVAL_FIX = "pip install 'lm-eval[api]>=0.4.13,<0.5'"


def lm_eval_unavailable(exc: ImportError, command: str) -> int:
    """Exit status 2 with one line saying that lm-eval (or what it imports) cannot be imported, and
    the fix, for the commands that run through it."""
    print(
        f"odu-bench {command}: error: lm-eval cannot be imported ({type(exc).__name__}: {inert(exc)}); "
        f"this command runs through it: {LM_EVAL_FIX}",
        file=sys.stderr,
    )
    return 2


def add_bootstrap_options(parser: argparse.ArgumentParser, of: str = "") -> None:
    """Add ``--seed`` and ``--resamples`` of the scene bootstrap (App E.1); ``of`` names what its
    intervals are for in the help."""
    from ..report.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, MAX_RESAMPLES  # numpy: the commands that report

    parser.add_argument(
        "--seed", type=int, default=BOOTSTRAP_SEED, help=f"bootstrap seed{of} (default {BOOTSTRAP_SEED})"
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=BOOTSTRAP_RESAMPLES,
        help=f"bootstrap resamples{of} (default {BOOTSTRAP_RESAMPLES}, App E.1; at most {MAX_RESAMPLES:,})",
    )


def check_resamples(args: argparse.Namespace) -> None:
    """:class:`ValueError` when ``--resamples`` is below 1 or above :data:`odu.report.bootstrap.MAX_RESAMPLES`."""
    from ..report.bootstrap import MAX_RESAMPLES

    if args.resamples < 1:
        raise ValueError("--resamples must be at least 1")
    if args.resamples > MAX_RESAMPLES:
        raise ValueError(f"--resamples {args.resamples}: at most {MAX_RESAMPLES:,} (MAX_RESAMPLES, docs/reports.md)")


def judge_note(info: Mapping[str, Any]) -> str:
    """The line under a Table 3-style table naming the judge (and flagging an approximate one)."""
    if not info:
        return ""
    note = f"judge: {info.get('name')} ({info.get('model')})"
    return note + (" — APPROXIMATE, not comparable with Table 3" if info.get("approximate") else "")


def runs_table(summaries: Mapping[str, Mapping[str, Any]]) -> str:
    """What ``odu-bench eval`` and ``score`` print of their runs (``summary.json`` dicts by system
    name): the Table 3-style rows, names marked where caveats apply, the judge's line, the caveats
    (:func:`odu.core.caveats.shown_caveats`) and what comparability with Table 3 rests on."""
    from ..core.caveats import shown_caveats
    from ..core.tables import table3, table3_caveat

    rows, caveats = shown_caveats(summaries)
    judge: Mapping[str, Any] = next((summary["judge"] for summary in summaries.values()), {})
    return "\n".join([table3(rows, judge_note(judge)), *caveats, *table3_caveat(summaries.values())])


def judge_accounting_line(info: Mapping[str, Any]) -> str | None:
    """A one-line account of an LLM judge's work from summary.json's ``"judge"`` block."""
    if "requests" not in info:
        return None
    return (
        f"judge {info['model']} (prompt {info['prompt_version']}): {info['segments']} segments, "
        f"{info['requests']} requests, {info['cache_hits']} cache hits, {info['retries']} retries, "
        f"{info['reasks']} re-asks, {info['errors']} judge errors, tokens {info['prompt_tokens']} in / "
        f"{info['completion_tokens']} out, {info['wall_time_s']:.1f} s"
    )


def judge_errors_exit_code(judge_errors: int, args: argparse.Namespace, command: str, unit: str = "segment") -> int:
    """1 (with a message) when judge errors remain and ``--allow-judge-errors`` was not given, else 0."""
    if judge_errors and not args.allow_judge_errors:
        specs = args.judge if isinstance(args.judge, list) else [args.judge]
        remedy = (
            "Stored verdicts are missing: add their rows to the verdicts file"
            if all(str(spec).startswith("verdicts:") for spec in specs)
            else "Rerun with --overwrite to retry them (what was judged comes from the cache)"
        )
        print(
            f"odu-bench {command}: {judge_errors} {unit}(s) could not be judged (reported as judge errors, "
            f"never as misses). {remedy}, or pass --allow-judge-errors.",
            file=sys.stderr,
        )
        return 1
    return 0
