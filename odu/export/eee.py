"""Every Eval Ever (https://github.com/evaleval/every_eval_ever), schema version 0.3.0.

Per run, the datastore's layout ``data/odu-bench/<developer>/<model>/<uuid>.json`` (aggregate)
and ``<uuid>_samples.jsonl`` (one instance per scene), the path components as the datastore's
publisher derives them (``every_eval_ever.helpers.io.datastore_path_components``: the developer
is the model id's prefix, the rest of the id the model folder, ``/`` and ``:`` as ``_``). The
uuid has the version-4 form the datastore requires, its bits taken from a hash of the run id and
model id (:func:`file_uuid`), so exporting a run again replaces its files instead of adding a copy.

Aggregate: one result per reported number (:data:`odu.export.tasks.TASKS`), its value as a
fraction (as summary.json holds it), its 95% scene-bootstrap interval (App E.1, the report's
headline intervals) over the scenes the metric is a mean over (``num_samples``,
:data:`odu.export.tasks.METRIC_POPULATION`), the judge (as ``llm_scoring`` where an LLM judge
decided M2), every comparability caveat and the failed steps of a run exported with them
(``score_details.details``), and the generation settings, command and prompt from the run card
(``generation_config``). Who ran the evaluation (``source_metadata.source_organization_name``)
is required: never written empty.

Instances: each scene's raw output (runs made through lm-eval keep it), the reference (the demand
label and key points), the parsed answer, whether the demand decision was right (``evaluation``:
the per-scene ingredient of M1 and FTR), and in ``metadata`` the scene's modality, language,
source and label, and its whole ``scenes.jsonl`` row as JSON (``scene_row``: scene scores s2-s5,
parse issues, matches and every key point's verdict), so that M1-M5 and FTR can be recomputed from
the instances alone. The schema wants every ``additional_details`` / ``details`` / ``metadata``
value a string: strings go as they are, other values as their JSON (:func:`strings`).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

from .. import __version__
from ..core.prompts import PROMPT_VERSION, instruction, prompt_fingerprint
from ..data.dataset import MODALITY_CODES
from ..io.jsonio import dump_line
from ..io.scrub import scrub_value
from ..judge.prompt import JUDGE_INSTRUCTION, USER_TEMPLATE
from ..report.bootstrap import BOOTSTRAP_PERCENTILES
from ..report.headline import headline
from .hub import judge_text
from .settings import ExportSettings
from .source import BENCHMARK, HUB_REPO_ID, TOOLKIT_DEVELOPER, ExportRun
from .tasks import JUDGED_METRICS, SPLIT, TASKS, Task

#: The schema version of every aggregate and instance record (``every_eval_ever.schema.get_schema_version``).
SCHEMA_VERSION = "0.3.0"
#: The benchmark's collection folder under ``data/`` of the datastore.
EEE_COLLECTION = "odu-bench"
#: The evaluation library of every record (``eval_library.name``): the scorer that made the numbers.
EVAL_LIBRARY = "odu-bench"
#: How the answer is taken from the raw output (App A.1).
EXTRACTION_METHOD = "odu.core.parse: lenient JSON extraction, strict schema validation (App A.1)"
#: The lm-eval generation settings and their names in EEE's ``generation_args``.
_GENERATION_ARGS = {"temperature": "temperature", "top_p": "top_p", "top_k": "top_k", "max_gen_toks": "max_tokens"}
#: ``model_info.additional_details`` (required by 0.3.0) per backend of the run card: who ran the
#: model (``deployment_type``) and whether its weights are public (``model_availability``).
#: A server the toolkit cannot see behind (``openai``, ``realtime``, ``replay``) is ``unknown``.
DEPLOYMENT: dict[str, tuple[str, str]] = {
    "qwen-omni": ("self_deployed", "open_weights"),
    "gemini": ("externally_managed", "closed_weights"),
    "never": ("self_deployed", "unknown"),
    "always": ("self_deployed", "unknown"),
}
UNKNOWN_DEPLOYMENT = ("unknown", "unknown")
#: What the datastore refuses in a path component (``every_eval_ever.helpers.io._required_path_component``).
_BAD_COMPONENT = re.compile(r'[<>:"\\|?*\x00-\x1f]')
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


def strings(details: Mapping[str, Any]) -> dict[str, str]:
    """``details`` as the schema's string-valued maps: strings as they are, other values as JSON.

    >>> strings({"n": 7, "judge": {"name": "lexical"}, "lang": "zh", "x": None})
    {'n': '7', 'judge': '{"name": "lexical"}', 'lang': 'zh', 'x': 'null'}
    """
    return {
        str(k): v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)
        for k, v in details.items()
    }


def file_uuid(run: ExportRun) -> str:
    """The run's file name stem: a UUID of version-4 form (the datastore accepts no other) whose
    other bits are the sha256 of the run id and model id, stable across exports."""
    digest = hashlib.sha256(f"odu-bench-run:{run.run_id}:{run.model_id}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def datastore_component(value: str, what: str) -> str:
    """One folder of the datastore's path as its publisher writes it (``:`` as ``_``, a ``/`` of the
    model name as ``_``); :class:`ValueError` for one it refuses (reserved, unportable, ``unknown``)."""
    value = value.strip().replace(":", "_").replace("/", "_")
    if (
        value in {"", ".", "..", "data"}
        or value.lower() == "unknown"
        or _BAD_COMPONENT.search(value)
        or value.endswith((".", " "))
        or value.split(".", 1)[0].upper() in _RESERVED
    ):
        raise ValueError(f"{what} {value!r} cannot be a folder of the Every Eval Ever datastore: pass --model-ids")
    return value


def folder(run: ExportRun) -> str:
    """``data/odu-bench/<developer>/<model>`` of the run's model id ``developer/model``."""
    developer, model = run.developer_model()
    return (
        f"data/{EEE_COLLECTION}/{datastore_component(developer, f'run {run.system.name}: developer')}/"
        f"{datastore_component(model, f'run {run.system.name}: model')}"
    )


