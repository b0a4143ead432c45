"""Scene scores s2-s5 and dataset scores M1-M5, FTR and Avg (App A.3-A.4, Eqs. 1-6).

Pure functions over plain numbers, so that the scorer, the ``evaluate`` metric and the report
share one implementation (the report's bootstrap uses their vectorised forms,
:mod:`odu.report.weighted`, checked equal to these). ``None`` means "undefined" (e.g. M2 of a set with no positive
scene) and is left out of means and of Avg, as Eq. 6 prescribes for unavailable dimensions.

>>> macro_f1([True, True, False, False], [True, False, False, False])
0.7333333333333334
>>> avg({"m1": 0.5, "m2": 0.5, "m3": None, "m4": 0.5, "m5": 0.5})
0.5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .constants import METRIC_WEIGHTS


def macro_f1(y_true: Sequence[bool], y_pred: Sequence[bool]) -> float | None:
    """M1, App A.3 Eq. 1: mean over classes {0, 1} of 2TP / (2TP + FP + FN).

    A class absent from both labels and predictions has an undefined F1 and is left out of the
    mean (scikit-learn's ``f1_score(average="macro")`` does the same); ``None`` for no scenes.
    """
    pairs = list(zip(y_true, y_pred))
    return macro_f1_counts(
        tp=sum(1 for t, p in pairs if t and p),
        fp=sum(1 for t, p in pairs if not t and p),
        fn=sum(1 for t, p in pairs if t and not p),
        tn=sum(1 for t, p in pairs if not t and not p),
    )


def macro_f1_counts(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """:func:`macro_f1` from the confusion counts of the demand class (positives: ``has_demand``)."""
    scores = []
    for c_tp, c_fp, c_fn in ((tn, fn, fp), (tp, fp, fn)):  # class 0's false positives are class 1's misses
        if 2 * c_tp + c_fp + c_fn:
            scores.append(2 * c_tp / (2 * c_tp + c_fp + c_fn))
    return sum(scores) / len(scores) if scores else None


def false_trigger_rate(y_true: Sequence[bool], y_pred: Sequence[bool]) -> float | None:
    """FTR, App A.3 Eq. 1: share of no-demand scenes predicted to carry a demand."""
    negatives = [p for t, p in zip(y_true, y_pred) if not t]
    return false_trigger_rate_counts(len(negatives), sum(negatives))


def false_trigger_rate_counts(negatives: int, triggered: int) -> float | None:
    """:func:`false_trigger_rate` from the number of no-demand scenes and of those predicted positive."""
    return triggered / negatives if negatives else None


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
