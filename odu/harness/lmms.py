"""What the lmms-eval tasks (``lmms_eval_tasks/odu``) do, as plain functions (no ``lmms_eval`` import).

lmms-eval (0.7.3) runs its own model backends; the task YAMLs point their hooks here through
``lmms_eval_tasks/odu/utils.py``. The docs, the prompts and the scorer are the lm-eval door's
(:mod:`.tasks`); what differs is how lmms-eval hands them over:

* **docs** — lmms-eval has no ``custom_dataset``: it always calls ``datasets.load_dataset``. The
  tasks load a one-row placeholder file shipped beside the YAMLs (``dataset_path: json``; lmms-eval
  resolves ``data_files`` against the YAML's folder) and :func:`process_docs` replaces it with the
  scenes of the task's config (:func:`.tasks.scene_docs`): from ``$ODU_DATASET``, else the bundled
  sample; text-only tasks take their ASR input from ``$ODU_ASR`` (+ ``$ODU_ASR_BASE_URL``).
* **input** — chat backends (``--model qwen2_5_omni`` and every other ``*_chat`` class) read
  :func:`doc_to_messages`: the App F instruction as the system message, then the App D.1 user turn —
  the clips in order as files (written once to the media cache, :func:`..models.clips.spool_clip`),
  each assistant reply as text after the clip it answers (the ``inline`` layout of
  :mod:`..models.messages`). Simple backends (``kimi_audio``, ``video_salmonn_2``, ``--force_simple``)
  read :func:`doc_to_text` (the same texts in order) and :func:`doc_to_visual` (the clips in order:
  audio as ``{"array", "sampling_rate"}`` dicts, video as file paths), and place the media themselves.
* **the audio of a video** — lmms-eval passes the backend's name to the task (its
  ``lmms_eval_specific_kwargs``, keyed by ``--model``); :data:`BACKENDS` says per backend how the
  sound track of an audio-visual clip reaches the model: ``separate`` (the track as an ``audio``
  part right after a video file without it, for backends that hard-code ``use_audio_in_video=False``
  or read frames only), ``native`` (the video file with its track: the backend feeds it itself) or
  ``none`` (the backend cannot take it: flagged on the console, once per task). lmms-eval's
  ``results.json`` says it too: :func:`noting_pitfalls` (put around ``simple_evaluate`` by the start-up
  bridge) adds the pitfalls of each task with media under ``"odu"`` (:func:`results_pitfalls`).
* **scores** — lmms-eval strips every answer and hands :func:`process_results` strings, so there is no
  batch filter: each doc's item is its scene id and the hash of its answer, and the aggregation scores the whole task
  once (parse, match, one judge batch: :func:`.tasks.score_responses`) and reads every metric from
  :func:`.tasks.summarize_items` — the numbers ``odu-bench score`` gives for the same outputs. An
  empty answer is an inference error (no output): lmms-eval's backends answer ``""`` when
  generation raised (``ChatMixin.generate_until`` logs "Error in generating").
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.constants import AUDIO_ONLY, AUDIO_VISUAL
from ..core.prompts import Part
from ..data.media import DEFAULT_AUDIO_SAMPLE_RATE
from ..io.jsonio import encode
from ..models.base import Generation, decode_output, encode_output
from .tasks import METRICS, check_doc, scene_docs, scene_request, score_responses, summarize_items
from .tasks import aggregation as task_aggregation
from .tasks import process_results as scene_item

#: What the tasks' ``lmms_eval_specific_kwargs`` carry: the ``--model`` name lmms-eval resolved them for.
BACKEND_KEY = "lmms_backend"
#: How the sound track of an audio-visual clip reaches the model (see the module docstring).
VIDEO_AUDIO = ("separate", "native", "none")
#: The top-level key of lmms-eval's ``results.json`` holding the toolkit's notes (the lm-eval door's too).
RESULTS_KEY = "odu"
#: The ``process_docs`` hook of an ODU-Bench task as lmms-eval's results keep it (``str`` of the function
#: :func:`process_docs` names): the dataset config and whether the task is text-only.
DOCS_HOOK = re.compile(r"<function odu_(?P<config>[a-z_]+?)(?P<text_only>_text)?_docs at ")
#: The answer that stands for "generation raised" in lmms-eval's backends.
EMPTY_ANSWER = 'empty answer (lmms-eval backends answer "" when generation raised: see its log)'


@dataclass(frozen=True)
class LmmsBackend:
    """What an lmms-eval backend hears of a scene: ``video_audio`` (:data:`VIDEO_AUDIO`), whether it
    takes audio clips at all (``audio``), and the source line it rests on (lmms-eval 0.7.3)."""

    video_audio: str
    audio: bool
    source: str


#: lmms-eval 0.7.3 backends that can run an ODU-Bench task, by ``--model`` name (docs/lmms-eval.md).
BACKENDS: dict[str, LmmsBackend] = {
    "qwen2_5_omni": LmmsBackend(
        "separate", True, "models/chat/qwen2_5_omni.py _infer_one: use_audio_in_video = False (hard-coded)"
    ),
    "qwen3_omni": LmmsBackend(
        "separate", True, "models/chat/qwen3_omni.py _infer_one: use_audio_in_video = False (hard-coded)"
    ),
    "minicpm_o": LmmsBackend(
        "separate", True, "models/chat/minicpm_o.py _infer_one: video -> frames (encode_video), audio parts -> arrays"
    ),
    "baichuan_omni": LmmsBackend(
        "separate", True, "models/chat/baichuan_omni.py _interleaved_content: video {local}, audio parts {path}"
    ),
    "omnivinci": LmmsBackend(
        "native", True, "models/simple/omnivinci.py: load_audio_in_video=True (default) reads the video's track"
    ),
    "gemini": LmmsBackend(
        "native", True, "models/chat/gemini.py: the video file is uploaded whole (Gemini hears its track)"
    ),
    "kimi_audio": LmmsBackend(
        "none", True, "models/simple/kimi_audio.py: audio arrays only (audio-only model; Table 3: AO)"
    ),
    "video_salmonn_2": LmmsBackend(
        "none",
        False,
        "models/simple/video_salmonn_2.py: loaded as Qwen2.5-VL + LoRA with the Qwen2.5-VL processor; "
        "audio items are skipped ('does not support standalone audio')",
    ),
    **{
        name: LmmsBackend(
            "none",
            False,
            f"models/chat/{name}.py: audio parts leave as audio_url with a local path "
            "(protocol.py to_openai_messages: 'TODO, audio hasn't been implemented yet'); video as frames",
        )
        for name in ("openai", "vllm", "sglang")
    },
}
#: Backends whose simple class (``--force_simple``) sends one media item per request, the first
#: (``models/simple/<name>.py`` ``generate_until``: ``visual = visuals[i]`` for the i-th context): the
#: final clip of a multi-clip scene, the one to annotate, never reaches the model.
ONE_CLIP_SIMPLE = frozenset({"qwen2_5_omni", "qwen3_omni", "minicpm_o", "baichuan_omni", "omnivinci"})
#: The route for a backend not in :data:`BACKENDS` (flagged: what it hears is unchecked).
UNKNOWN_BACKEND = LmmsBackend("separate", True, "not in the toolkit's table (odu/harness/lmms.py BACKENDS)")


def backend_name(lmms_eval_specific_kwargs: Mapping[str, Any] | None) -> str:
    """The ``--model`` name lmms-eval resolved the task's kwargs for ("" when it is not in the table)."""
    return str((lmms_eval_specific_kwargs or {}).get(BACKEND_KEY) or "")


