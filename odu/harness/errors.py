"""The errors of a run that say in their message what is wrong: bad input (a scene, a clip, a model
argument, a dataset path), a server that fails its preflight or refuses every call, a judge that
cannot work, a backend whose optional packages are missing.

``odu-bench eval`` prints one of them as one line and exits 2. lm-eval's own command line (plain
``lm_eval`` and ``odu-bench lm-eval``) does the same when the error comes from our code (a model's
preflight, a task's dataset), instead of a 20-line traceback: :func:`odu_lm_eval_bridge.one_line_errors`
wraps its ``HarnessCLI.execute`` when lm-eval starts (the bridge), or :func:`install_one_line_errors`
does (``odu-bench lm-eval``, with the bridge off too). Any other exception keeps its traceback, so
that lm-eval's own errors read as lm-eval has them and a bug shows where it is.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from ..scrub import scrub_text


def run_errors() -> tuple[type[BaseException], ...]:
    """The exception types whose message is the whole story (module docstring)."""
    from ..data.media import MediaError
    from ..judge import JudgeUnavailableError
    from ..models.remote import ModelUnavailableError
    from ..schema import SchemaError
    from ..server_check import PreflightError
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
    from .tasks import task_dir

    return Path(__file__).resolve().parents[1], task_dir().resolve()


def _frames(tb: TracebackType | None) -> list[Path]:
    files = []
    while tb is not None:
        files.append(Path(tb.tb_frame.f_code.co_filename).resolve())
        tb = tb.tb_next
    return files


def error_line(exc: BaseException) -> str | None:
    """``exc``'s message, scrubbed of credentials (:mod:`odu.scrub`), when ``exc`` is one of
    :func:`run_errors` and was raised while our code ran (a frame of the package or the task folder
    on its traceback); ``None`` otherwise."""
    if not isinstance(exc, run_errors()):
        return None
    ours = _our_folders()
    if not any(frame.is_relative_to(folder) for frame in _frames(exc.__traceback__) for folder in ours):
        return None
    return scrub_text(str(exc))


def install_one_line_errors() -> None:
    """Make lm-eval's command line print :func:`error_line` errors as one line and exit 2
    (:func:`odu_lm_eval_bridge.one_line_errors`, applied once; the bridge does it when lm-eval starts)."""
    import lm_eval._cli.harness

    from odu_lm_eval_bridge import one_line_errors

    one_line_errors(lm_eval._cli.harness)


__all__ = ["error_line", "install_one_line_errors", "run_errors"]
