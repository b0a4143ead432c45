"""Headline metrics with scene-bootstrap 95% intervals, and generated vs human-recorded (Table 4).

Intervals: per system and modality, the run's scenes are resampled with replacement (same draws
for every system scoring the same scene ids); in each resample M1 is recomputed from the drawn
labels, M2-M5 are equal-weight means over the drawn positives where the scene score is defined,
FTR over the drawn negatives, and Avg per Eq. 6 — the core's vectorised metric functions.
The point estimate is the full-sample value (``odu.scoring.summarize``, as in summary.json).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..constants import MODALITIES
from ..metrics import avg_weighted, false_trigger_rate_weighted, macro_f1_weighted, mean_defined_weighted
from ..scoring import summarize
from ..tables import TABLE3_COLUMNS
from .bootstrap import SceneBootstrap, percentile_interval
from .numbers import difference, optional
from .runs import Row, System

GENERATED, RECORDED = "generated", "human-recorded"


def metrics_weighted(rows: Sequence[Row], weights: np.ndarray) -> dict[str, np.ndarray]:
    """M1-M5, Avg and FTR of ``rows`` under each row of ``weights`` (scene multiplicities)."""
    y_true = [r["has_demand"] for r in rows]
    y_pred = [r["predicted_has_demand"] for r in rows]
    out = {"m1": macro_f1_weighted(y_true, y_pred, weights)}
    for m in ("m2", "m3", "m4", "m5"):
        out[m] = mean_defined_weighted([r[f"s{m[1]}"] for r in rows], weights)
    out["avg"] = avg_weighted(out)
    out["ftr"] = false_trigger_rate_weighted(y_true, y_pred, weights)
    return out


def bootstrap_metrics(rows: Sequence[Row], boot: SceneBootstrap) -> dict[str, np.ndarray]:
    """Every Table 3 metric for every resample of ``boot`` (rows in the bootstrap's scene order)."""
    blocks = [metrics_weighted(rows, w) for w in boot.blocks()]
    return {m: np.concatenate([b[m] for b in blocks]) for m in TABLE3_COLUMNS}


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
            entries.append({
                "system": system.name,
                "approximate": system.approximate,
                "n_scenes": point["n_scenes"], "n_positive": point["n_positive"], "n_negative": point["n_negative"],
                "metrics": {
                    m: {"value": point[m], "ci": [optional(interval[0, i]), optional(interval[1, i])]}
                    for i, m in enumerate(TABLE3_COLUMNS)
                },
            })
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
                by_source = {s: [r for r in rows if r["language"] == language and r["source"] == s]
                             for s in (GENERATED, RECORDED)}
                if not all(by_source.values()):
                    continue
                gen, rec = summarize(by_source[GENERATED]), summarize(by_source[RECORDED])
                out.append({
                    "system": system.name, "modality": modality, "language": language,
                    "n_generated": gen["n_scenes"], "n_recorded": rec["n_scenes"],
                    "metrics": {m: {GENERATED: gen[m], RECORDED: rec[m], "delta": difference(rec[m], gen[m])}
                                for m in TABLE3_COLUMNS},
                })
    return out


