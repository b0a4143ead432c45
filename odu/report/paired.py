"""Paired comparisons of systems on the same scenes: is a gap between two systems real?

For each pair of systems (in the order given; the difference is the earlier minus the later) and
each modality, on the scenes both runs scored (their common scene ids):

* **difference**: each Table 3 metric (Avg, M1-M5, FTR; App A.3-A.4) of the first system minus
  the second's, both computed on the common scenes (:func:`odu.runs.contract.summarize`);
* **paired bootstrap interval** (App E.1's scene bootstrap, shared by both systems): in each of
  the resamples of the common scenes, both systems' metrics are recomputed on the SAME drawn
  scenes and differenced; the 2.5th and 97.5th percentiles form the 95% interval. The draws are
  those of the headline intervals (population ``headline/<modality>``): a run that holds exactly
  the common scenes sees the very draws of its own headline interval;
* **paired permutation p-value** (two-sided): under the null hypothesis that the two systems are
  exchangeable, each scene's pair of outputs is swapped with probability 1/2; the p-value is
  ``(1 + #{|d*| >= |d|}) / (1 + #permutations)`` over as many random relabellings as resamples
  (Phipson & Smyth 2010, "Permutation P-values should never be zero"), ``d`` the observed
  difference and ``d*`` each relabelling's. Differences within :data:`PERMUTATION_TIE_TOLERANCE`
  of ``|d|`` count as ties (extreme), so that float noise never decides;
* **clustering** (``cluster_by``, optional): scenes sharing a value of a scene attribute
  (``source``, ``language``, ``axes.axis1``, ...) are resampled and relabelled together (a cluster
  bootstrap and a cluster permutation), for dependence within such groups;
* **warnings**: runs that do not hold the same scenes (compared on the common ones only, whose
  numbers then differ from each run's summary.json), too few scenes behind a metric
  (:data:`PAIRED_MIN_SCENES`), too few clusters (:data:`PAIRED_MIN_CLUSTERS`).

Every statistic of every resample and relabelling is a function of weighted sums of the per-scene
columns of :mod:`odu.report.headline` (one matrix product per block of draws for all systems and
pairs sharing the same scenes); ``tests/report/test_paired.py`` checks the results equal a naive
per-resample loop over the same draws. The later system's sums are the earlier's plus the sums of
their difference columns, so a metric whose columns the two systems share (a system against its
copy; two judges of the same outputs, for M1 and M3-M5) differs by exactly 0 in every resample:
summed separately, equal columns can differ in the last bit (a matrix product's summation order
depends on a column's position), and an interval of ``[0.0, 9.85e-17]`` would reach the files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from ..core.constants import MODALITIES
from ..core.tables import TABLE3_COLUMNS
from ..runs.contract import summarize
from .bootstrap import BOOTSTRAP_PERCENTILES, SceneBootstrap, SceneSwaps, cluster_codes, percentile_interval
from .headline import metric_columns, metrics_from_sums
from .numbers import difference, optional
from .runs import Row, System

#: Our choice: a paired comparison, or one of its metrics, resting on fewer scenes than this is
#: flagged (percentile intervals under-cover and p-values are coarse on small samples).
PAIRED_MIN_SCENES = 30
#: Our choice: a clustered comparison with fewer clusters than this is flagged (a cluster
#: bootstrap or permutation over few clusters has few distinct draws).
PAIRED_MIN_CLUSTERS = 20
#: Our choice: relabelled differences within this of the observed one (in fractions) are ties.
PERMUTATION_TIE_TOLERANCE = 1e-9

#: The scene score behind each metric (``None``: every scene counts; FTR: the negatives).
_SCENE_SCORE = {"m2": "s2", "m3": "s3", "m4": "s4", "m5": "s5"}


def attribute(row: Row, name: str) -> Any:
    """A scene attribute of a scenes.jsonl row by name; dots reach into mappings (``axes.axis1``).
    :class:`ValueError` names an attribute the row lacks."""
    value: Any = row
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise ValueError(f"--cluster-by {name}: scene {row.get('scene_id')} has no such attribute")
        value = value[part]
    return value


def metric_scene_counts(rows_a: Sequence[Row], rows_b: Sequence[Row]) -> dict[str, int]:
    """Per metric, how many scenes it rests on in both systems: every scene for Avg and M1, the
    scenes whose scene score is defined in both for M2-M5, the no-demand scenes for FTR."""
    counts = {"avg": len(rows_a), "m1": len(rows_a), "ftr": sum(1 for r in rows_a if not r["has_demand"])}
    for metric, score in _SCENE_SCORE.items():
        counts[metric] = sum(1 for a, b in zip(rows_a, rows_b) if a[score] is not None and b[score] is not None)
    return {m: counts[m] for m in TABLE3_COLUMNS}


def permutation_p_values(observed: np.ndarray, relabelled: np.ndarray) -> np.ndarray:
    """Two-sided p-values ``(1 + #{|d*| >= |d| - tol}) / (1 + #defined d*)`` per column of
    ``relabelled`` ``(P, k)``; NaN where ``observed`` is undefined. Undefined relabellings (NaN)
    are left out of both counts.

    >>> permutation_p_values(np.array([0.5]), np.array([[0.5], [-0.5], [0.1], [np.nan]])).tolist()
    [0.75]
    """
    observed = np.asarray(observed, dtype=np.float64)
    defined = ~np.isnan(relabelled)
    extreme = defined & (np.abs(np.nan_to_num(relabelled)) >= np.abs(observed) - PERMUTATION_TIE_TOLERANCE)
    p = (1 + extreme.sum(axis=0)) / (1 + defined.sum(axis=0))
    return np.where(np.isnan(observed), np.nan, p)


#: The per-metric column widths of :func:`odu.report.headline.metric_columns` (only their shapes matter).
_WIDTHS = metric_columns([{"has_demand": True, "predicted_has_demand": True, "s2": 1, "s3": 1, "s4": 1, "s5": 1}])


def _columns(rows: Sequence[Row]) -> np.ndarray:
    return np.hstack(list(metric_columns(rows).values()))


def _finish(sums: np.ndarray) -> np.ndarray:
    """``(R, 7)`` Table 3 metrics (TABLE3_COLUMNS order) from ``(R, k)`` summed columns."""
    return np.column_stack(list(metrics_from_sums(_WIDTHS, sums).values()))


def _clusters(rows: Sequence[Row], cluster_by: str | None) -> tuple[np.ndarray | None, list[str]]:
    if cluster_by is None:
        return None, []
    return cluster_codes([attribute(r, cluster_by) for r in rows])


def _warnings(
    pair: tuple[System, System], only: tuple[int, int], counts: Mapping[str, int], n_clusters: int | None
) -> list[str]:
    a, b = pair
    out = []
    if any(only):
        out.append(
            f"unequal scenes: {a.name} has {only[0]} scene(s) {b.name} lacks and {b.name} has {only[1]} "
            f"{a.name} lacks; compared on the {counts['m1']} common scene(s) only, where each system's "
            "numbers differ from its summary.json"
        )
    small = [
        f"{m.upper() if m != 'avg' else 'Avg'} ({counts[m]})" for m in TABLE3_COLUMNS if counts[m] < PAIRED_MIN_SCENES
    ]
    if small:
        out.append(
            f"small sample: fewer than {PAIRED_MIN_SCENES} scenes behind {', '.join(small)}: the interval and "
            "p-value are rough (percentile intervals under-cover on small samples)"
        )
    if n_clusters is not None and n_clusters < PAIRED_MIN_CLUSTERS:
        out.append(
            f"few clusters: {n_clusters} cluster(s) (fewer than {PAIRED_MIN_CLUSTERS}): the clustered interval "
            "and p-value have few distinct draws"
        )
    return out


def _group(
    systems: Sequence[System],
    modality: str,
    ids: Sequence[str],
    pairs: Sequence[tuple[int, int]],
    settings: Mapping[str, Any],
) -> dict[tuple[int, int], dict[str, Any]]:
    """The comparisons of ``pairs`` (indices into ``systems``) that share the common scenes ``ids``:
    every system's columns read by one pass over the bootstrap draws, every pair's by one pass
    over the relabellings."""
    by_id = {i: {r["scene_id"]: r for r in systems[i].rows_of(modality)} for pair in pairs for i in pair}
    rows = {i: [by_id[i][sid] for sid in ids] for i in by_id}
    first = rows[pairs[0][0]]
    clusters, names = _clusters(first, settings["cluster_by"])
    suffix = "" if clusters is None else f"/clusters:{settings['cluster_by']}"
    columns = {i: _columns(rows[i]) for i in rows}
    k = next(iter(columns.values())).shape[1]
    firsts = sorted({a for a, _ in pairs})
    differences = np.hstack([columns[b] - columns[a] for a, b in pairs])
    boot = SceneBootstrap(len(ids), settings["resamples"], settings["seed"], f"headline/{modality}{suffix}", clusters)
    sums = boot.weighted_sums(np.hstack([*(columns[a] for a in firsts), differences]))
    first_sums = {a: sums[:, n * k : (n + 1) * k] for n, a in enumerate(firsts)}
    difference_sums = sums[:, len(firsts) * k :]
    swaps = SceneSwaps(
        len(ids), settings["resamples"], settings["seed"], f"paired-permutation/{modality}{suffix}", clusters
    )
    swapped = swaps.weighted_sums(differences)
    out = {}
    for n, (a, b) in enumerate(pairs):
        totals_a, totals_b = columns[a].sum(axis=0), columns[b].sum(axis=0)
        shift = swapped[:, n * k : (n + 1) * k]
        relabelled = _finish(totals_a + shift) - _finish(totals_b - shift)
        observed = (_finish(totals_a[None]) - _finish(totals_b[None]))[0]
        p_values = permutation_p_values(observed, relabelled)
        # b's sums as a's plus the sums of b - a: where the two systems' columns agree, the difference
        # sums to exactly 0 and both metrics are the same float (BLAS sums each column its own way)
        resampled_a = _finish(first_sums[a])
        resampled_b = _finish(first_sums[a] + difference_sums[:, n * k : (n + 1) * k])
        interval = percentile_interval(resampled_a - resampled_b, settings["percentiles"])
        point_a, point_b = summarize(rows[a]), summarize(rows[b])
        counts = metric_scene_counts(rows[a], rows[b])
        no_avg = bool(systems[a].incomplete or systems[b].incomplete)  # no Avg rests on an incomplete run
        metrics = {}
        for j, m in enumerate(TABLE3_COLUMNS):
            hidden = no_avg and m == "avg"
            metrics[m] = {
                "a": None if hidden else point_a[m],
                "b": None if hidden else point_b[m],
                "difference": None if hidden else difference(point_a[m], point_b[m]),
                "ci": [None, None] if hidden else [optional(interval[0, j]), optional(interval[1, j])],
                "p_value": None if hidden else optional(p_values[j]),
                "n": counts[m],
            }
        out[(a, b)] = {
            "n_scenes": len(ids),
            "clusters": None if clusters is None else {"by": settings["cluster_by"], "n": len(names)},
            "metrics": metrics,
            "counts": counts,
        }
    return out


def paired_comparisons(
    systems: Sequence[System], resamples: int, seed: int, cluster_by: str | None = None
) -> dict[str, Any]:
    """Every pair of ``systems`` compared per modality (module docstring), as a JSON-ready dict:
    ``settings`` and ``comparisons`` (one per pair and modality present in both; fractions,
    ``None`` = undefined)."""
    settings = {
        "resamples": resamples,
        "permutations": resamples,
        "seed": seed,
        "percentiles": list(BOOTSTRAP_PERCENTILES),
        "cluster_by": cluster_by,
        "min_scenes": PAIRED_MIN_SCENES,
        "min_clusters": PAIRED_MIN_CLUSTERS,
    }
    comparisons = []
    for modality in MODALITIES:
        scene_sets = [{r["scene_id"] for r in s.rows_of(modality)} for s in systems]
        groups: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        for a, b in combinations(range(len(systems)), 2):
            if scene_sets[a] and scene_sets[b]:
                groups.setdefault(tuple(sorted(scene_sets[a] & scene_sets[b])), []).append((a, b))
        done: dict[tuple[int, int], dict[str, Any]] = {}
        for ids, pairs in groups.items():
            if ids:
                done |= _group(systems, modality, ids, pairs, settings)
        for a, b in combinations(range(len(systems)), 2):
            if not (scene_sets[a] and scene_sets[b]):
                continue
            only = (len(scene_sets[a] - scene_sets[b]), len(scene_sets[b] - scene_sets[a]))
            result = done.get((a, b))
            entry: dict[str, Any] = {"a": systems[a].name, "b": systems[b].name, "modality": modality}
            if result is None:
                entry |= {"n_scenes": 0, "only_a": only[0], "only_b": only[1], "clusters": None, "metrics": {}}
                entry["warnings"] = [
                    f"no common scenes: {systems[a].name} and {systems[b].name} scored different scenes"
                ]
            else:
                n_clusters = result["clusters"]["n"] if result["clusters"] else None
                entry |= {"n_scenes": result["n_scenes"], "only_a": only[0], "only_b": only[1]}
                entry |= {"clusters": result["clusters"], "metrics": result["metrics"]}
                entry["warnings"] = _warnings((systems[a], systems[b]), only, result["counts"], n_clusters)
            comparisons.append(entry)
    return {"settings": settings, "comparisons": comparisons}
