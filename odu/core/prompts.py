"""Model-facing inputs: the prediction instruction (App F.1 / F.2) and the turn layout (App D.1 / D.2).

* :data:`AV_INSTRUCTION` is the App F.1 "Audio-Visual Prediction Instruction", word for word. The
  typeset paper lost its line breaks, bullets and spaces around inline code; they are restored
  here ("•" bullets, "–" sub-items, the context-type table, the example JSON from the PDF's
  embedded listing). The box header (Purpose / Inputs / Output / Variant) describes the prompt and
  is not part of it.
* :data:`AO_INSTRUCTION` applies the App F.2 differences to it: video -> audio wording, evidence
  from linguistic content and audio cues, six context types (no ``visual``), no ``user_in_frame``.
  The paper does not print the audio-only example JSON; ours swaps the ``visual`` context item
  for an ``audio`` one (docs/harness.md).
* The user turn follows App D.1 / D.2: the clips in chronological order, each assistant reply as
  text after the clip it answers, the final clip last and marked as the one to annotate, then the
  closing instruction. The turn labels and closing sentences are the App D.2 templates, which
  "retain the original audio–visual task wording"; for native input the media part stands where
  D.2 puts the ASR block. Audio-only input replaces "video" and "audio or video" with "audio".
* The text-only baseline (App D.2) replaces each clip by its ASR block: sentence lines with
  millisecond timestamps local to the clip, the clip duration note, or the no-speech notice.

:func:`build_chat` turns a scene's turns into an ordered list of :class:`Part` s that every
backend renders its own way (OpenAI-compatible messages, a local processor's conversation).
:data:`PROMPT_VERSION` names all of the above; it is recorded in every run card. Change it when
any text or the layout changes (``tests/scoring/test_prompts.py`` pins the texts' hash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from .constants import AUDIO_ONLY, AUDIO_VISUAL, MODALITIES

#: Version of the instructions, turn templates and ASR blocks below.
PROMPT_VERSION = "odu-f1-d2-1"

# --- App F.1: the audio-visual prediction instruction --------------------------------------------

_EXAMPLE_JSON_AV = """\
{
  "has_demand": true,
  "segments": [
    {
      "start_ms": 11840,
      "end_ms": 15200,
      "transcript": "User's exact words",
      "structured_intent": "The user wants to...",
      "required_context": [
        {
          "type": "visual",
          "description": "User points to a bottle of olive oil"
        }
      ],
      "user_in_frame": false,
      "user_gender": "male",
      "user_age_group": "adult"
    }
  ]
}
If no demand: {"has_demand": false, "segments": []}"""

#: App F.1, verbatim (layout restored, see the module docstring).
AV_INSTRUCTION = f"""\
You are the user’s AI assistant. You will watch one or more videos, in which the user may make requests to you.

Task
Determine whether a user has made a request to you in the video. The scenario may be a user interacting with you or ordinary interpersonal conversation – you must distinguish between them based on the visual and audio content. If the user expresses a demand, output the following information in structured JSON format (instead of replying directly to the user). A demand is not necessarily an explicit question or instruction; it may also be an implicit expression (e.g., complaining, talking to oneself, hinting for help, etc.).
• Time Localization: The start and end times when the demand occurs (milliseconds)
• transcript: The exact words spoken by the user within this segment’s time interval (verbatim transcription, no additions or omissions; does not include utterances from other speakers, nor content from previous or subsequent turns)
• Structured Intent: A single sentence summarizing the user’s goal, starting with “The user wants…”, semantically complete and self-contained
• Required Context: The multimodal context information necessary to understand the content of this demand
• Is the user in the frame?
• User gender and age group

Required Context (required_context)
Fill in context items where “the absence would lead to an incomplete understanding of the demand, a deviation in the response direction, or a significant decrease in response quality”. If the user’s utterance text alone is sufficient to accurately and appropriately understand and respond, then required_context = []. Select type from the following 7 options:

| type | Meaning |
| --- | --- |
| visual | Objects/text/actions/scenes in the visual frame are necessary information for understanding the demand |
| audio | Ambient sounds/background audio provide clues for understanding the object or context of the demand |
| dialogue_history | The current utterance contains references or omissions, requiring previous dialogue content for comprehension |
| user_activity | The user’s ongoing activity provides necessary context for understanding the demand |
| user_identity | The user’s identity/role/professional background affects the understanding of the demand |
| user_emotion | The user’s emotion/tone affects the judgment of intent direction (e.g., a dissatisfied tone turns an observation into a request) |
| scene_condition | Environmental conditions (time/weather/noise, etc.) affect the understanding of the demand |

