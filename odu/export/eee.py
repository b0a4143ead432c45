"""Every Eval Ever (https://github.com/evaleval/every_eval_ever), schema version 0.2.0.

Per run, the datastore's layout ``data/odu-bench/<developer>/<model>/<uuid>.json`` (aggregate)
and ``<uuid>.jsonl`` (one instance per scene). The uuid is derived from the run id and model
(UUID 5), so exporting a run again replaces its files instead of adding a copy.

Aggregate: one result per reported number (:data:`odu.export.tasks.TASKS`), its value as a
fraction (as summary.json holds it), its 95% scene-bootstrap interval (App E.1, the report's
headline intervals), the scenes it rests on, the judge (as ``llm_scoring`` where an LLM judge
decided M2), every comparability caveat and the failed steps of a run exported with them
(``score_details.details``), and the generation settings, server and prompt from the run card
(``generation_config``).

Instances: each scene's raw output (runs made through lm-eval keep it), the reference (the demand
label and key points), the parsed answer, whether the demand decision was right (``evaluation``:
the per-scene ingredient of M1 and FTR), and the whole scene row in ``metadata``: scene scores
s2-s5, parse issues, matches and every key point's verdict, so that M1-M5 and FTR can be
recomputed from the instances alone.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data.dataset import MODALITY_CODES
from ..jsonio import dump_line
from ..judge.prompt import JUDGE_INSTRUCTION, USER_TEMPLATE
from ..prompts import PROMPT_VERSION, instruction, prompt_fingerprint
from ..report.bootstrap import BOOTSTRAP_PERCENTILES, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from ..report.headline import headline
from ..scrub import scrub_value
from .hub import judge_text, safe_name
from .source import BENCHMARK, ExportRun
from .tasks import JUDGED_METRICS, SPLIT, TASKS, Task

SCHEMA_VERSION = "0.2.0"
INSTANCE_SCHEMA_VERSION = "instance_level_eval_0.2.0"
#: The benchmark's folder under ``data/`` of the datastore.
EEE_BENCHMARK_DIR = "odu-bench"
#: How the answer is taken from the raw output (App A.1).
EXTRACTION_METHOD = "odu.parse: lenient JSON extraction, strict schema validation (App A.1)"
EVALUATOR_RELATIONSHIPS: tuple[str, ...] = ("first_party", "third_party", "collaborative", "other")
#: The lm-eval generation settings and their names in EEE's ``generation_args``.
_GENERATION_ARGS = {"temperature": "temperature", "top_p": "top_p", "top_k": "top_k", "max_gen_toks": "max_tokens"}


def file_uuid(run: ExportRun) -> str:
    """The run's file name stem: UUID 5 of its run id and model (stable across exports)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"odu-bench-run:{run.run_id}:{run.model_id}"))


def folder(run: ExportRun) -> str:
    """``data/odu-bench/<developer>/<model>``: the Hub form ``developer/model`` of the model id,
    ``unknown`` as developer when the id has none."""
    developer, _, model = run.model_id.rpartition("/")
    return f"data/{EEE_BENCHMARK_DIR}/{safe_name(developer or 'unknown')}/{safe_name(model)}"


def _source_data(run: ExportRun, dataset_id: str | None, task: Task, n_scenes: int) -> dict[str, Any]:
    card_repo, revision = run.hub_dataset()
    repo = dataset_id or card_repo
    details = {"config": task.config, "split": SPLIT, "run_dataset": run.dataset().get(task.config)}
    if revision and repo == card_repo:
        details["revision"] = revision
    if repo:
        return {
            "dataset_name": BENCHMARK,
            "source_type": "hf_dataset",
            "hf_repo": repo,
            "hf_split": SPLIT,
            "samples_number": n_scenes,
            "additional_details": details,
        }
    return {"dataset_name": BENCHMARK, "source_type": "other", "additional_details": details}


def _generation_config(run: ExportRun, task: Task) -> dict[str, Any] | None:
    """Generation settings, command, prompt and backend from the run card (``None`` without one:
    an ``odu-bench score`` run was scored from given outputs and records none)."""
    card = run.card
    if not card:
        return None
    model = run.card_block("model")
    kwargs = next(
        (
            t.get("generation_kwargs")
            for k, t in run.card_block("tasks").items()
            if isinstance(t, Mapping) and k.startswith(f"odu_{task.config}")
        ),
        None,
    )
    args: dict[str, Any] = {}
    for key, name in _GENERATION_ARGS.items():
        if (
            isinstance(kwargs, Mapping)
            and isinstance(kwargs.get(key), (int, float))
            and not isinstance(kwargs[key], bool)
        ):
            args[name] = kwargs[key]
    if isinstance(card.get("command"), list):
        args["execution_command"] = " ".join(map(str, card["command"]))
    args["prompt_template"] = instruction(task.modality)
    return {
        "generation_args": args,
        "additional_details": {
            "prompt_version": PROMPT_VERSION,
            "prompt_sha256": prompt_fingerprint(),
            "run_card_prompt": card.get("prompt"),
            "generation_kwargs": kwargs,
            "lm_eval_model": model.get("name"),
            "backend": model.get("backend"),
            "asr": card.get("asr"),
            "packages": card.get("packages"),
        },
    }


def _llm_scoring(run: ExportRun) -> dict[str, Any] | None:
    """``llm_scoring`` when an LLM judge decided the key points (``openai:`` judges)."""
    judge = run.judge
    if judge.get("name") != "openai" or not judge.get("model"):
        return None
    model = str(judge["model"])
    return {
        "judges": [{"model_info": {"name": model, "id": model}, "temperature": judge.get("temperature", 0)}],
        "input_prompt": f"{JUDGE_INSTRUCTION}\n\n{USER_TEMPLATE}",
        "additional_details": {"prompt_version": judge.get("prompt_version"), "base_url": judge.get("base_url")},
    }


