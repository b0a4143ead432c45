"""The judge interface for M2 (App A.3 Eq. 2; App A.5 / D.3).

One :class:`JudgeRequest` per matched reference segment: the candidate text (predicted
``structured_intent`` and ``required_context`` descriptions, concatenated as in App A.5) and the
segment's key points. A judge answers each request with a :class:`JudgeVerdict`: a hit per qid, or
an error. Errors are never misses: the scorer reports them apart (docs/judges.md, "Judge errors are never misses").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.constants import CANDIDATE_SEPARATOR
from ..core.schema import KeyPoint, PredictedSegment


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """Judge all key points of reference segment ``segment`` (0-based) of ``scene_id``."""

    scene_id: str
    segment: int
    candidate: str
    key_points: tuple[KeyPoint, ...]


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """Hits by qid, or ``error`` (then ``hits`` is ``None``) when the judge could not decide."""

    hits: Mapping[str, bool] | None
    reasons: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None

    @classmethod
    def failed(cls, error: str) -> JudgeVerdict:
        return cls(hits=None, error=error)


def candidate_text(segment: PredictedSegment) -> str:
    """Predicted intent, then ``type: description`` per context item, joined by " | " (App A.5);
    an item without a type is its description alone.

    The reference transcript and necessity notes are never part of it (App D.3).
    """
    parts = [segment.structured_intent.strip()]
    for c in segment.required_context:
        if description := c.description.strip():
            parts.append(f"{c.type}: {description}" if c.type else description)
    return CANDIDATE_SEPARATOR.join(p for p in parts if p)


class Judge(ABC):
    """Decides key-point hits. Subclasses set the class attributes and implement :meth:`judge`."""

    name: str = "judge"
    model: str | None = None
    approximate: bool = False
    prompt_version: str | None = None
    #: True when each verdict depends on its request alone and nothing is gained by batching (no
    #: server to keep busy): the scorer then asks scene by scene as the scenes stream by, and no
    #: request waits in memory (:mod:`odu.runs.scoring`). Otherwise it gets every request of a run at once.
    streams: bool = False

    @abstractmethod
    def judge(self, requests: Sequence[JudgeRequest]) -> list[JudgeVerdict]:
        """One verdict per request, in order. Must not raise for a single bad request."""

    def accounting(self) -> dict[str, Any]:
        """Extra figures for the ``"judge"`` block of ``summary.json`` (requests, cache hits, ...)."""
        return {}

    def info(self) -> dict[str, Any]:
        """The ``"judge"`` block of ``summary.json``."""
        return {
            "name": self.name,
            "model": self.model,
            "approximate": self.approximate,
            "prompt_version": self.prompt_version,
            **self.accounting(),
        }

    def close(self) -> None:
        """Release resources (clients, caches)."""
