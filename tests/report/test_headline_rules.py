"""Headline intervals (odu/report/headline.py, App E.1): the draws follow the scene ids, not the
order of a run's rows, and an incomplete run shows no Avg."""

from __future__ import annotations

import random

import pytest
from support.report_rows import report_row

from odu.report.headline import headline
from odu.report.runs import System

AV = "audio-visual"


def rows(n: int = 40, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        positive = i % 4 != 0
        score = (lambda: round(rng.random(), 3)) if positive else (lambda: None)
        out.append(
            report_row(
                f"avp_gen_{i:06d}" if positive else f"avn_gen_{i:06d}",
                positive,
                rng.random() < 0.7,
                (score(), score(), score(), score()),
            )
        )
    return out


def entry(system: System) -> dict:
    (found,) = headline([system], resamples=300, seed=5)[AV]
    return found


def test_intervals_do_not_depend_on_the_order_of_the_rows() -> None:
    ordered = rows()
    shuffled = random.Random(1).sample(ordered, len(ordered))
    a, b = entry(System("a", {"judge": {}}, ordered)), entry(System("a", {"judge": {}}, shuffled))
    for metric, found in a["metrics"].items():  # the same draws of the same scenes: the same intervals
        assert found["ci"] == b["metrics"][metric]["ci"]
        assert found["value"] == pytest.approx(b["metrics"][metric]["value"])  # point: summed in run order


def test_an_incomplete_run_has_no_avg_nor_its_interval() -> None:
    complete = entry(System("a", {"judge": {}}, rows()))
    assert complete["metrics"]["avg"]["value"] is not None and None not in complete["metrics"]["avg"]["ci"]
    marked = entry(System("a", {"judge": {}, "judge_errors": 2}, rows()))
    assert marked["incomplete"] is True
    assert marked["metrics"]["avg"] == {"value": None, "ci": [None, None]}
    assert marked["metrics"]["m1"] == complete["metrics"]["m1"]