def _source_data(run: ExportRun, dataset_id: str | None, task: Task, n_scenes: int) -> dict[str, Any]:
    """The Hub dataset when ``--dataset-id`` names it (a run card's source may be a local folder),
    else ``other``; the run card's content hashes of the data evaluated either way."""
    details: dict[str, Any] = {"config": task.config, "split": SPLIT, "run_dataset": run.dataset().get(task.config)}
    if dataset_id:
        if not HUB_REPO_ID.fullmatch(dataset_id):
            raise ValueError(f"--dataset-id {dataset_id!r}: not a Hub dataset id ORG/NAME")
        if revision := run.card_revision(dataset_id):
            details["revision"] = revision
        return {
            "dataset_name": BENCHMARK,
            "source_type": "hf_dataset",
            "hf_repo": dataset_id,
            "hf_split": SPLIT,
            "samples_number": n_scenes,
            "additional_details": strings(details),
        }
    return {"dataset_name": BENCHMARK, "source_type": "other", "additional_details": strings(details)}


def _generation_config(run: ExportRun, task: Task) -> dict[str, Any] | None:
    """Generation settings, command, prompt and backend from the run card (``None`` without one:
    an ``odu-bench score`` run was scored from given outputs and records none)."""
    card = run.card
    if not card:
        return None
    model = run.card_block("model")
    kwargs = run.generation_kwargs(task.config)
    args: dict[str, Any] = {}
    for key, name in _GENERATION_ARGS.items():
        value = kwargs.get(key) if kwargs else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (name != "max_tokens" or value >= 1):
            args[name] = int(value) if name == "max_tokens" else value
    if isinstance(card.get("command"), list):
        args["execution_command"] = " ".join(map(str, card["command"]))  # the card's: local paths replaced
    args["prompt_template"] = instruction(task.modality)
    details = {
        "prompt_version": PROMPT_VERSION,
        "prompt_sha256": prompt_fingerprint(),
        "run_card_prompt": card.get("prompt"),
        "generation_kwargs": kwargs,
        "lm_eval_model": model.get("name"),
        "backend": model.get("backend"),
        "asr": card.get("asr"),
        "packages": card.get("packages"),
    }
    return {"generation_args": args, "additional_details": strings(details)}


def _judge_model_info(model: str) -> dict[str, Any]:
    developer, _, name = model.rpartition("/")
    info: dict[str, Any] = {"name": name or model, "id": model}
    if developer:
        info["developer"] = developer
    deployment, availability = UNKNOWN_DEPLOYMENT
    return info | {"additional_details": {"deployment_type": deployment, "model_availability": availability}}


