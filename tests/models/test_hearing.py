"""The hearing check's outcome, as ``odu/models/hearing.py`` and docs/real-lane.md promise: a count
the server reports must be one, a non-negative integer (not a fraction, not ``12.0``, not ``true``,
not text, not negative), else one line naming the count and the way out (``hearing_check=false``);
heard means more prompt tokens with the tone; the limit is ignored only past it. Through a server:
tests/models/test_transformers_route.py."""

from __future__ import annotations

import re
from typing import Any

import pytest

from odu.models.hearing import PROBE_MAX_TOKENS, Hearing

NOT_COUNTS = [12.5, 12.0, True, False, "12", -1, [12]]


@pytest.mark.parametrize("value", NOT_COUNTS, ids=repr)
@pytest.mark.parametrize("field", ["without", "with_audio", "completion"])
def test_a_count_that_is_not_a_non_negative_integer_is_refused_naming_it(field: str, value: Any) -> None:
    counts: dict[str, Any] = {"without": 10, "with_audio": 35, "completion": 1, field: value}
    with pytest.raises(ValueError, match=rf"= {re.escape(repr(value))}, not a token count.*hearing_check=false"):
        Hearing(**counts)


@pytest.mark.parametrize("counts", [(0, 0, 0), (10, 35, 1), (None, None, None), (10, None, None)])
def test_integers_from_zero_and_counts_not_reported_are_taken(counts: tuple[int | None, ...]) -> None:
    assert Hearing(*counts).as_dict()["prompt_tokens_without_audio"] == counts[0]


def test_heard_is_more_prompt_tokens_with_the_tone_none_without_both_counts() -> None:
    assert Hearing(10, 11).heard is True and Hearing(10, 10).heard is False and Hearing(10, 9).heard is False
    assert Hearing(None, 10).heard is None and Hearing(10, None).heard is None


def test_the_limit_is_ignored_only_past_it() -> None:
    assert not Hearing(10, 35, PROBE_MAX_TOKENS).ignores_limit and Hearing(10, 35, PROBE_MAX_TOKENS + 1).ignores_limit
    assert not Hearing(10, 35, None).ignores_limit
