"""The offline lexical judge's hit rule at its threshold (``LEXICAL_HIT_MIN``, odu/core/constants.py):
a hit when at least that share of the key point's content units occur in the candidate text."""

from __future__ import annotations

import pytest

from odu.core.constants import LEXICAL_HIT_MIN
from odu.core.schema import KeyPoint
from odu.judge import LexicalJudge
from odu.judge.base import JudgeRequest
from odu.judge.lexical import content_units


def hit(point: str, candidate: str) -> bool:
    verdict = LexicalJudge().judge([JudgeRequest("avp_gen_000001", 0, candidate, (KeyPoint("kp01", point),))])[0]
    assert verdict.hits is not None
    return verdict.hits["kp01"]


def test_the_threshold() -> None:
    assert LEXICAL_HIT_MIN == 0.5


@pytest.mark.parametrize(
    ("point", "candidate", "share", "expected"),
    [
        ("turn kitchen lights bright", "kitchen lights", 2 / 4, True),  # exactly half: a hit
        ("turn kitchen lights bright now", "kitchen lights", 2 / 5, False),  # 40 %: a miss
        ("turn kitchen lights bright", "kitchen", 1 / 4, False),
        ("kitchen lights", "the kitchen lights are too bright, turn them on now please", 1.0, True),
    ],
)
def test_share_of_the_key_points_units_decides(point: str, candidate: str, share: float, expected: bool) -> None:
    units, found = content_units(point), content_units(candidate)
    assert len(units & found) / len(units) == pytest.approx(share)
    assert hit(point, candidate) is expected
