"""Segment matching at the edges of its named thresholds (App A.2; odu/core/constants.py).

Each case sits just inside or just outside one rule, so that moving a threshold, flipping a
comparison or computing a similarity or a share the wrong way changes which phase (or none)
assigns the prediction. The similarity each case relies on is asserted first.
"""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz

from odu.core.constants import (
    CONTAINMENT_MIN_CHARS,
    CONTAINMENT_SPAN_MIN,
    CONTAINMENT_TEXT_MIN,
    IOU_MATCH_MIN,
    TRANSCRIPT_MATCH_MIN,
)
from odu.core.match import _inside, iou, match_segments, merge_segments
from odu.core.schema import KeyPoint, PredictedContext, PredictedSegment, ReferenceSegment
from odu.core.text import normalize

REQUEST = "please book a table for two at the italian place tonight"
FAR = (15_000, 16_000)  # a span that neither overlaps nor lies inside the reference's (1000-5000)


def reference(start: int = 1000, end: int = 5000, transcript: str = REQUEST) -> ReferenceSegment:
    return ReferenceSegment(
        start_ms=start,
        end_ms=end,
        transcript=transcript,
        structured_intent="book a table",
        required_context=(),
        user_in_frame=True,
        user_gender="female",
        user_age_group="adult",
        key_points=(KeyPoint("kp01", "table for two"),),
    )


def predicted(span: tuple[int, int], transcript: str) -> PredictedSegment:
    return PredictedSegment(start_ms=span[0], end_ms=span[1], transcript=transcript)


def method(span: tuple[int, int], transcript: str, ref: ReferenceSegment | None = None) -> str:
    return match_segments([ref or reference()], [predicted(span, transcript)])[0].method


def similarity(a: str, b: str) -> float:
    return fuzz.ratio(normalize(a), normalize(b)) / 100


def alignment(inner: str, outer: str) -> float:
    return fuzz.partial_ratio(normalize(inner), normalize(outer)) / 100


def test_the_thresholds_these_cases_sit_on() -> None:
    assert (TRANSCRIPT_MATCH_MIN, IOU_MATCH_MIN) == (0.5, 0.2)
    assert (CONTAINMENT_TEXT_MIN, CONTAINMENT_MIN_CHARS, CONTAINMENT_SPAN_MIN) == (0.8, 4, 0.5)


def test_phase_one_uses_whole_transcript_similarity_not_alignment() -> None:
    """A short piece of the request aligns perfectly but is not similar as a whole: it is a
    fragment (phase 3), never a one-to-one transcript match."""
    assert alignment("book a table", REQUEST) == 1.0 and similarity("book a table", REQUEST) < TRANSCRIPT_MATCH_MIN
    assert method(FAR, "book a table") == "fragment"


def test_transcript_similarity_just_below_the_minimum_does_not_match() -> None:
    text = "pls bk a tbl fr tw"
    assert 0.45 < similarity(text, REQUEST) < TRANSCRIPT_MATCH_MIN and alignment(text, REQUEST) < 0.75
    assert method(FAR, text) == "none"
    assert method(FAR, REQUEST.replace("italian", "italien")) == "transcript"


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        ((4000, 6000), "iou"),  # IoU exactly 0.2 (1000 / 5000): the minimum is inclusive
        ((4000, 8000), "none"),  # IoU 1/7, a quarter of the prediction inside: below every rule
    ],
)
def test_iou_minimum(span: tuple[int, int], expected: str) -> None:
    assert method(span, "zzz qqq") == expected


def test_iou_values_of_these_cases() -> None:
    assert iou((1000, 5000), (4000, 6000)) == pytest.approx(0.2)
    assert iou((1000, 5000), (4000, 8000)) == pytest.approx(1 / 7)


@pytest.mark.parametrize(
    ("span", "ref_span", "expected"),
    [
        ((2000, 3000), (1000, 9000), "fragment"),  # wholly inside a reference 8x longer (IoU 0.125)
        ((4500, 5500), (1000, 5000), "fragment"),  # half inside (IoU 0.11): the span minimum is inclusive
        ((4600, 5600), (1000, 5000), "none"),  # 40 % inside (IoU 0.09)
    ],
)
def test_span_inside_share_is_of_the_prediction(
    span: tuple[int, int], ref_span: tuple[int, int], expected: str
) -> None:
    assert method(span, "zzz qqq", reference(*ref_span)) == expected


