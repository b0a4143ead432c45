"""The toolkit's warnings on the console: one line in the toolkit's voice, once per cause.

A warning of ours is a real Python warning of a category of :class:`OduWarning`
(:class:`~odu.io.scrub.PlaceholderKeyWarning`, :class:`~odu.data.hub.StaleDatasetWarning`,
:class:`LmEvalBridgeWarning`), so that a library user can filter, record or raise it like any
other (``warnings.filterwarnings("ignore", category=OduWarning)``). Where the toolkit speaks on
the console it is shown as the toolkit's other lines are, ``odu-bench eval: warning: MESSAGE``,
instead of Python's ``path/module.py:NN: Category: MESSAGE`` and the source line that raised it,
and once per message however many places raise it (Python's own filters show a warning once per
place: a placeholder key was said by the model's client and again by its preflight's). The
filters still decide first (``-W error`` raises it); other libraries' warnings are shown as before.

Applied by each ``odu-bench`` command (:func:`our_voice`: ``odu-bench COMMAND``, once per run),
and with :data:`LIBRARY_VOICE` for the rest of the process (:func:`say_in_our_voice`) by the
harness when lm-eval or lmms-eval loads our tasks or builds our models, by the ``evaluate`` metric
when it computes, and by the start-up bridge when it warns. Standard library only: the start-up
bridge imports it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TextIO

#: Who speaks where no ``odu-bench`` command runs (lm-eval, lmms-eval, the ``evaluate`` metric).
LIBRARY_VOICE = "odu-bench"


class OduWarning(UserWarning):
    """A warning of the toolkit; each subclass names a cause (module docstring)."""


class LmEvalBridgeWarning(OduWarning, RuntimeWarning):
    """The start-up bridge (``odu_lm_eval_bridge``) could not hook a module of lm-eval's; lm-eval
    runs on without that hook."""


class _Voice:
    """Our warnings after ``prefix``: :meth:`show` (``warnings.showwarning``) passes each message
    on once, to the show it replaced, and :meth:`format` (``warnings.formatwarning``) makes it one
    line; any other warning goes to the show and format it had."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.their_show = _theirs(warnings.showwarning, "their_show")
        self.their_format = _theirs(warnings.formatwarning, "their_format")
        self.shown: set[tuple[type[Warning], str]] = set()

    def show(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, OduWarning):
            said = (category, str(message))
            if said in self.shown:
                return
            self.shown.add(said)
        self.their_show(message, category, filename, lineno, file, line)

    def format(
        self, message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
    ) -> str:
        if issubclass(category, OduWarning):
            return f"{self.prefix}: warning: {message}\n"
        return self.their_format(message, category, filename, lineno, line)

    def speak(self) -> None:
        warnings.showwarning, warnings.formatwarning = self.show, self.format


def _theirs(hook: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``hook``, or the hook it replaced when it is a :class:`_Voice`'s (a voice never wraps another)."""
    owner = getattr(hook, "__self__", None)
    return getattr(owner, name) if isinstance(owner, _Voice) else hook


def say_in_our_voice(prefix: str = LIBRARY_VOICE) -> None:
    """Show our warnings in the toolkit's voice for the rest of the process, unless they already
    are (within a command, whose own prefix stays)."""
    if not isinstance(getattr(warnings.showwarning, "__self__", None), _Voice):
        _Voice(prefix).speak()


@contextlib.contextmanager
def our_voice(prefix: str) -> Iterator[None]:
    """Within the block our warnings are shown as one line after ``prefix`` (``odu-bench eval``),
    each message once; what the block started with is restored on leaving (the filters too, so a
    warning Python showed before the block is shown again within it)."""
    saved = warnings.formatwarning
    with warnings.catch_warnings():  # restores warnings.showwarning
        _Voice(prefix).speak()
        try:
            yield
        finally:
            warnings.formatwarning = saved


__all__ = ["LIBRARY_VOICE", "LmEvalBridgeWarning", "OduWarning", "our_voice", "say_in_our_voice"]