Fill in description for each entry (<= 50 characters). Each type must appear at most once.

Multi-turn Input
The input may contain multiple video clips (v1,v2,v3…), each corresponding to a user turn, with possible text replies from the AI agent between clips.
• Annotate user demands only in the last segment. Content from previous turns and agent replies serve only as dialogue history context; do not output them as segments.
• has_demand is true only when a user demand exists in the last segment.
• start_ms/end_ms are relative to the start of the last segment, not global time.

Segment Division
One segment corresponds to a continuous region of demand expression. Boundaries are determined solely by the following two signals:
• Must split (highest priority): (1) Turn boundaries (user finishes speaking → agent responds → user speaks again); (2) Speech interruptions (>= 2 seconds of silence within the same turn, or insertion of speech unrelated to the demand, such as talking to bystanders).
• Do not split (only within the same turn and the same continuous utterance): Consecutive multiple intents, self-correction, preamble + request, emotion + action, etc., must all be kept as a single segment.
• Express structured_intent for compound demands using a compound sentence (e.g., “the user wants to know the weather and set an alarm”); for self-correction, record only the final valid demand.
• transcript boundaries: transcript must strictly contain only the speech transcription of *the user* within the start_ms to end_ms time window. Do not include utterances from other speakers, AI replies, or content from previous or subsequent turns in the transcript. If preceding information is relevant to demand comprehension, place it in required_context (type=dialogue_history) instead of the transcript.

Field Constraints
The following fields are closed-set classifications. Use exactly one of the given values; do not invent synonyms (for example, do not write "young adult", "senior", "middle-aged" or "teenager").
• user_in_frame: boolean. Whether the user initiating the demand is within the frame.
  – true: the user initiating the demand is visible in the scene.
  – false: first-person off-screen voice, only the user’s voice is heard, or it is impossible to determine who in the scene initiated the demand.
• user_gender: string, must be one of the following values:
  – "male": there is clear evidence of male or masculine presentation.
  – "female": there is clear evidence of female or feminine presentation.
  – "unknown": evidence is insufficient, evidence from multiple people/speakers is mixed together or voice/visual evidence cannot support a judgment, or no inference should be made.
• user_age_group: string, must be one of the following values:
  – "child": child or clearly underage person.
  – "adult": adult.
  – "elderly": elderly person, with clear age features.
  – "unknown": evidence is insufficient or judgment is impossible.

