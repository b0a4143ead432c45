"""The model-facing texts against the paper: App F.1 verbatim, the F.2 edits, the App D.2 templates
and examples, and the turn layout of App D.1."""

from __future__ import annotations

import json
import re

import pytest
from support.paper import paper_line

from odu.core.constants import CONTEXT_TYPES_AO, CONTEXT_TYPES_AV
from odu.core.parse import parse_output
from odu.core.prompts import (
    AO_INSTRUCTION,
    AV_INSTRUCTION,
    PROMPT_VERSION,
    AsrSentence,
    ClipRef,
    Turn,
    build_chat,
    instruction,
    prompt_fingerprint,
)

#: sha256 of every prompt text for PROMPT_VERSION: a text change must come with a new version.
PINNED = {"odu-f1-d2-1": "83c55bcec16975824ec88f44de71e49cb590be97cafb76e3cac94ec3248034db"}


def _squash(text: str) -> str:
    """Text without whitespace and en dashes (the typeset paper lost spacing and list markers)."""
    return re.sub(r"\s+", "", text).replace("–", "")


def _user_text(turns: list[Turn], modality: str = "audio-visual") -> str:
    chat = build_chat(turns, modality, text_only=True)
    return "\n".join(p.text if p.role == "user" else f"{p.label} {p.text}" for p in chat.parts[1:])


def test_av_instruction_is_app_f1_word_for_word() -> None:
    line = paper_line("Audio-Visual Prediction Instruction")
    paper = line[line.index("You are the user’s AI assistant.") :]
    paper = paper.replace("∙\\\\bullet", "").replace("→\\\\rightarrow", "→")
    paper = re.sub(r"\[⬇\]\(data:[^)]*\)", "", paper)  # the listing's embedded copy, printed after it
    paper = paper.replace('"User’s', "\"User's")  # the listing itself has a straight quote
    ours = re.sub(r"(?m)^\s*(•|–)\s*", "", AV_INSTRUCTION).replace("| --- | --- |", "").replace("|", "")
    assert _squash(ours) == _squash(paper)


def test_instruction_example_json_parses_as_a_valid_prediction() -> None:
    example = AV_INSTRUCTION.split("never copy example timestamps:\n", 1)[1].split("\nIf no demand:", 1)[0]
    prediction = parse_output(example, "audio-visual")
    assert prediction.has_demand and not prediction.issues
    ao_example = AO_INSTRUCTION.split("never copy example timestamps:\n", 1)[1].split("\nIf no demand:", 1)[0]
    assert "user_in_frame" not in json.loads(ao_example)["segments"][0]
    assert not parse_output(ao_example, "audio-only").issues


def test_ao_instruction_applies_the_app_f2_differences() -> None:
    assert instruction("audio-only") == AO_INSTRUCTION and instruction("audio-visual") == AV_INSTRUCTION
    table_types = lambda text: re.findall(r"(?m)^\| (\w+) \|", text)  # noqa: E731
    assert table_types(AV_INSTRUCTION)[1:] == list(CONTEXT_TYPES_AV)  # first row is the header
    assert table_types(AO_INSTRUCTION)[1:] == list(CONTEXT_TYPES_AO)
    assert "following 6 options" in AO_INSTRUCTION and "following 7 options" in AV_INSTRUCTION
    assert "user_in_frame" not in AO_INSTRUCTION and "in the frame" not in AO_INSTRUCTION
    assert "video" not in AO_INSTRUCTION.lower() and "visual and audio content" not in AO_INSTRUCTION
    assert "linguistic content and audio cues" in AO_INSTRUCTION
    # everything else is kept: final-turn scope, segmentation, transcript boundaries, JSON-only output
    for kept in (
        "Annotate user demands only in the last segment",
        "Must split (highest priority)",
        "transcript boundaries",
        "Output only JSON, with no comments or code block markers",
    ):
        assert kept in AO_INSTRUCTION
    with pytest.raises(ValueError):
        instruction("video-only")


def test_prompt_texts_are_pinned_to_their_version() -> None:
    assert prompt_fingerprint() == PINNED[PROMPT_VERSION], "prompt text changed: bump PROMPT_VERSION and re-pin"


