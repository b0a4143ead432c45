"""Scene scores of a scene where one reference segment is matched and another is not (App A.3
Eqs. 2-5): the unmatched one counts in every scene score, as zero / misses / an empty transcript."""

from __future__ import annotations

import json

import pytest

from odu.core.schema import scene_from_dict
from odu.judge import LexicalJudge
from odu.runs.scoring import score_scenes

LIGHTS = "turn on the kitchen lights"  # 5 words
MUSIC = "and play some quiet jazz music"  # 6 words


def segment(start: int, end: int, transcript: str, point: str, qid: str) -> dict:
    return {
        "start_ms": start,
        "end_ms": end,
        "transcript": transcript,
        "structured_intent": point,
        "required_context": [],
        "user_in_frame": True,
        "user_gender": "female",
        "user_age_group": "adult",
        "key_points": [{"qid": qid, "point": point, "source": "intent", "tiers": ["T1"]}],
    }


def scored(modality: str = "audio-visual") -> dict:
    refs = [segment(1000, 3000, LIGHTS, "kitchen lights on", "kp01"), segment(8000, 11000, MUSIC, "jazz music", "kp02")]
    if modality == "audio-only":
        for r in refs:
            del r["user_in_frame"]
    ann = {"evaluation_targets": {"has_demand": True, "segments": refs}}
    scene = scene_from_dict(
        {
            "scene_id": "avp_gen_000001" if modality == "audio-visual" else "aop_gen_000001",
            "language": "en",
            "modality": modality,
            "source": "generated",
            "label": "positive",
            "annotations": {"en": ann},
            "clips": [{"id": "v1", "src": "x.mp4", "duration": 20.0}],
        }
    )
    only_first = {k: v for k, v in refs[0].items() if k != "key_points"}
    output = json.dumps({"has_demand": True, "segments": [only_first]})
    return score_scenes([scene], {scene.scene_id: output}, LexicalJudge()).scenes[0]


@pytest.mark.parametrize("modality", ["audio-visual", "audio-only"])
def test_unmatched_reference_segment_counts_in_every_scene_score(modality: str) -> None:
    row = scored(modality)
    assert [m["method"] for m in row["matches"]] == ["transcript", "none"]
    assert row["s2"] == 0.5  # Eq. 2: the matched segment's point hit, the unmatched one's missed
    assert row["s3"] == 0.5  # Eq. 3: IoU 1 and 0
    assert row["s4"] == pytest.approx(1 - 6 / 11)  # Eq. 4: the unmatched reference's 6 words all deleted
    assert row["s5"] == 0.5  # Eq. 5: every profile field right on one segment of two
    assert [(k["qid"], k["matched"], k["hit"]) for k in row["key_points"]] == [
        ("kp01", True, True),
        ("kp02", False, False),
    ]
