"""What the viewer reads: scored runs with their raw outputs, and the dataset's records and media.

This module is the viewer's only door onto the run contract (``odu.runs.contract``), the scoring core and the
data wing (``odu.data``): when those modules move, the imports below are the ones to change.

Runs: an ``odu-bench score`` / ``odu-bench eval`` directory (``summary.json`` + ``scenes.jsonl``,
raw outputs from ``predictions.jsonl`` when present) or an lm-eval harness output folder
(``samples_<task>_<timestamp>.jsonl``: scene rows and raw outputs of the newest timestamp).
Datasets: a prepared directory or Hub repo (``odu-bench prepare`` / ``download``: records + media
bytes), or a raw release (records file or folder; media read from each clip's ``src`` when the
files are there, else annotations only).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...core.match import merge_segments, pred_order_key
from ...core.parse import parse_output
from ...core.schema import Scene, SchemaError, read_json_records, read_predictions, scene_from_dict
from ...core.text import edit_count, is_cjk_dominant, normalize, units
from ...data.dataset import DEFAULT_CONFIG, USER, row_to_record, rows_without_media
from ...data.hub import load_split
from ...data.media import MediaError, probe, read_media
from ...data.prepare import CARD_NAME, DATA_DIR, check_dataset
from ...data.release import MediaPathError, find_records, media_path
from ...data.sample import sample_dataset_dir
from ...runs.contract import PREDICTIONS_FILE, RUN_CARD_NAME
from ..runs import (
    System,
    check_labels_agree,
    harness_folder,
    harness_system,
    load_system,
    read_harness_run,
    read_object,
)

#: Names the rest of the viewer takes from here (its one import site of the scoring core and data wing).
__all__ = [
    "ClipSource",
    "DatasetScenes",
    "MediaError",
    "Run",
    "edit_count",
    "is_cjk_dominant",
    "load_dataset_scenes",
    "load_runs",
    "merge_segments",
    "normalize",
    "parse_output",
    "pred_order_key",
    "probe",
    "Scene",
    "SchemaError",
    "scene_from_dict",
    "units",
]


@dataclass(frozen=True, slots=True)
class Run:
    """One system: its scored rows (``system``), raw outputs by scene id (None: the run has none),
    the run card's pitfalls, and where it was read from."""

    system: System
    outputs: Mapping[str, str | None] | None
    pitfalls: Sequence[str]
    source: str

    @property
    def annotation_language(self) -> str:
        return str(self.system.summary.get("annotation_language") or "scene")


def _pitfalls(card: Mapping[str, Any]) -> list[str]:
    return [str(p) for p in card.get("pitfalls") or []]


def _scored_run(run_dir: Path, name: str | None, predictions: str | Path | None) -> Run:
    # incomplete runs are shown (judge errors flagged scene by scene, disagreeing files in the notes)
    system = load_system(run_dir, name, allow_incomplete=True)
    path = Path(predictions) if predictions else run_dir / PREDICTIONS_FILE
    outputs = read_predictions(path) if predictions or path.is_file() else None
    return Run(system, outputs, _pitfalls(read_object(run_dir / RUN_CARD_NAME)), str(run_dir))


def _harness_run(run_dir: Path, name: str | None) -> Run:
    """The newest lm-eval run in ``run_dir`` (:func:`odu.report.runs.read_harness_run`)."""
    harness = read_harness_run(run_dir)
    system = harness_system(run_dir, harness, name)
    return Run(system, harness.outputs, _pitfalls(harness.card), f"{run_dir} (lm-eval samples of {harness.stamp})")


def load_run(run_dir: str | Path, name: str | None = None, predictions: str | Path | None = None) -> Run:
    """A scored run directory (score / eval) or an lm-eval output folder; ``ValueError`` names it."""
    run_dir = Path(run_dir)
    if (folder := harness_folder(run_dir)) is not None:
        if predictions:
            raise ValueError(f"{run_dir}: an lm-eval folder holds its raw outputs; drop its --predictions entry")
        return _harness_run(folder, name)
    try:
        return _scored_run(run_dir, name, predictions)
    except SchemaError as exc:
        raise ValueError(str(exc)) from None


