"""Every free-text field of a model output reaches the scorer and the judge cut to MAX_TEXT_CHARS,
closed-set fields and context types included (issue 12 item 12: a 150,103-character context
``type`` reached the judge)."""

from __future__ import annotations

import json

import pytest

from odu.core.constants import AUDIO_VISUAL, MAX_TEXT_CHARS
from odu.core.parse import parse_output
from odu.judge.base import candidate_text

HUGE = 150_103


def _output(**fields: object) -> str:
    segment = {"start_ms": 0, "end_ms": 1000, "transcript": "hi", "structured_intent": "wants help"}
    return json.dumps({"has_demand": True, "segments": [segment | fields]})


@pytest.mark.parametrize(
    ("fields", "read", "issue"),
    [
        (
            {"required_context": [{"type": "visual" + "x" * HUGE, "description": "d"}]},
            lambda s: s.required_context[0].type,
            "segments[0].required_context[0].type: cut to",
        ),
        ({"user_gender": "f" * HUGE}, lambda s: s.user_gender, "segments[0].user_gender: cut to"),
        ({"user_age_group": "a" * HUGE}, lambda s: s.user_age_group, "segments[0].user_age_group: cut to"),
        ({"transcript": "t" * HUGE}, lambda s: s.transcript, "segments[0].transcript: cut to"),
    ],
    ids=["context type", "gender", "age group", "transcript"],
)
def test_long_fields_are_cut(fields: dict[str, object], read, issue: str) -> None:
    prediction = parse_output(_output(**fields), AUDIO_VISUAL)
    segment = prediction.segments[0]
    assert len(read(segment)) == MAX_TEXT_CHARS
    assert f"{issue} {MAX_TEXT_CHARS} characters" in prediction.issues


def test_the_judge_never_sees_more_than_the_cut_fields() -> None:
    long = 60_000  # three fields under MAX_OUTPUT_CHARS in all, each far over MAX_TEXT_CHARS
    items = [{"type": "t" * long, "description": "d" * long}]
    prediction = parse_output(_output(required_context=items, structured_intent="i" * long), AUDIO_VISUAL)
    # intent, one context item as "type: description", and the separator
    assert len(candidate_text(prediction.segments[0])) <= 3 * MAX_TEXT_CHARS + 10
