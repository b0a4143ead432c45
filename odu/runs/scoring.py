"""Score a set of scenes: parse -> match -> judge -> scene scores -> M1-M5, FTR, Avg per modality.

The one scoring pipeline behind ``odu-bench score``, the lm-eval tasks and the ``evaluate``
metric. What it produces (scene rows, the summary) is the run contract of :mod:`odu.runs.contract`.

It streams: scenes come one at a time (:func:`odu.core.schema.iter_scenes` reads a file record by
record), and each is parsed, matched and scored at once, its row written as JSON text with slots
for what the verdicts decide (M2). A judge that decides each request alone (stored verdicts, the
lexical judge: :attr:`~odu.judge.base.Judge.streams`) fills them at once, so nothing of a scene
stays in memory. Any other judge (a server) is called once with every request of the run, so it
can work on all of them at the same time: meanwhile only the requests (candidate text and key
points) stay in memory, the rows wait in a spool file, and a second pass fills their slots. Each
finished scene is added to the summary (:class:`odu.runs.contract.RunTally`, in scene order, so the numbers
are those of :func:`odu.runs.contract.summarize_run` over the rows) and its row handed on: to a run file
(:func:`score_into`) or to a list (:func:`score_scenes`).
"""

from __future__ import annotations

import gc
import io
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from tqdm.auto import tqdm

from ..core.constants import PROFILE_FIELDS
from ..core.match import SegmentMatch, linked_groups, match_segments, pred_order_key
from ..core.metrics import s2, s3, s4, s5
from ..core.parse import no_output, parse_output
from ..core.schema import Prediction, ReferenceSegment, Scene, content_hashes
from ..core.text import edit_count
from ..io.jsonio import dumps, dumps_str, gc_paused
from ..judge.base import Judge, JudgeRequest, JudgeVerdict, candidate_text
from .contract import RunSummary, RunTally, SceneRow, ScoredRun

#: Output for a scene: raw model text, an already parsed prediction, or None (no output).
Output = str | Prediction | None

#: Separates a spooled row's header and the pieces of its JSON text around the verdict slots. JSON
#: text never holds a raw control character (``json.dumps`` escapes them), so it cannot collide.
_SLOT = "\x00"
_JSON_NULL = "null"


def _transcript_edits(
    refs: Sequence[ReferenceSegment], prediction: Prediction, matches: Sequence[SegmentMatch]
) -> list[tuple[int, int]]:
    """(edits, length) per group of reference segments linked through shared predictions.

    A 1:1 match is its own group, as in Eq. 4. When one prediction covers several references (or
    fragments link them), the group's references are concatenated in time order and compared with
    the group's predicted transcripts in time order, so a prediction spanning two references is not
    charged twice for the same words. Unmatched references meet an empty hypothesis.
    """
    preds = prediction.segments
    edits = []
    for ref_ids, pred_ids in linked_groups(matches):
        reference = " ".join(refs[i].transcript for i in sorted(ref_ids, key=lambda i: (refs[i].start_ms, i)))
        hypothesis = " ".join(preds[j].transcript for j in sorted(pred_ids, key=lambda j: pred_order_key(preds[j])))
        edits.append(edit_count(reference, hypothesis))
    return edits


def _profile_correct(scene: Scene, refs: Sequence[ReferenceSegment], matches: Sequence[SegmentMatch]) -> dict:
    return {
        f: [m.merged is not None and getattr(m.merged, f) == getattr(refs[m.reference], f) for m in matches]
        for f in PROFILE_FIELDS[scene.modality]
    }


def _prediction(scene: Scene, output: Output) -> Prediction:
    if isinstance(output, Prediction):
        return output
    if output is None:
        return no_output()
    return parse_output(output, scene.modality)


def _verdict_of(verdict: JudgeVerdict, qid: str) -> tuple[bool | None, str | None]:
    """A key point's hit (None: undecided) and judge error from its segment's verdict."""
    if verdict.error is not None or verdict.hits is None:  # never an empty (uncounted) error
        return None, verdict.error or "judge gave no verdict"
    hit = verdict.hits.get(qid)
    if isinstance(hit, bool):
        return hit, None
    return None, f"judge gave no verdict for {qid}"  # a judge that skipped this point: never a miss


