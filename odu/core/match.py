"""Segment matching: reference segments x predicted segments (App A.2).

The paper prioritises normalised-transcript similarity, falls back to temporal IoU, lets one
prediction cover several reference segments, merges predicted fragments of one reference segment,
and keeps unmatched references as misses. Its thresholds are not published; ours are the named
constants in :mod:`odu.core.constants` (docs/scoring.md, "Scoring choices"). Four phases:

1. one-to-one by transcript similarity >= ``TRANSCRIPT_MATCH_MIN``, best pairs first;
2. one-to-one by IoU >= ``IOU_MATCH_MIN`` among what is left, best pairs first;
3. every leftover prediction that lies inside a reference segment (its transcript aligns inside
   the reference's, or most of its span lies inside it) joins that segment as a fragment;
4. every leftover reference that lies inside some prediction is covered by it.

Ties are broken by segment content, never by list position, so the result does not depend on the
order in which segments are listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from .constants import (
    CONTAINMENT_MIN_CHARS,
    CONTAINMENT_SPAN_MIN,
    CONTAINMENT_TEXT_MIN,
    IOU_MATCH_MIN,
    TRANSCRIPT_MATCH_MIN,
)
from .schema import PredictedContext, PredictedSegment, ReferenceSegment
from .text import normalize

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class SegmentMatch:
    """What reference segment ``reference`` was matched with.

    ``predictions`` are indices into the predicted segments (empty when unmatched); ``merged`` is
    their merge (:func:`merge_segments`); ``method`` is how the first of them was assigned:
    ``transcript``, ``iou``, ``fragment``, ``cover`` or ``none``.
    """

    reference: int
    predictions: tuple[int, ...]
    method: str
    similarity: float
    iou: float
    merged: PredictedSegment | None

    @property
    def matched(self) -> bool:
        return bool(self.predictions)


def iou(a: Span | None, b: Span | None) -> float:
    """Temporal intersection over union of two ``(start_ms, end_ms)`` spans (App A.3 Eq. 3)."""
    if a is None or b is None:
        return 0.0
    inter = min(a[1], b[1]) - max(a[0], b[0])
    union = max(a[1], b[1]) - min(a[0], b[0])
    if union <= 0:  # two zero-length spans at the same instant
        return 1.0 if a == b else 0.0
    return max(0, inter) / union


def _inside(inner: Span | None, outer: Span | None) -> float:
    """Fraction of ``inner``'s duration that lies inside ``outer``."""
    if inner is None or outer is None or inner[1] <= inner[0]:
        return 0.0
    return max(0, min(inner[1], outer[1]) - max(inner[0], outer[0])) / (inner[1] - inner[0])


def _text_inside(inner: str, outer: str) -> float:
    """Alignment score of the shorter ``inner`` transcript inside ``outer`` (0 when too short)."""
    if len(inner.replace(" ", "")) < CONTAINMENT_MIN_CHARS or len(inner) > len(outer):
        return 0.0
    return fuzz.partial_ratio(inner, outer) / 100


def _contains(inner_text: str, inner_span: Span | None, outer_text: str, outer_span: Span | None) -> float:
    """How well ``inner`` lies inside ``outer`` (phases 3-4); 0 when below both thresholds."""
    text, span = _text_inside(inner_text, outer_text), _inside(inner_span, outer_span)
    return max(text, span) if text >= CONTAINMENT_TEXT_MIN or span >= CONTAINMENT_SPAN_MIN else 0.0


def _span(seg: PredictedSegment | ReferenceSegment) -> Span | None:
    if seg.start_ms is None or seg.end_ms is None:
        return None
    return (seg.start_ms, seg.end_ms)


def pred_order_key(seg: PredictedSegment) -> tuple:
    """Content order of predicted segments: by time, then text (never by list position)."""
    return (seg.start_ms if seg.start_ms is not None else -1, seg.end_ms or -1, seg.transcript, seg.structured_intent)


def _ref_key(seg: ReferenceSegment) -> tuple:
    return (seg.start_ms, seg.end_ms, seg.transcript)


