"""Release records that would make scoring wrong are refused, naming the scene (odu/core/schema.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from odu.core.schema import SchemaError, iter_scenes, read_predictions, scene_from_dict

SID = "avp_gen_000007"


def record(**changes: Any) -> dict[str, Any]:
    segment = {
        "start_ms": 1000,
        "end_ms": 3000,
        "transcript": "turn on the lights",
        "structured_intent": "lights on",
        "required_context": [],
        "user_in_frame": True,
        "user_gender": "female",
        "user_age_group": "adult",
        "key_points": [{"qid": "kp01", "point": "lights on", "source": "intent", "tiers": ["T1"]}],
    }
    rec: dict[str, Any] = {
        "scene_id": SID,
        "language": "en",
        "modality": "audio-visual",
        "source": "generated",
        "label": "positive",
        "annotations": {
            lang: {"evaluation_targets": {"has_demand": True, "segments": [copy.deepcopy(segment)]}}
            for lang in ("en", "zh")
        },
        "clips": [{"id": "v1", "src": "x.mp4", "duration": 4.0}],
    }
    rec.update(changes)
    return rec


def targets(rec: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    return rec["annotations"][lang]["evaluation_targets"]


def refused(rec: dict[str, Any], *words: str) -> None:
    with pytest.raises(SchemaError) as caught:
        scene_from_dict(rec)
    message = str(caught.value)
    assert SID in message and all(w in message for w in words), message


def test_a_valid_record_loads() -> None:
    scene = scene_from_dict(record())
    assert scene.annotation().segments[0].end_ms == 3000


def test_a_span_ending_before_it_starts_is_refused() -> None:
    rec = record()
    targets(rec)["segments"][0].update(start_ms=3000, end_ms=1000)
    refused(rec, "segments[0]")


def test_a_zero_length_span_is_accepted() -> None:
    rec = record()
    targets(rec)["segments"][0].update(start_ms=2000, end_ms=2000)
    assert scene_from_dict(rec).annotation().segments[0].start_ms == 2000


@pytest.mark.parametrize("has_demand", [True, False])
def test_has_demand_must_agree_with_the_segments(has_demand: bool) -> None:
    rec = record(label="positive" if has_demand else "negative")
    for lang in ("en", "zh"):
        targets(rec, lang)["has_demand"] = has_demand
        if has_demand:
            targets(rec, lang)["segments"] = []
    refused(rec, "has_demand")


def test_the_label_must_agree_with_has_demand() -> None:
    refused(record(label="negative"), "label")


def test_a_repeated_key_point_qid_is_refused() -> None:
    rec = record()
    points = targets(rec)["segments"][0]["key_points"]
    points.append(dict(points[0], point="something else"))
    refused(rec, "qid")


def test_an_audio_visual_segment_needs_user_in_frame() -> None:
    rec = record()
    del targets(rec)["segments"][0]["user_in_frame"]
    refused(rec, "user_in_frame")


@pytest.mark.parametrize("duration", [0, -1.0])
def test_a_clip_needs_a_positive_duration(duration: float) -> None:
    refused(record(clips=[{"id": "v1", "src": "x.mp4", "duration": duration}]), "duration")


def test_an_unknown_modality_is_refused() -> None:
    refused(record(modality="video"), "modality")


def test_a_repeated_scene_id_is_refused() -> None:
    with pytest.raises(SchemaError, match=SID):
        list(iter_scenes([record(), record()]))


def test_the_annotation_language_chooses_the_reference() -> None:
    rec = record()
    targets(rec, "zh")["segments"][0]["transcript"] = "打开灯"
    scene = scene_from_dict(rec)
    assert scene.annotation("scene").segments[0].transcript == "turn on the lights"
    assert scene.annotation("zh").segments[0].transcript == "打开灯"


def test_a_repeated_prediction_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text("\n".join(json.dumps({"scene_id": SID, "output": o}) for o in ("a", "b")) + "\n")
    with pytest.raises(SchemaError, match=SID):
        read_predictions(path)


def test_a_scene_needs_a_clip() -> None:
    refused(record(clips=[]), "clips")
