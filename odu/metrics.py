"""Scene scores s2-s5 and dataset scores M1-M5, FTR and Avg (App A.3-A.4, Eqs. 1-6).

Pure functions over plain numbers, so that the scorer, the ``evaluate`` metric and the bootstrap
reports share one implementation. ``None`` means "undefined" (e.g. M2 of a set with no positive
scene) and is left out of means and of Avg, as Eq. 6 prescribes for unavailable dimensions.

>>> macro_f1([True, True, False, False], [True, False, False, False])
0.7333333333333334
>>> avg({"m1": 0.5, "m2": 0.5, "m3": None, "m4": 0.5, "m5": 0.5})
0.5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from .constants import METRIC_WEIGHTS


def macro_f1(y_true: Sequence[bool], y_pred: Sequence[bool]) -> float | None:
    """M1, App A.3 Eq. 1: mean over classes {0, 1} of 2TP / (2TP + FP + FN).

    A class absent from both labels and predictions has an undefined F1 and is left out of the
    mean (scikit-learn's ``f1_score(average="macro")`` does the same); ``None`` for no scenes.
    """
    scores = []
    for c in (False, True):
        tp = sum(1 for t, p in zip(y_true, y_pred) if t == c and p == c)
        fp = sum(1 for t, p in zip(y_true, y_pred) if t != c and p == c)
        fn = sum(1 for t, p in zip(y_true, y_pred) if t == c and p != c)
        if 2 * tp + fp + fn:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores) if scores else None


def false_trigger_rate(y_true: Sequence[bool], y_pred: Sequence[bool]) -> float | None:
    """FTR, App A.3 Eq. 1: share of no-demand scenes predicted to carry a demand."""
    negatives = [p for t, p in zip(y_true, y_pred) if not t]
    return sum(negatives) / len(negatives) if negatives else None


def s2(segment_hits: Iterable[Sequence[bool | None]], errors_as_misses: bool = False) -> float | None:
    """Scene key-point coverage, App A.3 Eq. 2: per-segment hit rates averaged within the scene.

    ``segment_hits`` holds, per reference segment, one entry per key point: ``True``/``False``, or
    ``None`` for a judge error. Segments without key points are outside G_x^K. Judge errors are
    dropped (``errors_as_misses=False``; a segment left with no decided point is then skipped) or
    counted as misses (``True``). Unmatched segments must come in as all-``False``.
    """
    rates = []
    for hits in segment_hits:
        decided = [bool(h) for h in hits] if errors_as_misses else [h for h in hits if h is not None]
        if decided:
            rates.append(sum(decided) / len(decided))
    return sum(rates) / len(rates) if rates else None


def s3(ious: Sequence[float]) -> float | None:
    """Scene localisation, App A.3 Eq. 3: mean IoU over reference segments (0 when unmatched)."""
    return sum(ious) / len(ious) if ious else None


def s4(edits: Iterable[tuple[int, int]]) -> float | None:
    """Scene transcript quality, App A.3 Eq. 4: ``max(0, 1 - sum E / sum L)`` pooled in the scene.

    ``edits`` are (edit count, reference length) pairs. Undefined (``None``) when the references
    normalise to nothing (sum L = 0).
    """
    pairs = list(edits)
    total = sum(length for _, length in pairs)
    if not total:
        return None
    return max(0.0, 1 - sum(e for e, _ in pairs) / total)


def s5(field_correct: Mapping[str, Sequence[bool]]) -> float | None:
    """Scene user-profile accuracy, App A.3 Eq. 5: accuracy per field over segments, then mean
    over fields (three audio-visual, two audio-only); unmatched segments come in as ``False``."""
    per_field = [sum(v) / len(v) for v in field_correct.values() if v]
    return sum(per_field) / len(per_field) if per_field else None


def mean_defined(values: Iterable[float | None]) -> float | None:
    """M2-M5, App A.4: equal-weight mean over the scenes on which the score is defined."""
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def avg(metrics: Mapping[str, float | None]) -> float | None:
    """Avg, App A.4 Eq. 6: weighted mean of the available M1-M5, weights renormalised."""
    available = {m: (w, v) for m, w in METRIC_WEIGHTS.items() if (v := metrics.get(m)) is not None}
    if not available:
        return None
    return sum(w * v for w, v in available.values()) / sum(w for w, _ in available.values())


# --- vectorised variants for the scene bootstrap (odu.report) ------------------------------------
# Over many weightings of the same scenes (``weights``: an ``(R, n)`` matrix of scene
# multiplicities, one resample per row), each metric is a function of weighted sums of per-scene
# columns: ``*_columns`` gives the ``(n, k)`` columns, ``*_from_sums`` the metric from their
# ``(R, k)`` sums (NaN where the scalar gives ``None``), and ``*_weighted`` chains the two. The
# bootstrap stacks the columns of every metric and reads the weights once (one matrix product).
# With ``weights = np.ones((1, n))`` they equal the scalar functions above (tests/scoring/test_metrics.py).


def macro_f1_columns(y_true: Sequence[bool], y_pred: Sequence[bool]) -> np.ndarray:
    """Indicators of both-positive, both-negative, false-positive and false-negative scenes."""
    t, p = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    return np.column_stack([t & p, ~t & ~p, ~t & p, t & ~p]).astype(float)


def macro_f1_from_sums(sums: np.ndarray) -> np.ndarray:
    """:func:`macro_f1` (Eq. 1) from summed :func:`macro_f1_columns`; a class absent from labels
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
    """:func:`false_trigger_rate` (Eq. 1) from summed :func:`false_trigger_rate_columns`."""
    negatives, triggered = np.moveaxis(np.asarray(sums, float), -1, 0)
    return np.divide(triggered, negatives, out=np.full_like(negatives, np.nan), where=negatives > 0)


def mean_defined_columns(values: Sequence[float | None]) -> np.ndarray:
    """Definedness and value (0 where undefined) of each scene score."""
    v = np.array([np.nan if x is None else x for x in values], dtype=float)
    defined = ~np.isnan(v)
    return np.column_stack([defined, np.where(defined, v, 0.0)]).astype(float)


def mean_defined_from_sums(sums: np.ndarray) -> np.ndarray:
    """:func:`mean_defined` (App A.4) from summed :func:`mean_defined_columns`."""
    count, total = np.moveaxis(np.asarray(sums, float), -1, 0)
    return np.divide(total, count, out=np.full_like(count, np.nan), where=count > 0)


def macro_f1_weighted(y_true: Sequence[bool], y_pred: Sequence[bool], weights: np.ndarray) -> np.ndarray:
    """:func:`macro_f1` (Eq. 1) of every weighting of the same scenes."""
    return macro_f1_from_sums(np.atleast_2d(weights) @ macro_f1_columns(y_true, y_pred))


def false_trigger_rate_weighted(y_true: Sequence[bool], y_pred: Sequence[bool], weights: np.ndarray) -> np.ndarray:
    """:func:`false_trigger_rate` (Eq. 1) of every weighting of the same scenes."""
    return false_trigger_rate_from_sums(np.atleast_2d(weights) @ false_trigger_rate_columns(y_true, y_pred))


def mean_defined_weighted(values: Sequence[float | None], weights: np.ndarray) -> np.ndarray:
    """:func:`mean_defined` (App A.4) of every weighting; ``None`` values are undefined scenes."""
    return mean_defined_from_sums(np.atleast_2d(weights) @ mean_defined_columns(values))


def avg_weighted(metrics: Mapping[str, np.ndarray]) -> np.ndarray:
    """:func:`avg` (Eq. 6) elementwise: NaN entries are unavailable dimensions."""
    stacked = np.stack([np.asarray(metrics[m], float) for m in METRIC_WEIGHTS])
    weights = np.array(list(METRIC_WEIGHTS.values()))[:, None] * ~np.isnan(stacked)
    norm = weights.sum(axis=0)
    return np.divide(
        (weights * np.nan_to_num(stacked)).sum(axis=0), norm, out=np.full_like(norm, np.nan), where=norm > 0
    )
