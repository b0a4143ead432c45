"""A run's model id and date, checked as the export formats' readers take them: every format reads
both through :class:`odu.export.source.ExportRun`, which checks them here.

* A **model id** becomes Every Eval Ever's ``model_info.id`` and a folder of its datastore
  (``data/odu-bench/<developer>/<model>/``) and Inspect's ``eval.model``. :func:`check_model_id`
  refuses one that is not shown as it is written: a character ``str.isprintable`` refuses (control
  characters such as NUL, ESC or a newline; bidi overrides and isolates such as U+202E and U+2066:
  ``Qwen/`` U+202E ``exe.1-nwQ`` shows as ``Qwen/Qwn-1.exe``; separators and white space but the
  space), white space at either end, or more than :data:`MODEL_ID_MAX_BYTES`.
* A **date** becomes the Hub's ``date``, Every Eval Ever's ``evaluation_timestamp`` and Inspect's
  ``eval.created`` (and the Inspect log's file name). :func:`check_date` takes an ISO 8601 date and
  time of the shape :data:`RUN_DATE` that is a real time (``datetime.fromisoformat``, as Inspect's
  reader parses ``created``): the Hub's ``date`` pattern and what Every Eval Ever's Hub converter
  reads (its first ten characters as the day).

Either check refuses with :class:`ExportRefused`: one line naming the run, its folder, the field and
the value (quoted, cut at :data:`SHOWN_CHARS`).
"""

from __future__ import annotations

import re
import reprlib
import unicodedata
from datetime import datetime
from typing import Any

#: The longest model id, in UTF-8 bytes: its model part is an Every Eval Ever folder's name, and
#: common file systems (ext4, APFS, NTFS) take names of at most 255.
MODEL_ID_MAX_BYTES = 255
#: A run's date: ``2026-12-07T18:48:32``, seconds with an optional fraction of 3 or 6 digits (what
#: ``datetime.fromisoformat`` reads on Python 3.10), then an optional ``Z`` or ``±HH:MM`` offset.
RUN_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{3}(?:\d{3})?)?(?:Z|[+-]\d\d:\d\d)?")
#: How much of a refused value a refusal quotes.
SHOWN_CHARS = 60
_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = SHOWN_CHARS


class ExportRefused(ValueError):
    """A run that may not be exported as it is; the message names the run and why."""


def _shown(value: Any) -> str:
    """``value`` quoted on one line (control and bidi characters escaped), cut in the middle past
    :data:`SHOWN_CHARS`, with its length when cut."""
    cut = isinstance(value, str) and len(value) > SHOWN_CHARS
    return _SHOWN.repr(value) + (f" ({len(value):,} characters)" if cut else "")


def check_model_id(value: str, run: str, field: str) -> str:
    """``value``, a model id of the run ``run`` (its name and folder) read from ``field``, when
    every format may carry it (module docstring); else :class:`ExportRefused`."""
    if bad := next((c for c in value if not c.isprintable()), None):
        name = " ".join(filter(None, (f"U+{ord(bad):04X}", unicodedata.name(bad, ""))))
        why = f"holds {name} (category {unicodedata.category(bad)}), which no reader shows as written"
    elif value != value.strip():
        why = "begins or ends with white space"
    elif len(value.encode("utf-8")) > MODEL_ID_MAX_BYTES:
        why = f"is longer than {MODEL_ID_MAX_BYTES} bytes (MODEL_ID_MAX_BYTES)"
    else:
        return value
    raise ExportRefused(
        f"run {run}: {field} {_shown(value)} {why}: not a model id an export may carry; pass --model-ids"
    )


def check_date(value: Any, run: str, field: str) -> str:
    """``value``, the date of the run ``run`` (its name and folder) read from ``field``, when it is
    an ISO 8601 date and time every format's reader takes (module docstring); else
    :class:`ExportRefused`."""
    if isinstance(value, str) and RUN_DATE.fullmatch(value):
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            why = f"is no real time ({exc})"
        else:
            return value
    else:
        why = "is not an ISO 8601 date and time such as 2026-12-07T18:48:32+00:00"
    raise ExportRefused(f"run {run}: {field} {_shown(value)} {why}: not a date an export may carry")


__all__ = ["MODEL_ID_MAX_BYTES", "RUN_DATE", "SHOWN_CHARS", "ExportRefused", "check_date", "check_model_id"]
