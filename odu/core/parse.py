"""Model output text -> :class:`~odu.core.schema.Prediction` (schema of App A.1, Fig. 6).

Lenient extraction, strict validation. Extraction drops ``<think>`` blocks and code fences and
finds the JSON object in surrounding prose. Validation then applies one documented rule per
problem (docs/scoring.md, "Parsing rules"); every rule that fires adds an entry to ``Prediction.issues``.
Output with no usable JSON object is scored as "no demand, no segments" and flagged
``parse_error``. Nothing here raises on model output.

>>> p = parse_output('```json\\n{"has_demand": false, "segments": []}\\n```', "audio-visual")
>>> p.has_demand, p.parse_error, p.issues
(False, False, ())
>>> parse_output("I think the user wants coffee.", "audio-only").parse_error
True
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections.abc import Mapping
from typing import Any

from . import constants as limits
from .constants import AGE_GROUPS, AUDIO_ONLY, CONTEXT_TYPES_AO, CONTEXT_TYPES_AV, GENDERS
from .schema import PredictedContext, PredictedSegment, Prediction

_OPEN_TAG = re.compile(r"<think>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"</think>", re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*")
#: Unpaired surrogates (JSON escapes like "\ud83d" cut in half) cannot be written as UTF-8.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_DECODER = json.JSONDecoder()
_SHOW = reprlib.Repr()  # bounded repr of model values quoted in issues (size and nesting)
_SHOW.maxstring = _SHOW.maxother = 40


def no_output() -> Prediction:
    """The prediction of a scene the model produced nothing for (scored as no demand)."""
    return Prediction(has_demand=False, issues=("no output",), no_output=True)


def strip_wrappers(text: str) -> str:
    """Drop ``<think>…</think>`` blocks (an unclosed one ends at ``</think>`` or runs to the end)
    and code-fence markers."""
    # Each <think> up to the next </think> becomes a space; scanning stops at the first <think>
    # with no </think> after it, so thousands of repeated tags cost linear time.
    kept, pos = [], 0
    while (opened := _OPEN_TAG.search(text, pos)) and (closed := _CLOSE_TAG.search(text, opened.end())):
        kept.append(text[pos : opened.start()])
        pos = closed.end()
    text = " ".join([*kept, text[pos:]])
    closes = list(_CLOSE_TAG.finditer(text))  # opening tag swallowed by the chat template
    if closes:
        text = text[closes[-1].end() :]
    unclosed = _OPEN_TAG.search(text)  # reasoning cut off before </think>: no answer after it
    if unclosed:
        text = text[: unclosed.start()]
    return _FENCE.sub(" ", text)


def extract_json_object(text: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The first JSON object in ``text`` that has ``has_demand`` (else the first object at all)."""
    issues: list[str] = []
    if len(text) > limits.MAX_OUTPUT_CHARS:
        issues.append(f"output longer than {limits.MAX_OUTPUT_CHARS} characters was cut")
        text = text[: limits.MAX_OUTPUT_CHARS]
    text = strip_wrappers(text)
    first: dict[str, Any] | None = None
    start, tries = text.find("{"), 0
    while start != -1 and tries < limits.MAX_JSON_CANDIDATES:
        tries += 1
        try:
            obj, _ = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):  # ValueError: JSONDecodeError, ints over 4300 digits
            obj = None
        if isinstance(obj, dict):
            if "has_demand" in obj:
                if text[:start].strip() or first is not None:
                    issues.append("JSON object found inside other text")
                return obj, issues
            first = first or obj
        start = text.find("{", start + 1)
    if first is not None:
        issues.append("JSON object has no 'has_demand'")
    return first, issues


def _bool(value: Any, field: str, issues: list[str]) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        issues.append(f"{field}: string {_SHOW.repr(value)} read as a boolean")
        return value.strip().lower() == "true"
    issues.append(f"{field}: {_SHOW.repr(value)} is not a boolean")
    return None


def _cut(value: str, field: str, issues: list[str]) -> str:
    """``value`` cut to ``MAX_TEXT_CHARS`` (an issue recorded when it was longer)."""
    if len(value) > limits.MAX_TEXT_CHARS:
        issues.append(f"{field}: cut to {limits.MAX_TEXT_CHARS} characters")
        return value[: limits.MAX_TEXT_CHARS]
    return value


def _text(value: Any, field: str, issues: list[str]) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        issues.append(f"{field}: {type(value).__name__} is not a string; ignored")
        return ""
    value = _cut(value, field, issues)
    if _SURROGATE.search(value):
        issues.append(f"{field}: unpaired surrogate replaced by U+FFFD")
        value = _SURROGATE.sub("\ufffd", value)
    return value


def _time(value: Any, field: str, issues: list[str]) -> int | None:
    if isinstance(value, str):
        try:
            value = float(value.strip())
            issues.append(f"{field}: numeric string read as a number")
        except ValueError:
            issues.append(f"{field}: {value[:40]!r} is not a number")
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        issues.append(f"{field}: missing or not a number")
        return None
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) >= limits.MAX_TIME_MS:  # no float(int)
        issues.append(f"{field}: {_SHOW.repr(value)} is not a usable time")
        return None
    if value != int(value):
        issues.append(f"{field}: fractional milliseconds rounded")
    ms = int(round(value))
    if ms < 0:
        issues.append(f"{field}: negative time clamped to 0")
        ms = 0
    return ms


