"""Predicted segments copied from reference segments, for tests that build model outputs with
controlled damage from the annotations."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def predicted_segment(
    reference: Mapping[str, Any], keep_context: Callable[[], bool] = lambda: True, **changes: Any
) -> dict[str, Any]:
    """The reference segment (release record form) as a model would output it: each context item
    kept when ``keep_context()`` says so (called once per item, in order), then ``changes`` applied.

    >>> ref = {"start_ms": 0, "end_ms": 900, "transcript": "hi", "structured_intent": "Greet.",
    ...        "required_context": [{"type": "visual", "description": "a cup", "necessity": "required"}],
    ...        "user_gender": "male", "user_age_group": "adult"}
    >>> predicted_segment(ref, user_in_frame=True)["required_context"]
    [{'type': 'visual', 'description': 'a cup'}]
    """
    return {
        "start_ms": reference["start_ms"],
        "end_ms": reference["end_ms"],
        "transcript": reference["transcript"],
        "structured_intent": reference["structured_intent"],
        "required_context": [
            {"type": c["type"], "description": c["description"]}
            for c in reference["required_context"]
            if keep_context()
        ],
        "user_in_frame": reference.get("user_in_frame"),
        "user_gender": reference["user_gender"],
        "user_age_group": reference["user_age_group"],
        **changes,
    }


def damaged_outputs(
    records: Sequence[Mapping[str, Any]], flip: float, drop_context: float, seed: int
) -> dict[str, str]:
    """Raw model outputs (scene id -> JSON text) built from the release records' references with
    controlled damage: the demand decision flipped with probability ``flip`` (no segments then),
    each context item dropped with probability ``drop_context``."""
    rng = random.Random(seed)
    outputs = {}
    for s in records:
        ann = s["annotations"][s["language"]]["evaluation_targets"]
        if rng.random() < flip:
            out = {"has_demand": not ann["has_demand"], "segments": []}
        else:
            out = {
                "has_demand": ann["has_demand"],
                "segments": [
                    predicted_segment(
                        g, lambda: rng.random() >= drop_context, user_in_frame=g.get("user_in_frame", False)
                    )
                    for g in ann["segments"]
                ],
            }
        outputs[s["scene_id"]] = json.dumps(out, ensure_ascii=False)
    return outputs