def _llm_scoring(run: ExportRun) -> dict[str, Any] | None:
    """``llm_scoring`` when an LLM judge decided the key points (``openai:`` judges)."""
    judge = run.judge
    if judge.get("name") != "openai" or not judge.get("model"):
        return None
    return {
        "judges": [{"model_info": _judge_model_info(str(judge["model"])), "temperature": judge.get("temperature", 0)}],
        "input_prompt": f"{JUDGE_INSTRUCTION}\n\n{USER_TEMPLATE}",
        "additional_details": strings(
            {
                k: v
                for k, v in (("prompt_version", judge.get("prompt_version")), ("base_url", judge.get("base_url")))
                if v
            }
        ),
    }


def _model_info(run: ExportRun) -> dict[str, Any]:
    backend = run.card_block("model", "backend")
    provider = backend.get("provider")
    developer, _ = run.developer_model()
    deployment, availability = DEPLOYMENT.get(str(backend.get("backend")), UNKNOWN_DEPLOYMENT)
    details = {"deployment_type": deployment, "model_availability": availability}
    if backend.get("backend"):
        details["odu_backend"] = str(backend["backend"])
    info: dict[str, Any] = {"name": run.system.name, "id": run.model_id, "developer": developer}
    if isinstance(provider, Mapping) and provider.get("name"):
        info["inference_platform"] = str(provider["name"])
    return info | {"additional_details": details}


def _eval_library(run: ExportRun) -> dict[str, Any]:
    """odu-bench, the version that scored the run (the run card's, else unknown), and the harness."""
    packages = run.card_block("packages")
    version = packages.get("odu-bench")
    library: dict[str, Any] = {"name": EVAL_LIBRARY, "version": str(version) if version else "unknown"}
    if packages.get("lm-eval"):
        library["additional_details"] = {"harness": f"lm-eval {packages['lm-eval']}", "exported_by": __version__}
    else:
        library["additional_details"] = {"exported_by": __version__}
    return library


def aggregate(run: ExportRun, settings: ExportSettings, instances: tuple[str, str, int]) -> dict[str, Any]:
    """The aggregate record of ``run`` (module docstring); ``instances`` is the instance file's
    (repository path, sha256, rows)."""
    resamples, seed, retrieved = settings.resamples, settings.seed, settings.retrieved
    intervals = {m: {e["system"]: e for e in entries} for m, entries in headline([run.system], resamples, seed).items()}
    results = []
    for task in TASKS:
        entry = intervals.get(task.modality, {}).get(run.system.name)
        if entry is None or entry["metrics"][task.metric]["value"] is None:
            continue  # an undefined number, or Avg of an incomplete run
        cell = entry["metrics"][task.metric]
        metric_config: dict[str, Any] = {
            "evaluation_description": task.description,
            "metric_id": f"{EEE_COLLECTION}.{task.metric}",
            "metric_name": task.metric.upper() if task.metric != "avg" else "Avg",
            "metric_unit": "proportion",
            "lower_is_better": task.lower_is_better,
            "score_type": "continuous",
            "min_score": 0.0,
            "max_score": 1.0,
        }
        scoring = _llm_scoring(run) if task.metric in JUDGED_METRICS else None
        if scoring:
            metric_config["llm_scoring"] = scoring
        uncertainty: dict[str, Any] = {"num_samples": task.scenes(entry), "num_bootstrap_samples": resamples}
        if None not in cell["ci"]:
            uncertainty["confidence_interval"] = {
                "lower": cell["ci"][0],
                "upper": cell["ci"][1],
                "confidence_level": (BOOTSTRAP_PERCENTILES[1] - BOOTSTRAP_PERCENTILES[0]) / 100,
                "method": f"scene bootstrap, percentile interval (ODU-Bench App E.1), seed {seed}",
            }
        details = {
            "run_id": run.run_id,
            "n_scenes": entry["n_scenes"],
            "n_positive": entry["n_positive"],
            "n_negative": entry["n_negative"],
            "judge": run.judge,
            "judge_text": judge_text(run.judge),
            "approximate_judge": bool(run.judge.get("approximate")),
            "annotation_language": run.summary.get("annotation_language"),
            "caveats": run.caveats(),
            "failed_steps": run.failed_steps,
        }
        result: dict[str, Any] = {
            "evaluation_result_id": task.id,
            "evaluation_name": task.id,
            "source_data": _source_data(run, settings.dataset_id, task, entry["n_scenes"]),
            "evaluation_timestamp": run.date,
            "metric_config": metric_config,
            "score_details": {"score": cell["value"], "uncertainty": uncertainty, "details": strings(details)},
        }
        generation = _generation_config(run, task)
        if generation:
            result["generation_config"] = generation
        results.append(result)
    path, checksum, rows = instances
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id(run, retrieved),
        "evaluation_timestamp": run.date,
        "retrieved_timestamp": repr(retrieved),
        "source_metadata": {
            "source_name": f"{TOOLKIT_DEVELOPER} toolkit",
            "source_type": "evaluation_run",
            "source_organization_name": settings.check_organization(),
            "evaluator_relationship": settings.relationship,
        },
        "eval_library": _eval_library(run),
        "model_info": _model_info(run),
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": path,
            "hash_algorithm": "sha256",
            "checksum": checksum,
            "total_rows": rows,
        },
    }


