"""``odu-bench lm-eval ...``: lm-eval's own command line, with the ODU-Bench models and tasks added.

Registers the ``odu-*`` models (:mod:`odu.harness.models`), adds ``--include_path`` for the
``odu*`` tasks, and hands every other argument to lm-eval 0.4.13's CLI unchanged, so
``odu-bench lm-eval run --model odu-openai --model_args model=... --tasks odu_av`` is
``lm-eval run ...`` with our pieces available (``ls``, ``validate`` and the legacy form without a
subcommand work too). After a run with ``--output_path``, a run card is written next to each
results file lm-eval wrote: ``run_card_<same timestamp>.json`` beside ``results_<timestamp>.json``
(started as several processes, ``torchrun -m odu lm-eval ...``, by rank 0 alone, which alone wrote).
Credentials in URLs (``base_url=http://user:password@host/v1``) and the credential-shaped pieces of
a request body (``extra_body``) are removed from what lm-eval prints and logs (a log record's body by
its rule), and from the files it wrote, whose request bodies are stored by their rule
(:mod:`odu.io.scrub`); model arguments naming a credential (``--model_args api_key=...``, or
``model_args`` of a ``--config`` file) are refused before lm-eval runs or logs anything
(:func:`odu.harness.arguments.check_model_arguments`): keys are read from environment variables only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..io.console import error_text
from ..io.scrub import CredentialArgumentError, install_log_filter, scrub_file, scrubbed_console
from .common import lm_eval_unavailable

_SUBCOMMANDS = ("run", "ls", "validate")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lm-eval",
        add_help=False,
        prefix_chars="\0",
        help="lm-eval's CLI with the odu-* models and odu_* tasks registered (all arguments are lm-eval's)",
    )
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(run=run)


def forwarded_args(args: list[str], include_path: str) -> list[str]:
    """lm-eval arguments with ``--include_path`` added (unless the user gave one).

    >>> forwarded_args(["run", "--tasks", "odu_av"], "/t")
    ['run', '--include_path', '/t', '--tasks', 'odu_av']
    >>> forwarded_args(["--tasks", "odu_av"], "/t")
    ['--tasks', 'odu_av', '--include_path', '/t']
    """
    if any(a == "--include_path" or a.startswith("--include_path=") for a in args):
        print(
            f"odu-bench lm-eval: --include_path given; the odu tasks are only found if it includes {include_path}",
            file=sys.stderr,
        )
        return list(args)
    if args and args[0] in _SUBCOMMANDS:
        return [args[0], "--include_path", include_path, *args[1:]]
    if not args or args[0] in ("-h", "--help"):
        return list(args)
    return [*args, "--include_path", include_path]


def _output_path(args: list[str]) -> Path | None:
    for i, a in enumerate(args):
        if a in ("--output_path", "-o") and i + 1 < len(args):
            return Path(args[i + 1])
        if a.startswith("--output_path="):
            return Path(a.split("=", 1)[1])
    return None


def write_run_cards(output_path: Path, since: float) -> list[Path]:
    """A run card beside every ``results_*.json`` lm-eval wrote under ``output_path`` since ``since``."""
    from ..harness.runcard import write_run_card
    from ..io.jsonio import read_json

    written = []
    files = [output_path] if output_path.suffix == ".json" else sorted(output_path.rglob("results_*.json"))
    for results_file in files:
        if results_file.is_file() and results_file.stat().st_mtime >= since:
            results = read_json(results_file)
            stamp = results_file.stem.removeprefix("results_")
            written.append(
                write_run_card(
                    results,
                    results_file.parent,
                    name=f"run_card_{stamp}.json",
                    extra={"results_file": results_file.name},
                )
            )
    return written


def run(args: argparse.Namespace) -> int:
    try:
        from lm_eval._cli import HarnessCLI
        from lm_eval.utils import setup_logging

        import odu.harness.models  # noqa: F401  # registers the odu-* models
    except ImportError as exc:
        return lm_eval_unavailable(exc, "lm-eval")

    from ..harness.annotate import install_table_note
    from ..harness.arguments import check_model_arguments, install_json_errors_unshown
    from ..harness.errors import install_one_line_errors
    from ..harness.folders import task_dir
    from ..harness.ranks import launched_rank
    from ..harness.runcard import RECORDER

    argv = forwarded_args(list(args.args), str(task_dir()))
    started = time.time()
    RECORDER.clear()
    install_table_note()  # lm-eval's table ends with our caveats, with the start-up bridge off too
    install_one_line_errors()  # a failed preflight, a missing extra: one line and exit 2, bridge or not
    install_json_errors_unshown()  # lm-eval's JSON errors would print the argument whole
    saved, sys.argv = sys.argv, ["lm-eval", *argv]
    try:
        with scrubbed_console():  # lm-eval prints and logs its --model_args verbatim
            setup_logging()  # what lm-eval's cli_evaluate does, with the refusal between parsing and running
            install_log_filter()  # on lm-eval's handler: a request body in a log record by its rule
            parser = HarnessCLI()
            parsed = parser.parse_args()
            check_model_arguments(parsed, shown_as_given=False)  # lm-eval's console and files are scrubbed here
            parser.execute(parsed)
    except CredentialArgumentError as exc:
        print(f"odu-bench lm-eval: error: {error_text(exc)}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # lm-eval's --help and usage errors, and the one-line errors: printed
        if not isinstance(exc.code, (int, type(None))):
            raise
        return exc.code or 0
    finally:
        sys.argv = saved
    output_path = _output_path(argv)
    if output_path is not None and output_path.exists() and launched_rank() == 0:  # rank 0 wrote, alone
        scrub_outputs(output_path, started)
        for card in write_run_cards(output_path, started):
            print(f"run card: {card}")
    return 0


def scrub_outputs(output_path: Path, since: float) -> list[Path]:
    """Remove URL credentials and known secrets from the files lm-eval wrote under ``output_path``
    since ``since``, and store their request bodies by rule (:func:`odu.io.scrub.scrub_file`: its
    results keep ``--model_args`` verbatim); returns the files changed."""
    files = [output_path] if output_path.is_file() else sorted(p for p in output_path.rglob("*") if p.is_file())
    return [p for p in files if p.suffix in (".json", ".jsonl") and p.stat().st_mtime >= since and scrub_file(p)]
