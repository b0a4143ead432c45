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

from collections.abc import Mapping
from typing import Any

from ..io.scrub import refuse_credentials
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
#: The prefix of every backend's lm-eval model name (:func:`lm_eval_name`).
LM_EVAL_PREFIX = "odu-"


def lm_eval_name(backend: str) -> str:
    """The lm-eval model name (``--model``) of a backend.

    >>> lm_eval_name("qwen-omni")
    'odu-qwen-omni'
    """
    return f"{LM_EVAL_PREFIX}{backend}"


def backend_name(name: str) -> str:
    """The backend called ``name`` in either spelling: its own (``openai``, what ``odu-bench eval
    --model`` lists) or its lm-eval model name (``odu-openai``). :class:`ValueError` names both
    spellings of every backend otherwise.

    >>> backend_name("odu-openai"), backend_name("never")
    ('openai', 'never')
    """
    if name in BACKENDS:
        return name
    if name.startswith(LM_EVAL_PREFIX) and name[len(LM_EVAL_PREFIX) :] in BACKENDS:
        return name[len(LM_EVAL_PREFIX) :]
    raise ValueError(
        f"unknown model {name!r}; choose a backend: {', '.join(BACKENDS)} "
        f"(lm-eval's names for the same: {', '.join(map(lm_eval_name, BACKENDS))})"
    )


def system_label(backend: str, model_args: Mapping[str, Any] | None = None) -> str:
    """The one name of a system in tables, run cards and reports: a baseline's label
    (:data:`BASELINES`), else the served model (``model`` / ``pretrained`` argument), else the backend.

    >>> system_label("always"), system_label("openai", {"model": "qwen3-omni"})
    ('floor: always-trigger', 'qwen3-omni')
    """
    if backend in BASELINES:
        return BASELINES[backend]
    args = model_args or {}
    return str(args.get("model") or args.get("pretrained") or backend)


def lm_eval_system_label(model: Any, model_args: Any = None) -> str | None:
    """:func:`system_label` of an lm-eval model name (``odu-never`` -> ``floor: never-trigger``; a
    model of lm-eval's own: its ``model`` argument, else its name) and its arguments.

    >>> lm_eval_system_label("odu-never"), lm_eval_system_label("local-chat-completions", "model=gpt,x=1")
    ('floor: never-trigger', 'gpt')
    """
    if not isinstance(model, str):
        return None
    if isinstance(model_args, str):  # lm-eval's command line form, key=value,key=value
        model_args = dict(pair.split("=", 1) for pair in model_args.split(",") if "=" in pair)
    backend = model.removeprefix(LM_EVAL_PREFIX)
    return system_label(
        backend if backend in BACKENDS else model, model_args if isinstance(model_args, Mapping) else {}
    )


def backend_class(name: str) -> type[Backend]:
    """The class of the backend called ``name`` (its module imported now); :class:`ValueError` for an unknown one."""
    import importlib

    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    module, _, cls = BACKENDS[name].partition(":")
    found: type[Backend] = getattr(importlib.import_module(module), cls)
    return found


def text_arguments(name: str) -> frozenset[str]:
    """The arguments of backend ``name`` that take text (annotated ``str``, alone or in a union with None).

    >>> sorted(text_arguments("replay"))
    ['predictions']
    """
    import inspect

    def takes_text(annotation: Any) -> bool:
        spelled = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
        return "str" in (part.strip() for part in spelled.split("|"))

    parameters = inspect.signature(backend_class(name)).parameters.values()
    return frozenset(p.name for p in parameters if takes_text(p.annotation))


def make_backend(name: str, **options: Any) -> Backend:
    """The backend called ``name``, built with ``options`` (its constructor's keyword arguments).

    Raises :class:`ValueError` for an unknown backend, an argument it does not take or a required
    one missing, naming the arguments it takes, and for an argument holding a credential
    (:func:`odu.io.scrub.refuse_credentials`).
    """
    import inspect

    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    refuse_credentials(options, f"model {name!r}")  # keys come from environment variables only
    backend = backend_class(name)
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
    "LM_EVAL_PREFIX",
    "AlwaysTrigger",
    "Backend",
    "Generation",
    "NeverTrigger",
    "Replay",
    "backend_class",
    "backend_name",
    "SceneRequest",
    "decode_output",
    "encode_output",
    "lm_eval_name",
    "lm_eval_system_label",
    "make_backend",
    "system_label",
    "text_arguments",
]
