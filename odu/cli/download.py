"""``odu-bench download``: fetch a prepared ODU-Bench dataset (some configs only) from the Hub."""

from __future__ import annotations

import argparse
import sys

from ..data.dataset import CONFIG_NAMES


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("download", help="download a prepared dataset repo from the Hugging Face Hub")
    p.add_argument("repo", help="dataset repo id, e.g. ORG/odu-bench")
    p.add_argument(
        "--config",
        action="append",
        choices=CONFIG_NAMES,
        metavar="CONFIG",
        help=f"config to fetch (repeatable; default: all). One of: {', '.join(CONFIG_NAMES)}",
    )
    p.add_argument("--out", help="local folder (default: the Hub cache)")
    p.add_argument("--revision", help="branch, tag or commit")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..data.hub import HubError, download

    try:
        local = download(args.repo, args.config, args.out, revision=args.revision)
    except (ValueError, HubError) as exc:
        print(f"odu-bench download: error: {exc}", file=sys.stderr)
        return 2
    configs = ", ".join(args.config or ["all"])
    print(f"{args.repo} ({configs}) -> {local}")
    print(f"load with: datasets.load_dataset({str(local)!r}, {(args.config or ['all'])[0]!r}, split='test')")
    return 0
