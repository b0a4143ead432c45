"""What runs after lm-eval has built the model and loaded the tasks, before the first request (and after the last).

lm-eval's ``simple_evaluate`` builds the model, then loads the tasks (our ``load_docs`` calls
:func:`install`), then calls ``lm_eval.evaluator.evaluate``, which it looks up as a module global at
that moment. :func:`install` wraps that function once, so that:

* a native task (clip references: ``doc_to_audio`` is :func:`.tasks.doc_to_clips`) paired with a model
  that is not an ODU-Bench backend is refused with a message naming the ``odu-*`` backends and the
  text-only tasks, before any request. Without it, lm-eval's own multimodal check names only its
  own models, and its API models (``local-chat-completions``, ...) pass that check and fail with
  ``KeyError: 'visual'`` inside lm-eval;
* the text-only tasks' clips are transcribed for exactly the docs lm-eval will evaluate
  (``--limit`` / ``--samples`` applied, lm-eval's own ``doc_iterator``), one concurrent batch per
  ASR input (:class:`.asr.AsrInput`);

and, once ``evaluate`` returns, its results name the dataset each task read, the judge and the
caveats of the numbers (:func:`.annotate.annotate`), which lm-eval's printed table ends with.

A caller that imported ``evaluate`` by name before the tasks loaded keeps the unwrapped function:
native tasks then meet lm-eval's own check, and text-only docs are transcribed one by one as
lm-eval renders them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .annotate import annotate
from .tasks import doc_asr, doc_to_clips, doc_to_prompt

#: The attribute that marks the wrapped ``evaluate`` (installed once per process).
MARK = "odu_preflight"


def install() -> None:
    """Wrap ``lm_eval.evaluator.evaluate`` with :func:`check` (idempotent)."""
    import functools
    import inspect

    import lm_eval.evaluator as evaluator

    if getattr(evaluator.evaluate, MARK, False):
        return
    original = evaluator.evaluate
    signature = inspect.signature(original)  # follows __wrapped__ of lm-eval's @positional_deprecated

    @functools.wraps(original)
    def evaluate(*args: Any, **kwargs: Any) -> Any:
        arguments = signature.bind(*args, **kwargs).arguments
        check(arguments)
        results = original(*args, **kwargs)
        if isinstance(results, dict):  # None on ranks other than 0
            annotate(results, arguments.get("limit"))
        return results

    setattr(evaluate, MARK, True)
    evaluator.evaluate = evaluate


def _tasks(task_dict: Any) -> dict[str, Any]:
    tasks = task_dict.get("tasks", {}) if isinstance(task_dict, Mapping) else {}
    return dict(tasks) if isinstance(tasks, Mapping) else {}


def check(arguments: Mapping[str, Any]) -> None:
    """The checks and preparation above, on the arguments of one ``evaluate`` call."""
    lm, tasks = arguments["lm"], _tasks(arguments.get("task_dict"))
    refuse_foreign_models(lm, tasks)
    transcribe_evaluated_docs(lm, tasks, arguments.get("limit"), arguments.get("samples"))


def refuse_foreign_models(lm: Any, tasks: Mapping[str, Any]) -> None:
    """:class:`ValueError` when a native task meets a model without ``ODU_BACKEND`` (an attribute, so
    that lm-eval's ``CachingLM`` wrapper of ``--use_cache`` passes it through)."""
    native = sorted(name for name, task in tasks.items() if _hook(task, "doc_to_audio") is doc_to_clips)
    if not native or getattr(lm, "ODU_BACKEND", False):
        return
    from ..models import BACKENDS, lm_eval_name

    text = ", ".join(f"{name}_text" for name in native if name in ("odu_av", "odu_ao")) or "odu_av_text, odu_ao_text"
    model = type(getattr(lm, "lm", lm)).__name__  # the model inside lm-eval's CachingLM
    raise ValueError(
        f"task(s) {', '.join(native)} send scene references with audio/video clips, which only the ODU-Bench "
        f"backends take ({', '.join(lm_eval_name(b) for b in BACKENDS)}); model {model} is not one. "
        f"lm-eval's own models run the text-only task(s) {text} (App D.2: ASR text instead of the clips)."
    )


def transcribe_evaluated_docs(lm: Any, tasks: Mapping[str, Any], limit: Any, samples: Any) -> None:
    """Transcribe the clips of the text-only docs this run evaluates, one batch per ASR input."""
    from lm_eval.evaluator_utils import get_sample_size

    batches: dict[str, tuple[Any, list[Any]]] = {}
    for name, task in tasks.items():
        if _hook(task, "doc_to_text") is not doc_to_prompt:
            continue
        chosen = (samples or {}).get(name) if isinstance(samples, Mapping) else None
        docs = task.doc_iterator(
            rank=getattr(lm, "rank", 0),
            limit=get_sample_size(task, limit),
            samples=chosen,
            world_size=getattr(lm, "world_size", 1),
        )
        for _, doc in docs:
            source = doc_asr(doc)
            if source is not None:
                batches.setdefault(source.id, (source, []))[1].append(doc)
    for source, docs in batches.values():
        source.prepare(docs)


def _hook(task: Any, name: str) -> Any:
    return getattr(getattr(task, "config", None), name, None)


__all__ = ["MARK", "check", "install", "refuse_foreign_models", "transcribe_evaluated_docs"]
