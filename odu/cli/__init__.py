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
    "export",
    "view",
    "prepare",
    "download",
    "upload",
    "install-metric",
    "upload-metric",
    "judge-audit",
    "eval",
    "merge",
    "lm_eval_cmd",
    "selftest",
)
#: Subcommands whose name is not their module's.
_MODULE_OF = {"lm-eval": "lm_eval_cmd"}


def build_parser(commands: Sequence[str] = COMMANDS) -> argparse.ArgumentParser:
    """The parser of ``commands`` (module names; all of them by default)."""
    parser = argparse.ArgumentParser(
        prog="odu-bench",
        description="ODU-Bench toolkit. Docs: README.md and docs/*.md of the odu-bench repository.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in commands:
        module = importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
        module.add_parser(sub)
    return parser


def version() -> str:
    """The installed odu-bench's version (``setup.cfg``), and where it is installed from."""
    from importlib import metadata
    from pathlib import Path

    try:
        number = metadata.version("odu-bench")
    except metadata.PackageNotFoundError:
        number = "(not installed)"
    return f"{number} ({Path(__file__).resolve().parents[1]})"


#: Exit status of a command stopped by Ctrl-C (SIGINT): 128 + 2, as a shell reports it.
INTERRUPTED_EXIT = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``odu-bench`` console script; returns the exit code.

    A command line naming a subcommand imports that subcommand's module only, so that e.g.
    ``odu-bench score`` does not pay for the imports of ``eval`` or ``report``. Every command runs
    with its console and log records scrubbed of secrets (:func:`odu.io.scrub.scrubbed_console`)
    and our warnings said as its other lines are, ``odu-bench COMMAND: warning: ...``, once each
    (:func:`odu.io.console.our_voice`); Ctrl-C ends it with one line and :data:`INTERRUPTED_EXIT`,
    its output left as it was before the command (the work folder is removed on the way out; one a
    killed process leaves, by the next command into the same place: :mod:`odu.runs.outdir`)."""
    from ..io.console import our_voice
    from ..io.scrub import scrubbed_console

    argv = list(sys.argv[1:] if argv is None else argv)
    first = argv[0] if argv else ""
    module = _MODULE_OF.get(first, first)
    chosen = [module] if module in COMMANDS or module.replace("_", "-") in COMMANDS else COMMANDS
    if first == "--version":  # printed whole (argparse's version action wraps it at the terminal's width)
        print(f"odu-bench {version()}")
        return 0
    voice = f"odu-bench {first}" if first else "odu-bench"  # who speaks in the command's console lines
    try:
        with scrubbed_console(), our_voice(voice):
            args = build_parser(chosen).parse_args(argv)
            return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print(f"{voice}: interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
