"""The run contract: what a scored run is, how it is summarised, and how it is stored.

A scored run is one :class:`SceneRow` per scene (``scenes.jsonl``) and a :class:`RunSummary`
(``summary.json``): per modality present, the dataset scores of :func:`summarize` (App A.3-A.4),
and run-wide counts and the judge's block. Every door that produces or reads runs uses this
module: ``odu-bench score`` (:func:`odu.scoring.score_scenes`), ``odu-bench eval`` (rows from
lm-eval's logged samples, plus inference errors), the lm-eval tasks (:func:`summarize` over a
task's rows) and ``odu-bench report`` (:func:`read_run`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

from .constants import MODALITIES
from .metrics import avg, false_trigger_rate, macro_f1, mean_defined

#: Files of a run directory: the summary, the scene rows, and (runs made through lm-eval) the run card.
SUMMARY_FILE = "summary.json"
SCENES_FILE = "scenes.jsonl"
RUN_CARD_NAME = "run_card.json"


class MatchRow(TypedDict):
    """One reference segment's match (:mod:`odu.match`)."""

    reference: int
    predictions: list[int]
    method: str
    iou: float
    similarity: float


class KeyPointRow(TypedDict):
    """One key point of a reference segment and its verdict (``hit`` None: undecided, see ``judge_error``)."""

    segment: int
    qid: str
    point: str
    source: str
    tiers: list[str]
    matched: bool
    hit: bool | None
    judge_error: str | None


class CandidateRow(TypedDict):
    """The candidate text sent to the judge for one matched reference segment (App A.5)."""

    segment: int
    text: str


class SceneRow(TypedDict):
    """One line of ``scenes.jsonl``: a scene's labels, its prediction's shape and its scene scores
    (``s2``..``s5``: None for negatives and scenes without reference segments)."""

    scene_id: str
    modality: str
    language: str
    source: str
    label: str
    axes: dict[str, str]
    negative_reason: str
    negative_signal: str
    has_demand: bool
    predicted_has_demand: bool
    parse_error: bool
    no_output: bool
    issues: list[str]
    s2: float | None
    s2_errors_as_misses: float | None
    s3: float | None
    s4: float | None
    s5: float | None
    matches: list[MatchRow]
    key_points: list[KeyPointRow]
    candidates: list[CandidateRow]


class EvalSceneRow(SceneRow, total=False):
    """A scene row of a run made through lm-eval (``odu-bench eval``): also the model's inference
    error, if any (the scene is then scored as no output)."""

    inference_error: str | None


class ModalitySummary(TypedDict, total=False):
    """The scores of one modality (App A.3-A.4; fractions, None where undefined), from :func:`summarize`."""

    n_scenes: int
    n_positive: int
    n_negative: int
    m1: float | None
    m2: float | None
    m3: float | None
    m4: float | None
    m5: float | None
    avg: float | None
    ftr: float | None
    m2_errors_as_misses: float | None
    avg_errors_as_misses: float | None
    judge_error_points: int
    parse_errors: int
    no_output: int
    inference_errors: int  # runs made through lm-eval only


#: ``summary.json``: a :class:`ModalitySummary` per modality present (``"audio-visual"``,
#: ``"audio-only"``), the judge's ``info()`` block, run-wide counts, the reference language; runs
#: made through lm-eval add ``inference_errors`` and per-task metrics (``tasks``).
RunSummary = TypedDict(
    "RunSummary",
    {
        "audio-visual": ModalitySummary,
        "audio-only": ModalitySummary,
        "judge": dict[str, Any],
        "parse_errors": int,
        "no_output": int,
        "inference_errors": int,
        "judge_errors": int,
        "annotation_language": str,
        "tasks": dict[str, dict[str, Any]],
    },
    total=False,
)


@dataclass(slots=True)
class ScoredRun:
    """``summary`` is summary.json; ``scenes`` are the scenes.jsonl rows, in input order."""

    summary: RunSummary
    scenes: list[SceneRow]


