"""Judge specs: the one grammar that names and configures an M2 judge, for every door.

A judge spec is ``lexical`` (offline, approximate), ``verdicts:PATH`` (stored verdicts) or
``openai:MODEL`` (the App F.4 judge on an OpenAI-compatible server), optionally followed by the
``--judge-*`` options of ``odu-bench score`` (docs/judges.md)::

    openai:qwen3-235b --judge-base-url http://localhost:8000/v1 --judge-concurrency 32

:func:`judge_from_spec` builds the judge of such a text plus keyword options; the command line
(``--judge`` and the ``--judge-*`` flags, :func:`add_judge_arguments` / :func:`judges_from_args`),
the lm-eval tasks (``$ODU_JUDGE``) and the ``evaluate`` metric (``judge=`` / ``judge_options=``)
all go through it. With ``multiple=True`` (``judge-audit``), ``--judge`` and the per-server options
may be repeated: the n-th ``--judge-base-url`` / ``--judge-api-key-env`` / ``--judge-extra-body``
goes with the n-th ``--judge``, and a single value applies to every judge.
"""

from __future__ import annotations

import argparse
import json
import shlex
from typing import Any

from ..transport.openai_client import API_KEY_ENV, RETRIES
from . import Judge, make_judge
from .openai_judge import JUDGE_CONCURRENCY, JUDGE_MAX_TOKENS, JUDGE_TIMEOUT_S

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


def add_judge_arguments(
    parser: argparse.ArgumentParser, *, multiple: bool = False, default: str | None = "lexical"
) -> None:
    """Add ``--judge`` and the ``--judge-*`` options to ``parser``."""
    many: dict[str, Any] = {"action": "append"} if multiple else {}
    group = parser.add_argument_group("judge (M2 key-point coverage; docs/judges.md)")
    group.add_argument(
        "--judge",
        **many,
        default=None if multiple else default,
        required=multiple and default is None,
        help="lexical (offline, approximate) | verdicts:PATH | openai:MODEL (App F.4 judge on an OpenAI-compatible server)"
        + ("; repeat for several judges" if multiple else ""),
    )
    group.add_argument(
        "--judge-base-url", **many, metavar="URL", help="OpenAI-compatible server, e.g. http://localhost:8000/v1"
    )
    group.add_argument(
        "--judge-api-key-env",
        **many,
        metavar="VAR",
        help=f"environment variable holding the API key (default {API_KEY_ENV}; the key is never written)",
    )
    group.add_argument(
        "--judge-extra-body",
        **many,
        type=json_object_arg,
        metavar="JSON",
        help='extra request fields, e.g. \'{"chat_template_kwargs": {"enable_thinking": true}}\' (App D.3)',
    )
    group.add_argument(
        "--judge-concurrency", type=_positive_int, metavar="N", help=f"calls in flight (default {JUDGE_CONCURRENCY})"
    )
    group.add_argument(
        "--judge-max-tokens",
        type=int,
        metavar="N",
        help=f"output-token limit per call, 0 = none (default {JUDGE_MAX_TOKENS})",
    )
    group.add_argument(
        "--judge-timeout", type=float, metavar="SECONDS", help=f"per-request timeout (default {JUDGE_TIMEOUT_S:g})"
    )
    group.add_argument(
        "--judge-retries", type=int, metavar="N", help=f"retries per call on 429/5xx/timeouts (default {RETRIES})"
    )
    group.add_argument(
        "--judge-cache",
        metavar="PATH",
        help="verdict cache file (default $ODU_CACHE_DIR/judge.sqlite or ~/.cache/odu-bench/judge.sqlite)",
    )
    group.add_argument("--no-cache", action="store_true", help="neither read nor write the verdict cache")
    group.add_argument(
        "--allow-judge-errors",
        action="store_true",
        help="exit 0 even when some segments could not be judged (they are reported, never counted as misses)",
    )


def _options(args: argparse.Namespace, index: int, count: int) -> dict[str, Any]:
    """The judge keyword options of parsed ``--judge-*`` flags (``None``: not given)."""
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
                raise ValueError(
                    f"--{name.replace('_', '-')} given {len(value)} times for {count} judges (give 1 or {count})"
                )
            value = value[0] if len(value) == 1 else value[index]
        options[name.removeprefix("judge_")] = value
    return options


def parse_judge_spec(text: str, prog: str = "judge spec") -> tuple[str, dict[str, Any]]:
    """``(kind, options)`` of a judge spec string (see the module docstring).

    ``kind`` is ``lexical``, ``verdicts:PATH`` or ``openai:MODEL``; ``options`` are the judge's
    keyword options the text gives (``None`` where it gives none). A text without any ``-`` option
    is the kind alone, taken as it is (a verdicts path may hold spaces); an empty text is
    ``lexical``. The text may also start with ``--judge KIND``. Bad options end the program with
    an argparse usage message naming ``prog``.

    >>> parse_judge_spec("verdicts:/runs/my verdicts.jsonl")
    ('verdicts:/runs/my verdicts.jsonl', {})
    >>> kind, options = parse_judge_spec("openai:m --judge-base-url http://localhost:8000/v1 --judge-concurrency 4")
    >>> kind, options["base_url"], options["concurrency"]
    ('openai:m', 'http://localhost:8000/v1', 4)
    """
    tokens = shlex.split(text)
    if not any(token.startswith("-") for token in tokens):
        return text.strip() or "lexical", {}
    if not tokens[0].startswith("-"):
        tokens = ["--judge", *tokens]
    parser = argparse.ArgumentParser(prog=prog, add_help=False)
    add_judge_arguments(parser)
    args = parser.parse_args(tokens)
    return args.judge, _options(args, 0, 1)


def judge_from_spec(text: str, prog: str = "judge spec", **options: Any) -> Judge:
    """The judge of a spec string; keyword ``options`` (``None`` = not given) win over the text's."""
    kind, given = parse_judge_spec(text, prog)
    return make_judge(kind, **{**given, **{k: v for k, v in options.items() if v is not None}})


def judges_from_args(args: argparse.Namespace) -> list[Judge]:
    """One judge per ``--judge`` (``multiple=True`` parsers); each ``--judge`` value is a judge spec."""
    specs = args.judge if isinstance(args.judge, list) else [args.judge]
    return [judge_from_spec(spec, "--judge", **_options(args, i, len(specs))) for i, spec in enumerate(specs)]


def judge_inputs(args: argparse.Namespace) -> list[str]:
    """The files the ``--judge`` options read: each ``verdicts:PATH`` and the ``--judge-cache``
    (an output folder may not hold them: :mod:`odu.runs.outdir`)."""
    specs = args.judge if isinstance(args.judge, list) else [args.judge]
    kinds = [parse_judge_spec(str(spec or ""), "--judge")[0] for spec in specs]
    return [k.removeprefix("verdicts:") for k in kinds if k.startswith("verdicts:")] + (
        [args.judge_cache] if args.judge_cache else []
    )


def judge_from_args(args: argparse.Namespace) -> Judge:
    """The judge chosen by ``--judge`` and configured by the ``--judge-*`` options."""
    (judge,) = judges_from_args(args)
    return judge


__all__ = [
    "add_judge_arguments",
    "judge_from_args",
    "judge_from_spec",
    "judge_inputs",
    "judges_from_args",
    "json_object_arg",
    "parse_judge_spec",
]