@dataclass(frozen=True)
class EeeSettings:
    """What an EEE export needs beyond the runs: the bootstrap of its intervals (App E.1), the Hub
    dataset (else the run card's), who ran the evaluation, and when the records were made."""

    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    dataset_id: str | None = None
    organization: str = ""
    relationship: str = "third_party"
    retrieved: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if self.relationship not in EVALUATOR_RELATIONSHIPS:
            raise ValueError(f"--relationship {self.relationship}: choose one of {', '.join(EVALUATOR_RELATIONSHIPS)}")


def aggregate(run: ExportRun, settings: EeeSettings, instances: tuple[str, str, int]) -> dict[str, Any]:
    """The aggregate record of ``run`` (module docstring); ``instances`` is the instance file's
    (name, sha256, rows)."""
    resamples, seed, retrieved = settings.resamples, settings.seed, settings.retrieved
    intervals = {m: {e["system"]: e for e in entries} for m, entries in headline([run.system], resamples, seed).items()}
    judge = {k: v for k, v in run.judge.items() if k != "cache"}  # the cache is a local path
    results = []
    for task in TASKS:
        entry = intervals.get(task.modality, {}).get(run.system.name)
        if entry is None or entry["metrics"][task.metric]["value"] is None:
            continue  # an undefined number, or Avg of an incomplete run
        cell = entry["metrics"][task.metric]
        metric_config: dict[str, Any] = {
            "evaluation_description": task.description,
            "lower_is_better": task.lower_is_better,
            "score_type": "continuous",
            "min_score": 0.0,
            "max_score": 1.0,
        }
        scoring = _llm_scoring(run) if task.metric in JUDGED_METRICS else None
        if scoring:
            metric_config["llm_scoring"] = scoring
        uncertainty: dict[str, Any] = {"num_samples": entry["n_scenes"], "num_bootstrap_samples": resamples}
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
            "judge": judge,
            "judge_text": judge_text(run.judge),
            "approximate_judge": bool(run.judge.get("approximate")),
            "annotation_language": run.summary.get("annotation_language"),
            "caveats": run.caveats(),
            "failed_steps": run.failed_steps,
        }
        result: dict[str, Any] = {
            "evaluation_name": task.id,
            "source_data": _source_data(run, settings.dataset_id, task, entry["n_scenes"]),
            "evaluation_timestamp": run.date,
            "metric_config": metric_config,
            "score_details": {"score": cell["value"], "uncertainty": uncertainty, "details": details},
        }
        generation = _generation_config(run, task)
        if generation:
            result["generation_config"] = generation
        results.append(result)
    backend = run.card_block("model", "backend")
    provider = backend.get("provider")
    model_info: dict[str, Any] = {"name": run.system.name, "id": run.model_id}
    if "/" in run.model_id:
        model_info["developer"] = run.model_id.split("/")[0]
    if isinstance(provider, Mapping) and provider.get("name"):
        model_info["inference_platform"] = str(provider["name"])
    if backend.get("backend"):
        model_info["additional_details"] = {"odu_backend": backend.get("backend")}
    name, checksum, rows = instances
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id(run, retrieved),
        "evaluation_timestamp": run.date,
        "retrieved_timestamp": repr(retrieved),
        "source_metadata": {
            "source_name": "odu-bench toolkit",
            "source_type": "evaluation_run",
            "source_organization_name": settings.organization,
            "evaluator_relationship": settings.relationship,
        },
        "model_info": model_info,
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": name,
            "hash_algorithm": "sha256",
            "checksum": checksum,
            "total_rows": rows,
        },
    }


def evaluation_id(run: ExportRun, retrieved: float) -> str:
    """``odu-bench/<model id>/<retrieved timestamp>``, the datastore's convention."""
    return f"{EEE_BENCHMARK_DIR}/{run.model_id}/{retrieved!r}"


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
    return {
        "schema_version": INSTANCE_SCHEMA_VERSION,
        "evaluation_id": eval_id,
        "model_id": run.model_id,
        "evaluation_name": f"odu_{MODALITY_CODES[row['modality']]}",
        "sample_id": sid,
        "sample_hash": hashlib.sha256(
            json.dumps({"raw": raw, "reference": reference}, sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest(),
        "interaction_type": "single_turn",
        "input": {"raw": raw, "reference": reference},
        "output": {"raw": run.outputs.get(sid, "")},
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
        "metadata": dict(row) | {"raw_output_recorded": sid in run.outputs},
    }


def eee_files(runs: Sequence[ExportRun], settings: EeeSettings) -> dict[str, Any]:
    """Relative path -> content of every file of an EEE export: per run, the aggregate record
    (a dict) and the instances (a list of dicts, one JSONL line each)."""
    files: dict[str, Any] = {}
    for run in runs:
        stem, eval_id = f"{folder(run)}/{file_uuid(run)}", evaluation_id(run, settings.retrieved)
        rows = scrub_value([instance(run, row, eval_id) for row in run.system.rows])
        digest = hashlib.sha256(b"".join(dump_line(r) for r in rows)).hexdigest()
        files[f"{stem}.json"] = aggregate(run, settings, (f"{file_uuid(run)}.jsonl", digest, len(rows)))
        files[f"{stem}.jsonl"] = rows
    return files


__all__ = [
    "EEE_BENCHMARK_DIR",
    "EVALUATOR_RELATIONSHIPS",
    "EeeSettings",
    "INSTANCE_SCHEMA_VERSION",
    "SCHEMA_VERSION",
    "eee_files",
]
