"""scenes.jsonl rows with the fields the report reads, for tests and benchmarks that make scored
runs of known shape without scoring anything."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def report_row(
    scene_id: str,
    positive: bool,
    predicted: bool,
    scores: Sequence[float | None] = (None, None, None, None),
    *,
    modality: str = "audio-visual",
    language: str = "en",
    source: str = "generated",
    axes: Mapping[str, str] | None = None,
    key_points: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """One scene row: its label, the predicted demand, the scene scores ``(s2, s3, s4, s5)``."""
    s2, s3, s4, s5 = scores
    return {
        "scene_id": scene_id,
        "modality": modality,
        "language": language,
        "source": source,
        "label": "positive" if positive else "negative",
        "axes": dict(axes or {}),
        "negative_reason": "",
        "negative_signal": "",
        "has_demand": positive,
        "predicted_has_demand": predicted,
        "s2": s2,
        "s2_errors_as_misses": None,
        "s3": s3,
        "s4": s4,
        "s5": s5,
        "key_points": [dict(k) for k in key_points],
        "parse_error": False,
        "no_output": False,
    }


def key_point(qid: str, source: str, hit: bool | None, matched: bool = True, segment: int = 0) -> dict[str, Any]:
    """One key point of a scene row and its verdict (``hit`` None: a judge error, unless unmatched)."""
    return {
        "segment": segment,
        "qid": qid,
        "point": "p",
        "source": source,
        "tiers": ["T1"],
        "matched": matched,
        "hit": hit,
        "judge_error": None,
    }
