"""Perfect outputs and a judge that knows them: a scene's reference annotation in one language written
as a model output, and a judge hitting a segment's key points exactly when the candidate is that
reference segment's own intent + context in the key points' language."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from odu.core.parse import parse_output
from odu.core.schema import Scene
from odu.judge import candidate_text
from odu.judge.base import Judge, JudgeRequest, JudgeVerdict
from odu.selftest import perfect_output


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
