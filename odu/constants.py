"""Every number and closed set the scorer uses, in one place.

Two kinds live here:

* values the paper fixes (metric weights, closed sets of App A.1 / F.1), cited;
* choices the paper leaves open ("Detailed matching thresholds and merging rules are provided in
  the released evaluation code", App A.2), which we pick, name and document in the README
  ("Scoring choices"). Tests pin each of them.
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

# --- robustness limits for model output (App A.1 gives no rule; see README "Parsing rules") ----

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

# --- reports (odu-bench report; App E.1, E.3, §5.4, §5.5) ---------------------------------------

#: Evidence channel of a key point, from its ``source`` label (App A.4 "Aggregation and key-point
#: accounting", App E.1 "Population and counting"). Other context pools emotion, activity,
#: identity and scene condition. A source missing from this table has no assigned channel: it stays
#: in the overall point count but in no channel-specific rate (App A.4).
CHANNEL_REQUEST = "spoken request"
CHANNEL_VISUAL = "visual"
CHANNEL_AUDIO = "audio"
CHANNEL_HISTORY = "dialogue history"
CHANNEL_OTHER = "other context"
CHANNEL_ALL_CONTEXT = "all context"
KEY_POINT_CHANNELS: dict[str, str] = {
    "intent": CHANNEL_REQUEST,
    "required_context.visual": CHANNEL_VISUAL,
    "required_context.audio": CHANNEL_AUDIO,
    "required_context.dialogue_history": CHANNEL_HISTORY,
    "required_context.user_emotion": CHANNEL_OTHER,
    "required_context.user_activity": CHANNEL_OTHER,
    "required_context.user_identity": CHANNEL_OTHER,
    "required_context.scene_condition": CHANNEL_OTHER,
}
#: Context channels pooled into "all context" (App E.1), in reporting order.
CONTEXT_CHANNELS: tuple[str, ...] = (CHANNEL_VISUAL, CHANNEL_AUDIO, CHANNEL_HISTORY, CHANNEL_OTHER)

#: Scene bootstrap (App E.1 "Scene-bootstrap procedure"): resamples and the percentile interval.
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_PERCENTILES: tuple[float, float] = (2.5, 97.5)
#: Our choice: the default seed of every report bootstrap (the paper does not give its seed).
BOOTSTRAP_SEED = 20_260_501

#: The four challenge axes analysed against M2 (App B.2, App E.3).
CHALLENGE_AXES: tuple[str, ...] = ("axis1", "axis2", "axis3", "axis4")
#: Category names of the challenge axes (App B.2). Axis 1 is modality-specific: audio-only scenes
#: use 1.1 language-channel and 1.2 acoustic-event dependence.
CHALLENGE_CATEGORIES: dict[str, dict[str, str]] = {
    AUDIO_VISUAL: {"1.1": "Language-channel", "1.2": "Vision-grounded", "1.3": "Audio-grounded",
                   "1.4": "Vision-Audio Joint"},
    AUDIO_ONLY: {"1.1": "Language-channel", "1.2": "Acoustic-event dependence"},
    "": {"2.1": "Self-contained Current Context", "2.2": "Temporal Event Dependency",
         "2.3": "Dialogue History Dependency", "2.4": "Speaker Identity Dependency",
         "2.5": "Affective State Dependency", "3.1": "Direct Instruction", "3.2": "Direct Question",
         "3.3": "Indirect or Descriptive Request", "3.4": "Hesitation or Self-correction",
         "3.5": "Interrupted or Incomplete Request", "3.6": "Compound or Multi-intent Request",
         "4.1": "Clean Near-field Speech", "4.2": "Background Noise", "4.3": "Competing Speech",
         "4.4": "Low-volume or Whispered Speech", "4.5": "Media Playback Interference"},
}
#: No-demand dimensions (App B.3): release value of ``negative_signal`` -> (code, short name).
NEGATIVE_SIGNALS: dict[str, tuple[str, str]] = {
    "linguistic_signal": ("S1", "Linguistic"),
    "semantic_signal": ("S2", "Semantic"),
    "prosodic_signal": ("S3", "Prosodic"),
    "interactive_signal": ("S4", "Interactive"),
    "contextual_signal": ("S5", "Contextual"),
}
#: ... and of ``negative_reason`` (short names as in Fig. 2 / Fig. 5).
NEGATIVE_REASONS: dict[str, tuple[str, str]] = {
    "target_mismatch": ("R1", "Wrong Addressee"),
    "source_mismatch": ("R2", "Wrong Source"),
    "demand_incomplete": ("R3", "Incomplete"),
    "intent_not_real": ("R4", "Non-real"),
    "function_not_directed": ("R5", "Function Mention"),
}

# --- OpenAI-compatible LLM judge (App D.3 / F.4); transport settings are ours (README "Judges") -------

#: Environment variable holding the judge's API key (the key itself is never written anywhere).
JUDGE_API_KEY_ENV = "OPENAI_API_KEY"
#: Judge calls in flight at once (``--judge-concurrency``).
JUDGE_CONCURRENCY = 8
#: Output-token limit per judge call; generous because a thinking judge (App D.3) reasons first.
JUDGE_MAX_TOKENS = 8192
#: Seconds before one judge HTTP request is abandoned and retried (``--judge-timeout``).
JUDGE_TIMEOUT_S = 120.0
#: Transport retries per call on 429, 5xx, timeouts, connection errors and undecodable bodies.
JUDGE_RETRIES = 6
#: Exponential backoff: first wait, growth factor and cap (seconds); ``Retry-After`` wins when given.
JUDGE_BACKOFF_S = 1.0
JUDGE_BACKOFF_FACTOR = 2.0
JUDGE_BACKOFF_MAX_S = 60.0
#: Re-asks after a reply that is not a valid verdict array, before the segment is a judge error.
JUDGE_REASKS = 2
#: Seconds a process waits for another one writing to the shared verdict cache.
JUDGE_CACHE_BUSY_TIMEOUT_S = 60.0

# --- omni model backends and lm-eval tasks (odu.models; README "lm-evaluation-harness") -----------

#: Environment variable holding the model server's API key (the key itself is never written anywhere).
MODEL_API_KEY_ENV = "OPENAI_API_KEY"
#: Model calls in flight at once (``concurrency=`` model argument).
MODEL_CONCURRENCY = 4
#: Seconds before one model HTTP request is abandoned and retried; omni prefill of long video is slow.
MODEL_TIMEOUT_S = 600.0
#: Transport retries per scene on 429, 5xx, timeouts and connection errors; then an inference error.
MODEL_RETRIES = 6
#: Exponential backoff between model retries: first wait, factor, cap (s); ``Retry-After`` wins.
MODEL_BACKOFF_S = 1.0
MODEL_BACKOFF_FACTOR = 2.0
MODEL_BACKOFF_MAX_S = 60.0
#: Output-token room per scene (task ``max_gen_toks``): the demand JSON of a few segments takes well
#: under 1,000 tokens; the rest is headroom so that no answer is cut mid-JSON (thinking models:
#: raise it with ``--gen_kwargs max_gen_toks=...``).
MODEL_MAX_TOKENS = 4096
#: Frames mode (servers that take images only): frames per second sampled from each clip, and the
#: cap per clip (frames are then spread evenly over the clip).
MODEL_FRAMES_FPS = 2.0
MODEL_MAX_FRAMES = 64
#: JPEG quality (2 = best .. 31) of frames sent as images (FFmpeg ``qscale``).
MODEL_FRAME_JPEG_QSCALE = 3
#: Output-token limits below this are flagged in the run card as likely to cut the JSON.
MODEL_MIN_SAFE_MAX_TOKENS = 1024
#: The task scores the scene's own-language reference unless ``ODU_ANNOTATION_LANGUAGE`` says en/zh.
TASK_ANNOTATION_LANGUAGE = "scene"
