"""What the lm-eval tasks (``lm_eval_tasks/odu``) do, as plain functions (no ``lm_eval`` import).

The task YAMLs point their hooks here through ``lm_eval_tasks/odu/utils.py``:

* :func:`load_docs` (``custom_dataset``): scenes of one config from a prepared dataset directory or
  Hub repo — the ``dataset`` metadata key, else ``$ODU_DATASET``, else a prepared ``./odu-bench``,
  else the bundled sample prepared into the cache (:func:`odu.data.sample.sample_dataset_dir`), said
  on the console (:func:`announce_dataset`) — as light docs: the release record, clip
  references (id, sha256, duration, replies) and a locator of the dataset row. Media bytes stay in
  the dataset; models fetch them by locator when they send a scene. Text-only docs (App D.2) name
  their ASR input (:class:`.asr.AsrInput`: a sidecar file, checked here, or an
  ``/audio/transcriptions`` endpoint, which transcribes only the docs lm-eval evaluates) and carry
  the instruction, the tasks' ``description``. Loading installs :mod:`.preflight`.
* :func:`doc_to_text` (native tasks): the scene request JSON (:class:`odu.models.base.SceneRequest`),
  lm-eval's cache key; the ``odu-*`` models build the same request from the doc and expand it
  (App F.1 / F.2, D.1).
* :func:`doc_to_prompt` (text-only tasks): the App D.2 user turn as plain text, what lm-eval's own
  models read (and the ``odu-*`` models send as the user message).
* :func:`score_responses` (a ``custom`` filter over ALL responses of the task): parse, match and
  judge the whole task in one :func:`odu.runs.scoring.score_scenes` call — the judge gets every request
  at once, so it batches, runs concurrently and caches — and replace each response by its scored
  record (raw output, inference error, parsed prediction, scene row). ``--log_samples`` keeps it.
  Across processes (:mod:`.ranks`) each rank scores its own scenes; the task's judge block (the run
  card's, ``results.json``'s ``"odu"``) sums the ranks' accounting, each rank's first record keeps its own.
* :func:`process_results` + :func:`aggregation`: M1 (macro-F1 pooled over the task), M2-M5, Avg,
  FTR, parse errors, no-output, inference errors, judge errors and accounting, all computed by
  :func:`odu.runs.contract.summarize` over the task's scene rows: the numbers ``odu-bench score`` gives
  for the same outputs.

The judge comes from :func:`use_judge` (set by ``odu-bench eval``) or ``$ODU_JUDGE``: a judge
spec (:mod:`odu.judge.spec`: the ``odu-bench score`` judge options as one string), e.g. ``lexical``
(the default, offline, approximate) or ``openai:MODEL --judge-base-url URL --judge-concurrency 32``.
``$ODU_ANNOTATION_LANGUAGE`` picks the reference language (``scene``, ``en``, ``zh``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.constants import MODALITIES
from ..core.parse import parse_output
from ..core.prompts import ClipRef, Turn, instruction
from ..core.schema import scene_from_dict
from ..io.console import inert
from ..io.files import is_sha256
from ..judge.base import Judge
from ..models.base import TRUNCATED_ISSUE, SceneRequest, decode_output
from ..runs.contract import summarize
from ..runs.scoring import score_scenes
from ..runs.shards import JUDGE_COUNTERS, summed_counters
from . import ranks
from .runcard import RECORDER

if TYPE_CHECKING:  # pragma: no cover
    from .asr import AsrInput

DATASET_ENV = "ODU_DATASET"
#: The dataset a bare name means when none is given: a prepared folder of this name in the current
#: folder (the task YAMLs' ``dataset_path``; ``load_dataset("odu-bench", ...)`` reads the same).
LOCAL_DATASET = "odu-bench"
#: Why the tasks read the bundled sample (:func:`dataset_choice`).
SAMPLE_REASON = "the bundled sample"
JUDGE_ENV = "ODU_JUDGE"
ANNOTATION_LANGUAGE_ENV = "ODU_ANNOTATION_LANGUAGE"
ASR_ENV = "ODU_ASR"
ASR_BASE_URL_ENV = "ODU_ASR_BASE_URL"
#: The tasks score the scene's own-language reference unless ``$ODU_ANNOTATION_LANGUAGE`` says en/zh.
TASK_ANNOTATION_LANGUAGE = "scene"

#: Metrics every task reports (lm-eval metric names), all from :func:`odu.runs.contract.summarize` or
#: the filter's counts. Fractions in [0, 1]; counts are integers.
METRICS: tuple[str, ...] = (
    "m1",
    "m2",
    "m3",
    "m4",
    "m5",
    "avg",
    "ftr",
    "m2_errors_as_misses",
    "parse_errors",
    "no_output",
    "inference_errors",
    "truncated",
    "judge_error_points",
    "judge_requests",
    "judge_cache_hits",
    "judge_retries",
    "judge_errors",
)
_ROW_KEYS = (
    "modality",
    "has_demand",
    "predicted_has_demand",
    "parse_error",
    "no_output",
    "s2",
    "s2_errors_as_misses",
    "s3",
    "s4",
    "s5",
)
_JUDGE_COUNTS = {
    "judge_requests": "requests",
    "judge_cache_hits": "cache_hits",
    "judge_retries": "retries",
    "judge_errors": "errors",
}


# --- docs --------------------------------------------------------------------------------------------


def dataset_choice(dataset: str | os.PathLike[str] | None = None) -> tuple[str, str]:
    """Where the tasks read scenes, and why there: ``dataset`` (metadata ``dataset``, ``--dataset``),
    else ``$ODU_DATASET``, else a prepared ``./odu-bench`` (:data:`LOCAL_DATASET`, the name the task
    YAMLs give as ``dataset_path``), else the bundled sample."""
    if dataset:
        return str(dataset), "named"
    if chosen := os.environ.get(DATASET_ENV):
        return chosen, f"${DATASET_ENV}"
    from ..data.prepare import MANIFEST_NAME

    if (Path(LOCAL_DATASET) / MANIFEST_NAME).is_file():
        return str(Path(LOCAL_DATASET).resolve()), f"the prepared ./{LOCAL_DATASET} in the current folder"
    from ..data.sample import sample_dataset_dir

    return str(sample_dataset_dir()), SAMPLE_REASON


#: Sources already announced on the console in this process (each task loads its docs once).
_ANNOUNCED: set[str] = set()


def announce_dataset(source: str, reason: str, n_scenes: int, config: str) -> None:
    """Say on stderr which dataset the tasks read when nobody named it (once per source): the
    prepared ``./odu-bench``, or — loudly — the bundled sample."""
    if reason == "named" or source in _ANNOUNCED:
        return
    _ANNOUNCED.add(source)
    if reason == SAMPLE_REASON:
        print(
            f"odu-bench: WARNING: the tasks read the bundled SAMPLE ({source}; {n_scenes} {config} scenes, synthetic, "
            f"they measure nothing): no metadata 'dataset', no ${DATASET_ENV} and no prepared ./{LOCAL_DATASET} in "
            f'{Path.cwd()}. Name yours: --metadata \'{{"dataset": "PATH"}}\' or {DATASET_ENV}=PATH',
            file=sys.stderr,
        )
    else:
        print(f"odu-bench: the tasks read {inert(source)} ({inert(reason)})", file=sys.stderr)


def asr_input(asr: str | None = None, asr_base_url: str | None = None) -> AsrInput:
    """The ASR input named by ``asr`` (else ``$ODU_ASR``): a sidecar JSONL path or ``openai:MODEL`` on
    ``asr_base_url`` (else ``$ODU_ASR_BASE_URL``); one per setting in a process (:func:`.asr.input_for`)."""
    from .asr import AsrError, input_for

    spec = asr or os.environ.get(ASR_ENV)
    if not spec:
        raise AsrError(
            "text-only tasks need ASR input: a sidecar JSONL (metadata 'asr' or $ODU_ASR=PATH) or "
            f"an endpoint ($ODU_ASR=openai:MODEL with metadata 'asr_base_url' / ${ASR_BASE_URL_ENV})"
        )
    base_url = (asr_base_url or os.environ.get(ASR_BASE_URL_ENV)) if spec.startswith("openai:") else None
    return input_for(spec, base_url)


def load_docs(config: str = "av", **settings: Any) -> Any:
    """``custom_dataset`` hook: :func:`scene_docs`, after installing :mod:`.preflight` (lm-eval's
    ``evaluate``: refuse foreign models on native tasks, transcribe what is evaluated)."""
    from .preflight import install

    install()
    return scene_docs(config, **settings)


def scene_docs(
    config: str = "av",
    dataset: str | None = None,
    dataset_revision: str | None = None,
    text_only: bool = False,
    asr: str | None = None,
    asr_base_url: str | None = None,
    shard: str | None = None,
    **_harness: Any,
) -> Any:
    """``{"test": Dataset}`` of light docs for dataset config ``config``.

    ``dataset`` / ``dataset_revision`` / ``asr`` / ``asr_base_url`` / ``shard`` come from the task's
    ``metadata`` or lm-eval's ``--metadata``; every other key lm-eval passes (its metadata merges the
    model arguments in, hence the prefixed names) is ignored. ``shard`` (``"K/N"``,
    :mod:`odu.runs.shards`) keeps the scenes of that shard only; the recorded fingerprint is the whole
    dataset's. From here on our warnings are said in the toolkit's voice (:mod:`odu.io.console`:
    lm-eval and lmms-eval load every task of ours through here).
    """
    import datasets

    from ..data.dataset import row_to_record, rows_without_media
    from ..data.hub import load_split
    from ..data.prepare import check_dataset
    from ..io.console import say_in_our_voice
    from ..models.clips import locator
    from ..runs.shards import in_shard, parse_shard

    say_in_our_voice()
    source, reason = dataset_choice(dataset)
    check_dataset(source)
    ds = load_split(source, config, dataset_revision)  # warns when datasets served an older cached copy
    rows = rows_without_media(ds)
    docs: list[dict[str, Any]] = []
    digest = hashlib.sha256()
    part = parse_shard(shard) if shard else None
    total = 0
    for i, row in enumerate(rows):
        record = row_to_record(row)
        scene = scene_from_dict(record)
        total += 1
        users = [t for t in row["turns"] if t["role"] == "user"]
        clips = [
            {
                "id": c.id,
                "sha256": t["sha256"],
                "duration_ms": int(round(c.duration * 1000)),
                "replies": list(c.replies),
            }
            for c, t in zip(scene.clips, users)
        ]
        text = json.dumps(record, ensure_ascii=False, sort_keys=True)
        digest.update(text.encode("utf-8"))
        digest.update("".join(c["sha256"] for c in clips).encode("ascii"))
        if not in_shard(scene.scene_id, part):
            continue
        doc: dict[str, Any] = {
            "scene_id": scene.scene_id,
            "modality": scene.modality,
            "language": scene.language,
            "label": scene.label,
            "source": scene.source,
            "has_demand": scene.is_positive,
            "record": text,
            "clips": clips,
            "media": locator(source, config, i, dataset_revision),
            "asr": "",
        }
        check_doc(doc)  # the row's clip hashes name files in the media cache: SHA-256s only
        docs.append(doc)
    announce_dataset(source, reason, len(docs), config)
    key = f"{config}{'_text' if text_only else ''}"
    if text_only:
        asr_source = asr_input(asr, asr_base_url)
        if asr_source.endpoint is None:
            asr_source.prepare(docs)  # a sidecar is checked now; an endpoint transcribes what lm-eval evaluates
        asr_source.record(key)
        for doc in docs:
            doc["asr"] = asr_source.id
            doc["instruction"] = instruction(doc["modality"])  # the description (system message) of the text tasks
    manifest = Path(source) / "media_manifest.json"
    RECORDER.record(
        "datasets",
        key,
        {
            "source": source,
            "config": config,
            "revision": dataset_revision,
            "n_scenes": len(docs),
            **({"shard": shard, "n_scenes_total": total} if part else {}),
            "content_sha256": digest.hexdigest(),
            "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.is_file() else None,
        },
    )
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def load_tasks(manager: Any, names: Sequence[str]) -> list[Any]:
    """The lm-eval task or group objects named ``names``, from ``manager`` (a ``TaskManager``): each
    task's docs loaded once. ``simple_evaluate`` takes them as its ``tasks`` for every model of a
    run, which otherwise loads every task's data again for each model."""
    objects = []
    for name in names:
        loaded = manager.load(name)
        objects.append(loaded["groups"].get(name) or loaded["tasks"][name])
    return objects