def _closed(value: Any, allowed: frozenset[str], field: str, issues: list[str]) -> str | None:
    """Lower-cased value; a value outside the closed set is kept (it scores as wrong)."""
    if not isinstance(value, str):
        issues.append(f"{field}: {_SHOW.repr(value)} is not one of {sorted(allowed)}")
        return None
    norm = _SURROGATE.sub("\ufffd", _cut(value.strip().lower(), field, issues))
    if norm not in allowed:
        issues.append(f"{field}: {value[:40]!r} is not one of {sorted(allowed)}")
    return norm


def _context(raw: Any, where: str, types: tuple[str, ...], issues: list[str]) -> tuple[PredictedContext, ...]:
    if raw is None:
        return ()
    if isinstance(raw, Mapping):
        issues.append(f"{where}: an object, read as a one-item list")
        raw = [raw]
    if not isinstance(raw, list):
        issues.append(f"{where}: not a list; ignored")
        return ()
    if len(raw) > limits.MAX_CONTEXT_ITEMS:
        issues.append(f"{where}: {len(raw)} items, kept the first {limits.MAX_CONTEXT_ITEMS}")
        raw = raw[: limits.MAX_CONTEXT_ITEMS]
    items = []
    for i, item in enumerate(raw):
        w = f"{where}[{i}]"
        if isinstance(item, str):
            issues.append(f"{w}: a bare string, read as a description without type")
            item = {"type": "", "description": item}
        if not isinstance(item, Mapping):
            issues.append(f"{w}: not an object; dropped")
            continue
        ctype = item.get("type")
        ctype = (
            _SURROGATE.sub("\ufffd", _cut(ctype.strip().lower(), f"{w}.type", issues)) if isinstance(ctype, str) else ""
        )
        if ctype not in types:
            issues.append(f"{w}.type: {_SHOW.repr(item.get('type'))} is not one of {list(types)}")
        items.append(PredictedContext(ctype, _text(item.get("description"), f"{w}.description", issues)))
    return tuple(items)


def _segment(raw: Any, where: str, modality: str, issues: list[str]) -> PredictedSegment | None:
    if not isinstance(raw, Mapping):
        issues.append(f"{where}: not an object; dropped")
        return None
    start = _time(raw.get("start_ms"), f"{where}.start_ms", issues)
    end = _time(raw.get("end_ms"), f"{where}.end_ms", issues)
    if start is not None and end is not None and start > end:
        issues.append(f"{where}: start_ms > end_ms; swapped")
        start, end = end, start
    if (start is None) != (end is None):
        issues.append(f"{where}: only one usable time; span dropped")
        start = end = None
    audio_only = modality == AUDIO_ONLY
    in_frame = None
    if not audio_only:
        in_frame = _bool(raw.get("user_in_frame"), f"{where}.user_in_frame", issues)
    return PredictedSegment(
        start_ms=start,
        end_ms=end,
        transcript=_text(raw.get("transcript"), f"{where}.transcript", issues),
        structured_intent=_text(raw.get("structured_intent"), f"{where}.structured_intent", issues),
        required_context=_context(
            raw.get("required_context"),
            f"{where}.required_context",
            CONTEXT_TYPES_AO if audio_only else CONTEXT_TYPES_AV,
            issues,
        ),
        user_in_frame=in_frame,
        user_gender=_closed(raw.get("user_gender"), GENDERS, f"{where}.user_gender", issues),
        user_age_group=_closed(raw.get("user_age_group"), AGE_GROUPS, f"{where}.user_age_group", issues),
    )


def parse_output(text: str | None, modality: str) -> Prediction:
    """Parse one raw model output for a scene of ``modality`` (never raises on model output)."""
    if text is None:
        return no_output()
    if not isinstance(text, str):
        return Prediction(False, issues=(f"output is {type(text).__name__}, not text",), parse_error=True)
    obj, issues = extract_json_object(text)
    if obj is None:
        issues.append("no JSON object found")
        return Prediction(False, issues=tuple(issues), parse_error=True)
    has_demand = _bool(obj.get("has_demand"), "has_demand", issues)
    if has_demand is None:
        return Prediction(False, issues=tuple(issues), parse_error=True)
    raw_segments = obj.get("segments", [])
    if raw_segments is None:
        raw_segments = []
    if not isinstance(raw_segments, list):
        issues.append("segments: not a list; ignored")
        raw_segments = []
    if not has_demand:
        if raw_segments:
            issues.append("segments given with has_demand=false; ignored")
        return Prediction(False, issues=tuple(issues))
    if len(raw_segments) > limits.MAX_SEGMENTS:
        issues.append(f"segments: {len(raw_segments)} given, kept the first {limits.MAX_SEGMENTS}")
        raw_segments = raw_segments[: limits.MAX_SEGMENTS]
    segments = [_segment(s, f"segments[{i}]", modality, issues) for i, s in enumerate(raw_segments)]
    return Prediction(True, tuple(s for s in segments if s is not None), tuple(issues))
