"""Where systems fail, by taxonomy category (§5.4; App E.3, Figs. 5, 9, 10).

* Positive challenge profiles (Figs. 9/10): per modality, the positive scenes whose M2 scene score
  is defined for every system (the common cohort); per system, the mean s2 of the scenes in an
  axis 1-4 category minus that system's mean s2 over the whole cohort. Scenes weigh equally.
* False-trigger patterns (Fig. 5): per modality, the labelled negatives (non-empty signal type or
  invalidation reason) common to every system; per system, the FTR within a signal type or an
  invalidation reason minus the system's FTR over all of them.

Each table ends with a "panel mean" row: the unweighted mean of the differences across systems.
Differences are fractions here (percentage points / 100 in the rendered tables).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.constants import AUDIO_ONLY, AUDIO_VISUAL
from ..core.metrics import false_trigger_rate, mean_defined
from .numbers import difference
from .runs import Row, System, common_rows

#: The four challenge axes analysed against M2 (App B.2, App E.3).
CHALLENGE_AXES: tuple[str, ...] = ("axis1", "axis2", "axis3", "axis4")
#: Category names of the challenge axes (App B.2). Axis 1 is modality-specific: audio-only scenes
#: use 1.1 language-channel and 1.2 acoustic-event dependence.
CHALLENGE_CATEGORIES: dict[str, dict[str, str]] = {
    AUDIO_VISUAL: {
        "1.1": "Language-channel",
        "1.2": "Vision-grounded",
        "1.3": "Audio-grounded",
        "1.4": "Vision-Audio Joint",
    },
    AUDIO_ONLY: {"1.1": "Language-channel", "1.2": "Acoustic-event dependence"},
    "": {
        "2.1": "Self-contained Current Context",
        "2.2": "Temporal Event Dependency",
        "2.3": "Dialogue History Dependency",
        "2.4": "Speaker Identity Dependency",
        "2.5": "Affective State Dependency",
        "3.1": "Direct Instruction",
        "3.2": "Direct Question",
        "3.3": "Indirect or Descriptive Request",
        "3.4": "Hesitation or Self-correction",
        "3.5": "Interrupted or Incomplete Request",
        "3.6": "Compound or Multi-intent Request",
        "4.1": "Clean Near-field Speech",
        "4.2": "Background Noise",
        "4.3": "Competing Speech",
        "4.4": "Low-volume or Whispered Speech",
        "4.5": "Media Playback Interference",
    },
}
#: No-demand dimensions (App B.3): release value of ``negative_signal`` -> (code, short name).
NEGATIVE_SIGNALS: dict[str, tuple[str, str]] = {
    "linguistic_signal": ("S1", "Linguistic"),
    "semantic_signal": ("S2", "Semantic"),
    "prosodic_signal": ("S3", "Prosodic"),
    "interactive_signal": ("S4", "Interactive"),
    "contextual_signal": ("S5", "Contextual"),
}
#: ... and of ``negative_reason`` (short names as in Fig. 2 / Fig. 5).
NEGATIVE_REASONS: dict[str, tuple[str, str]] = {
    "target_mismatch": ("R1", "Wrong Addressee"),
    "source_mismatch": ("R2", "Wrong Source"),
    "demand_incomplete": ("R3", "Incomplete"),
    "intent_not_real": ("R4", "Non-real"),
    "function_not_directed": ("R5", "Function Mention"),
}

PANEL_MEAN = "panel mean"


def category_label(modality: str, code: str) -> str:
    """``"3.3 Indirect or Descriptive Request"``; the bare code when the name is unknown.

    >>> category_label("audio-only", "1.2")
    '1.2 Acoustic-event dependence'
    """
    name = CHALLENGE_CATEGORIES.get(modality, {}).get(code) or CHALLENGE_CATEGORIES[""].get(code)
    return f"{code} {name}" if name else code


def _code_key(code: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in code.split("."))


def _panel(cells: list[dict[str, Any]], systems: Sequence[System], columns: list[str]) -> list[dict[str, Any]]:
    """Append the panel-mean row (mean over systems of each column's difference)."""
    mean_row: dict[str, Any] = {"system": PANEL_MEAN, "base": None, "cells": {}}
    for col in columns:
        values = [c["cells"][col]["delta"] for c in cells if c["cells"][col]["delta"] is not None]
        n = cells[0]["cells"][col]["n"] if cells else 0
        mean_row["cells"][col] = {"n": n, "value": None, "delta": sum(values) / len(values) if values else None}
    return [*cells, mean_row] if systems else cells


def m2_profile(systems: Sequence[System], modality: str) -> dict[str, Any]:
    """Figs. 9/10: category-minus-system-mean M2 on the common positive cohort of ``modality``."""
    ids, by_system = common_rows(systems, modality, lambda r: r["label"] == "positive" and r["s2"] is not None)
    first = by_system[0] if by_system else {}
    categories: dict[str, list[str]] = {}
    for sid in ids:
        for axis in CHALLENGE_AXES:
            code = first[sid]["axes"].get(axis, "")
            if code:
                categories.setdefault(category_label(modality, code), []).append(sid)
    columns = sorted(categories, key=lambda label: _code_key(label.split(" ", 1)[0]))
    table = []
    for system, rows in zip(systems, by_system):
        base = mean_defined(rows[sid]["s2"] for sid in ids)
        cells = {}
        for col in columns:
            value = mean_defined(rows[sid]["s2"] for sid in categories[col])
            cells[col] = {"n": len(categories[col]), "value": value, "delta": difference(value, base)}
        table.append({"system": system.name, "base": base, "cells": cells})
    return {
        "modality": modality,
        "metric": "m2",
        "n_scenes": len(ids),
        "columns": columns,
        "rows": _panel(table, systems, columns),
    }


def _labelled(row: Row) -> bool:
    return row["label"] == "negative" and bool(row.get("negative_signal") or row.get("negative_reason"))


def _negative_label(value: str, names: Mapping[str, tuple[str, str]]) -> str:
    code, name = names.get(value, ("", value))
    return f"{code} {name}" if code else name


def ftr_profile(systems: Sequence[System], modality: str) -> dict[str, Any]:
    """Fig. 5: subtype FTR minus the system's FTR on the common labelled negatives of ``modality``."""
    ids, by_system = common_rows(systems, modality, _labelled)
    first = by_system[0] if by_system else {}
    groups: dict[str, dict[str, list[str]]] = {"signal": {}, "reason": {}}
    for sid in ids:
        row = first[sid]
        if row.get("negative_signal"):
            groups["signal"].setdefault(_negative_label(row["negative_signal"], NEGATIVE_SIGNALS), []).append(sid)
        if row.get("negative_reason"):
            groups["reason"].setdefault(_negative_label(row["negative_reason"], NEGATIVE_REASONS), []).append(sid)
    out: dict[str, Any] = {"modality": modality, "metric": "ftr", "n_scenes": len(ids)}
    for dimension, members in groups.items():
        columns = sorted(members)
        table = []
        for system, rows in zip(systems, by_system):
            base = _ftr(rows, ids)
            cells = {}
            for col in columns:
                value = _ftr(rows, members[col])
                cells[col] = {"n": len(members[col]), "value": value, "delta": difference(value, base)}
            table.append({"system": system.name, "base": base, "cells": cells})
        out[dimension] = {"columns": columns, "rows": _panel(table, systems, columns)}
    return out


def _ftr(rows: Mapping[str, Row], ids: Sequence[str]) -> float | None:
    return false_trigger_rate([rows[i]["has_demand"] for i in ids], [rows[i]["predicted_has_demand"] for i in ids])


def profile_rows(table: Mapping[str, Any], modality: str, dimension: str) -> list[dict[str, Any]]:
    """Flat rows (system x category) of one profile table for CSV."""
    return [
        {
            "modality": modality,
            "dimension": dimension,
            "system": row["system"],
            "category": col,
            "n": row["cells"][col]["n"],
            "value": row["cells"][col]["value"],
            "system_mean": row["base"],
            "delta": row["cells"][col]["delta"],
        }
        for row in table["rows"]
        for col in table["columns"]
    ]