def _counts_inference(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Rows of runs made through lm-eval carry ``inference_error``."""
    return any("inference_error" in r for r in rows)


def summarize(rows: Sequence[Mapping[str, Any]]) -> ModalitySummary:
    """Dataset scores of one modality's scene rows (App A.3-A.4): a :class:`ModalitySummary`.

    Reads ``has_demand``, ``predicted_has_demand``, ``s2``..``s5``, ``s2_errors_as_misses``,
    ``parse_error``, ``no_output``, each key point's ``judge_error`` and, where the rows carry it,
    ``inference_error``: full :class:`SceneRow` s or the compact rows of the lm-eval tasks.
    """
    y_true = [r["has_demand"] for r in rows]
    y_pred = [r["predicted_has_demand"] for r in rows]
    metrics: dict[str, Any] = {
        "m1": macro_f1(y_true, y_pred),
        "m2": mean_defined(r["s2"] for r in rows),
        "m3": mean_defined(r["s3"] for r in rows),
        "m4": mean_defined(r["s4"] for r in rows),
        "m5": mean_defined(r["s5"] for r in rows),
    }
    lower = dict(metrics, m2=mean_defined(r["s2_errors_as_misses"] for r in rows))
    summary: dict[str, Any] = {
        "n_scenes": len(rows),
        "n_positive": sum(y_true),
        "n_negative": len(rows) - sum(y_true),
        **metrics,
        "avg": avg(metrics),
        "ftr": false_trigger_rate(y_true, y_pred),
        "m2_errors_as_misses": lower["m2"],
        "avg_errors_as_misses": avg(lower),
        "judge_error_points": sum(1 for r in rows for k in r["key_points"] if k["judge_error"] is not None),
        "parse_errors": sum(r["parse_error"] for r in rows),
        "no_output": sum(r["no_output"] for r in rows),
    }
    if _counts_inference(rows):
        summary["inference_errors"] = sum(bool(r["inference_error"]) for r in rows)
    return cast(ModalitySummary, summary)


def summarize_run(rows: Sequence[Mapping[str, Any]], judge: Mapping[str, Any], annotation_language: str) -> RunSummary:
    """``summary.json`` of a run's scene rows (a :class:`RunSummary`): :func:`summarize` per
    modality present, in reporting order, then the judge block and the run-wide counts."""
    summary: dict[str, Any] = {}
    for modality in MODALITIES:
        mine = [r for r in rows if r["modality"] == modality]
        if mine:
            summary[modality] = summarize(mine)
    summary |= {
        "judge": dict(judge),
        "parse_errors": sum(r["parse_error"] for r in rows),
        "no_output": sum(r["no_output"] for r in rows),
    }
    if _counts_inference(rows):
        summary["inference_errors"] = sum(bool(r["inference_error"]) for r in rows)
    summary |= {
        "judge_errors": sum(len({k["segment"] for k in r["key_points"] if k["judge_error"]}) for r in rows),
        "annotation_language": annotation_language,
    }
    return cast(RunSummary, summary)


def write_run(run: ScoredRun, out_dir: str | Path) -> Path:
    """Write ``summary.json`` and ``scenes.jsonl`` into ``out_dir`` (created if needed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY_FILE).write_text(json.dumps(run.summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with (out / SCENES_FILE).open("w", encoding="utf-8") as fh:
        for row in run.scenes:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return out


def read_run(run_dir: str | Path) -> ScoredRun:
    """Read back a run written by :func:`write_run`."""
    run_dir = Path(run_dir)
    summary = json.loads((run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    with (run_dir / SCENES_FILE).open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return ScoredRun(summary, rows)


__all__ = [
    "RUN_CARD_NAME",
    "SCENES_FILE",
    "SUMMARY_FILE",
    "CandidateRow",
    "EvalSceneRow",
    "KeyPointRow",
    "MatchRow",
    "ModalitySummary",
    "RunSummary",
    "ScoredRun",
    "SceneRow",
    "read_run",
    "summarize",
    "summarize_run",
    "write_run",
]
