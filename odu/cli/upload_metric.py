"""``odu-bench upload-metric ORG/NAME``: publish the metric as a Hub community metric (a Space)."""

from __future__ import annotations

import argparse
import sys

from ..io.console import error_text, inert
from ..metric.door import SPACE_SDKS
from .common import add_hub_repo


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "upload-metric",
        help="publish the evaluate metric as a Hub Space, for evaluate.load('ORG/NAME')",
        description="Creates the Space ORG/NAME if needed and commits NAME.py (the metric script, named after "
        "the repo as evaluate expects), the metric card and, with --sdk gradio, evaluate's widget. Uses the "
        "token of huggingface_hub (HF_TOKEN or a saved login).",
    )
    add_hub_repo(p, "Space", "ORG/odu_metric", created=True)
    p.add_argument(
        "--sdk", choices=SPACE_SDKS, default="static", help="Space SDK (default static; gradio adds the widget)"
    )
    p.add_argument("--private", action="store_true", help="create the Space as private")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..data.hub import HubError
    from ..metric.door import upload_metric

    try:
        url = upload_metric(args.repo, sdk=args.sdk, private=args.private or None)
    except (ValueError, OSError, HubError) as exc:
        print(f"odu-bench upload-metric: error: {error_text(exc)}", file=sys.stderr)
        return 2
    print(f"{args.repo} -> {inert(url)}")
    print(f'load with: evaluate.load("{args.repo}")  (odu-bench installed where it runs)')
    return 0