def load_runs(
    run_dirs: Sequence[str | Path], names: Sequence[str] | None = None, predictions: Sequence[str | None] | None = None
) -> list[Run]:
    """Several runs; names (if given) and prediction files (if given, ``-`` for none) one per run."""
    for option, values in (("--names", names), ("--predictions", predictions)):
        if values and len(values) != len(run_dirs):
            raise ValueError(f"{option} gives {len(values)} value(s) for {len(run_dirs)} run(s)")
    runs = [
        load_run(
            d,
            names[i] if names else None,
            predictions[i] if predictions and predictions[i] not in (None, "-") else None,
        )
        for i, d in enumerate(run_dirs)
    ]
    seen = [r.system.name for r in runs]
    dupes = sorted({n for n in seen if seen.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate system name(s) {', '.join(dupes)}: pass --names")
    check_labels_agree([r.system for r in runs])
    return runs


# --- the dataset ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClipSource:
    """One clip of a dataset scene; ``read`` returns its encoded media (None: no media here)."""

    clip_id: str
    src: str
    read: Callable[[], bytes] | None


@dataclass(slots=True)
class DatasetScenes:
    """Release records by scene id, each scene's clips, and problems met while reading."""

    source: str
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    clips: dict[str, list[ClipSource]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def has_media(self) -> bool:
        return any(c.read is not None for clips in self.clips.values() for c in clips)


def _prepared(source: str, label: str | None = None) -> DatasetScenes:
    """A prepared dataset (directory or Hub repo): records from the rows, media bytes on demand."""
    check_dataset(source)
    ds = load_split(source, DEFAULT_CONFIG)  # its card may not point outside the folder

    @lru_cache(maxsize=1)
    def user_media(index: int) -> list[bytes | None]:
        return [(t["media"] or {}).get("bytes") for t in ds[index]["turns"] if t["role"] == USER]

    def reader(index: int, clip: int) -> Callable[[], bytes]:
        return lambda: user_media(index)[clip] or b""

    out = DatasetScenes(label or source)
    for i, row in enumerate(rows_without_media(ds)):
        record = row_to_record(row)
        out.records[record["scene_id"]] = record
        out.clips[record["scene_id"]] = [
            ClipSource(c["id"], c["src"], reader(i, k)) for k, c in enumerate(record["clips"])
        ]
    return out


def _release(path: Path) -> DatasetScenes:
    """A raw release: records that follow the schema (others become problems); media from the
    clips' files when the release has any of them, else annotations only."""
    records_path = find_records(path)
    out = DatasetScenes(str(records_path))
    paths: dict[str, list[Path]] = {}
    for index, record in enumerate(read_json_records(records_path)):
        try:
            scene = scene_from_dict(record, index)
        except SchemaError as exc:
            out.problems.append(f"{records_path}: {exc}")
            continue
        try:
            paths[scene.scene_id] = [media_path(records_path.parent, c.src) for c in scene.clips]
        except MediaPathError as exc:
            out.problems.append(f"{records_path}: scene {scene.scene_id}: {exc}")
            continue
        out.records[scene.scene_id] = dict(record)
    with_media = any(p.is_file() for ps in paths.values() for p in ps)
    for sid, record in out.records.items():
        out.clips[sid] = [
            ClipSource(c["id"], c["src"], functools.partial(read_media, p) if with_media else None)
            for c, p in zip(record["clips"], paths[sid])
        ]
    return out


def load_dataset_scenes(source: str | None, sample: bool = False) -> DatasetScenes:
    """``--sample`` (the bundled sample, prepared), a prepared directory, a Hub repo, or a raw release."""
    if sample:
        return _prepared(str(sample_dataset_dir()), "the bundled sample")
    if not source:
        raise ValueError("give the dataset: --dataset DIR|REPO or --sample")
    path = Path(source)
    if path.is_dir() and (path / CARD_NAME).is_file() and (path / DATA_DIR).is_dir():
        return _prepared(source)
    if path.exists():
        try:
            return _release(path)
        except (FileNotFoundError, SchemaError) as exc:
            raise ValueError(f"dataset {source}: {exc}") from None
    return _prepared(source)  # a Hub repo id (check_dataset names a mistyped path)