def _prepare(scene: Scene, output: Output, language: str, requests: list[JudgeRequest]) -> tuple[list, list[str]]:
    """Parse, match and score ``scene`` but for its verdicts: its judge requests are appended to
    ``requests``; returns what :func:`_finish` needs to complete the row once they are answered.

    That is a header (the counts and scores the summary needs, and per reference segment either
    its number of key points, all misses, or ``-1``: judged) and the pieces of the row's JSON text
    between its slots: ``s2``, ``s2_errors_as_misses``, and a hit and a judge error per judged key
    point. The row's text is exactly ``json.dumps`` of the :class:`SceneRow`.
    """
    prediction = _prediction(scene, output)
    refs = scene.annotation(language).segments
    matches = match_segments(refs, prediction.segments if prediction.has_demand else ())
    asked = [
        JudgeRequest(scene.scene_id, m.reference, text, refs[m.reference].key_points)
        for m in matches
        if m.merged is not None and refs[m.reference].key_points and (text := candidate_text(m.merged))
    ]
    requests += asked
    judged = {r.segment for r in asked}
    positive = scene.is_positive and bool(refs)
    scores = (
        (
            s3([m.iou for m in matches]),
            s4(_transcript_edits(refs, prediction, matches)),
            s5(_profile_correct(scene, refs, matches)),
        )
        if positive
        else (None, None, None)
    )
    head = {
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
        **dict(zip(("scene_sha256", "reference_sha256"), content_hashes(scene, language))),
    }
    middle = {
        "s3": scores[0],
        "s4": scores[1],
        "s5": scores[2],
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
    }
    pieces = [dumps(head)[:-1] + ', "s2": ', ', "s2_errors_as_misses": ']
    text = ", " + dumps(middle)[1:-1] + ', "key_points": ['
    for m in matches:
        matched = "true" if m.matched else "false"
        for k in refs[m.reference].key_points:
            tiers = ", ".join(map(dumps_str, k.tiers))
            point = (
                f'{{"segment": {m.reference}, "qid": {dumps_str(k.qid)}, "point": {dumps_str(k.point)}, '
                f'"source": {dumps_str(k.source)}, "tiers": [{tiers}], "matched": {matched}'
            )
            if text[-1] != "[":
                text += ", "
            if m.reference in judged:
                pieces += [text + point + ', "hit": ', ', "judge_error": ']
                text = "}"
            else:  # unmatched, or matched with empty candidate text: misses, no judge call
                text += point + ', "hit": false, "judge_error": null}'
    candidates = [{"segment": r.segment, "text": r.candidate} for r in asked]
    pieces.append(text + '], "candidates": ' + dumps(candidates) + "}")
    layout = [-1 if m.reference in judged else len(refs[m.reference].key_points) for m in matches]
    header = [
        scene.modality,
        scene.is_positive,
        prediction.has_demand,
        prediction.parse_error,
        prediction.no_output,
        positive,
        *scores,
        layout,
    ]
    return header, pieces


def _spooled(header: list, pieces: list[str]) -> str:
    """One spool line: the header as JSON, then the pieces, separated by :data:`_SLOT`."""
    return _SLOT.join([json.dumps(header), *pieces]) + "\n"


def _unspooled(line: str) -> tuple[list, list[str]]:
    header, *pieces = line.rstrip("\n").split(_SLOT)
    return json.loads(header), pieces


def _finish(
    header: list,
    pieces: list[str],
    requests: Iterator[JudgeRequest],
    verdicts: Iterator[JudgeVerdict],
    tally: RunTally,
) -> str:
    """The row's JSON text from :func:`_prepare`'s header and pieces and its scene's verdicts
    (taken from the two iterators, in request order); the scene is added to ``tally``."""
    modality, has_demand, predicted, parse_error, no_out, positive, *scores, layout = header
    segment_hits: list[list[bool | None]] = []
    slots: list[str] = []
    error_points = error_segments = 0
    for points in layout:
        if points >= 0:
            segment_hits.append([False] * points)
            continue
        request, verdict = next(requests), next(verdicts)
        hits: list[bool | None] = []
        errors = 0
        for k in request.key_points:
            hit, error = _verdict_of(verdict, k.qid)
            hits.append(hit)
            slots += [
                _JSON_NULL if hit is None else "true" if hit else "false",
                _JSON_NULL if error is None else dumps_str(error),
            ]
            errors += error is not None
        segment_hits.append(hits)
        error_points += errors
        error_segments += errors > 0
    found = (s2(segment_hits), s2(segment_hits, errors_as_misses=True)) if positive else (None, None)
    tally.of(modality).add(has_demand, predicted, (*found, *scores), error_points, parse_error, no_out)
    tally.judge_errors += error_segments
    values = [_JSON_NULL if v is None else repr(v) for v in found] + slots
    return "".join(piece + value for piece, value in zip(pieces, values)) + pieces[-1]


