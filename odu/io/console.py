"""What the toolkit shows on the console: text from outside made inert, and our warnings.

**Text from outside** (a server's ``/version``, its model ids and error messages, model output,
the fields of a file read) is data, never terminal control (:data:`CONSOLE_TEXT_RULE`): each
string of it is shown through :func:`inert`, the one console sanitiser, which escapes every
character a terminal obeys rather than shows (an ANSI escape, a carriage return, a newline, a
right-to-left override) the way Python writes it (``\\x1b``, ``\\r``, ``\\n``, ``\\u202e``), so it
can neither clear the screen, set the window title, turn text around nor forge a line of ours.
An error of several problems keeps one line per problem (:class:`ProblemsError`). Every
``odu-bench`` command's console and log records pass :func:`inert_stream` too
(:func:`odu.io.scrub.scrubbed_console`): the same escapes but for the newlines and tabs of our
own lines and a progress bar's leading carriage return.

**Our warnings** are real Python warnings of a category of :class:`OduWarning`
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
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

#: The rule of text from outside on the console (module docstring; docs/harness.md "Text from outside on the console").
CONSOLE_TEXT_RULE = (
    "text from outside the toolkit (a server's /version, model ids, error messages, model output, a file's "
    "fields) is shown with each character a terminal obeys rather than shows escaped as Python writes it "
    "(\\x1b, \\r, \\n, \\u202e): C0 and C1 controls and DEL, the bidirectional controls, the line and "
    "paragraph separators, lone surrogates"
)
#: The bidirectional formatting characters (Unicode's Bidi_Control): marks, embeddings, overrides, isolates.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: What a terminal obeys besides C0 controls: DEL and C1, the bidi controls, line and paragraph separators, lone surrogates.
_OBEYED_BEYOND_C0 = f"\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029\ud800-\udfff"
_OBEYED_CHAR = re.compile(f"[\x00-\x1f{_OBEYED_BEYOND_C0}]")
#: What :func:`inert_stream` escapes: the same but for newline and tab (a carriage return: :func:`inert_stream`).
_OBEYED_IN_STREAM = re.compile(f"[\x00-\x08\x0b-\x1f{_OBEYED_BEYOND_C0}]")
#: How many problems a :class:`ProblemsError` lists; the rest are counted.
PROBLEMS_SHOWN = 20


def _escape(match: re.Match[str]) -> str:
    return match.group(0).encode("unicode_escape").decode("ascii")


def inert(text: object) -> str:
    """``text`` (made a string) for the console, by :data:`CONSOLE_TEXT_RULE`: one line, nothing in it a
    terminal would obey. The one sanitiser of text from outside.

    >>> print(inert("model OK\\x1b[2J\\r\\nodu-bench eval: \\u202eKO"))
    model OK\\x1b[2J\\r\\nodu-bench eval: \\u202eKO
    >>> inert("Qwen/Qwen2.5-Omni-7B: déjà vu, 中文 ✓")
    'Qwen/Qwen2.5-Omni-7B: déjà vu, 中文 ✓'
    """
    return _OBEYED_CHAR.sub(_escape, str(text))


def inert_stream(text: str) -> str:
    """What one write to a command's console (or one log record) may carry: :func:`inert`, but for its
    newlines and tabs and a carriage return that starts it (a progress bar redrawing its line).

    >>> inert_stream("\\r 40%|####  | 2/5\\n") == "\\r 40%|####  | 2/5\\n"
    True
    >>> print(inert_stream("error: bad\\x1b]0;pwned\\x07 reply\\rOK\\n"))
    error: bad\\x1b]0;pwned\\x07 reply\\rOK
    <BLANKLINE>
    """

    def escape(match: re.Match[str]) -> str:
        return "\r" if match.group(0) == "\r" and match.start() == 0 else _escape(match)

    return _OBEYED_IN_STREAM.sub(escape, text)


class ProblemsError(ValueError):
    """An error of several problems: a head line, then one indented line per problem (the first
    :data:`PROBLEMS_SHOWN`, the rest counted), each problem made :func:`inert`, so that the console
    shows it as it is (:func:`error_text`)."""

    def __init__(self, head: str, problems: Sequence[Any]) -> None:
        self.problems: list[Any] = list(problems)
        lines = [inert(p) for p in self.problems[:PROBLEMS_SHOWN]]
        if len(self.problems) > PROBLEMS_SHOWN:
            lines.append(f"... and {len(self.problems) - PROBLEMS_SHOWN} more")
        super().__init__("\n  ".join([inert(head), *lines]))


def error_text(exc: BaseException) -> str:
    """An error's text for the console: a :class:`ProblemsError`'s lines as they are (each made inert),
    any other error's text :func:`inert` (one line)."""
    return str(exc) if isinstance(exc, ProblemsError) else inert(exc)


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
            return f"{self.prefix}: warning: {inert(message)}\n"
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


__all__ = [
    "BIDI_CONTROLS",
    "CONSOLE_TEXT_RULE",
    "LIBRARY_VOICE",
    "PROBLEMS_SHOWN",
    "LmEvalBridgeWarning",
    "OduWarning",
    "ProblemsError",
    "error_text",
    "inert",
    "inert_stream",
    "our_voice",
    "say_in_our_voice",
]