class DocError(ValueError):
    """A doc the hooks cannot use (one handed over by a harness's cache, say): the message names the
    doc by its scene id and the field, with what it holds."""


def _doc_name(doc: Any) -> str:
    sid = doc.get("scene_id") if isinstance(doc, Mapping) else None
    if not isinstance(sid, str) or not sid:
        raise DocError(f"doc: 'scene_id' must be text, got {_short(sid)} (not an ODU-Bench doc)")
    return f"scene {sid}"


def _short(value: Any) -> str:
    return "nothing" if value is None else repr(value)[:80]


def _positive(value: Any) -> bool:
    """A finite positive JSON number (never a boolean, NaN or infinity)."""
    return type(value) in (int, float) and 0 < value < float("inf")


def check_doc(doc: Any, media: bool = False) -> None:
    """:class:`DocError` unless ``doc`` holds what :func:`scene_request` reads: a scene id, a modality of
    :data:`odu.core.constants.MODALITIES`, and clips, each with a text ``id``, a SHA-256 (64 hex digits:
    it names the clip's file in the media cache), a positive ``duration_ms`` and text ``replies``;
    with ``media``, a ``media`` locator too (:func:`odu.models.clips.read_locator`)."""
    where = _doc_name(doc)
    if doc.get("modality") not in MODALITIES:
        raise DocError(f"{where}: 'modality' must be one of {', '.join(MODALITIES)}, got {_short(doc.get('modality'))}")
    clips = doc.get("clips")
    if not isinstance(clips, list) or not clips:
        raise DocError(f"{where}: 'clips' must be a non-empty list of clip objects, got {_short(clips)}")
    for i, clip in enumerate(clips):
        if not isinstance(clip, Mapping):
            raise DocError(f"{where}: clips[{i}] must be an object, got {_short(clip)}")
        duration, replies = clip.get("duration_ms"), clip.get("replies")
        rules = (
            ("id", "text", isinstance(clip.get("id"), str)),
            ("sha256", "a SHA-256 (64 hex digits)", is_sha256(clip.get("sha256"))),
            ("duration_ms", "a positive number of ms", _positive(duration)),
            (
                "replies",
                "a list of texts",
                replies is None or (isinstance(replies, list) and all(isinstance(r, str) for r in replies)),
            ),
        )
        for field, wanted, held in rules:
            if not held:
                raise DocError(f"{where}: clips[{i}].{field} must be {wanted}, got {_short(clip.get(field))}")
    if media:
        from ..models.clips import read_locator

        try:
            read_locator(doc.get("media"))
        except ValueError as exc:
            raise DocError(f"{where}: 'media' {exc}") from None


