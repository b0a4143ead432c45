"""Segment matching (App A.2) and the scene scores built on it: one test per rule."""

from __future__ import annotations

import ast
import itertools
import json
import random
import re
from pathlib import Path

import pytest
from rapidfuzz import fuzz

import odu.core.match
import odu.core.text
from odu.core.match import iou, match_segments, merge_segments
from odu.core.schema import PredictedSegment, ReferenceSegment, scene_from_dict
from odu.core.text import is_cjk_dominant, normalize
from odu.judge import LexicalJudge
from odu.runs.scoring import score_scenes

REPO = Path(__file__).resolve().parents[2]


def pred(start, end, transcript, **kw) -> dict:
    return {
        "start_ms": start,
        "end_ms": end,
        "transcript": transcript,
        "structured_intent": kw.get("intent", "The user wants help"),
        "required_context": [],
        "user_in_frame": kw.get("in_frame", True),
        "user_gender": kw.get("gender", "female"),
        "user_age_group": kw.get("age", "adult"),
    }


def ref(start: int, end: int, transcript: str, **kw) -> dict:
    """A reference segment: the predicted one with the same fields, plus key points."""
    key_points = kw.get("key_points", [{"qid": "kp01", "point": "help", "source": "intent", "tiers": ["T1"]}])
    return {**pred(start, end, transcript, **kw), "key_points": key_points}


def scene(*segments: dict, modality: str = "audio-visual", language: str = "en", sid: str = "avp_gen_000001"):
    ann = {"evaluation_targets": {"has_demand": bool(segments), "segments": list(segments)}}
    return scene_from_dict(
        {
            "scene_id": sid,
            "language": language,
            "modality": modality,
            "source": "generated",
            "label": "positive" if segments else "negative",
            "annotations": {"en": ann, "zh": ann},
            "clips": [{"id": "v1", "src": "x.mp4", "duration": 20.0, "replies": []}],
        }
    )


def row(sc, *segments: dict) -> dict:
    output = json.dumps({"has_demand": True, "segments": list(segments)}, ensure_ascii=False)
    return score_scenes([sc], {sc.scene_id: output}, LexicalJudge()).scenes[0]


def test_iou() -> None:
    assert iou((3510, 5390), (3600, 5500)) == pytest.approx(1790 / 1990)
    assert iou((0, 10), (20, 30)) == 0.0
    assert iou(None, (0, 1)) == 0.0
    assert iou((5, 5), (5, 5)) == 1.0


def test_unmatched_reference_scores_zero_everywhere() -> None:
    r = row(scene(ref(1000, 2000, "turn on the lights please")), pred(15000, 16000, "what a lovely day outside"))
    assert r["matches"][0]["method"] == "none"
    assert (r["s2"], r["s3"], r["s4"], r["s5"]) == (0.0, 0.0, 0.0, 0.0)
    assert all(k["hit"] is False and not k["matched"] for k in r["key_points"])


def test_transcript_similarity_beats_time() -> None:
    sc = scene(ref(1000, 3000, "set a timer for ten minutes"), ref(5000, 7000, "and turn off the oven"))
    # timestamps swapped: transcript similarity must still pair them correctly
    r = row(sc, pred(5000, 7000, "set a timer for ten minutes"), pred(1000, 3000, "and turn off the oven"))
    assert [m["method"] for m in r["matches"]] == ["transcript", "transcript"]
    assert r["s4"] == 1.0 and r["s3"] == 0.0


def test_iou_fallback_when_transcripts_differ() -> None:
    r = row(scene(ref(1000, 3000, "set a timer for ten minutes")), pred(1100, 3000, "zzz qqq"))
    assert r["matches"][0]["method"] == "iou"
    assert r["s3"] == pytest.approx(1900 / 2000)


def documented_choices() -> dict[str, object]:
    """Every ``NAME = value`` quoted in the "Scoring choices" table of docs/scoring.md."""
    text = (REPO / "docs" / "scoring.md").read_text(encoding="utf-8")
    table = text.split("## Scoring choices", 1)[1].split("\n## ", 1)[0]
    return {name: ast.literal_eval(value) for name, value in re.findall(r"`([A-Z][A-Z0-9_]*) = ([^`]+)`", table)}