def merge_segments(fragments: Sequence[PredictedSegment]) -> PredictedSegment:
    """One predicted segment from fragments of the same reference segment, in time order.

    Span: earliest start to latest end. Transcripts and distinct intents joined with spaces,
    context items concatenated without exact duplicates. Profile fields: the first fragment (in
    time order) that gives one.
    """
    if len(fragments) == 1:
        return fragments[0]
    ordered = sorted(fragments, key=pred_order_key)
    spans = [s for s in (_span(f) for f in ordered) if s is not None]
    intents = list(dict.fromkeys(f.structured_intent.strip() for f in ordered if f.structured_intent.strip()))
    context: list[PredictedContext] = list(dict.fromkeys(c for f in ordered for c in f.required_context))

    def first(field: str) -> Any:
        return next((getattr(f, field) for f in ordered if getattr(f, field) is not None), None)

    return PredictedSegment(
        start_ms=min(s[0] for s in spans) if spans else None,
        end_ms=max(s[1] for s in spans) if spans else None,
        transcript=" ".join(f.transcript.strip() for f in ordered if f.transcript.strip()),
        structured_intent=" ".join(intents),
        required_context=tuple(context),
        user_in_frame=first("user_in_frame"),
        user_gender=first("user_gender"),
        user_age_group=first("user_age_group"),
    )


def linked_groups(matches: Sequence[SegmentMatch]) -> list[tuple[set[int], set[int]]]:
    """(reference indices, prediction indices) of each group of reference segments linked through
    shared predictions, in order of first appearance; a 1:1 match is a group of its own (M4, Eq. 4).

    >>> m = lambda ref, preds: SegmentMatch(ref, tuple(preds), "iou", 0.5, 0.0, None)
    >>> linked_groups([m(0, [0]), m(1, [1]), m(2, [1, 2]), m(3, [])])
    [({0}, {0}), ({1, 2}, {1, 2}), ({3}, set())]
    """
    groups: list[tuple[set[int], set[int]]] = []
    for m in matches:
        group = ({m.reference}, set(m.predictions))
        for other in [g for g in groups if g[1] & group[1]]:
            groups.remove(other)
            group[0].update(other[0])
            group[1].update(other[1])
        groups.append(group)
    return groups


def match_segments(refs: Sequence[ReferenceSegment], preds: Sequence[PredictedSegment]) -> list[SegmentMatch]:
    """One :class:`SegmentMatch` per reference segment, in reference order (App A.2)."""
    ref_text = [normalize(r.transcript) for r in refs]
    pred_text = [normalize(p.transcript) for p in preds]
    ref_span = [_span(r) for r in refs]
    pred_span = [_span(p) for p in preds]
    sim = [[fuzz.ratio(rt, pt) / 100 if rt and pt else 0.0 for pt in pred_text] for rt in ref_text]
    ious = [[iou(rs, ps) for ps in pred_span] for rs in ref_span]
    rkey = [_ref_key(r) for r in refs]
    pkey = [pred_order_key(p) for p in preds]

    assigned: dict[int, list[int]] = {i: [] for i in range(len(refs))}
    method: dict[int, str] = {}
    used: set[int] = set()

    def one_to_one(score: list[list[float]], other: list[list[float]], threshold: float, name: str) -> None:
        pairs = [
            (-score[i][j], -other[i][j], rkey[i], pkey[j], i, j)
            for i in range(len(refs))
            if not assigned[i]
            for j in range(len(preds))
            if j not in used and score[i][j] >= threshold
        ]
        for *_, i, j in sorted(pairs):
            if not assigned[i] and j not in used:
                assigned[i].append(j)
                used.add(j)
                method[i] = name

    one_to_one(sim, ious, TRANSCRIPT_MATCH_MIN, "transcript")
    one_to_one(ious, sim, IOU_MATCH_MIN, "iou")

    for j in sorted((j for j in range(len(preds)) if j not in used), key=lambda j: pkey[j]):
        found = [
            (c, rkey[i], i)
            for i in range(len(refs))
            if (c := _contains(pred_text[j], pred_span[j], ref_text[i], ref_span[i]))
        ]
        if found:
            i = min(found, key=lambda f: (-f[0], f[1]))[2]
            assigned[i].append(j)
            used.add(j)
            method.setdefault(i, "fragment")

    for i in (i for i in range(len(refs)) if not assigned[i]):
        found = [
            (c, pkey[j], j)
            for j in range(len(preds))
            if (c := _contains(ref_text[i], ref_span[i], pred_text[j], pred_span[j]))
        ]
        if found:
            assigned[i].append(min(found, key=lambda f: (-f[0], f[1]))[2])
            method[i] = "cover"

    out = []
    for i in range(len(refs)):
        js = tuple(sorted(assigned[i], key=lambda j: pkey[j]))
        merged = merge_segments([preds[j] for j in js]) if js else None
        out.append(
            SegmentMatch(
                reference=i,
                predictions=js,
                method=method.get(i, "none"),
                similarity=(
                    fuzz.ratio(ref_text[i], normalize(merged.transcript)) / 100 if merged and ref_text[i] else 0.0
                ),
                iou=iou(ref_span[i], _span(merged)) if merged else 0.0,
                merged=merged,
            )
        )
    return out
