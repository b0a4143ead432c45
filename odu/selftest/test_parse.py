"""Parsing rules (docs/scoring.md, "Parsing rules"): lenient about where the JSON object is, strict
about what is in it, never raising on model output."""

from __future__ import annotations

import pytest

from odu.core.parse import parse_output

#: model output -> (has_demand, the first segment's (start_ms, end_ms), parse error, an issue noted)
CASES = {
    '```json\n{"has_demand": false, "segments": []}\n```': (False, None, False, False),  # fences dropped
    '<think>{"has_demand": true}</think>{"has_demand": false, "segments": []}': (False, None, False, False),
    'Sure: {"has_demand": true, "segments": [{"start_ms": 900, "end_ms": 100}]}': (True, (100, 900), False, True),
    '{"note": 1} {"has_demand": " TRUE ", "segments": [{"start_ms": -5, "end_ms": "1200"}]}': (
        True,
        (0, 1200),  # the object without has_demand skipped, "TRUE" read, -5 clamped, "1200" read
        False,
        True,
    ),
    '{"has_demand": true, "segments": [],}': (False, None, True, True),  # trailing comma: invalid JSON
    '{"has_demand": "yes", "segments": []}': (False, None, True, True),  # not a boolean
    "I think the user wants coffee.": (False, None, True, True),  # no JSON object
}


@pytest.mark.parametrize(("output", "expected"), CASES.items())
def test_an_output_reads_as_the_rules_say(
    output: str, expected: tuple[bool, tuple[int, int] | None, bool, bool]
) -> None:
    prediction = parse_output(output, "audio-visual")
    first = prediction.segments[0] if prediction.segments else None
    span = None if first is None else (first.start_ms, first.end_ms)
    assert (prediction.has_demand, span, prediction.parse_error, bool(prediction.issues)) == expected