def test_text_only_single_clip_matches_the_app_d2_examples() -> None:
    positive = [
        Turn(
            ClipRef(0, "v1", "0" * 64, 9055),
            (),
            (AsrSentence(5040, 8640, "Set it up, so when he gives the verbal, okay, export this version.", "0"),),
        )
    ]
    negative = [
        Turn(
            ClipRef(0, "v1", "1" * 64, 12051),
            (),
            (
                AsrSentence(
                    4590,
                    10710,
                    "my data was leaked, can this it insurance immediately activate an emergency response for me?",
                    "0",
                ),
                AsrSentence(11070, 11990, "how do i file a claim?", "0"),
            ),
        )
    ]
    for turns, prefix in ((positive, "Positive example (Demand present)"), (negative, "Negative example (No demand)")):
        paper = paper_line(prefix).removeprefix(prefix)
        assert _squash(_user_text(turns)) == _squash(paper)


def test_text_only_history_matches_the_app_d2_template() -> None:
    sentence = AsrSentence(100, 900, "hello there", "0")
    turns = [
        Turn(ClipRef(0, "v1", "0" * 64, 4000), ("Sure.",), (sentence,)),
        Turn(ClipRef(1, "v2", "1" * 64, 5000), (), (sentence,)),
    ]
    template = paper_line("User-input template with dialogue history").removeprefix(
        "User-input template with dialogue history"
    )
    expected = (
        template.replace("{duration_note}", " (clip duration 4000 ms)", 1)
        .replace("{duration_note}", " (clip duration 5000 ms)", 1)
        .replace(
            "[{begin_ms}-{end_ms} ms] speaker {speaker_id}: {ASR sentence}…", "[100-900 ms] speaker 0: hello there"
        )
        .replace("{preceding assistant reply}", "Sure.")
    )
    assert _squash(_user_text(turns)) == _squash(expected)


def test_no_speech_notice_replaces_the_block_and_audio_only_says_audio() -> None:
    single = paper_line("User-input templatesSingle clip")
    notice = single.split("Replacement ASR block when no speech is recognized", 1)[1]
    text = _user_text([Turn(ClipRef(0, "v1", "0" * 64, 3000), (), ())])
    assert text.startswith(notice) and "ms]" not in text
    audio = _user_text([Turn(ClipRef(0, "v1", "0" * 64, 3000), (), ())], "audio-only")
    assert audio.startswith("[No audio is provided for this clip, and automatic speech recognition returned no speech")
    assert audio.endswith("Annotate the user’s demand in this audio and output the demand-decision JSON.")


def test_native_layout_orders_clips_replies_and_marks_the_final_clip() -> None:
    turns = [
        Turn(ClipRef(i, f"v{i + 1}", str(i) * 64, 1000 * (i + 1)), (f"reply {i + 1}",) if i < 2 else ())
        for i in range(3)
    ]
    chat = build_chat(turns, "audio-visual")
    kinds = [(p.role, p.clip.id if p.clip else p.text) for p in chat.parts]
    assert kinds[0] == ("system", AV_INSTRUCTION)
    assert kinds[1][1].startswith("You will receive multiple video clips")
    assert [k for k in kinds[2:]] == [
        ("user", "[Turn 1 · user video]"),
        ("user", "v1"),
        ("assistant", "reply 1"),
        ("user", "[Turn 2 · user video]"),
        ("user", "v2"),
        ("assistant", "reply 2"),
        ("user", "[Turn 3 · user video (final turn, annotate this)]"),
        ("user", "v3"),
        ("user", kinds[-1][1]),
    ]
    assert kinds[-1][1].startswith("Annotate only the user’s demand in the final video clip")
    assert [p.final for p in chat.parts if p.clip] == [False, False, True]
    assert chat.clips == tuple(t.clip for t in turns)
    single = build_chat(turns[:1], "audio-visual")
    assert [p.clip.id if p.clip else p.text for p in single.parts[1:]] == [
        "v1",
        "Annotate the user’s demand in this video and output the demand-decision JSON.",
    ]


def test_text_only_input_needs_asr_for_every_clip() -> None:
    turns = [Turn(ClipRef(0, "v1", "0" * 64, 1000), (), None)]
    with pytest.raises(ValueError, match="missing: v1"):
        build_chat(turns, "audio-visual", text_only=True)
    with pytest.raises(ValueError):
        build_chat([], "audio-visual")