def test_inside_share_values() -> None:
    assert _inside((2000, 3000), (1000, 9000)) == 1.0
    assert _inside((4500, 5500), (1000, 5000)) == 0.5
    assert _inside((4600, 5600), (1000, 5000)) == pytest.approx(0.4)
    assert _inside((1000, 5000), (4500, 5500)) == pytest.approx(0.125)  # the other way round


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ("italien plase tonite", "fragment"),  # aligns at exactly 0.8: the minimum is inclusive
        ("bok tabl fo to", "none"),  # aligns at 0.79
        ("italy plaza tonite", "none"),  # aligns at 0.72
    ],
)
def test_text_alignment_minimum(fragment: str, expected: str) -> None:
    assert method(FAR, fragment) == expected


def test_text_alignment_values() -> None:
    assert alignment("italien plase tonite", REQUEST) == CONTAINMENT_TEXT_MIN
    assert 0.75 < alignment("bok tabl fo to", REQUEST) < CONTAINMENT_TEXT_MIN
    assert 0.6 < alignment("italy plaza tonite", REQUEST) < 0.75


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ("book", "fragment"),  # four characters: long enough to align
        ("two", "none"),  # three: aligns perfectly but is too short to count
    ],
)
def test_text_alignment_needs_a_minimum_length(fragment: str, expected: str) -> None:
    assert alignment(fragment, REQUEST) == 1.0
    assert method(FAR, fragment) == expected


def test_longer_prediction_is_not_a_fragment_by_alignment() -> None:
    """A prediction whose transcript is longer than the reference's cannot lie inside it by text
    (phase 3), though the reference's aligns inside the prediction's: it covers the reference
    (phase 4)."""
    assert method(FAR, REQUEST, reference(1000, 5000, "book a table")) == "cover"


def test_a_fragment_joins_the_reference_it_lies_inside_best() -> None:
    """Phase 3: a leftover prediction that lies inside two references joins the one it aligns
    with best (1.0 against 0.83), whatever their order."""
    best = reference(1000, 5000, REQUEST)
    other = reference(8000, 12000, "later bok a tabel at the sushi bar downtown tomorrow")
    assert alignment("book a table", other.transcript) == pytest.approx(0.8333, abs=1e-3)
    for refs in ([best, other], [other, best]):
        matches = match_segments(refs, [predicted(FAR, "book a table")])
        assert {refs[m.reference].transcript: m.method for m in matches} == {
            REQUEST: "fragment",
            other.transcript: "none",
        }


def test_a_reference_is_covered_by_the_prediction_it_lies_inside_best() -> None:
    """Phase 4: a leftover reference that lies inside two predictions is covered by the one it
    aligns with best (1.0 against 0.83), whatever their order."""
    ref = reference(1000, 5000, "book a table")
    best, other = (
        predicted(FAR, REQUEST),
        predicted((20_000, 21_000), "we should bok a tabel somewhere nice later tonight"),
    )
    assert alignment(ref.transcript, other.transcript) == pytest.approx(0.8333, abs=1e-3)
    for preds in ([best, other], [other, best]):
        (match,) = match_segments([ref], preds)
        assert match.method == "cover" and [preds[j] for j in match.predictions] == [best]


# --- which pair wins, ties, and what each phase may touch (module docstring of odu/core/match.py) ---


def test_phase_one_takes_the_most_similar_pair_first() -> None:
    """Best pairs first: of two predictions over the minimum, the more similar one is the match; the
    other (longer than the reference, far away) is no fragment and stays unmatched."""
    short = "book a table for two"
    exact, longer = predicted(FAR, short), predicted((20_000, 21_000), short + " people tonight please")
    assert TRANSCRIPT_MATCH_MIN <= similarity(longer.transcript, short) < 1.0
    for preds in ([exact, longer], [longer, exact]):
        (match,) = match_segments([reference(transcript=short)], preds)
        assert match.method == "transcript" and [preds[j] for j in match.predictions] == [exact]


def test_equal_similarity_goes_to_the_better_overlap() -> None:
    """Two predictions with the reference's very transcript: the one whose span overlaps it wins,
    though the other comes first in time (a three-letter leftover lies inside nothing by text)."""
    ref = reference(8000, 9000, "hey")
    early, overlapping = predicted((1000, 2000), "hey"), predicted((8200, 9000), "hey")
    (match,) = match_segments([ref], [early, overlapping])
    assert match.method == "transcript" and match.predictions == (1,) and match.iou == pytest.approx(0.8)


