"""The errors of a run that say in their message what is wrong: bad input (a scene, a clip, a model
argument, a dataset path), a server that fails its preflight or refuses every call, a judge that
cannot work, a backend whose optional packages are missing.

``odu-bench eval`` prints one of them as one line and exits 2. lm-eval's own command line (plain
``lm_eval`` and ``odu-bench lm-eval``) does the same when the error comes from our code (a model's
preflight, a task's dataset), instead of a 20-line traceback: :func:`with_one_line_errors`
wraps its ``HarnessCLI.execute``, put in place when lm-eval starts (the start-up bridge), or :func:`install_one_line_errors`
does (``odu-bench lm-eval``, with the bridge off too). Any other exception keeps its traceback, so
that lm-eval's own errors read as lm-eval has them and a bug shows where it is.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from ..io.console import inert
from ..io.scrub import scrub_text
from .wrapping import wrap_once


def run_errors() -> tuple[type[BaseException], ...]:
    """The exception types whose message is the whole story (module docstring)."""
    from ..core.schema import SchemaError
    from ..data.media import MediaError
    from ..judge import JudgeUnavailableError
    from ..models.remote import ModelUnavailableError
    from ..transport.server_check import PreflightError
    from .asr import AsrError

    return (
        SchemaError,
        MediaError,
        AsrError,
        ValueError,
        OSError,
        ImportError,
        JudgeUnavailableError,
        ModelUnavailableError,
        PreflightError,
    )


def _our_folders() -> tuple[Path, ...]:
    """The package and the lm-eval task folder (its ``utils.py`` reads the dataset)."""
    from .folders import task_dir

    return Path(__file__).resolve().parents[1], task_dir().resolve()


def _frames(tb: TracebackType | None) -> list[Path]:
    files = []
    while tb is not None:
        files.append(Path(tb.tb_frame.f_code.co_filename).resolve())
        tb = tb.tb_next
    return files


def error_line(exc: BaseException, traceback: TracebackType | None = None) -> str | None:
    """``exc``'s message, scrubbed of credentials (:mod:`odu.io.scrub`), when ``exc`` is one of
    :func:`run_errors` and was raised while our code ran (a frame of the package or the task folder
    on ``traceback``, by default its own); ``None`` otherwise."""
    if not isinstance(exc, run_errors()):
        return None
    ours = _our_folders()
    frames = _frames(traceback or exc.__traceback__)
    if not any(frame.is_relative_to(folder) for frame in frames for folder in ours):
        return None
    return scrub_text(str(exc))


def with_one_line_errors(execute: Any) -> Any:
    """lm-eval's ``HarnessCLI.execute`` ending an :func:`error_line` error with one line,
    ``lm-eval: error: ...``, and exit 2, as ``odu-bench eval`` does; any other keeps its traceback.
    The start-up bridge puts it in place when lm-eval starts (imported at the first command);
    :func:`install_one_line_errors` where the bridge is off."""
    import functools

    @functools.wraps(execute)
    def one_line(self: Any, args: Any) -> Any:
        try:
            return execute(self, args)
        except Exception as exc:
            raised = exc.__traceback__
            line = error_line(exc, raised.tb_next if raised else None)  # below this wrapper's own frame
            if line is None:
                raise
            prog = getattr(getattr(self, "_parser", None), "prog", "lm-eval")  # argparse's error format
            print(f"{prog}: error: {inert(line)}", file=sys.stderr)
            raise SystemExit(2) from None

    return one_line


def install_one_line_errors() -> None:
    """Make lm-eval's command line print :func:`error_line` errors as one line and exit 2, once."""
    from lm_eval._cli.harness import HarnessCLI

    wrap_once(HarnessCLI, "execute", with_one_line_errors)


__all__ = ["error_line", "install_one_line_errors", "run_errors", "with_one_line_errors"]
