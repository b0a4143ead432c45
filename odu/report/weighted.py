"""The metric functions of :mod:`odu.core.metrics` over many weightings of the same scenes, for the
scene bootstrap of ``odu-bench report`` (App E.1); numpy lives here, not in the scoring core.

Over many weightings of the same scenes (``weights``: an ``(R, n)`` matrix of scene
multiplicities, one resample per row), each metric is a function of weighted sums of per-scene
columns: ``*_columns`` gives the ``(n, k)`` columns, ``*_from_sums`` the metric from their
``(R, k)`` sums (NaN where the scalar gives ``None``), and ``*_weighted`` chains the two. The
bootstrap stacks the columns of every metric and reads the weights once (one matrix product).
With ``weights = np.ones((1, n))`` they equal the scalar functions (tests/scoring/test_metrics.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..core.constants import METRIC_WEIGHTS


def macro_f1_columns(y_true: Sequence[bool], y_pred: Sequence[bool]) -> np.ndarray:
    """Indicators of both-positive, both-negative, false-positive and false-negative scenes."""
    t, p = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    return np.column_stack([t & p, ~t & ~p, ~t & p, t & ~p]).astype(float)


def macro_f1_from_sums(sums: np.ndarray) -> np.ndarray:
    """:func:`odu.core.metrics.macro_f1` (Eq. 1) from summed :func:`macro_f1_columns`; a class absent from labels
    and predictions is left out of the mean, as in the scalar function."""
    tp1, tp0, fp1, fn1 = np.moveaxis(np.asarray(sums, float), -1, 0)
    total, classes = np.zeros_like(tp1), np.zeros_like(tp1)
    for tp, fp, fn in ((tp0, fn1, fp1), (tp1, fp1, fn1)):  # class 0's FP are class 1's FN
        denom = 2 * tp + fp + fn
        total += np.divide(2 * tp, denom, out=np.zeros_like(denom), where=denom > 0)
        classes += denom > 0
    return np.divide(total, classes, out=np.full_like(total, np.nan), where=classes > 0)


def false_trigger_rate_columns(y_true: Sequence[bool], y_pred: Sequence[bool]) -> np.ndarray:
    """Indicators of no-demand scenes and of no-demand scenes predicted to carry a demand."""
    t, p = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    return np.column_stack([~t, ~t & p]).astype(float)


def false_trigger_rate_from_sums(sums: np.ndarray) -> np.ndarray:
    """:func:`odu.core.metrics.false_trigger_rate` (Eq. 1) from summed :func:`false_trigger_rate_columns`."""
    negatives, triggered = np.moveaxis(np.asarray(sums, float), -1, 0)
    return np.divide(triggered, negatives, out=np.full_like(negatives, np.nan), where=negatives > 0)


def mean_defined_columns(values: Sequence[float | None]) -> np.ndarray:
    """Definedness and value (0 where undefined) of each scene score."""
    v = np.array([np.nan if x is None else x for x in values], dtype=float)
    defined = ~np.isnan(v)
    return np.column_stack([defined, np.where(defined, v, 0.0)]).astype(float)


def mean_defined_from_sums(sums: np.ndarray) -> np.ndarray:
    """:func:`odu.core.metrics.mean_defined` (App A.4) from summed :func:`mean_defined_columns`."""
    count, total = np.moveaxis(np.asarray(sums, float), -1, 0)
    return np.divide(total, count, out=np.full_like(count, np.nan), where=count > 0)


def macro_f1_weighted(y_true: Sequence[bool], y_pred: Sequence[bool], weights: np.ndarray) -> np.ndarray:
    """:func:`odu.core.metrics.macro_f1` (Eq. 1) of every weighting of the same scenes."""
    return macro_f1_from_sums(np.atleast_2d(weights) @ macro_f1_columns(y_true, y_pred))


def false_trigger_rate_weighted(y_true: Sequence[bool], y_pred: Sequence[bool], weights: np.ndarray) -> np.ndarray:
    """:func:`odu.core.metrics.false_trigger_rate` (Eq. 1) of every weighting of the same scenes."""
    return false_trigger_rate_from_sums(np.atleast_2d(weights) @ false_trigger_rate_columns(y_true, y_pred))


def mean_defined_weighted(values: Sequence[float | None], weights: np.ndarray) -> np.ndarray:
    """:func:`odu.core.metrics.mean_defined` (App A.4) of every weighting; ``None`` values are undefined scenes."""
    return mean_defined_from_sums(np.atleast_2d(weights) @ mean_defined_columns(values))


def avg_weighted(metrics: Mapping[str, np.ndarray]) -> np.ndarray:
    """:func:`odu.core.metrics.avg` (Eq. 6) elementwise: NaN entries are unavailable dimensions."""
    stacked = np.stack([np.asarray(metrics[m], float) for m in METRIC_WEIGHTS])
    weights = np.array(list(METRIC_WEIGHTS.values()))[:, None] * ~np.isnan(stacked)
    norm = weights.sum(axis=0)
    return np.divide(
        (weights * np.nan_to_num(stacked)).sum(axis=0), norm, out=np.full_like(norm, np.nan), where=norm > 0
    )
