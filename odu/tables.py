"""Table 3-style text tables for people (JSON stays the machine format)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .constants import MODALITIES

#: A Table 3 column: a key of each modality's block of ``summary.json`` (:class:`odu.run.ModalitySummary`).
Table3Column = Literal["avg", "m1", "m2", "m3", "m4", "m5", "ftr"]
#: Table 3 column order within a modality.
TABLE3_COLUMNS: tuple[Table3Column, ...] = ("avg", "m1", "m2", "m3", "m4", "m5", "ftr")
_SHORT = {"audio-visual": "AV", "audio-only": "AO"}


def percent(value: float | None) -> str:
    """A fraction as a Table 3 percentage with one decimal; "-" when undefined."""
    return "-" if value is None else f"{100 * value:.1f}"


def render(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table (readable as plain text too), columns padded to equal width."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def table3(systems: Mapping[str, Mapping[str, Any]], note: str = "") -> str:
    """One row per system, AV and AO column groups as in Table 3, from ``summary.json`` dicts."""
    present = [m for m in MODALITIES if any(m in s for s in systems.values())]
    header = ["System"] + [f"{_SHORT[m]} {c.upper() if c != 'avg' else 'Avg'}" for m in present for c in TABLE3_COLUMNS]
    rows = [
        [name] + [percent((summary.get(m) or {}).get(c)) for m in present for c in TABLE3_COLUMNS]
        for name, summary in systems.items()
    ]
    return render(header, rows) + (f"\n{note}" if note else "")
