"""Does the server hear audio, and keep to the output limit? A check before the first scene with media,
for servers that may drop audio parts without an error (``transformers serve`` keeps ``input_audio``
parts for models it classes as multimodal LMs only, ``get_processor_inputs_from_messages``) or answer
past ``max_tokens`` (its published Qwen2.5-Omni layout: ``generate``'s ``thinker_max_new_tokens=1024``
beats the request's limit, and the cut then reads ``finish_reason: "stop"``).

Two requests in the backend's own shape, each capped at :data:`PROBE_MAX_TOKENS`: the probe text
alone, then the same with :data:`TONE_S` seconds of a tone as an ``input_audio`` part. A server that
hears it counts the audio's placeholder tokens in ``usage.prompt_tokens``; equal counts mean the part
was dropped. More completion tokens than asked mean the server ignores the limit. A server that
reports no usage cannot be checked, which the console and the run card say.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Seconds of the probe tone (a 440 Hz sine at 16 kHz, 16-bit WAV: 32 KB).
TONE_S = 1.0
#: Output-token limit of the check's requests.
PROBE_MAX_TOKENS = 1
_TONE_HZ, _TONE_RATE = 440.0, 16_000


def tone_part() -> dict[str, Any]:
    """The probe's ``input_audio`` part: :data:`TONE_S` s of a sine as Base64 WAV."""
    import soundfile as sf

    t = np.arange(int(TONE_S * _TONE_RATE)) / _TONE_RATE
    buf = io.BytesIO()
    sf.write(
        buf, (0.3 * np.sin(2 * np.pi * _TONE_HZ * t)).astype(np.float32), _TONE_RATE, subtype="PCM_16", format="WAV"
    )
    return {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(buf.getvalue()).decode("ascii"), "format": "wav"},
    }


def probe_messages(text: str, audio: bool) -> list[dict[str, Any]]:
    """The probe's messages: ``text``, with the tone after it when ``audio``."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if audio:
        content.append(tone_part())
    return [{"role": "user", "content": content}]


def token_count(name: str, value: Any) -> int | None:
    """``value``, the token count ``name`` a server reported (None: not reported), when it is one: a
    non-negative integer (not ``12.0``, not ``true``); else ``ValueError`` naming it."""
    if value is not None and (type(value) is not int or value < 0):
        raise ValueError(
            f"server check: the server reported {name} = {value!r}, not a token count, so its usage cannot "
            "tell whether it hears audio; fix the server, or pass hearing_check=false to run unchecked"
        )
    return value


@dataclass(frozen=True)
class Hearing:
    """The check's outcome: prompt tokens without and with the tone, and the most completion tokens
    either answer took (None: not reported)."""

    without: int | None
    with_audio: int | None
    completion: int | None = None

    def __post_init__(self) -> None:
        """A count the server reports must be one (:func:`token_count`)."""
        token_count("prompt_tokens without audio", self.without)
        token_count("prompt_tokens with audio", self.with_audio)
        token_count("completion_tokens", self.completion)

    @property
    def ignores_limit(self) -> bool:
        """Whether an answer ran past :data:`PROBE_MAX_TOKENS`."""
        return self.completion is not None and self.completion > PROBE_MAX_TOKENS

    @property
    def heard(self) -> bool | None:
        """True: the tone added prompt tokens; False: it did not (dropped); None: no usage to tell."""
        if self.without is None or self.with_audio is None:
            return None
        return self.with_audio > self.without

    def as_dict(self) -> dict[str, Any]:
        return {
            "heard": self.heard,
            "prompt_tokens_without_audio": self.without,
            "prompt_tokens_with_audio": self.with_audio,
            "max_tokens_asked": PROBE_MAX_TOKENS,
            "completion_tokens": self.completion,
            "ignores_max_tokens": self.ignores_limit,
        }


__all__ = ["PROBE_MAX_TOKENS", "TONE_S", "Hearing", "probe_messages", "token_count", "tone_part"]
