"""What the scorer does with judges that bend the contract, and the candidate text of untyped
context (App A.5 worked example: "<intent> | <type>: <description>")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odu.judge.base import Judge, JudgeVerdict, candidate_text
from odu.parse import parse_output
from odu.schema import load_scenes
from odu.scoring import score_scenes

EXAMPLE = json.loads((Path(__file__).parent / "fixtures" / "worked_example_a5.json").read_text(encoding="utf-8"))
SCENES = load_scenes([EXAMPLE["scene"]])
OUTPUTS = {"avp_gen_000139": EXAMPLE["model_output"]}


class _Fixed(Judge):
    def __init__(self, make) -> None:
        self.make = make

    def judge(self, requests):
        return self.make(requests)


@pytest.mark.parametrize("verdict", [JudgeVerdict(hits=None, error=""), JudgeVerdict(hits=None)])
def test_a_failed_verdict_without_message_is_still_a_counted_judge_error(verdict: JudgeVerdict) -> None:
    run = score_scenes(SCENES, OUTPUTS, _Fixed(lambda reqs: [verdict for _ in reqs]))
    assert run.summary["judge_errors"] == 1  # the segment counts, so `score` exits non-zero
    assert run.summary["audio-visual"]["judge_error_points"] == 3
    assert all(k["hit"] is None and k["judge_error"] for k in run.scenes[0]["key_points"])


@pytest.mark.parametrize("extra", [-1, 1])
def test_a_judge_answering_the_wrong_number_of_requests_is_refused(extra: int) -> None:
    def answer(reqs):
        hits = [JudgeVerdict({k.qid: True for k in r.key_points}) for r in reqs]
        return hits[:extra] if extra < 0 else hits + hits[:extra]

    with pytest.raises(RuntimeError, match="verdict"):
        score_scenes(SCENES, OUTPUTS, _Fixed(answer))


def test_untyped_context_item_is_rendered_without_an_empty_type_prefix() -> None:
    output = json.loads(EXAMPLE["model_output"])
    output["segments"][0]["required_context"].append("A phone is beeping.")  # bare string: no type
    segment = parse_output(json.dumps(output), "audio-visual").segments[0]
    assert candidate_text(segment) == EXAMPLE["candidate_text"] + " | A phone is beeping."


def test_the_audit_refuses_a_judge_answering_fewer_requests() -> None:
    from odu.judge.audit import audit

    short = _Fixed(lambda reqs: [JudgeVerdict({k.qid: True for k in r.key_points}) for r in reqs][:-1])
    with pytest.raises(ValueError, match="0 verdicts for 1 requests"):
        audit({}, {"short": short}, SCENES)


def test_a_point_the_judge_skipped_is_a_judge_error_not_a_miss_or_a_crash() -> None:
    run = score_scenes(SCENES, OUTPUTS, _Fixed(lambda reqs: [JudgeVerdict({"kp01": True, "kp02": "yes"}) for _ in reqs]))
    points = {k["qid"]: k for k in run.scenes[0]["key_points"]}
    assert points["kp01"]["hit"] is True and points["kp01"]["judge_error"] is None
    assert points["kp02"]["hit"] is None and "kp02" in points["kp02"]["judge_error"]
    assert points["kp03"]["hit"] is None and "kp03" in points["kp03"]["judge_error"]
    assert run.summary["judge_errors"] == 1
    assert run.summary["audio-visual"]["m2"] == 1.0  # decided points only
    assert run.summary["audio-visual"]["m2_errors_as_misses"] == pytest.approx(1 / 3)
