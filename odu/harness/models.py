"""The backends as lm-eval models: one ``odu-<backend>`` model per backend of :data:`odu.models.BACKENDS`
(``odu-openai``, ``odu-qwen-omni``, ``odu-replay``, ``odu-never``, ``odu-always``, ...).

lm-eval 0.4.13 has no plugin discovery, so importing this module registers the models
(``odu-bench lm-eval`` and ``odu-bench eval`` do; from Python, ``import odu.harness.models``
before ``simple_evaluate``). ``setup.cfg`` also declares them as ``lm_eval.models`` entry points
for lm-eval releases that discover plugins.

Each request's scene (:class:`~odu.models.base.SceneRequest`) is built from the request's doc, for
the native tasks (whose prompt string is that request's JSON) and the text-only tasks (whose prompt
is the App D.2 text lm-eval's own models read) alike; media is found through the doc's dataset
locator, loaded only when sent. Inference errors come back as marked strings (never empty
answers) and are never kept in lm-eval's ``--use_cache`` database: they are purged when the
cache is attached, so a rerun retries exactly the failed scenes. From a model's construction on,
our warnings are said in the toolkit's voice, once each (:mod:`odu.io.console`).

Started as several processes (``torchrun`` / ``accelerate launch -m lm_eval``), a model joins their
process group and declares its rank and their number (:mod:`.ranks`): lm-eval splits the scenes
between the ranks and gathers what they scored to rank 0, which writes the one result; a backend
that places a model (``device_map``) puts each rank's on its own device.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Mapping
from typing import Any

import lm_eval.models  # noqa: F401  # built-in models first: lm-eval only auto-registers into an empty registry
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

from ..io.console import say_in_our_voice
from ..models import BACKENDS, backend_class, lm_eval_name, make_backend, text_arguments
from ..models.base import INFERENCE_ERROR_MARK, Generation, SceneRequest, encode_output
from ..models.clips import DatasetClips
from . import ranks
from .tasks import scene_request

#: lm-eval passes these to every model; they mean nothing to remote or replayed answers.
_HARNESS_ARGS = ("batch_size", "max_batch_size", "device")
#: The word lm-eval's argument parser turns into None (:func:`backend_options` gives it back to text arguments).
NONE_WORD = "none"


def backend_options(raw: Mapping[str, Any], backend: str) -> dict[str, Any]:
    """Model arguments as backend ``backend`` takes them (``extra_body`` may arrive as a JSON string).

    lm-eval's ``key=value`` parser (``lm_eval.utils.handle_arg_string``, used by ``--model_args`` and by
    ``odu-bench eval --model-args``) reads the word ``none`` as Python None: an argument that takes text
    gets the word back (``audio_in_video=none``; an argument with no such value then refuses it by name),
    any other is left unset (``max_tokens=none``), as lm-eval's own None-valued options are."""
    words = text_arguments(backend)
    options = {
        k: NONE_WORD if v is None else v
        for k, v in raw.items()
        if k not in _HARNESS_ARGS and (v is not None or k in words)
    }
    if isinstance(options.get("extra_body"), str):
        try:
            options["extra_body"] = json.loads(options["extra_body"])
        except ValueError as exc:  # the text is not shown: it may hold a credential
            raise ValueError(f"extra_body must be a JSON object ({exc}; the text is not shown)") from None
    return options