Output Format
Output only JSON, with no comments or code block markers. The timestamp values in the examples below are placeholders only; infer the real start_ms/end_ms from the provided final clip and never copy example timestamps:
{_EXAMPLE_JSON_AV}"""

# --- App F.2: the audio-only variant, as edits of F.1 --------------------------------------------

#: (old, new) edits turning F.1 into F.2; each ``old`` must occur exactly once (checked at import).
_AO_EDITS: tuple[tuple[str, str], ...] = (
    # input wording: video -> audio
    ("You will watch one or more videos,", "You will listen to one or more audio clips,"),
    ("a request to you in the video.", "a request to you in the audio."),
    ("multiple video clips (v1,v2,v3…)", "multiple audio clips (v1,v2,v3…)"),
    # demand evidence: "Linguistic content and audio cues distinguish assistant-directed demands"
    ("based on the visual and audio content.", "based on the linguistic content and audio cues."),
    # profile fields: gender and age group only
    ("• Is the user in the frame?\n", ""),
    (
        "• user_in_frame: boolean. Whether the user initiating the demand is within the frame.\n"
        "  – true: the user initiating the demand is visible in the scene.\n"
        "  – false: first-person off-screen voice, only the user’s voice is heard, or it is impossible to "
        "determine who in the scene initiated the demand.\n",
        "",
    ),
    ('      "user_in_frame": false,\n', ""),
    # context types: six, visual context is unavailable
    ("from the following 7 options:", "from the following 6 options:"),
    (
        "| visual | Objects/text/actions/scenes in the visual frame are necessary information for "
        "understanding the demand |\n",
        "",
    ),
    (
        '"type": "visual",\n          "description": "User points to a bottle of olive oil"',
        '"type": "audio",\n          "description": "Sizzling sound of oil in a frying pan"',
    ),
)


def _apply_edits(text: str, edits: Sequence[tuple[str, str]]) -> str:
    for old, new in edits:
        if text.count(old) != 1:
            raise AssertionError(f"prompt edit does not apply exactly once: {old[:60]!r}")
        text = text.replace(old, new)
    return text


#: App F.2: the audio-only prediction instruction.
AO_INSTRUCTION = _apply_edits(AV_INSTRUCTION, _AO_EDITS)

# --- App D.1 / D.2: the user turn ------------------------------------------------------------------

#: App D.2 "User-input template with dialogue history", first line (multi-clip scenes only).
_HISTORY_INTRO = (
    "You will receive multiple video clips from the same scene in chronological order. Together they "
    "form the dialogue history; the last video clip is the current user turn to annotate:"
)
_USER_LABEL = "[Turn {n} · user video]"
_FINAL_LABEL = "[Turn {n} · user video (final turn, annotate this)]"
_REPLY_LABEL = "[Turn {n} · agent reply]"
#: App D.2 closing instructions: single clip, and with dialogue history.
_CLOSING_SINGLE = "Annotate the user’s demand in this video and output the demand-decision JSON."
_CLOSING_HISTORY = (
    "Annotate only the user’s demand in the final video clip and output the demand-decision JSON. Use the "
    "preceding video clips and agent replies only as dialogue-history context; do not output segments for "
    "them. start_ms/end_ms must be local timestamps within the final video clip."
)
#: App D.2 ASR block header (``{duration_note}`` = " (clip duration {duration_ms} ms)") and the
#: no-speech notice that replaces the whole block.
_ASR_HEADER = (
    "[No audio or video is provided for this clip. Below is the verbatim ASR transcript of its speech, "
    "with millisecond timestamps local to this clip{duration_note}.]"
)
_DURATION_NOTE = " (clip duration {duration_ms} ms)"
_NO_SPEECH = (
    "[No audio or video is provided for this clip, and automatic speech recognition returned no speech for it.]"
)


def _for_modality(text: str, modality: str) -> str:
    """App D.2: for audio-only input, "video" and "audio or video" are replaced with "audio"."""
    if modality == AUDIO_ONLY:
        return text.replace("audio or video", "audio").replace("video", "audio")
    return text


def instruction(modality: str) -> str:
    """The system instruction for ``modality`` (App F.1 audio-visual, App F.2 audio-only)."""
    if modality not in MODALITIES:
        raise ValueError(f"unknown modality {modality!r} (expected one of {MODALITIES})")
    return AV_INSTRUCTION if modality == AUDIO_VISUAL else AO_INSTRUCTION


# --- the chat input as parts -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClipRef:
    """A user clip by reference: position, release id, content hash and duration (no media bytes)."""

    index: int  # 0-based turn index
    id: str  # release clip id, e.g. "v2"
    sha256: str
    duration_ms: int


@dataclass(frozen=True, slots=True)
class AsrSentence:
    """One ASR sentence, times in ms local to its clip (App D.2)."""

    start_ms: int
    end_ms: int
    text: str
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One user clip and the assistant replies that follow it (``asr`` for the text-only input)."""

    clip: ClipRef
    replies: tuple[str, ...] = ()
    asr: tuple[AsrSentence, ...] | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of the chat input, in order.

    ``role`` is "system", "user" or "assistant". A part holds either ``text`` or a ``clip`` (a media
    part of the user turn). Assistant parts carry the reply text and, in ``label``, the App D.2 turn
    label used when a backend inlines them into the user message.
    """

    role: str
    text: str = ""
    clip: ClipRef | None = None
    final: bool = False  # the annotated clip
    label: str = ""

    @property
    def is_media(self) -> bool:
        return self.clip is not None


@dataclass(frozen=True, slots=True)
class ChatInput:
    """The ordered parts of one scene's input plus what produced them."""

    modality: str
    parts: tuple[Part, ...]
    text_only: bool = False
    prompt_version: str = field(default=PROMPT_VERSION)

    @property
    def system(self) -> str:
        return next(p.text for p in self.parts if p.role == "system")

    @property
    def clips(self) -> tuple[ClipRef, ...]:
        return tuple(p.clip for p in self.parts if p.clip is not None)


