"""Every number and closed set the scorer uses, in one place.

Two kinds live here:

* values the paper fixes (metric weights, closed sets of App A.1 / F.1), cited;
* choices the paper leaves open ("Detailed matching thresholds and merging rules are provided in
  the released evaluation code", App A.2), which we pick, name and document in the README
  ("Scoring choices"), and the limits that keep parsing robust. Tests pin each of them.

Settings of everything around the scorer live next to the code that uses them: transport
(:mod:`odu.transport.openai_client`, :mod:`odu.judge.openai_judge`, :mod:`odu.models`), data and media
(:mod:`odu.data`), reports and taxonomy names (:mod:`odu.report`).
"""

from __future__ import annotations

# --- fixed by the paper -----------------------------------------------------------------------

#: Avg weights (w1..w5), App A.4 Eq. 6 and Table 2.
METRIC_WEIGHTS: dict[str, float] = {"m1": 0.15, "m2": 0.60, "m3": 0.10, "m4": 0.10, "m5": 0.05}

AUDIO_VISUAL = "audio-visual"
AUDIO_ONLY = "audio-only"
MODALITIES: tuple[str, ...] = (AUDIO_VISUAL, AUDIO_ONLY)

LANGUAGES: tuple[str, ...] = ("en", "zh")

#: Closed sets of the prediction schema, App A.1 Fig. 6 and App F.1 "Field Constraints".
GENDERS: frozenset[str] = frozenset({"male", "female", "unknown"})
AGE_GROUPS: frozenset[str] = frozenset({"child", "adult", "elderly", "unknown"})

#: Required-context types, App F.1 (seven, audio-visual) and App F.2 (six, no "visual").
CONTEXT_TYPES_AV: tuple[str, ...] = (
    "visual",
    "audio",
    "dialogue_history",
    "user_activity",
    "user_identity",
    "user_emotion",
    "scene_condition",
)
CONTEXT_TYPES_AO: tuple[str, ...] = tuple(t for t in CONTEXT_TYPES_AV if t != "visual")

#: Profile fields scored by M5 (App A.3 Eq. 5): three audio-visual, two audio-only.
PROFILE_FIELDS: dict[str, tuple[str, ...]] = {
    AUDIO_VISUAL: ("user_in_frame", "user_gender", "user_age_group"),
    AUDIO_ONLY: ("user_gender", "user_age_group"),
}

#: Candidate-text separator between intent and context items, as printed in App A.5.
CANDIDATE_SEPARATOR = " | "

# --- left open by the paper: our choices ----------------------------------------------------

#: Segment matching, phase 1: minimum normalised-transcript similarity (rapidfuzz ``ratio`` / 100,
#: i.e. 1 - normalised Indel distance on the M4-normalised text) for a one-to-one match.
TRANSCRIPT_MATCH_MIN = 0.5

#: Segment matching, phase 2 (fallback): minimum temporal IoU for a one-to-one match.
IOU_MATCH_MIN = 0.2

#: Segment matching, phase 3 (merge / cover): a predicted fragment joins a reference segment, or a
#: predicted segment covers an extra reference segment, when the shorter transcript aligns inside
#: the longer one with at least this similarity (rapidfuzz ``partial_ratio`` / 100) ...
CONTAINMENT_TEXT_MIN = 0.8
#: ... and the shorter transcript has at least this many normalised characters (spaces excluded),
#: so that "ok" does not align inside everything ...
CONTAINMENT_MIN_CHARS = 4
#: ... or when at least this fraction of the shorter span lies inside the longer one.
CONTAINMENT_SPAN_MIN = 0.5

#: A reference transcript is CJK-dominant (scored in characters, otherwise in words) when more
#: than this fraction of its tokens are CJK characters (ideographs, kana, hangul), each run of
#: other non-space characters (an English word, a number) counting as one token.
CJK_DOMINANT_MIN = 0.5

# --- robustness limits for model output (App A.1 gives no rule; see docs/scoring.md, "Parsing rules") ----

#: Raw outputs longer than this are cut before JSON extraction (an issue is recorded).
MAX_OUTPUT_CHARS = 200_000
#: At most this many ``{`` positions are tried when looking for the JSON object in prose.
MAX_JSON_CANDIDATES = 64
#: Segments beyond this count are dropped (an issue is recorded).
MAX_SEGMENTS = 32
#: Context items beyond this count per segment are dropped (an issue is recorded).
MAX_CONTEXT_ITEMS = 16
#: Free-text fields (transcript, intent, context description) are cut to this many characters.
MAX_TEXT_CHARS = 4_000
#: Times at or above this (24 h in ms) are treated as invalid.
MAX_TIME_MS = 86_400_000

# --- offline lexical judge (approximate; not the paper's LLM judge) -----------------------------

#: A key point is a lexical "hit" when at least this fraction of its content units (English content
#: words, lightly stemmed; CJK character bigrams) occur in the candidate text.
LEXICAL_HIT_MIN = 0.5
