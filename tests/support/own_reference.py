"""Perfect outputs and a judge that knows them: a scene's reference annotation in one language written
as a model output, and a judge hitting a segment's key points exactly when the candidate is that
reference segment's own intent + context in the key points' language."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from odu.judge import candidate_text
from odu.judge.base import Judge, JudgeRequest, JudgeVerdict
from odu.parse import parse_output
from odu.schema import Scene


def perfect_output(scene: Scene, language: str = "scene") -> str:
    """The ``language`` annotation of ``scene`` as a model output (App A.1 fields)."""
    ann = scene.annotation(language)
    return json.dumps(
        {
            "has_demand": ann.has_demand,
            "segments": [
                {
                    "start_ms": g.start_ms,
                    "end_ms": g.end_ms,
                    "transcript": g.transcript,
                    "structured_intent": g.structured_intent,
                    "required_context": [{"type": c.type, "description": c.description} for c in g.required_context],
                    "user_in_frame": g.user_in_frame,
                    "user_gender": g.user_gender,
                    "user_age_group": g.user_age_group,
                }
                for g in ann.segments
            ],
        },
        ensure_ascii=False,
    )


class OwnReferenceJudge(Judge):
    """Hits every key point of a request exactly when its candidate is the intent + context (as
    :func:`candidate_text` renders them) of the reference segment those key points belong to, in
    whichever language they were written; misses them all otherwise."""

    def __init__(self, scenes: Iterable[Scene]) -> None:
        self.own = {
            (s.scene_id, i, tuple(k.point for k in g.key_points)): candidate_text(p)
            for s in scenes
            for language in s.annotations
            for i, (g, p) in enumerate(
                zip(s.annotation(language).segments, parse_output(perfect_output(s, language), s.modality).segments)
            )
        }

    def judge(self, requests: Sequence[JudgeRequest]) -> list[JudgeVerdict]:
        return [
            JudgeVerdict(
                {
                    k.qid: self.own[r.scene_id, r.segment, tuple(k.point for k in r.key_points)] == r.candidate
                    for k in r.key_points
                }
            )
            for r in requests
        ]
