"""Model backends that answer ODU-Bench scene requests (used by the lm-eval tasks and ``odu-bench eval``).

* ``openai`` — an omni model on any OpenAI-compatible chat server (:mod:`.openai_omni`);
* ``qwen-omni`` — Qwen2.5-Omni / Qwen3-Omni run locally with transformers (:mod:`.qwen_omni`,
  optional ``torch`` extra);
* ``gemini`` — Gemini through Google's ``google-genai`` SDK (:mod:`.gemini`, extra ``gemini``);
* ``realtime`` — GPT-Realtime over the OpenAI Realtime WebSocket, audio-only (:mod:`.realtime`, extra ``realtime``);
* ``replay`` — outputs produced elsewhere, from a predictions JSONL (:mod:`.replay`);
* ``never`` / ``always`` — the floor baselines (:mod:`.floor`).

:func:`make_backend` builds one by name. Each backend's names are defined here once: its
backend name (:data:`BACKENDS`, ``odu-bench eval --model``), its lm-eval model name
(:func:`lm_eval_name`: ``odu-<backend>``) and, for the baselines that take no arguments, its display
label (:data:`BASELINES`). Nothing here imports ``lm_eval``; the lm-eval model classes are made
from these names in :mod:`odu.harness.models`, imported only when lm-eval runs.
"""

from __future__ import annotations

from typing import Any

from ..scrub import refuse_credentials
from .base import Backend, Generation, SceneRequest, decode_output, encode_output
from .floor import AlwaysTrigger, NeverTrigger
from .replay import Replay

#: Backend name -> "module:class" (imported when built, so torch loads only for ``qwen-omni``).
BACKENDS: dict[str, str] = {
    "openai": "odu.models.openai_omni:OpenAIOmni",
    "qwen-omni": "odu.models.qwen_omni:QwenOmniLocal",
    "gemini": "odu.models.gemini:GeminiModel",
    "realtime": "odu.models.realtime:RealtimeModel",
    "replay": "odu.models.replay:Replay",
    "never": "odu.models.floor:NeverTrigger",
    "always": "odu.models.floor:AlwaysTrigger",
}
#: Display labels of the baselines, which take no model arguments (``odu-bench eval`` rows).
BASELINES: dict[str, str] = {"never": "floor: never-trigger", "always": "floor: always-trigger"}


def lm_eval_name(backend: str) -> str:
    """The lm-eval model name (``--model``) of a backend.

    >>> lm_eval_name("qwen-omni")
    'odu-qwen-omni'
    """
    return f"odu-{backend}"


def make_backend(name: str, **options: Any) -> Backend:
    """The backend called ``name``, built with ``options`` (its constructor's keyword arguments).

    Raises :class:`ValueError` for an unknown backend, an argument it does not take or a required
    one missing, naming the arguments it takes, and for an argument holding a credential
    (:func:`odu.scrub.refuse_credentials`).
    """
    import importlib
    import inspect

    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    refuse_credentials(options, f"model {name!r}")  # keys come from environment variables only
    module, _, cls = BACKENDS[name].partition(":")
    backend = getattr(importlib.import_module(module), cls)
    signature = inspect.signature(backend)
    try:
        signature.bind(**options)
    except TypeError as exc:
        takes = ", ".join(signature.parameters) or "none"
        raise ValueError(f"model {name!r}: {exc} (its arguments: {takes})") from None
    return backend(**options)


__all__ = [
    "BACKENDS",
    "BASELINES",
    "AlwaysTrigger",
    "Backend",
    "Generation",
    "NeverTrigger",
    "Replay",
    "SceneRequest",
    "decode_output",
    "encode_output",
    "lm_eval_name",
    "make_backend",
]
