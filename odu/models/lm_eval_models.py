"""The backends as lm-eval models: ``odu-openai``, ``odu-qwen-omni``, ``odu-gemini``, ``odu-realtime``, ``odu-replay``, ``odu-never``,
``odu-always``. The only module of ``odu.models`` that imports ``lm_eval``.

lm-eval 0.4.13 has no plugin discovery, so importing this module registers the models
(``odu-bench lm-eval`` and ``odu-bench eval`` do; from Python, ``import odu.models.lm_eval_models``
before ``simple_evaluate``). ``setup.cfg`` also declares them as ``lm_eval.models`` entry points
for lm-eval releases that discover plugins.

Each request's prompt is the JSON scene reference built by the ``odu_*`` tasks
(:class:`~odu.models.base.SceneRequest`); media is found through the request's doc (its dataset
locator), loaded only when sent. Inference errors come back as marked strings (never empty
answers) and are never kept in lm-eval's ``--use_cache`` database: they are purged when the
cache is attached, so a rerun retries exactly the failed scenes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import lm_eval.models  # noqa: F401  # built-in models first: lm-eval only auto-registers into an empty registry
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

from . import make_backend
from .base import INFERENCE_ERROR_MARK, Generation, SceneRequest, encode_output
from .clips import DatasetClips

#: lm-eval passes these to every model; they mean nothing to remote or replayed answers.
_HARNESS_ARGS = ("batch_size", "max_batch_size", "device")


def _options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Model arguments as the backends take them (``extra_body`` may arrive as a JSON string)."""
    options = {k: v for k, v in raw.items() if k not in _HARNESS_ARGS and v is not None}
    if isinstance(options.get("extra_body"), str):
        try:
            options["extra_body"] = json.loads(options["extra_body"])
        except ValueError:
            raise ValueError(f"extra_body must be a JSON object, got {options['extra_body']!r}") from None
    return options


class OduLM(LM):
    """Adapter: lm-eval ``generate_until`` requests -> an :class:`~odu.models.base.Backend`."""

    MULTIMODAL = True
    backend_name = ""

    def __init__(self, **model_args: Any) -> None:
        super().__init__()
        self.backend = make_backend(self.backend_name, **_options(model_args))
        self._clips = DatasetClips()

    # --- lm-eval interface ----------------------------------------------------------------------

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        scenes = [SceneRequest.from_context(r.args[0]) for r in requests]
        locators = {s.scene_id: (r.doc or {}).get("media") for s, r in zip(scenes, requests)}

        def load_clip(request: SceneRequest, ref: Any) -> Any:
            where = locators.get(request.scene_id)
            if not where:
                from ..media import MediaError

                raise MediaError(f"scene {request.scene_id} clip {ref.id}: its doc names no dataset row")
            return self._clips.load(where, request.scene_id, ref)

        groups: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault(json.dumps(r.args[1], sort_keys=True, default=str), []).append(i)
        out: list[str] = [""] * len(requests)
        for indices in groups.values():
            gen_kwargs = dict(requests[indices[0]].args[1])

            def done(k: int, generation: Generation, indices: list[int] = indices) -> None:
                if generation.error is None:  # cache each success at once: a killed run keeps it
                    self.cache_hook.add_partial("generate_until", requests[indices[k]].args, generation.text or "")

            generations = self.backend.generate([scenes[i] for i in indices], load_clip, gen_kwargs, on_done=done)
            for i, generation in zip(indices, generations):
                out[i] = encode_output(generation)
        return out

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        raise NotImplementedError("ODU-Bench models generate; loglikelihood tasks are not supported")

    def loglikelihood_rolling(self, requests: list[Instance]) -> list[float]:
        raise NotImplementedError("ODU-Bench models generate; loglikelihood tasks are not supported")

    def set_cache_hook(self, cache_hook: Any) -> None:
        """Attach lm-eval's response cache, dropping inference errors a previous run stored in it."""
        super().set_cache_hook(cache_hook)
        db = getattr(cache_hook, "dbdict", None)
        if db is not None:
            stale = [k for k, v in db.items() if isinstance(v, str) and v.startswith(INFERENCE_ERROR_MARK)]
            for key in stale:
                del db[key]
            if stale:
                db.commit()

    def get_model_info(self) -> dict[str, Any]:
        """Backend settings and known pitfalls, added to lm-eval's ``results["config"]``."""
        return {"odu_backend": self.backend.info(), "odu_pitfalls": self.backend.pitfalls()}


@register_model("odu-openai")
class OduOpenAI(OduLM):
    """Omni model on an OpenAI-compatible server: ``model=...,base_url=...`` (see README)."""

    backend_name = "openai"


@register_model("odu-qwen-omni")
class OduQwenOmni(OduLM):
    """Qwen2.5-Omni / Qwen3-Omni with local transformers: ``pretrained=Qwen/...``."""

    backend_name = "qwen-omni"


@register_model("odu-gemini")
class OduGemini(OduLM):
    """Gemini through the google-genai SDK: ``model=gemini-...`` (docs/providers.md)."""

    backend_name = "gemini"


@register_model("odu-realtime")
class OduRealtime(OduLM):
    """GPT-Realtime over WebSocket, audio-only tasks: ``model=gpt-realtime-...`` (docs/providers.md)."""

    backend_name = "realtime"


@register_model("odu-replay")
class OduReplay(OduLM):
    """Outputs produced elsewhere: ``predictions=PATH.jsonl``."""

    backend_name = "replay"


@register_model("odu-never")
class OduNever(OduLM):
    """Floor baseline: never triggers."""

    backend_name = "never"


@register_model("odu-always")
class OduAlways(OduLM):
    """Floor baseline: always triggers on the whole final clip."""

    backend_name = "always"


#: Registered lm-eval model name -> class.
MODELS: dict[str, type[OduLM]] = {
    "odu-openai": OduOpenAI,
    "odu-qwen-omni": OduQwenOmni,
    "odu-gemini": OduGemini,
    "odu-realtime": OduRealtime,
    "odu-replay": OduReplay,
    "odu-never": OduNever,
    "odu-always": OduAlways,
}

__all__ = ["MODELS", "OduAlways", "OduGemini", "OduLM", "OduRealtime", "OduNever", "OduOpenAI", "OduQwenOmni", "OduReplay"]