def backend(name: str) -> LmmsBackend:
    return BACKENDS.get(name, UNKNOWN_BACKEND)


_FLAGGED: set[tuple[str, str, str]] = set()


def pitfalls(name: str, modality: str) -> list[str]:
    """What backend ``name`` misses of a scene of ``modality`` (empty when it hears everything)."""
    route = backend(name)
    shown = name or "(unnamed)"
    out = []
    if not route.audio and modality == AUDIO_VISUAL:
        out.append(
            f"lmms-eval backend {shown} sees the frames of each video only, no audio: the clips' sound is never "
            f"heard ({route.source})"
        )
    elif not route.audio:
        out.append(f"lmms-eval backend {shown} cannot take audio: the clips' sound is never heard ({route.source})")
    elif modality == AUDIO_VISUAL and route.video_audio == "none":
        out.append(f"lmms-eval backend {shown} cannot hear the audio of videos: frames only ({route.source})")
    if route is UNKNOWN_BACKEND:
        out.append(
            f"lmms-eval backend {shown} is not in the toolkit's table: the audio of each video is sent as a "
            "separate audio part; check in its source that it takes audio parts (docs/lmms-eval.md)"
        )
    return out


def flag(name: str, modality: str, simple_clips: int = 0) -> None:
    """Print :func:`pitfalls` on the console, once per backend and modality in a process; with
    ``simple_clips`` (a simple class given a scene of that many clips), the one-clip pitfall too."""
    found = pitfalls(name, modality)
    if simple_clips > 1 and name in ONE_CLIP_SIMPLE:
        found.append(
            f"lmms-eval's simple {name} class (--force_simple) sends the first clip of a scene only: the final "
            "clip, the one to annotate, is not heard; run the chat class (without --force_simple)"
        )
    for pitfall in found:
        if (name, modality, pitfall) not in _FLAGGED:
            _FLAGGED.add((name, modality, pitfall))
            print(f"odu-bench: pitfall (lmms-eval {name or 'model'}): {pitfall}", file=sys.stderr)