def _constants_used(module) -> set[str]:
    """The names ``module`` imports from ``odu.core.constants`` (read from its source)."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    return {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "constants" and node.level == 1
        for alias in node.names
    }


def test_thresholds_are_what_the_docs_say() -> None:
    """Every constant matching and normalisation use is quoted in docs/scoring.md with the value the
    code runs with, and matching turns exactly at the quoted values (not at hard-coded ones)."""
    doc = documented_choices()
    used = _constants_used(odu.core.match) | _constants_used(odu.core.text)
    assert used and used <= set(doc), f"docs/scoring.md does not quote {sorted(used - set(doc))}"
    runs_with = {name: getattr(odu.core.match, name, getattr(odu.core.text, name, None)) for name in used}
    assert runs_with == {name: doc[name] for name in used}

    # phase 1: transcript similarity (rapidfuzz ratio) at the quoted minimum matches, just below does not
    t = doc["TRANSCRIPT_MATCH_MIN"]
    n, k = 100, round(t * 100)
    assert k / n == t
    reference = scene(ref(0, 1000, "a" * n))
    for same, method in ((k, "transcript"), (k - 1, "none")):
        hypothesis = "a" * same + "b" * (n - same)
        assert fuzz.ratio("a" * n, hypothesis) / 100 == same / n
        assert row(reference, pred(5000, 6000, hypothesis))["matches"][0]["method"] == method

    # phase 2: IoU at the quoted minimum matches, just below does not (spans chosen so that neither
    # lies CONTAINMENT_SPAN_MIN inside the other, which would be phase 3/4)
    t, span_min, length = doc["IOU_MATCH_MIN"], doc["CONTAINMENT_SPAN_MIN"], 1000
    inter = round(length * span_min * 0.8)
    other = round(inter / t) - length + inter
    assert inter / length < span_min and inter / other < span_min
    start, end = length - inter, length - inter + other
    assert iou((0, length), (start, end)) == pytest.approx(t) and iou((0, length), (start, end + 20)) < t
    for stop, method in ((end, "iou"), (end + 20, "none")):
        r = row(scene(ref(0, length, "abc def ghi")), pred(start, stop, "xyz uvw rst"))
        assert r["matches"][0]["method"] == method

    # phase 3: a leftover fragment lying the quoted fraction inside the reference joins it
    text = "set a timer for ten minutes and then order the ingredients please"
    lead = pred(0, 10_000, text)
    inside = round(1000 * span_min)
    for shift, joined in ((0, True), (10, False)):
        fragment = pred(10_000 - inside + shift, 11_000 - inside + shift, "zzz qqq")
        assert (
            sorted(row(scene(ref(0, 10_000, text)), lead, fragment)["matches"][0]["predictions"]) == [0, 1]
        ) == joined

    # phase 3: a fragment whose text lies inside the reference's joins it from CONTAINMENT_MIN_CHARS
    # characters on, and from a partial_ratio of CONTAINMENT_TEXT_MIN on
    chars, text_min = doc["CONTAINMENT_MIN_CHARS"], doc["CONTAINMENT_TEXT_MIN"]
    for piece, joined in (("ingredients"[:chars], True), ("ingredients"[: chars - 1], False)):
        fragment = pred(15_000, 16_000, piece)
        assert (
            sorted(row(scene(ref(0, 10_000, text)), lead, fragment)["matches"][0]["predictions"]) == [0, 1]
        ) == joined
    kept = round(10 * text_min)
    for piece, joined in (
        ("ingredient"[:kept] + "x" * (10 - kept), True),
        ("ingredient"[: kept - 1] + "x" * (11 - kept), False),
    ):
        assert (fuzz.partial_ratio(piece, normalize(text)) / 100 >= text_min) == joined
        fragment = pred(15_000, 16_000, piece)
        assert (
            sorted(row(scene(ref(0, 10_000, text)), lead, fragment)["matches"][0]["predictions"]) == [0, 1]
        ) == joined

    # normalisation: CJK-dominant only above the quoted fraction of tokens
    cjk_min = doc["CJK_DOMINANT_MIN"]
    cjk = round(20 * cjk_min)
    assert cjk / 20 == cjk_min
    assert not is_cjk_dominant("我" * cjk + " ab" * (20 - cjk))
    assert is_cjk_dominant("我" * (cjk + 1) + " ab" * (20 - cjk - 1))


def test_split_prediction_fragments_are_merged() -> None:
    sc = scene(ref(1000, 5000, "can you find a recipe and then order the ingredients"))
    r = row(
        sc,
        pred(3000, 5000, "and then order the ingredients", intent="order ingredients"),
        pred(1000, 2900, "can you find a recipe", intent="find a recipe"),
    )
    assert r["matches"][0]["predictions"] == [1, 0]  # time order
    assert r["s4"] == 1.0
    assert r["s3"] == 1.0
    assert r["candidates"][0]["text"] == "find a recipe order ingredients"


def test_one_prediction_covers_two_references_without_double_charging_m4() -> None:
    sc = scene(ref(1000, 2000, "turn on the light"), ref(6000, 7000, "and play some jazz"))
    r = row(sc, pred(1000, 7000, "turn on the light and play some jazz"))
    assert sorted(m["method"] for m in r["matches"]) == ["cover", "transcript"]
    assert r["s4"] == 1.0
    assert r["s3"] == pytest.approx((1000 / 6000 + 1000 / 6000) / 2)


def test_result_does_not_depend_on_segment_order() -> None:
    refs = [
        ref(1000, 2500, "open the window"),
        ref(4000, 5200, "close the curtains too"),
        ref(8000, 9000, "and dim the lamp"),
    ]
    preds = [
        pred(1100, 2400, "open window"),
        pred(4000, 5000, "close the curtain"),
        pred(4900, 5300, "too"),
        pred(7800, 9100, "dim the lamp", gender="male"),
        pred(12000, 13000, "unrelated words here"),
    ]
    rng = random.Random(7)
    seen = set()
    for _ in range(20):
        r_order, p_order = rng.sample(refs, len(refs)), rng.sample(preds, len(preds))
        r = row(scene(*r_order), *p_order)
        seen.add(tuple(round(r[k], 9) for k in ("s2", "s3", "s4", "s5")))
    assert len(seen) == 1


def test_merge_segments_takes_profile_from_earliest_fragment() -> None:
    a = PredictedSegment(3000, 4000, "b", "i2", (), False, "male", None)
    b = PredictedSegment(1000, 2000, "a", "i1", (), None, "female", "adult")
    m = merge_segments([a, b])
    assert (m.start_ms, m.end_ms, m.transcript, m.structured_intent) == (1000, 4000, "a b", "i1 i2")
    assert (m.user_in_frame, m.user_gender, m.user_age_group) == (False, "female", "adult")


def test_cjk_reference_scored_in_characters_with_digits_and_english_inside() -> None:
    sc = scene(ref(0, 3000, "我想买iPhone 15，可以吗？"), language="zh")
    r = row(sc, pred(0, 3000, "我想买iphone15可以吗"))
    assert r["s4"] == 1.0
    r = row(sc, pred(0, 3000, "我想买iPhone 16，可以吗"))  # 1 of 14 characters wrong
    assert r["s4"] == pytest.approx(1 - 1 / 14)


def test_full_width_punctuation_splits_english_words() -> None:
    r = row(scene(ref(0, 3000, "Is it yellow？And round?")), pred(0, 3000, "is it yellow and round"))
    assert r["s4"] == 1.0


def test_punctuation_only_reference_has_no_m4() -> None:
    sc = scene(ref(0, 3000, "？！…"))
    r = row(sc, pred(0, 3000, "hmm"))
    assert r["s4"] is None and r["s3"] == 1.0
    run = score_scenes([sc], {}, LexicalJudge())
    assert run.summary["audio-visual"]["m4"] is None


def test_empty_hypothesis_costs_the_whole_reference() -> None:
    r = row(scene(ref(0, 3000, "play the next song")), pred(0, 3000, ""))
    assert r["matches"][0]["method"] == "iou" and r["s4"] == 0.0


def test_audio_only_profile_ignores_user_in_frame() -> None:
    sc = scene(ref(0, 3000, "what is that noise", in_frame=None), modality="audio-only", sid="aop_gen_000001")
    r = row(sc, pred(0, 3000, "what is that noise", in_frame=False))
    assert r["s5"] == 1.0
    r = row(sc, pred(0, 3000, "what is that noise", gender="male"))
    assert r["s5"] == 0.5


def test_out_of_set_profile_value_is_wrong_not_a_crash() -> None:
    sc = scene(ref(0, 3000, "what is that noise", age="elderly"))
    r = row(sc, pred(0, 3000, "what is that noise", age="senior"))
    assert r["s5"] == pytest.approx(2 / 3)
    assert any("senior" in i for i in r["issues"])


def test_negative_scene_only_feeds_m1_and_ftr() -> None:
    sc = scene()
    r = row(sc, pred(0, 1000, "hello"))
    assert r["predicted_has_demand"] is True
    assert (r["s2"], r["s3"], r["s4"], r["s5"]) == (None, None, None, None)


@pytest.mark.parametrize("n_refs,n_preds", list(itertools.product(range(4), range(4))))
def test_every_reference_gets_exactly_one_match_record(n_refs: int, n_preds: int) -> None:
    refs = [
        ReferenceSegment(i * 2000, i * 2000 + 1000, f"words {i}", "", (), True, "male", "adult", ())
        for i in range(n_refs)
    ]
    preds = [PredictedSegment(j * 2100, j * 2100 + 900, f"words {j}") for j in range(n_preds)]
    matches = match_segments(refs, preds)
    assert [m.reference for m in matches] == list(range(n_refs))