def scene_request(doc: Mapping[str, Any], with_asr: bool = True) -> SceneRequest:
    """The request of one doc (App D.1 input; App D.2, with each clip's ASR sentences, for a text-only doc;
    ``with_asr=False``: a text-only doc's request without its sentences, for checks that read no text)."""
    from .asr import doc_asr

    check_doc(doc)
    source = doc_asr(doc) if with_asr else None
    asr = source.sentences(doc) if source is not None else None
    turns = tuple(
        Turn(
            ClipRef(i, c["id"], c["sha256"], int(c["duration_ms"])),
            tuple(c["replies"] or ()),
            None if asr is None else asr[i],
        )
        for i, c in enumerate(doc["clips"])
    )
    return SceneRequest(doc["scene_id"], doc["modality"], turns, text_only=bool(doc.get("asr")))


def doc_to_text(doc: Mapping[str, Any]) -> str:
    """``doc_to_text`` hook of the native tasks: the scene request JSON (clip hashes, replies; no
    media), which only the ODU-Bench backends take (:mod:`.preflight` refuses any other model)."""
    return scene_request(doc).to_context()


def doc_to_prompt(doc: Mapping[str, Any]) -> str:
    """``doc_to_text`` hook of the text-only tasks: the App D.2 user turn as plain text (turn labels,
    each clip's ASR block, the replies between clips, the closing instruction), exactly the user
    message an ODU-Bench backend sends; the task's ``description`` is the instruction (App F.1 / F.2),
    the system message of a chat model. So lm-eval's own models run the text-only baseline."""
    from ..models.messages import chat_messages

    def no_media(part: Any) -> list[dict[str, Any]]:
        raise AssertionError("a text-only request has no media part")

    [system, user] = chat_messages(scene_request(doc).chat(), no_media)
    return str(user["content"])


