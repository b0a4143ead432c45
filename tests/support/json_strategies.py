"""Hypothesis strategies for the property tests (``tests/property/``): JSON values with any Unicode,
hostile model outputs, and release records with one field replaced by anything."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

#: Every code point, lone surrogates (category Cs) and U+2028 / U+2029 / U+0085 included.
ANY_CHAR = st.characters(codec=None, categories=None)
#: Characters that make JSONL and prose handling hard; mixed into generated text.
AWKWARD = st.sampled_from(
    ["\u2028", "\u2029", "\x85", "\x1c", "\r", "\n", "\ufeff", "\ud83d", "\ude00", '"', "\\", "{"]
)
TEXT = st.text(st.one_of(ANY_CHAR, AWKWARD), max_size=16)
#: Floats JSON can hold (NaN / ±Infinity are another rule: odu.io.jsonio.NON_FINITE_RULE).
FINITE = st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), FINITE, TEXT)


def json_values(scalars: st.SearchStrategy[Any] = SCALARS, max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Nested JSON values (lists and string-keyed objects) over ``scalars``."""
    return st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
        max_leaves=max_leaves,
    )


#: Values a model puts in a prediction's fields: right types, wrong types, huge and odd numbers.
FIELD_VALUES = st.one_of(
    SCALARS,
    st.sampled_from([float("nan"), float("inf"), -1e300, 2**70, -5, "12.5", " true ", "visual", "female", "adult"]),
    json_values(max_leaves=4),
)
SEGMENT_KEYS = (
    "start_ms",
    "end_ms",
    "transcript",
    "structured_intent",
    "required_context",
    "user_in_frame",
    "user_gender",
    "user_age_group",
)


@st.composite
def prediction_objects(draw: st.DrawFn) -> dict[str, Any]:
    """Objects shaped like the prediction schema (App A.1), each field any value."""
    segment = st.dictionaries(st.sampled_from(SEGMENT_KEYS), FIELD_VALUES, max_size=len(SEGMENT_KEYS))
    context = st.lists(
        st.one_of(st.dictionaries(st.sampled_from(["type", "description"]), FIELD_VALUES), TEXT), max_size=3
    )
    obj: dict[str, Any] = {"has_demand": draw(st.one_of(st.booleans(), FIELD_VALUES))}
    segments = draw(st.one_of(st.lists(segment, max_size=3), FIELD_VALUES))
    if isinstance(segments, list):
        for seg in segments:
            if isinstance(seg, dict) and draw(st.booleans()):
                seg["required_context"] = draw(context)
    if draw(st.booleans()):
        obj["segments"] = segments
    return obj


@st.composite
def model_outputs(draw: st.DrawFn) -> str:
    """Raw model text: a prediction object wrapped as models wrap it (prose, fences, think blocks,
    cut off), or arbitrary text."""
    text = json.dumps(draw(prediction_objects()), ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    before, after = draw(TEXT), draw(TEXT)
    wrap = draw(st.sampled_from(["{}", "```json\n{}\n```", "<think>{}</think>{}", "<think>x</think>{}", "{}{}"]))
    text = wrap.replace("{}", text, 1).replace("{}", after, 1)
    return before + text if draw(st.booleans()) else text
