"""Command-line options for choosing and configuring the M2 judge, shared by ``odu-bench`` commands.

``add_judge_arguments(parser)`` adds ``--judge`` and the ``--judge-*`` options of the
OpenAI-compatible judge (README "Judges"); ``judge_from_args(args)`` builds the judge. With
``multiple=True`` (``judge-audit``), ``--judge`` and the per-server options may be repeated: the
n-th ``--judge-base-url`` / ``--judge-api-key-env`` / ``--judge-extra-body`` goes with the n-th
``--judge``, and a single value applies to every judge.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..constants import JUDGE_API_KEY_ENV, JUDGE_CONCURRENCY, JUDGE_MAX_TOKENS, JUDGE_RETRIES, JUDGE_TIMEOUT_S
from . import Judge, make_judge

_PER_JUDGE = ("judge_base_url", "judge_api_key_env", "judge_extra_body")


def json_object_arg(text: str) -> dict[str, Any]:
    """An argparse ``type``: the text as a JSON object."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def add_judge_arguments(parser: argparse.ArgumentParser, *, multiple: bool = False, default: str | None = "lexical") -> None:
    """Add ``--judge`` and the ``--judge-*`` options to ``parser``."""
    many = {"action": "append"} if multiple else {}
    group = parser.add_argument_group("judge (M2 key-point coverage; README 'Judges')")
    group.add_argument(
        "--judge", **many, default=None if multiple else default, required=multiple and default is None,
        help="lexical (offline, approximate) | verdicts:PATH | openai:MODEL (App F.4 judge on an OpenAI-compatible server)"
        + ("; repeat for several judges" if multiple else ""),
    )
    group.add_argument("--judge-base-url", **many, metavar="URL", help="OpenAI-compatible server, e.g. http://localhost:8000/v1")
    group.add_argument(
        "--judge-api-key-env", **many, metavar="VAR",
        help=f"environment variable holding the API key (default {JUDGE_API_KEY_ENV}; the key is never written)",
    )
    group.add_argument(
        "--judge-extra-body", **many, type=json_object_arg, metavar="JSON",
        help='extra request fields, e.g. \'{"chat_template_kwargs": {"enable_thinking": true}}\' (App D.3)',
    )
    group.add_argument("--judge-concurrency", type=_positive_int, metavar="N", help=f"calls in flight (default {JUDGE_CONCURRENCY})")
    group.add_argument("--judge-max-tokens", type=int, metavar="N", help=f"output-token limit per call, 0 = none (default {JUDGE_MAX_TOKENS})")
    group.add_argument("--judge-timeout", type=float, metavar="SECONDS", help=f"per-request timeout (default {JUDGE_TIMEOUT_S:g})")
    group.add_argument("--judge-retries", type=int, metavar="N", help=f"retries per call on 429/5xx/timeouts (default {JUDGE_RETRIES})")
    group.add_argument("--judge-cache", metavar="PATH", help="verdict cache file (default $ODU_CACHE_DIR/judge.sqlite or ~/.cache/odu-bench/judge.sqlite)")
    group.add_argument("--no-cache", action="store_true", help="neither read nor write the verdict cache")
    group.add_argument(
        "--allow-judge-errors", action="store_true",
        help="exit 0 even when some segments could not be judged (they are reported, never counted as misses)",
    )


def _options(args: argparse.Namespace, index: int, count: int) -> dict[str, Any]:
    options: dict[str, Any] = {
        "concurrency": args.judge_concurrency,
        "max_tokens": args.judge_max_tokens,
        "timeout": args.judge_timeout,
        "retries": args.judge_retries,
        "cache_path": args.judge_cache,
        "no_cache": args.no_cache or None,
        "progress": not getattr(args, "no_progress", False),
    }
    for name in _PER_JUDGE:
        value = getattr(args, name)
        if isinstance(value, list):  # multiple=True
            if len(value) not in (1, count):
                raise ValueError(f"--{name.replace('_', '-')} given {len(value)} times for {count} judges (give 1 or {count})")
            value = value[0] if len(value) == 1 else value[index]
        options[name.removeprefix("judge_")] = value
    return options


def judges_from_args(args: argparse.Namespace) -> list[Judge]:
    """One judge per ``--judge`` (``multiple=True`` parsers)."""
    specs = args.judge if isinstance(args.judge, list) else [args.judge]
    return [make_judge(spec, **_options(args, i, len(specs))) for i, spec in enumerate(specs)]


def judge_from_args(args: argparse.Namespace) -> Judge:
    """The judge chosen by ``--judge`` and configured by the ``--judge-*`` options."""
    (judge,) = judges_from_args(args)
    return judge


def judge_accounting_line(info: dict[str, Any]) -> str | None:
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
        import sys

        specs = args.judge if isinstance(args.judge, list) else [args.judge]
        remedy = ("Stored verdicts are missing: add their rows to the verdicts file"
                  if all(str(spec).startswith("verdicts:") for spec in specs)
                  else "Rerun to retry them (what was judged comes from the cache)")
        print(
            f"odu-bench {command}: {judge_errors} {unit}(s) could not be judged (reported as judge errors, "
            f"never as misses). {remedy}, or pass --allow-judge-errors.",
            file=sys.stderr,
        )
        return 1
    return 0