def doc_to_clips(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """``doc_to_audio`` hook of the native tasks: clip references. It marks the task multimodal, so
    lm-eval refuses text-only models instead of sending them the request JSON as a prompt."""
    return [{"clip": c["id"], "sha256": c["sha256"]} for c in doc["clips"]]


# --- scoring -----------------------------------------------------------------------------------------

_judge_factory: Callable[[], Judge] | None = None
_annotation_language: str | None = None


@contextlib.contextmanager
def use_judge(factory: Callable[[], Judge], annotation_language: str | None = None) -> Iterator[None]:
    """Within the block, tasks score with judges made by ``factory`` (one per task) instead of
    ``$ODU_JUDGE``, and against ``annotation_language`` (if given) instead of ``$ODU_ANNOTATION_LANGUAGE``."""
    global _judge_factory, _annotation_language
    previous = _judge_factory, _annotation_language
    _judge_factory, _annotation_language = factory, annotation_language
    try:
        yield
    finally:
        _judge_factory, _annotation_language = previous


def judge_from_env() -> Judge:
    """The judge named by ``$ODU_JUDGE``, a judge spec (:mod:`odu.judge.spec`; default ``lexical``)."""
    from ..judge.spec import judge_from_spec

    return judge_from_spec(os.environ.get(JUDGE_ENV, ""), f"${JUDGE_ENV}")


def task_judge() -> Judge:
    """A new judge of the tasks: :func:`use_judge`'s factory inside its block, else :func:`judge_from_env`."""
    return _judge_factory() if _judge_factory is not None else judge_from_env()


def _judge_key(scenes: Sequence[Any], text_only: bool) -> str:
    modalities = sorted({s.modality for s in scenes})
    return "+".join(modalities) + (" (text-only)" if text_only else "")


def score_responses(resps: Sequence[Sequence[str]], docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``custom`` filter: score every response of the task at once; one scored record per response."""
    scenes = [scene_from_dict(json.loads(d["record"])) for d in docs]
    raws: list[str | None] = [r[0] if r else None for r in resps]
    generations = [decode_output(raw) for raw in raws]
    predictions = {
        s.scene_id: None if g.error is not None or g.text is None else parse_output(g.text, s.modality)
        for s, g in zip(scenes, generations)
    }
    for scene, generation in zip(scenes, generations):
        if generation.truncated and (cut := predictions[scene.scene_id]) is not None:
            predictions[scene.scene_id] = replace(cut, issues=(TRUNCATED_ISSUE, *cut.issues))
    language = _annotation_language or os.environ.get(ANNOTATION_LANGUAGE_ENV) or TASK_ANNOTATION_LANGUAGE
    judge = task_judge()
    try:
        run = score_scenes(scenes, predictions, judge, annotation_language=language)
        info = judge.info()
    finally:
        judge.close()
    task_info = summed_counters(ranks.all_gather_object(info), JUDGE_COUNTERS) if ranks.running() else info
    RECORDER.record("judges", _judge_key(scenes, any(d.get("asr") for d in docs)), task_info)
    out = []
    for i, (scene, raw, generation, row) in enumerate(zip(scenes, raws, generations, run.scenes)):
        prediction = predictions[scene.scene_id]
        out.append(
            {
                "raw_output": raw if generation.error is None else None,
                "inference_error": generation.error,
                "truncated": generation.truncated,
                "prediction": asdict(prediction) if prediction is not None else None,
                "scene": row,
                "judge": info if i == 0 else None,  # the batch's accounting, once (each rank's its own)
                "annotation_language": language,
            }
        )
    return out


def process_results(doc: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-doc metric items: the compact scene row every aggregation reads."""
    scored = results[0]
    row = scored["scene"]
    item = {k: row[k] for k in _ROW_KEYS}
    item["key_points"] = [{"judge_error": k["judge_error"]} for k in row["key_points"] if k["judge_error"] is not None]
    item["inference_error"] = scored["inference_error"] is not None
    item["truncated"] = bool(scored.get("truncated"))
    item["judge"] = (
        {k: (scored["judge"] or {}).get(v, 0) for k, v in _JUDGE_COUNTS.items()} if scored["judge"] else None
    )
    return dict.fromkeys(METRICS, item)


def summarize_items(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Task scores from the per-doc items (:func:`odu.runs.contract.summarize`, inference errors included,
    plus the task's judge counts)."""
    modalities = {i["modality"] for i in items}
    if len(modalities) > 1:
        raise ValueError(
            f"an ODU-Bench task must hold one modality (Table 3 reports them apart), got {sorted(modalities)}"
        )
    summary: dict[str, Any] = dict(summarize(items))
    summary["truncated"] = sum(bool(i.get("truncated")) for i in items)
    for name in _JUDGE_COUNTS:
        summary[name] = sum((i["judge"] or {}).get(name, 0) for i in items)
    return summary


def task_metrics(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A task's metrics over its logged samples (``doc`` and ``filtered_resps`` of each), as
    lm-eval aggregates them: what ``odu-bench merge`` recomputes over all shards."""
    items = [process_results(s["doc"], s["filtered_resps"])[METRICS[0]] for s in samples]
    summary = summarize_items(items)
    return {metric: summary[metric] for metric in METRICS}


def aggregation(
    metric: str, summary: Callable[[Sequence[Mapping[str, Any]]], Mapping[str, Any]] = summarize_items
) -> Callable[[Sequence[Mapping[str, Any]]], Any]:
    """The aggregation of ``metric``: one value of ``summary`` over all items (lm-eval's items:
    :func:`summarize_items`; the lmms-eval door passes its own)."""
    if metric not in METRICS:
        raise ValueError(f"unknown ODU-Bench metric {metric!r}")

    def aggregate(items: Sequence[Mapping[str, Any]]) -> Any:
        return summary(items)[metric]

    aggregate.__name__ = aggregate.__qualname__ = f"odu_{metric}"
    return aggregate


__all__ = [
    "ANNOTATION_LANGUAGE_ENV",
    "ASR_ENV",
    "DATASET_ENV",
    "DocError",
    "LOCAL_DATASET",
    "JUDGE_ENV",
    "METRICS",
    "aggregation",
    "announce_dataset",
    "check_doc",
    "dataset_choice",
    "doc_to_clips",
    "doc_to_text",
    "judge_from_env",
    "load_docs",
    "load_tasks",
    "process_results",
    "scene_docs",
    "scene_request",
    "score_responses",
    "summarize_items",
    "task_metrics",
    "task_judge",
    "use_judge",
]
