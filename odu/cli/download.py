"""``odu-bench download``: fetch ODU-Bench (some configs only) from the Hub: a prepared dataset repo, or
the authors' release as published (records + media), which is then prepared."""

from __future__ import annotations

import argparse
import sys

from ..data.dataset import CONFIG_NAMES
from ..io.console import error_text, inert
from .common import add_hub_repo


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "download",
        help="download the dataset from the Hugging Face Hub (a prepared repo, or a release that is then prepared)",
        description="A repo made by odu-bench upload is downloaded as it is (the shards of the chosen configs). "
        "A release as the authors publish it (scenes.json / scenes.jsonl + media at the clips' src paths) "
        "is downloaded for the chosen configs only, validated and prepared into --out.",
    )
    add_hub_repo(p, "dataset", "ORG/odu-bench")
    p.add_argument(
        "--config",
        action="append",
        choices=CONFIG_NAMES,
        metavar="CONFIG",
        help=f"config to fetch (repeatable; default: all). One of: {', '.join(CONFIG_NAMES)}",
    )
    p.add_argument("--out", help="local folder (default: the Hub cache; a release: the odu-bench cache)")
    p.add_argument("--revision", help="branch, tag or commit")
    p.add_argument("--skip-invalid", action="store_true", help="a release: leave out invalid scenes and report them")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..core.schema import SchemaError
    from ..data.hub import HubError, download, load_dataset_call
    from ..data.release import ReleaseProblem

    problems: list[ReleaseProblem] = []
    try:
        local = download(
            args.repo, args.config, args.out, revision=args.revision, skip_invalid=args.skip_invalid, problems=problems
        )
    except (ValueError, OSError, SchemaError, HubError) as exc:
        print(f"odu-bench download: error: {error_text(exc)}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"skipped: {inert(problem)}", file=sys.stderr)
    configs = ", ".join(args.config or ["all"])
    print(f"{args.repo} ({configs}) -> {local}")
    print(f"load with: {load_dataset_call(local, (args.config or ['all'])[0])}")
    return 0