def results_pitfalls(results: Mapping[str, Any]) -> dict[str, list[str]]:
    """The :func:`pitfalls` of each ODU-Bench task with media in lmms-eval's ``results`` (from
    ``simple_evaluate``), by task name: its tasks found by their ``process_docs`` hook (:data:`DOCS_HOOK`),
    the backend by the ``--model`` name lmms-eval records (``results["config"]["model"]``)."""
    from ..data.dataset import CONFIG_NAMES, get_config

    name = str((results.get("config") or {}).get("model") or "")
    found = {}
    for task, config in sorted((results.get("configs") or {}).items()):
        hook = DOCS_HOOK.match(str((config or {}).get("process_docs") or ""))
        if hook is None or hook["text_only"] or hook["config"] not in CONFIG_NAMES:
            continue
        modality = get_config(hook["config"]).modality
        if modality is not None:
            found[task] = pitfalls(name, modality)
    return found


def noting_pitfalls(simple_evaluate: Callable[..., Any]) -> Callable[..., Any]:
    """lmms-eval's ``simple_evaluate`` adding ``{"odu": {"pitfalls": {task: [...]}}}`` (:func:`results_pitfalls`)
    to the results it returns, which its CLI writes to ``results.json``, when the model was named (``--model``:
    an instance has no name to look up); the start-up bridge puts it in place."""

    @functools.wraps(simple_evaluate)
    def noted(*args: Any, **kwargs: Any) -> Any:
        results = simple_evaluate(*args, **kwargs)
        model = kwargs.get("model", args[0] if args else None)
        if isinstance(results, dict) and isinstance(model, str):
            found = results_pitfalls(results)
            if found:
                results.setdefault(RESULTS_KEY, {})["pitfalls"] = found
        return results

    return noted


# --- docs --------------------------------------------------------------------------------------------


def process_docs(config: str, text_only: bool = False) -> Callable[[Any], Any]:
    """The ``process_docs`` hook of one task: the placeholder split becomes the scenes of ``config``."""

    def docs(placeholder: Any) -> Any:
        return scene_docs(config, text_only=text_only)["test"]

    docs.__name__ = docs.__qualname__ = f"odu_{config}{'_text' if text_only else ''}_docs"
    return docs


# --- input -------------------------------------------------------------------------------------------

_CLIPS: Any = None


def _load_clip(doc: Mapping[str, Any], part: Part) -> Any:
    global _CLIPS
    from ..models.clips import DatasetClips

    if _CLIPS is None:
        _CLIPS = DatasetClips()
    assert part.clip is not None
    return _CLIPS.load(doc["media"], doc["scene_id"], part.clip)


def _media(doc: Mapping[str, Any], video_audio: str) -> Callable[[Part], list[dict[str, Any]]]:
    from ..models.clips import spool_clip

    def parts(part: Part) -> list[dict[str, Any]]:
        assert part.clip is not None
        clip, sha = _load_clip(doc, part), part.clip.sha256
        if doc["modality"] == AUDIO_ONLY:
            return [{"type": "audio", "url": str(spool_clip(clip, sha, wav_rate=DEFAULT_AUDIO_SAMPLE_RATE))}]
        if video_audio != "separate":
            return [{"type": "video", "url": str(spool_clip(clip, sha))}]
        return [
            {"type": "video", "url": str(spool_clip(clip, sha, video_only=True))},
            {"type": "audio", "url": str(spool_clip(clip, sha, wav_rate=DEFAULT_AUDIO_SAMPLE_RATE))},
        ]

    return parts