def evaluation_id(run: ExportRun, retrieved: float) -> str:
    """``odu-bench/<model id>/<retrieved timestamp>``, the datastore's convention."""
    return f"{EEE_COLLECTION}/{run.model_id}/{retrieved!r}"


def instance(run: ExportRun, row: Mapping[str, Any], eval_id: str) -> dict[str, Any]:
    """One scene as an instance-level record (module docstring)."""
    sid = row["scene_id"]
    raw = (
        f"{BENCHMARK} scene {sid} ({row['modality']}, {row['language']}, {row['source']}): the App F instruction "
        f"(prompt {PROMPT_VERSION}) and the scene's clips and replies, media by reference"
    )
    reference = [f"has_demand: {str(row['has_demand']).lower()}"] + [
        f"{k['qid']} [{k['source']}] {k['point']}" for k in row["key_points"]
    ]
    answer = {"has_demand": row["predicted_has_demand"], "candidates": [c["text"] for c in row["candidates"]]}
    correct = row["has_demand"] == row["predicted_has_demand"]
    judge_errors = sorted({k["judge_error"] for k in row["key_points"] if k["judge_error"]})
    error = row.get("inference_error") or ("judge error: " + "; ".join(judge_errors) if judge_errors else None)
    output = run.outputs.get(sid)
    metadata = {k: row.get(k) for k in ("modality", "language", "source", "label")} | {
        "scene_row": dict(row),
        "raw_output_recorded": output is not None,
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": eval_id,
        "model_id": run.model_id,
        "evaluation_name": f"odu_{MODALITY_CODES[row['modality']]}",
        "sample_id": sid,
        "sample_hash": hashlib.sha256(
            json.dumps({"raw": raw, "reference": reference}, sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest(),
        "interaction_type": "single_turn",
        "input": {"raw": raw, "reference": reference},
        "output": {"raw": [output] if output is not None else []},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": json.dumps(answer, ensure_ascii=False),
                "extraction_method": EXTRACTION_METHOD,
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": 1.0 if correct else 0.0, "is_correct": correct},
        "error": error,
        "metadata": strings(metadata),
    }


def eee_run_files(run: ExportRun, settings: ExportSettings) -> dict[str, Any]:
    """The run's files of an EEE export: the aggregate record (a dict) and the instances (a list of
    dicts, one JSONL line each), under :func:`folder`."""
    settings.check_organization()
    stem = f"{folder(run)}/{file_uuid(run)}"
    eval_id = evaluation_id(run, settings.retrieved)
    rows = scrub_value([instance(run, row, eval_id) for row in run.system.rows], urls=False)  # as written
    digest = hashlib.sha256(b"".join(dump_line(r) for r in rows)).hexdigest()
    samples = f"{stem}_samples.jsonl"
    return {f"{stem}.json": aggregate(run, settings, (samples, digest, len(rows))), samples: rows}


__all__ = [
    "EEE_COLLECTION",
    "SCHEMA_VERSION",
    "eee_run_files",
    "strings",
]
