"""Floor baselines: reference rows any model should beat (docs/harness.md).

* ``never`` — never triggers: ``{"has_demand": false, "segments": []}`` for every scene. M1 is the
  macro-F1 of the all-negative predictor, FTR is 0, and M2-M5 are 0 on every positive scene.
* ``always`` — always triggers, with one segment over the whole final clip (``0`` to its duration)
  and every text field empty: no intent, no context, no transcript, gender and age group
  ``"unknown"`` and ``user_in_frame`` false, the value App F.1 gives when it is "impossible to
  determine" who speaks (a well-formed answer: no parse issue). It shows what localisation alone
  earns (M3) and that M2 cannot be had without content; FTR is 1.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.constants import AUDIO_VISUAL
from .base import Backend, Generation, SceneRequest

_NEVER = json.dumps({"has_demand": False, "segments": []})


def always_output(request: SceneRequest) -> str:
    """The always-trigger answer for ``request``: one empty segment spanning the final clip.

    >>> from odu.core.prompts import ClipRef, Turn
    >>> always_output(SceneRequest("s", "audio-only", (Turn(ClipRef(0, "v1", "0" * 64, 4200)),)))
    '{"has_demand": true, "segments": [{"start_ms": 0, "end_ms": 4200, "transcript": "", "structured_intent": "", "required_context": [], "user_gender": "unknown", "user_age_group": "unknown"}]}'
    """
    segment: dict[str, Any] = {
        "start_ms": 0,
        "end_ms": request.final_clip.duration_ms,
        "transcript": "",
        "structured_intent": "",
        "required_context": [],
    }
    if request.modality == AUDIO_VISUAL:
        segment["user_in_frame"] = False  # App F.1: false when it is "impossible to determine" (no guess)
    segment |= {"user_gender": "unknown", "user_age_group": "unknown"}
    return json.dumps({"has_demand": True, "segments": [segment]})


class NeverTrigger(Backend):
    name = "never"

    def answer(self, request: SceneRequest) -> Generation:
        return Generation(_NEVER)


class AlwaysTrigger(Backend):
    name = "always"

    def answer(self, request: SceneRequest) -> Generation:
        return Generation(always_output(request))


__all__ = ["AlwaysTrigger", "NeverTrigger", "always_output"]
