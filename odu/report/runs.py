"""Scored runs as report inputs: one system per ``odu-bench score`` output directory.

A system's display name is, in order: the ``--names`` entry, the run card's ``system`` or model
(``run_card.json`` next to ``summary.json``, :mod:`odu.harness.runcard`), the ``system`` field of
``summary.json``, and finally the directory name.

A run is reported only when its numbers can stand: its files are one run (:func:`odu.run.read_run`)
and nothing is missing from them (:func:`odu.run.incomplete`: judge errors, M2). Otherwise loading
it is refused, naming the run and why, unless the caller allows incomplete runs: the system then
carries the reasons, and the report marks its rows and shows no Avg for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..jsonio import read_json
from ..run import RUN_CARD_NAME, SCENES_FILE, incomplete, read_run

#: scenes.jsonl fields the report reads.
ROW_FIELDS: tuple[str, ...] = (
    "scene_id",
    "modality",
    "language",
    "source",
    "label",
    "axes",
    "has_demand",
    "predicted_has_demand",
    "s2",
    "s3",
    "s4",
    "s5",
    "key_points",
)

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class System:
    """One scored run: its display name, summary.json and scenes.jsonl rows, and what
    :func:`odu.run.read_run` found disagreeing among its files (``problems``)."""

    name: str
    summary: Mapping[str, Any]
    rows: Sequence[Row]
    problems: Sequence[str] = ()

    @property
    def approximate(self) -> bool:
        """True when M2 came from an approximate judge (e.g. the offline lexical judge)."""
        return bool(self.summary.get("judge", {}).get("approximate"))

    @property
    def incomplete(self) -> list[str]:
        """Why no Avg may rest on this run: its files disagree, judge errors remain, M2 is missing."""
        return [*self.problems, *incomplete(self.summary)]

    def rows_of(self, modality: str) -> list[Row]:
        return [r for r in self.rows if r["modality"] == modality]


def _card_name(run_dir: Path, summary: Mapping[str, Any]) -> str | None:
    """``system`` of the run card, else its model (``model_args.model`` / ``pretrained``, else the
    backend name; ``odu.harness.runcard`` layout), else ``system`` of summary.json."""
    card_path = run_dir / RUN_CARD_NAME
    if card_path.is_file():
        card = read_json(card_path)  # JsonFileError (a ValueError) names the file
        if isinstance(card, Mapping) and (name := card_system_name(card)):
            return name
    name = summary.get("system")
    return name if isinstance(name, str) and name else None


def card_system_name(card: Mapping[str, Any]) -> str | None:
    """A run card's ``system``, else its model (``model_args.model`` / ``pretrained``, else the
    backend name; ``odu.harness.runcard`` layout)."""
    model = card.get("model")
    if isinstance(model, Mapping):
        given = model.get("model_args")
        args = given if isinstance(given, Mapping) else {}
        model = args.get("model") or args.get("pretrained") or model.get("name")
    for name in (card.get("system"), model):
        if isinstance(name, str) and name:
            return name
    return None


def load_system(run_dir: str | Path, name: str | None = None, allow_incomplete: bool = False) -> System:
    """Read a scored run directory; ``ValueError`` names the directory and what is wrong with it,
    including an incomplete run (:attr:`System.incomplete`) unless ``allow_incomplete``."""
    run_dir = Path(run_dir)
    run = read_run(run_dir, strict=False)
    for n, row in enumerate(run.scenes, 1):
        missing = [k for k in ROW_FIELDS if k not in row]
        if missing:
            raise ValueError(f"{run_dir / SCENES_FILE}: line {n} lacks {', '.join(missing)}")
    ids = [r["scene_id"] for r in run.scenes]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{run_dir}: duplicate scene ids in {SCENES_FILE}")
    name = name or _card_name(run_dir, run.summary) or run_dir.resolve().name
    system = System(name, run.summary, run.scenes, tuple(run.problems))
    if system.incomplete and not allow_incomplete:
        raise ValueError(
            f"run {name} ({run_dir}) is not reported: {'; '.join(system.incomplete)}. No Avg may rest on it: "
            "score it again (--overwrite), or pass --allow-incomplete to show it marked, without Avg"
        )
    return system


def load_systems(
    run_dirs: Sequence[str | Path], names: Sequence[str] | None = None, allow_incomplete: bool = False
) -> list[System]:
    """Load several runs; names must be unique and, if given, one per run."""
    if names and len(names) != len(run_dirs):
        raise ValueError(f"--names gives {len(names)} name(s) for {len(run_dirs)} run(s)")
    systems = [load_system(d, names[i] if names else None, allow_incomplete) for i, d in enumerate(run_dirs)]
    seen = [s.name for s in systems]
    dupes = sorted({n for n in seen if seen.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate system name(s) {', '.join(dupes)}: pass --names")
    check_labels_agree(systems)
    return systems


def check_labels_agree(systems: Sequence[System]) -> None:
    """Runs compared scene by scene must share references: same modality and label per scene id."""
    seen: dict[str, tuple[str, str, str]] = {}
    for s in systems:
        for r in s.rows:
            key = (r["modality"], r["label"], s.name)
            first = seen.setdefault(r["scene_id"], key)
            if first[:2] != key[:2]:
                raise ValueError(
                    f"scene {r['scene_id']}: {first[2]} has {first[0]}/{first[1]} but {s.name} has {key[0]}/{key[1]}"
                )


def common_rows(
    systems: Sequence[System], modality: str, keep: Callable[[Row], bool]
) -> tuple[list[str], list[dict[str, Row]]]:
    """Scene ids (sorted) kept by ``keep`` in EVERY system, and each system's rows by id.

    This is the paper's common population ("scored by all systems", App E.1 / E.3).
    """
    per_system = [{r["scene_id"]: r for r in s.rows_of(modality) if keep(r)} for s in systems]
    ids = set(per_system[0]) if per_system else set()
    for rows in per_system[1:]:
        ids &= set(rows)
    return sorted(ids), per_system
