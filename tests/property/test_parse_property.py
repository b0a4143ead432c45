"""Property: parsing a model output never raises, and what it returns keeps the documented limits
(docs/scoring.md, "Parsing rules"; odu/core/constants.py)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from support.json_strategies import ANY_CHAR, json_values, model_outputs, prediction_objects

from odu.core.constants import AUDIO_ONLY, AUDIO_VISUAL, MAX_CONTEXT_ITEMS, MAX_SEGMENTS, MAX_TEXT_CHARS, MAX_TIME_MS
from odu.core.parse import parse_output
from odu.core.schema import Prediction

MODALITIES = st.sampled_from([AUDIO_VISUAL, AUDIO_ONLY])


def check(prediction: Prediction) -> None:
    """What every parse result promises: bounded, UTF-8-writable, consistent."""
    assert isinstance(prediction, Prediction)
    assert len(prediction.segments) <= MAX_SEGMENTS
    if not prediction.has_demand:
        assert prediction.segments == ()
    for issue in prediction.issues:
        assert isinstance(issue, str)
    for segment in prediction.segments:
        texts = [segment.transcript, segment.structured_intent, segment.user_gender or "", segment.user_age_group or ""]
        assert len(segment.required_context) <= MAX_CONTEXT_ITEMS
        texts += [t for c in segment.required_context for t in (c.type, c.description)]
        for text in texts:
            assert len(text) <= MAX_TEXT_CHARS
            text.encode("utf-8")  # no lone surrogate reaches the scorer, judge or files
        for ms in (segment.start_ms, segment.end_ms):
            assert ms is None or (isinstance(ms, int) and 0 <= ms < MAX_TIME_MS)
        if segment.has_span:
            assert segment.start_ms <= segment.end_ms


@settings(max_examples=1000, deadline=None)
@given(st.text(st.one_of(ANY_CHAR, st.sampled_from('{}[]":,<>/`think ')), max_size=200), MODALITIES)
def test_any_text(text: str, modality: str) -> None:
    check(parse_output(text, modality))


@settings(max_examples=400, deadline=None)
@given(model_outputs(), MODALITIES)
def test_wrapped_prediction_objects(text: str, modality: str) -> None:
    check(parse_output(text, modality))


@settings(max_examples=200, deadline=None)
@given(json_values(), MODALITIES)
def test_any_json_value(value: object, modality: str) -> None:
    check(parse_output(json.dumps(value), modality))


@settings(max_examples=150, deadline=None)
@given(prediction_objects(), MODALITIES)
def test_well_formed_objects_parse_without_error_flag(obj: dict, modality: str) -> None:
    prediction = parse_output(json.dumps(obj), modality)
    check(prediction)
    assert prediction.parse_error == (not isinstance(obj["has_demand"], bool) and not _bool_string(obj["has_demand"]))


def _bool_string(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower() in ("true", "false")