def _no_media(part: Part) -> list[dict[str, Any]]:
    raise AssertionError("a text-only request has no media part")


def doc_to_messages(
    doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Chat backends' input: system instruction (App F.1 / F.2), then the App D.1 user turn with the
    clips in order as files and the assistant replies as text (``inline``), in lmms-eval's message
    format (every content a list of ``text`` / ``audio`` / ``video`` parts, media by path)."""
    from ..models.messages import chat_messages, parts_only

    request = scene_request(doc)
    if not request.text_only:
        check_doc(doc, media=True)
    name = backend_name(lmms_eval_specific_kwargs)
    if not request.text_only:
        flag(name, request.modality)
    media = _no_media if request.text_only else _media(doc, backend(name).video_audio)
    return parts_only(chat_messages(request.chat(), media))


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    """Simple backends' text (and lmms-eval's cache key): the instruction, then the user turn's texts
    in order (turn labels, replies, closing instruction; a text-only doc's ASR blocks), blank-line
    separated; the clips themselves come from :func:`doc_to_visual`."""
    chat = scene_request(doc).chat()
    texts = [p.text if p.role != "assistant" else f"{p.label} {p.text}" for p in chat.parts if p.clip is None]
    return "\n\n".join(texts)


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> list[Any]:
    """Simple backends' media, the clips in order: audio as lmms-eval's ``{"array", "sampling_rate"}``
    (16 kHz mono), video as file paths with their sound track; none for a text-only doc."""
    from ..models.clips import spool_clip

    request = scene_request(doc)
    if request.text_only:
        return []
    check_doc(doc, media=True)
    flag(backend_name(lmms_eval_specific_kwargs), request.modality, simple_clips=len(request.turns))
    out: list[Any] = []
    for part in request.chat().parts:
        if part.clip is None:
            continue
        clip = _load_clip(doc, part)
        if request.modality == AUDIO_ONLY:
            out.append({"array": clip.audio(DEFAULT_AUDIO_SAMPLE_RATE), "sampling_rate": DEFAULT_AUDIO_SAMPLE_RATE})
        else:
            out.append(str(spool_clip(clip, part.clip.sha256)))
    return out


# --- scores ------------------------------------------------------------------------------------------

#: Docs seen by :func:`process_results`, by scene id (the aggregation rebuilds the scenes from them).
_DOCS: dict[str, Mapping[str, Any]] = {}
#: Raw outputs seen by :func:`process_results`, by their sha256 (the items name them by it: lmms-eval
#: logs every metric's item with each sample, sixteen copies of an output otherwise).
_OUTPUTS: dict[str, str] = {}
#: Task scores by the (scene id, output hash) pairs they were computed from: one scoring per task.
_SUMMARIES: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}


def answer_output(answer: Any) -> str:
    """The raw output recorded for an lmms-eval answer: an empty one is an inference error."""
    if isinstance(answer, (list, tuple)):
        answer = answer[0] if answer else None
    if not isinstance(answer, str) or not answer.strip():
        return encode_output(Generation.failed(EMPTY_ANSWER))
    return answer


def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """Per-doc items: the scene id and the sha256 of its raw output (the same item for every metric;
    the output's text as every file keeps it: a lone surrogate as U+FFFD, :data:`odu.io.jsonio.SURROGATE_RULE`)."""
    check_doc(doc)
    output = answer_output(results[0] if results else None)
    digest = hashlib.sha256(encode(output)).hexdigest()
    _DOCS[doc["scene_id"]], _OUTPUTS[digest] = doc, output
    return dict.fromkeys(METRICS, {"scene_id": doc["scene_id"], "output_sha256": digest})


def task_summary(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The scores of one task's items (:func:`.tasks.summarize_items` over the scored scenes), computed
    once per set of outputs: every metric's aggregation reads the same summary."""
    key = tuple(_item_key(n, item) for n, item in enumerate(items, 1))
    if key not in _SUMMARIES:
        docs = [_DOCS[sid] for sid, _ in key]
        scored = score_responses([[_OUTPUTS[digest]] for _, digest in key], docs)
        _SUMMARIES[key] = summarize_items([scene_item(d, [s])["m1"] for d, s in zip(docs, scored)])
    return _SUMMARIES[key]


def _item_key(n: int, item: Any) -> tuple[str, str]:
    """``(scene id, output hash)`` of the ``n``-th item, both seen by :func:`process_results` in this
    process (``ValueError`` naming the item and field otherwise: items of another run or process)."""
    if not isinstance(item, Mapping):
        raise ValueError(
            f"item {n}: not an ODU-Bench item (an object with 'scene_id' and 'output_sha256'), got {item!r:.80}"
        )
    sid, digest = item.get("scene_id"), item.get("output_sha256")
    if not isinstance(sid, str) or sid not in _DOCS:
        raise ValueError(f"item {n}: scene {sid!r:.80} was never seen by process_results in this process")
    if not isinstance(digest, str) or digest not in _OUTPUTS:
        raise ValueError(f"item {n} (scene {sid}): 'output_sha256' {digest!r:.80} names no output process_results saw")
    return sid, digest


def aggregation(metric: str) -> Callable[[Sequence[Mapping[str, Any]]], Any]:
    """The lmms-eval aggregation of ``metric``: one value of :func:`task_summary`."""
    return task_aggregation(metric, task_summary)


def prediction(sample: Any) -> dict[str, Any]:
    """The ``odu-bench score --predictions`` row of one lmms-eval logged sample (``--log_samples``):
    its answer as lmms-eval logged it (``filtered_resps``), ``null`` for an empty one (an inference
    error), under the scene id of its ``m1`` item; ``ValueError`` naming the field it lacks."""
    if not isinstance(sample, Mapping):
        raise ValueError(f"not a JSON object but {type(sample).__name__} (not an lmms-eval sample)")
    if "filtered_resps" not in sample:
        raise ValueError("no 'filtered_resps' (the answer lmms-eval logged)")
    item = sample.get("m1")
    if not isinstance(item, Mapping) or not isinstance(item.get("scene_id"), str):
        held = item.get("scene_id") if isinstance(item, Mapping) else item
        raise ValueError(f"'m1' must be the ODU-Bench item holding the text 'scene_id', got {held!r:.80}")
    output = answer_output(sample["filtered_resps"])
    failed = decode_output(output).error is not None
    return {"scene_id": item["scene_id"], "output": None if failed else output}


def predictions(samples: Iterable[Any]) -> list[dict[str, Any]]:
    """:func:`prediction` of each sample (``ValueError`` naming the sample by its position)."""
    rows = []
    for n, sample in enumerate(samples, 1):
        try:
            rows.append(prediction(sample))
        except ValueError as exc:
            raise ValueError(f"sample {n}: {exc}") from None
    return rows


def write_predictions(samples_jsonl: str | os.PathLike[str], out: str | os.PathLike[str]) -> int:
    """:func:`prediction` of each sample of an lmms-eval ``samples_*.jsonl`` file (read as every JSONL
    input is, :func:`odu.io.jsonio.iter_jsonl`), written as JSONL to ``out`` by replacement; returns the
    number of rows. ``ValueError`` names the file, line and field of a malformed sample (nothing written)."""
    from ..io.files import replace_file
    from ..io.jsonio import dump_line, iter_jsonl

    rows = []
    for line, sample in iter_jsonl(Path(samples_jsonl)):  # bounded lines, named on error
        try:
            rows.append(prediction(sample))
        except ValueError as exc:
            raise ValueError(f"{samples_jsonl}:{line}: {exc}") from None
    replace_file(out, b"".join(dump_line(r) for r in rows))
    return len(rows)


__all__ = [
    "BACKENDS",
    "METRICS",
    "BACKEND_KEY",
    "DOCS_HOOK",
    "EMPTY_ANSWER",
    "RESULTS_KEY",
    "LmmsBackend",
    "aggregation",
    "answer_output",
    "backend",
    "doc_to_messages",
    "doc_to_text",
    "doc_to_visual",
    "noting_pitfalls",
    "pitfalls",
    "prediction",
    "predictions",
    "process_docs",
    "process_results",
    "results_pitfalls",
    "task_summary",
    "write_predictions",
]
