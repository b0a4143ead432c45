"""The ``odu-bench`` command line: one module per subcommand, each with ``add_parser`` and ``run``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Subcommand modules, in the order ``odu-bench --help`` lists them.
COMMANDS: tuple[str, ...] = (
    "score",
    "report",
    "view",
    "prepare",
    "download",
    "upload",
    "install-metric",
    "upload-metric",
    "judge-audit",
    "eval",
    "lm_eval_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="odu-bench", description="ODU-Bench toolkit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``odu-bench`` console script; returns the exit code."""
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
