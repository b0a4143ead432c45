"""``odu-bench install-metric``: make ``evaluate.load("odu_metric")`` resolve from any folder, offline."""

from __future__ import annotations

import argparse
import sys

from ..io.console import error_text


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "install-metric",
        help='put the evaluate metric where evaluate.load("odu_metric") finds it (evaluate\'s module cache)',
        description="Copies odu_metric.py into $HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--odu_metric/"
        "<sha256>/, the cache evaluate falls back to when the Hub has no such metric or is unreachable. "
        "Run it again after upgrading odu-bench or changing HF_HOME / HF_MODULES_CACHE.",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..metric.door import install_metric, metric_script

    try:
        written = install_metric()
    except OSError as exc:
        print(f"odu-bench install-metric: error: {error_text(exc)}", file=sys.stderr)
        return 2
    print(f"installed {written}")
    print('load with: evaluate.load("odu_metric")  (from any folder, offline too)')
    print(f"or by path: evaluate.load({str(metric_script().parent)!r})")
    return 0