def _flag(value: Any, name: str) -> bool:
    """A boolean model argument (lm-eval passes ``true`` / ``false`` as text or as bools)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"{name} must be true or false, got {value!r}")


def check_servers(backend: Any) -> None:
    """Preflight (:mod:`odu.transport.server_check`) of the tasks' judge, then of ``backend``'s server,
    before the first request; :class:`~odu.transport.server_check.PreflightError` when one fails."""
    from ..transport.server_check import check_judge, check_model
    from .tasks import task_judge

    judge = task_judge()
    try:
        check_judge(judge)
    finally:
        judge.close()
    check_model(backend)


#: Clip reader shared by every model of the process: each dataset is opened once per run, however
#: many models ``odu-bench eval`` runs.
_CLIPS = DatasetClips()


class OduLM(LM):
    """Adapter: lm-eval ``generate_until`` requests -> an :class:`~odu.models.base.Backend`."""

    MULTIMODAL = True
    #: Read by :mod:`odu.harness.preflight`: the native tasks run on these models only.
    ODU_BACKEND = True
    backend_name = ""

    def __init__(self, **model_args: Any) -> None:
        super().__init__()
        say_in_our_voice()  # lm-eval builds the model before it loads the tasks
        options = backend_options(model_args, self.backend_name)
        preflight = _flag(options.pop("preflight", True), "preflight")
        self.ranks = ranks.join()
        self._rank, self._world_size = self.ranks.rank, self.ranks.size
        if self.ranks.device is not None:  # launched as several processes: one device each
            import torch

            self._device = torch.device(self.ranks.device)
            if "device_map" in inspect.signature(backend_class(self.backend_name)).parameters:
                options.setdefault("device_map", self.ranks.device)
        #: Rank -> the backend counters of that rank which this rank's backend has added (:meth:`gather_object`).
        self._ranks_counted: dict[int, dict[str, Any]] = {}
        self.backend = make_backend(self.backend_name, **options)
        self._clips = _CLIPS
        if preflight:
            check_servers(self.backend)
        for pitfall in self.backend.pitfalls() if self.rank == 0 else ():
            print(f"odu-bench: pitfall ({lm_eval_name(self.backend_name)}): {pitfall}", file=sys.stderr)

    # --- lm-eval interface ----------------------------------------------------------------------

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        scenes = [scene_request(r.doc) for r in requests]  # the doc: native and text-only tasks alike
        locators = {s.scene_id: (r.doc or {}).get("media") for s, r in zip(scenes, requests)}

        def load_clip(request: SceneRequest, ref: Any) -> Any:
            where = locators.get(request.scene_id)
            if not where:
                from ..data.media import MediaError

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
                    self.cache_hook.add_partial("generate_until", requests[indices[k]].args, encode_output(generation))

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

    # --- across processes (:mod:`.ranks`) -------------------------------------------------------

    def all_gather(self, tensor: Any) -> Any:
        return ranks.all_gather(tensor) if self.world_size > 1 else tensor

    def gather_object(self, obj: Any, dst: int = 0) -> list[Any] | None:
        """``obj`` of every rank on rank ``dst`` (lm-eval gathers the logged samples and metrics so).
        Each rank's backend counters travel with it, and ``dst``'s backend adds what the others
        counted since the last gathering: its run card and pitfalls count every rank's scenes."""
        if self.world_size <= 1:
            return [obj]
        gathered = ranks.gather_object((obj, self.backend.info().get("stats") or {}), dst)
        if gathered is None:
            return None
        for rank, (_, counts) in enumerate(gathered):
            if rank != self.rank:
                before = self._ranks_counted.get(rank, {})
                self.backend.add_counts({k: v - before.get(k, 0) for k, v in counts.items()})
                self._ranks_counted[rank] = counts
        return [o for o, _ in gathered]

    def barrier(self) -> None:
        if self.world_size > 1:
            ranks.barrier()

    def get_model_info(self) -> dict[str, Any]:
        """Backend settings and known pitfalls, added to lm-eval's ``results["config"]``."""
        return {"odu_backend": self.backend.info(), "odu_pitfalls": self.backend.pitfalls()}


def _lm_eval_model(backend: str) -> type[OduLM]:
    """The lm-eval model class of ``backend``, registered as :func:`~odu.models.lm_eval_name`."""
    target = BACKENDS[backend]
    name = "Odu" + target.rpartition(":")[2]
    doc = f"The ``{backend}`` backend (:class:`{target.replace(':', '.')}`) as the lm-eval model ``{lm_eval_name(backend)}``."
    cls = type(name, (OduLM,), {"__doc__": doc, "__module__": __name__, "backend_name": backend})
    return register_model(lm_eval_name(backend))(cls)


#: Registered lm-eval model name -> class, one per backend (setup.cfg declares the same entry points).
MODELS: dict[str, type[OduLM]] = {lm_eval_name(b): _lm_eval_model(b) for b in BACKENDS}
globals().update({cls.__name__: cls for cls in MODELS.values()})  # importable by name (entry points)

__all__ = ["MODELS", "OduLM", *(cls.__name__ for cls in MODELS.values())]