def test_a_full_tie_is_broken_by_content_not_list_position() -> None:
    """Same transcript, same IoU (0.25 each, 40 % inside: no fragment): the earlier prediction wins
    in either list order (docs/scoring.md, "Scoring choices": ties)."""
    ref = reference(1000, 2000, "hey")
    before = PredictedSegment(400, 1400, "hey", "before")
    after = PredictedSegment(1600, 2600, "hey", "after")
    assert iou((1000, 2000), (400, 1400)) == iou((1000, 2000), (1600, 2600)) == pytest.approx(0.25)
    for preds in ([before, after], [after, before]):
        (match,) = match_segments([ref], preds)
        assert match.merged == before and match.method == "transcript"


def test_a_fragment_inside_two_equal_references_joins_the_earlier() -> None:
    """Phase 3 tie: the fragment aligns perfectly inside both references; the earlier one gets it,
    whatever their order."""
    first, second = reference(1000, 5000), reference(8000, 12_000)
    for refs in ([first, second], [second, first]):
        matches = match_segments(refs, [predicted(FAR, "book a table")])
        assert {refs[m.reference].start_ms: m.method for m in matches} == {1000: "fragment", 8000: "none"}


def test_a_reference_inside_two_equal_predictions_is_covered_by_the_earlier() -> None:
    """Phase 4 tie: the reference aligns perfectly inside both predictions; the earlier one covers it."""
    early, late = predicted(FAR, REQUEST), predicted((20_000, 21_000), REQUEST)
    for preds in ([early, late], [late, early]):
        (match,) = match_segments([reference(transcript="book a table")], preds)
        assert match.method == "cover" and [preds[j] for j in match.predictions] == [early]


def test_method_names_how_the_first_prediction_was_assigned() -> None:
    """A fragment joining a reference already matched by transcript leaves its method "transcript"."""
    (match,) = match_segments([reference()], [predicted((1000, 5000), REQUEST), predicted(FAR, "book a table")])
    assert match.predictions == (0, 1) and match.method == "transcript"


def test_phase_four_covers_only_references_still_unmatched() -> None:
    """A reference matched by transcript is not also covered by a longer prediction it lies inside."""
    ref = reference(1000, 2000, "book a table")
    (match,) = match_segments([ref], [predicted((1000, 2000), "book a table"), predicted(FAR, REQUEST)])
    assert match.predictions == (0,) and match.method == "transcript"


def test_phase_three_places_only_leftover_predictions() -> None:
    """A prediction matched one-to-one does not also join a long reference its span lies inside."""
    request, wide = reference(1000, 5000), reference(0, 20_000, "something else entirely different words")
    matches = match_segments([request, wide], [predicted((1000, 5000), REQUEST)])
    assert [(m.method, m.predictions) for m in matches] == [("transcript", (0,)), ("none", ())]


def test_a_zero_length_prediction_lies_inside_nothing() -> None:
    """A span of no duration (start == end, as the parser keeps it) has no share inside a reference:
    no fragment, and no error."""
    assert _inside((3000, 3000), (1000, 5000)) == 0.0
    assert method((3000, 3000), "zzz qqq") == "none"


def test_the_minimum_length_counts_characters_without_spaces() -> None:
    """The fragment "a ta" aligns perfectly but has three characters once its space is left out."""
    assert alignment("a ta", REQUEST) == 1.0 and len("a ta") == CONTAINMENT_MIN_CHARS
    assert method(FAR, "a ta") == "none"


def test_reported_similarity_is_of_the_normalised_transcripts() -> None:
    """The match's similarity compares normalised text, as the assignment does (docs/scoring.md,
    "Scoring choices": phase 1): case and punctuation cost nothing."""
    (match,) = match_segments([reference(transcript="book a table please")], [predicted(FAR, "Book a table, please!")])
    assert match.method == "transcript" and match.similarity == 1.0


def test_merged_fragments_keep_distinct_intents_and_context_once() -> None:
    """merge_segments: span earliest start to latest end, intents that repeat and context items that
    repeat exactly are kept once."""
    ctx = PredictedContext("visual", "the menu on the table")
    a = PredictedSegment(3000, 4000, "for two", "book a table", (ctx,))
    b = PredictedSegment(1000, 2500, "book a table", "book a table", (ctx, PredictedContext("audio", "music")))
    merged = merge_segments([a, b])
    assert (merged.start_ms, merged.end_ms, merged.transcript) == (1000, 4000, "book a table for two")
    assert merged.structured_intent == "book a table"
    assert merged.required_context == (ctx, PredictedContext("audio", "music"))
