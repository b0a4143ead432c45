"""Reference-language shift of M2: the zh scenes scored against their zh reference, then against
their en reference — same outputs, same judge, same matching — and the difference.

Each scene carries an en and a zh annotation; by default a zh scene is scored against its zh one
(``--annotation-language scene``). The paper does not say which its Table 3 used, and its App E.1
analysis compares against English reference points, so this measures how much the choice moves M2
(App A.3 Eq. 2) for a given system and judge (docs/judges.md "What comparability with Table 3
rests on").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..core.constants import MODALITIES
from ..core.schema import Scene, SchemaError
from ..core.tables import percent, render
from ..judge.base import Judge
from ..runs.scoring import Output, score_scenes

#: The scenes whose reference language is in question, and the two references compared.
SHIFTED_LANGUAGE, NATIVE_REFERENCE, SHIFTED_REFERENCE = "zh", "zh", "en"


def shifted_scenes(scenes: Sequence[Scene], modality: str | None = None) -> list[Scene]:
    """The zh scenes (of ``modality``, if given); :class:`SchemaError` naming a scene that lacks
    one of the two references."""
    chosen = [s for s in scenes if s.language == SHIFTED_LANGUAGE and (modality is None or s.modality == modality)]
    for scene in chosen:
        for language in (NATIVE_REFERENCE, SHIFTED_REFERENCE):
            scene.annotation(language)  # raises SchemaError naming the scene and the missing block
    if not chosen:
        raise SchemaError(f"no {SHIFTED_LANGUAGE} scenes{f' of modality {modality}' if modality else ''} to shift")
    return chosen


def reference_shift(
    outputs: Mapping[str, Mapping[str, Output]],
    scenes: Sequence[Scene],
    judges: Mapping[str, Judge],
    modality: str | None = None,
) -> dict[str, Any]:
    """M2 of each system (name -> outputs by scene id) and judge (label -> judge) on the zh scenes,
    against the zh and against the en reference, per modality, and ``shift`` = en − zh (fractions;
    ``None`` where undefined). Outputs of other scenes are ignored; a zh scene without an output is
    scored as no output, as ``odu-bench score`` does."""
    chosen = shifted_scenes(scenes, modality)
    ids = {s.scene_id for s in chosen}
    present = [m for m in MODALITIES if any(s.modality == m for s in chosen)]
    systems: dict[str, dict[str, dict[str, Any]]] = {}
    for system, by_id in outputs.items():
        mine = {sid: out for sid, out in by_id.items() if sid in ids}
        systems[system] = {}
        for label, judge in judges.items():
            native, shifted = (
                cast(Mapping[str, Any], score_scenes(chosen, mine, judge, lang).summary)
                for lang in (NATIVE_REFERENCE, SHIFTED_REFERENCE)
            )
            systems[system][label] = {m: _shift(native[m], shifted[m]) for m in present}
    return {
        "population": {
            "language": SHIFTED_LANGUAGE,
            "modality": modality or "all",
            "scenes": {m: sum(s.modality == m for s in chosen) for m in present},
            "demand_scenes": {m: sum(s.modality == m and s.is_positive for s in chosen) for m in present},
        },
        "references": [NATIVE_REFERENCE, SHIFTED_REFERENCE],
        "judges": {label: judge.info() for label, judge in judges.items()},
        "systems": systems,
    }


def _shift(native: Mapping[str, Any], shifted: Mapping[str, Any]) -> dict[str, Any]:
    zh, en = native["m2"], shifted["m2"]
    return {
        "m2": {NATIVE_REFERENCE: zh, SHIFTED_REFERENCE: en},
        "shift": None if zh is None or en is None else en - zh,
        "judge_error_points": {
            NATIVE_REFERENCE: native["judge_error_points"],
            SHIFTED_REFERENCE: shifted["judge_error_points"],
        },
    }


def judge_error_points(result: Mapping[str, Any]) -> int:
    """Key points no judge decided, over every system, judge, modality and reference."""
    return sum(
        n
        for judges in result["systems"].values()
        for modalities in judges.values()
        for cell in modalities.values()
        for n in cell["judge_error_points"].values()
    )


def shift_table(result: Mapping[str, Any]) -> str:
    """The result as a text table: M2 (%) against each reference and the shift in points."""
    header = [
        "System",
        "Judge",
        "Modality",
        "zh scenes (demand)",
        f"M2 {NATIVE_REFERENCE} ref",
        f"M2 {SHIFTED_REFERENCE} ref",
        "shift (pp)",
    ]
    population = result["population"]
    rows = [
        [
            system,
            label,
            modality,
            f"{population['scenes'][modality]} ({population['demand_scenes'][modality]})",
            percent(cell["m2"][NATIVE_REFERENCE]),
            percent(cell["m2"][SHIFTED_REFERENCE]),
            "-" if cell["shift"] is None else f"{100 * cell['shift']:+.1f}",
        ]
        for system, judges in result["systems"].items()
        for label, modalities in judges.items()
        for modality, cell in modalities.items()
    ]
    title = (
        f"M2 of the {SHIFTED_LANGUAGE} scenes against their {NATIVE_REFERENCE} and their {SHIFTED_REFERENCE} "
        "reference (same outputs, same judge, same matching):"
    )
    return title + "\n" + render(header, rows)
