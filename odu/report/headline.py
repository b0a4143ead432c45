"""Headline metrics with scene-bootstrap 95% intervals, and generated vs human-recorded (Table 4).

Intervals: per system and modality, the run's scenes are resampled with replacement (same draws
for every system scoring the same scene ids); in each resample M1 is recomputed from the drawn
labels, M2-M5 are equal-weight means over the drawn positives where the scene score is defined,
FTR over the drawn negatives, and Avg per Eq. 6 — the core's vectorised metric functions.
The point estimate is the full-sample value (``odu.runs.contract.summarize``, as in summary.json).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.constants import MODALITIES
from ..core.tables import TABLE3_COLUMNS
from ..runs.contract import summarize
from .bootstrap import SceneBootstrap, percentile_interval
from .numbers import difference, optional
from .runs import Row, System
from .weighted import (
    avg_weighted,
    false_trigger_rate_columns,
    false_trigger_rate_from_sums,
    macro_f1_columns,
    macro_f1_from_sums,
    mean_defined_columns,
    mean_defined_from_sums,
)

GENERATED, RECORDED = "generated", "human-recorded"


def metric_columns(rows: Sequence[Row]) -> dict[str, np.ndarray]:
    """Per-scene columns of every Table 3 metric but Avg (App A.3-A.4), from scenes.jsonl rows."""
    y_true = [r["has_demand"] for r in rows]
    y_pred = [r["predicted_has_demand"] for r in rows]
    columns = {"m1": macro_f1_columns(y_true, y_pred)}
    for m in ("m2", "m3", "m4", "m5"):
        columns[m] = mean_defined_columns([r[f"s{m[1]}"] for r in rows])
    columns["ftr"] = false_trigger_rate_columns(y_true, y_pred)
    return columns


def metrics_from_sums(columns: dict[str, np.ndarray], sums: np.ndarray) -> dict[str, np.ndarray]:
    """Split the ``(R, k)`` sums of the stacked ``columns`` back per metric and finish each one."""
    parts, start = {}, 0
    for name, cols in columns.items():
        parts[name] = sums[:, start : start + cols.shape[1]]
        start += cols.shape[1]
    out = {"m1": macro_f1_from_sums(parts["m1"])}
    out |= {m: mean_defined_from_sums(parts[m]) for m in ("m2", "m3", "m4", "m5")}
    out["avg"] = avg_weighted(out)
    out["ftr"] = false_trigger_rate_from_sums(parts["ftr"])
    return {m: out[m] for m in TABLE3_COLUMNS}


def metrics_weighted(rows: Sequence[Row], weights: np.ndarray) -> dict[str, np.ndarray]:
    """M1-M5, Avg and FTR of ``rows`` under each row of ``weights`` (scene multiplicities)."""
    columns = metric_columns(rows)
    return metrics_from_sums(columns, np.atleast_2d(weights) @ np.hstack(list(columns.values())))


def bootstrap_metrics(rows: Sequence[Row], boot: SceneBootstrap) -> dict[str, np.ndarray]:
    """Every Table 3 metric for every resample of ``boot`` (rows in the bootstrap's scene order);
    all metrics' columns are stacked so each block of draws is read once."""
    columns = metric_columns(rows)
    return metrics_from_sums(columns, boot.weighted_sums(np.hstack(list(columns.values()))))


def headline(systems: Sequence[System], resamples: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Per modality, per system: n, point estimate and 95% interval of Avg, M1-M5, FTR."""
    out: dict[str, list[dict[str, Any]]] = {}
    for modality in MODALITIES:
        entries = []
        for system in systems:
            rows = system.rows_of(modality)
            if not rows:
                continue
            point = summarize(rows)  # in run order: bit-identical to summary.json
            rows = sorted(rows, key=lambda r: r["scene_id"])  # bootstrap order: same draws per scene set
            boot = SceneBootstrap(len(rows), resamples, seed, population=f"headline/{modality}")
            interval = percentile_interval(np.column_stack(list(bootstrap_metrics(rows, boot).values())))
            metrics = {
                m: {"value": point[m], "ci": [optional(interval[0, i]), optional(interval[1, i])]}
                for i, m in enumerate(TABLE3_COLUMNS)
            }
            if system.incomplete:  # no Avg rests on an incomplete run
                metrics["avg"] = {"value": None, "ci": [None, None]}
            entries.append(
                {
                    "system": system.name,
                    "approximate": system.approximate,
                    "incomplete": bool(system.incomplete),
                    "n_scenes": point["n_scenes"],
                    "n_positive": point["n_positive"],
                    "n_negative": point["n_negative"],
                    "metrics": metrics,
                }
            )
        if entries:
            out[modality] = entries
    return out


def source_deltas(systems: Sequence[System]) -> list[dict[str, Any]]:
    """Table 4: per system, modality and language holding both sources, metrics on generated and
    on human-recorded scenes and the difference (recorded - generated)."""
    out = []
    for system in systems:
        for modality in MODALITIES:
            rows = system.rows_of(modality)
            for language in sorted({r["language"] for r in rows}):
                by_source = {
                    s: [r for r in rows if r["language"] == language and r["source"] == s]
                    for s in (GENERATED, RECORDED)
                }
                if not all(by_source.values()):
                    continue
                gen, rec = summarize(by_source[GENERATED]), summarize(by_source[RECORDED])
                if system.incomplete:  # no Avg rests on an incomplete run
                    gen["avg"] = rec["avg"] = None
                out.append(
                    {
                        "system": system.name,
                        "modality": modality,
                        "language": language,
                        "n_generated": gen["n_scenes"],
                        "n_recorded": rec["n_scenes"],
                        "metrics": {
                            m: {GENERATED: gen[m], RECORDED: rec[m], "delta": difference(rec[m], gen[m])}
                            for m in TABLE3_COLUMNS
                        },
                    }
                )
    return out