@contextmanager
def _gc_frozen() -> Iterator[None]:
    """Keep the collector running (a network judge makes cyclic garbage) but exempt everything
    alive now (judge requests, predictions) from its passes; undone afterwards unless the caller froze."""
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()


def _spool(spool_dir: str | Path | None) -> IO[str]:
    """Where the rows wait for their verdicts: a temporary file (deleted on close), or memory."""
    if spool_dir is None:
        return io.StringIO()
    # surrogatepass: a lone surrogate in a scene's text is kept as it is until the row is written
    return tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogatepass", newline="\n", dir=spool_dir)


def _check_known(unseen: set[str]) -> None:
    """``ValueError`` naming the output ids that no scene had."""
    if unseen:
        unknown = sorted(unseen)
        shown = ", ".join(unknown[:5]) + (f" (+{len(unknown) - 5} more)" if len(unknown) > 5 else "")
        raise ValueError(f"{len(unknown)} prediction id(s) not among the scenes: {shown}")


def _answered(judge: Judge, requests: list[JudgeRequest]) -> list[JudgeVerdict]:
    answered = judge.judge(requests) if requests else []
    if len(answered) != len(requests):  # misaligned verdicts would silently score the wrong segments
        raise RuntimeError(f"judge {judge.name!r} returned {len(answered)} verdicts for {len(requests)} requests")
    return answered


def score_into(
    scenes: Iterable[Scene],
    outputs: Mapping[str, Output],
    judge: Judge,
    emit: Callable[[str], None],
    annotation_language: str = "scene",
    progress: bool = False,
    spool_dir: str | Path | None = None,
) -> RunSummary:
    """Score ``outputs`` (by scene id) against ``scenes`` (any iterable: read one at a time) and
    hand each scene row, as one line of JSON text, to ``emit`` in scene order; returns the summary.

    Scenes without output count as no output. A judge that :attr:`~odu.judge.base.Judge.streams`
    is asked scene by scene; any other gets every request at once, the rows waiting for it in a
    temporary file in ``spool_dir`` (in memory when None). Raises ``ValueError`` naming output ids
    that are not among the scenes (before any call of a judge that does not stream).
    """
    unseen, tally = set(outputs), RunTally()
    scenes = tqdm(scenes, desc="parse+match", unit="scene", disable=not progress)
    if judge.streams:
        with gc_paused():
            for scene in scenes:
                unseen.discard(scene.scene_id)
                requests: list[JudgeRequest] = []
                header, pieces = _prepare(scene, outputs.get(scene.scene_id), annotation_language, requests)
                answered = _answered(judge, requests)
                emit(_finish(header, pieces, iter(requests), iter(answered), tally))
        _check_known(unseen)
        return tally.summary(judge.info(), annotation_language)
    requests = []
    with _spool(spool_dir) as spool:
        with gc_paused():
            for scene in scenes:
                unseen.discard(scene.scene_id)
                spool.write(_spooled(*_prepare(scene, outputs.get(scene.scene_id), annotation_language, requests)))
        _check_known(unseen)
        with _gc_frozen():
            answered = _answered(judge, requests)
        pending, verdicts = iter(requests), iter(answered)
        spool.seek(0)
        with gc_paused():
            for line in spool:
                emit(_finish(*_unspooled(line), pending, verdicts, tally))
    return tally.summary(judge.info(), annotation_language)


def score_scenes(
    scenes: Iterable[Scene],
    outputs: Mapping[str, Output],
    judge: Judge,
    annotation_language: str = "scene",
    progress: bool = False,
) -> ScoredRun:
    """Score ``outputs`` (by scene id) against ``scenes``, rows in memory (:func:`score_into`).

    Raises ``ValueError`` naming output ids that are not among the scenes.
    """
    rows: list[SceneRow] = []

    def keep(text: str) -> None:
        rows.append(json.loads(text))

    summary = score_into(scenes, outputs, judge, keep, annotation_language, progress)
    return ScoredRun(summary, rows)


__all__ = ["Output", "score_into", "score_scenes"]