def asr_block(sentences: Sequence[AsrSentence] | None, duration_ms: int | None, modality: str) -> str:
    """The App D.2 text that replaces one clip: header + one line per sentence, or the no-speech notice.

    >>> print(asr_block([AsrSentence(5040, 8640, "Export this version.", "0")], 9055, "audio-visual"))
    [No audio or video is provided for this clip. Below is the verbatim ASR transcript of its speech, with millisecond timestamps local to this clip (clip duration 9055 ms).]
    [5040-8640 ms] speaker 0: Export this version.
    >>> asr_block([], 9055, "audio-only")
    '[No audio is provided for this clip, and automatic speech recognition returned no speech for it.]'
    """
    spoken = [s for s in sentences or () if s.text.strip()]
    if not spoken:
        return _for_modality(_NO_SPEECH, modality)
    note = _DURATION_NOTE.format(duration_ms=duration_ms) if duration_ms is not None else ""
    lines = [_for_modality(_ASR_HEADER.format(duration_note=note), modality)]
    for s in spoken:
        who = f" speaker {s.speaker}" if s.speaker not in (None, "") else ""
        lines.append(f"[{s.start_ms}-{s.end_ms} ms]{who}: {s.text.strip()}")
    return "\n".join(lines)


def build_chat(turns: Sequence[Turn], modality: str, text_only: bool = False) -> ChatInput:
    """The scene's input as ordered parts (App D.1; App D.2 when ``text_only``).

    System instruction; for several clips the dialogue-history line; per clip its turn label, the
    clip (a media part, or its ASR block when ``text_only``) and the assistant replies after it;
    the final clip last, labelled as the one to annotate; the closing instruction.

    >>> t = [Turn(ClipRef(0, "v1", "a" * 64, 4000), ("Sure.",)), Turn(ClipRef(1, "v2", "b" * 64, 5000))]
    >>> [(p.role, p.clip.id if p.clip else p.text[:21]) for p in build_chat(t, "audio-only").parts[1:]]
    [('user', 'You will receive mult'), ('user', '[Turn 1 · user audio]'), ('user', 'v1'),
     ('assistant', 'Sure.'), ('user', '[Turn 2 · user audio '), ('user', 'v2'),
     ('user', 'Annotate only the use')]
    """
    if not turns:
        raise ValueError("a scene needs at least one clip")
    if text_only and any(t.asr is None for t in turns):
        missing = ", ".join(t.clip.id for t in turns if t.asr is None)
        raise ValueError(f"text-only input needs an ASR result for every clip (missing: {missing})")
    history = len(turns) > 1
    parts = [Part("system", instruction(modality))]
    if history:
        parts.append(Part("user", _for_modality(_HISTORY_INTRO, modality)))
    last = len(turns) - 1
    for n, turn in enumerate(turns, 1):
        final = n - 1 == last
        if history:
            label = (_FINAL_LABEL if final else _USER_LABEL).format(n=n)
            parts.append(Part("user", _for_modality(label, modality)))
        if text_only:
            parts.append(Part("user", asr_block(turn.asr, turn.clip.duration_ms, modality), final=final))
        else:
            parts.append(Part("user", clip=turn.clip, final=final))
        if not final:  # replies after the final clip are the ones the model should produce
            parts += [Part("assistant", reply, label=_REPLY_LABEL.format(n=n)) for reply in turn.replies]
    parts.append(Part("user", _for_modality(_CLOSING_HISTORY if history else _CLOSING_SINGLE, modality)))
    return ChatInput(modality, tuple(parts), text_only)


def prompt_fingerprint() -> str:
    """sha256 over every text this module sends; pinned per :data:`PROMPT_VERSION` by the tests."""
    texts = (
        AV_INSTRUCTION,
        AO_INSTRUCTION,
        _HISTORY_INTRO,
        _USER_LABEL,
        _FINAL_LABEL,
        _REPLY_LABEL,
        _CLOSING_SINGLE,
        _CLOSING_HISTORY,
        _ASR_HEADER,
        _DURATION_NOTE,
        _NO_SPEECH,
    )
    return hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()


__all__ = [
    "AO_INSTRUCTION",
    "AV_INSTRUCTION",
    "PROMPT_VERSION",
    "AsrSentence",
    "ChatInput",
    "ClipRef",
    "Part",
    "Turn",
    "asr_block",
    "build_chat",
    "instruction",
    "prompt_fingerprint",
]
