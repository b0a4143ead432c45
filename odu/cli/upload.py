"""``odu-bench upload``: push a prepared dataset directory to a Hub dataset repo."""

from __future__ import annotations

import argparse
import sys

from ..io.console import error_text, inert
from .common import add_hub_repo


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("upload", help="upload a prepared dataset directory to the Hugging Face Hub")
    p.add_argument("dir", help="directory written by odu-bench prepare")
    add_hub_repo(p, "dataset", "ORG/odu-bench", created=True)
    p.add_argument("--private", action="store_true", help="create the repo as private")
    p.add_argument("--revision", help="branch to commit to")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..data.hub import HubError, upload

    try:
        url = upload(args.dir, args.repo, private=args.private or None, revision=args.revision)
    except (ValueError, HubError) as exc:
        print(f"odu-bench upload: error: {error_text(exc)}", file=sys.stderr)
        return 2
    print(f"{args.dir} -> {inert(url)}")
    return 0
