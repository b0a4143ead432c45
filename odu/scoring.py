"""Score a set of scenes: parse -> match -> judge -> scene scores -> M1-M5, FTR, Avg per modality.

The one scoring pipeline behind ``odu-bench score``, the lm-eval tasks and the ``evaluate``
metric. The judge is called once with every request of the run, so a concurrent judge can work
on all of them at the same time. What it returns (scene rows, the summary) is the run contract
of :mod:`odu.run`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from tqdm.auto import tqdm

from .constants import PROFILE_FIELDS
from .judge.base import Judge, JudgeRequest, JudgeVerdict, candidate_text
from .match import SegmentMatch, linked_groups, match_segments, pred_order_key
from .metrics import s2, s3, s4, s5
from .parse import no_output, parse_output
from .run import KeyPointRow, SceneRow, ScoredRun, summarize_run
from .schema import Prediction, Scene
from .text import edit_count

#: Output for a scene: raw model text, an already parsed prediction, or None (no output).
Output = str | Prediction | None


@dataclass(slots=True)
class _SceneWork:
    scene: Scene
    prediction: Prediction
    matches: list[SegmentMatch]
    requests: list[JudgeRequest]
    edits: list[tuple[int, int]] = field(default_factory=list)  # M4 (edits, length) per segment group


def _prepare(scene: Scene, output: Output, language: str) -> _SceneWork:
    if isinstance(output, Prediction):
        prediction = output
    elif output is None:
        prediction = no_output()
    else:
        prediction = parse_output(output, scene.modality)
    refs = scene.annotation(language).segments
    matches = match_segments(refs, prediction.segments if prediction.has_demand else ())
    requests = [
        JudgeRequest(scene.scene_id, m.reference, text, refs[m.reference].key_points)
        for m in matches
        if m.merged is not None and refs[m.reference].key_points and (text := candidate_text(m.merged))
    ]
    work = _SceneWork(scene, prediction, matches, requests)
    # Counted now, while this scene's normalised transcripts are fresh in the normalize() cache.
    work.edits = _transcript_edits(work, language)
    return work


def _transcript_edits(work: _SceneWork, language: str) -> list[tuple[int, int]]:
    """(edits, length) per group of reference segments linked through shared predictions.

    A 1:1 match is its own group, as in Eq. 4. When one prediction covers several references (or
    fragments link them), the group's references are concatenated in time order and compared with
    the group's predicted transcripts in time order, so a prediction spanning two references is not
    charged twice for the same words. Unmatched references meet an empty hypothesis.
    """
    refs = work.scene.annotation(language).segments
    preds = work.prediction.segments
    edits = []
    for ref_ids, pred_ids in linked_groups(work.matches):
        reference = " ".join(refs[i].transcript for i in sorted(ref_ids, key=lambda i: (refs[i].start_ms, i)))
        hypothesis = " ".join(preds[j].transcript for j in sorted(pred_ids, key=lambda j: pred_order_key(preds[j])))
        edits.append(edit_count(reference, hypothesis))
    return edits


def _profile_correct(scene: Scene, language: str, matches: Sequence[SegmentMatch]) -> dict[str, list[bool]]:
    refs = scene.annotation(language).segments
    return {
        f: [m.merged is not None and getattr(m.merged, f) == getattr(refs[m.reference], f) for m in matches]
        for f in PROFILE_FIELDS[scene.modality]
    }


def _scene_row(work: _SceneWork, verdicts: Mapping[int, JudgeVerdict], language: str) -> SceneRow:
    scene, prediction, matches = work.scene, work.prediction, work.matches
    refs = scene.annotation(language).segments
    key_points: list[KeyPointRow] = []
    segment_hits: list[list[bool | None]] = []
    for m in matches:
        verdict = verdicts.get(m.reference)
        hits: list[bool | None] = []
        for k in refs[m.reference].key_points:
            if not m.matched or verdict is None:  # unmatched, or matched with empty candidate text
                hit, error = False, None
            elif verdict.error is not None or verdict.hits is None:  # never an empty (uncounted) error
                hit, error = None, verdict.error or "judge gave no verdict"
            elif isinstance(hit := verdict.hits.get(k.qid), bool):
                error = None
            else:  # a judge that skipped this point: undecided, never a miss
                hit, error = None, f"judge gave no verdict for {k.qid}"
            hits.append(hit)
            key_points.append(
                {
                    "segment": m.reference,
                    "qid": k.qid,
                    "point": k.point,
                    "source": k.source,
                    "tiers": list(k.tiers),
                    "matched": m.matched,
                    "hit": hit,
                    "judge_error": error,
                }
            )
        segment_hits.append(hits)
    positive = scene.is_positive and bool(refs)
    return {
        "scene_id": scene.scene_id,
        "modality": scene.modality,
        "language": scene.language,
        "source": scene.source,
        "label": scene.label,
        "axes": {a.axis: a.code for a in scene.axes},
        "negative_reason": scene.negative_reason,
        "negative_signal": scene.negative_signal,
        "has_demand": scene.is_positive,
        "predicted_has_demand": prediction.has_demand,
        "parse_error": prediction.parse_error,
        "no_output": prediction.no_output,
        "issues": list(prediction.issues),
        "s2": s2(segment_hits) if positive else None,
        "s2_errors_as_misses": s2(segment_hits, errors_as_misses=True) if positive else None,
        "s3": s3([m.iou for m in matches]) if positive else None,
        "s4": s4(work.edits) if positive else None,
        "s5": s5(_profile_correct(scene, language, matches)) if positive else None,
        "matches": [
            {
                "reference": m.reference,
                "predictions": list(m.predictions),
                "method": m.method,
                "iou": round(m.iou, 6),
                "similarity": round(m.similarity, 6),
            }
            for m in matches
        ],
        "key_points": key_points,
        "candidates": [{"segment": r.segment, "text": r.candidate} for r in work.requests],
    }


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around CPU-bound scoring.

    Scoring builds millions of small acyclic objects; the collector's full passes over the growing
    live heap made time per scene grow ~1.5x from 2k to 100k scenes. Reference counting still frees
    everything; results do not change (``benchmarks/bench_scoring.py``).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def _gc_frozen() -> Iterator[None]:
    """Keep the collector running (a network judge makes cyclic garbage) but exempt everything
    alive now (scenes, parsed work) from its passes; undone afterwards unless the caller froze."""
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()


def score_scenes(
    scenes: Sequence[Scene],
    outputs: Mapping[str, Output],
    judge: Judge,
    annotation_language: str = "scene",
    progress: bool = False,
) -> ScoredRun:
    """Score ``outputs`` (by scene id) against ``scenes``; scenes without output count as no output.

    Raises ``ValueError`` naming output ids that are not among the scenes.
    """
    known = {s.scene_id for s in scenes}
    unknown = sorted(set(outputs) - known)
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" (+{len(unknown) - 5} more)" if len(unknown) > 5 else "")
        raise ValueError(f"{len(unknown)} prediction id(s) not among the scenes: {shown}")
    with _gc_paused():
        work = [
            _prepare(s, outputs.get(s.scene_id), annotation_language)
            for s in tqdm(scenes, desc="parse+match", unit="scene", disable=not progress)
        ]
    requests = [r for w in work for r in w.requests]
    with _gc_frozen():
        answered = judge.judge(requests) if requests else []
    if len(answered) != len(requests):  # misaligned verdicts would silently score the wrong segments
        raise RuntimeError(f"judge {judge.name!r} returned {len(answered)} verdicts for {len(requests)} requests")
    verdicts = iter(answered)
    with _gc_paused():
        rows = [_scene_row(w, {r.segment: next(verdicts) for r in w.requests}, annotation_language) for w in work]
    return ScoredRun(summarize_run(rows, judge.info(), annotation_language), rows)


__all__ = ["Output", "score_scenes"]
