"""The Hugging Face Hub's eval-results format (https://huggingface.co/docs/hub/eval-results).

Model side: one ``.eval_results/odu-bench.yaml`` per run, for the model's repo: a list with one
result per reported number (:data:`odu.export.tasks.TASKS`: Avg, M1-M5, FTR per modality; a
number the run leaves undefined is left out). Each result names the benchmark dataset
(``dataset.id``) and its task (``task_id``), the value in percent rounded to
:data:`HUB_VALUE_DECIMALS` places, the run's date, a ``source`` linking to the run when its address is given, and ``notes`` carrying
what the number rests on: the metric, the judge, every comparability caveat, and the failed
steps of a run exported with them.

Dataset side: ``eval.yaml``, which registers the benchmark dataset (its tasks are the model
side's ``task_id`` s). The format takes our numbers as tasks, but two things stand between this
file and the Hub (docs/export.md): its ``evaluation_framework`` must be one of the Hub's
registered frameworks (``odu-bench`` is not one yet: :func:`framework_notice` says so on the
console at export time) and the Hub must put the dataset on its allow-list; and a task cannot say
that lower is better (FTR), so the description says it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any
from urllib.parse import quote

from ..core.citation import PAPER_URL
from .source import BENCHMARK, HUB_REPO_ID, ExportRun
from .tasks import SPLIT, TASKS

#: The model-side file, under ``.eval_results/`` of the model's repo.
EVAL_RESULTS_DIR, EVAL_RESULTS_FILE = ".eval_results", "odu-bench.yaml"
#: The dataset-side file, at the root of the benchmark dataset's repo.
EVAL_YAML = "eval.yaml"
#: The ``evaluation_framework`` of eval.yaml: this toolkit. Not (yet) among the Hub's registered
#: frameworks (``EVALUATION_FRAMEWORKS``, huggingface.js ``packages/tasks/src/eval.ts``).
HUB_EVALUATION_FRAMEWORK = "odu-bench"
#: Decimal places of a result's ``value`` (percent): hundredths of a point, finer than Table 3's
#: one decimal, so that 100 x 0.55 is written 55.0, not 55.00000000000001.
HUB_VALUE_DECIMALS = 2
#: The placeholders of ``--source-url``, filled in per run by plain substitution (no other text
#: of the URL is read: ``{foo}`` stays as it is).
SOURCE_URL_FIELDS: tuple[str, ...] = ("{name}", "{run_id}")


def load_schema(name: str) -> dict[str, Any]:
    """A JSON Schema of ``odu/export/schemas/`` (the Hub's formats, transcribed) by file name (e.g.
    ``hub_eval_results.schema.json``)."""
    text = resources.files(__package__).joinpath(f"schemas/{name}").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def judge_text(judge: Mapping[str, Any]) -> str:
    """The judge as one phrase: name, model, prompt version, APPROXIMATE when it is."""
    text = f"{judge.get('name')} ({judge.get('model')}"
    if judge.get("prompt_version"):
        text += f", prompt {judge['prompt_version']}"
    return text + (", APPROXIMATE: not comparable with the paper's Table 3" if judge.get("approximate") else "") + ")"


def result_notes(run: ExportRun, task_description: str, scenes: str) -> str:
    """``notes`` of one result: the metric, the scenes it rests on, the run, every caveat (the judge
    first), the failed steps."""
    parts = [f"{task_description}; value in %", scenes, f"run {run.run_id}", *run.caveats()]
    if run.failed_steps:
        parts.append("FAILED STEPS, exported with --allow-failed-steps: " + "; ".join(run.failed_steps))
    return " | ".join(parts)


def eval_results(run: ExportRun, dataset_id: str, revision: str | None, source_url: str | None) -> list[dict[str, Any]]:
    """The model-side list of results of ``run`` (module docstring); no Avg for a run the report
    shows without one (:attr:`odu.report.runs.System.incomplete`)."""
    out = []
    for task in TASKS:
        block = run.summary.get(task.modality) or {}
        value = block.get(task.metric)
        if value is None or (task.metric == "avg" and run.system.incomplete):
            continue
        dataset = {"id": dataset_id, "task_id": task.id} | ({"revision": revision} if revision else {})
        entry: dict[str, Any] = {
            "dataset": dataset,
            "value": round(100 * value, HUB_VALUE_DECIMALS),
            "date": run.date,
        }
        if source_url:
            entry["source"] = {"url": source_url, "name": f"{BENCHMARK} run {run.run_id} ({run.system.name})"}
        entry["notes"] = result_notes(run, task.description, task.scenes_text(block))
        out.append(entry)
    return out


def benchmark_eval_yaml() -> dict[str, Any]:
    """The dataset-side ``eval.yaml``: one task per reported number, on its modality's config."""
    return {
        "name": BENCHMARK,
        "description": (
            "ODU-Bench (Omni Demand Understanding) asks whether an audio or audio-visual assistant can tell "
            "that a user wants something from it, and infer what, from speech, video, sounds and dialogue "
            f"history ({PAPER_URL}). One task per reported number, as in the paper's Table 3: Avg, M1-M5 and "
            "FTR of the audio-visual (av_*) and audio-only (ao_*) scenes, in percent. Higher is better for "
            "every task but the false-trigger rates av_ftr and ao_ftr, where lower is better. M2 and Avg rest "
            "on an LLM judge: each result's notes name it."
        ),
        "evaluation_framework": HUB_EVALUATION_FRAMEWORK,
        "tasks": [{"id": t.id, "config": t.config, "split": SPLIT} for t in TASKS],
    }


def framework_notice() -> str | None:
    """The console line of a Hub export while :data:`HUB_EVALUATION_FRAMEWORK` is not among the
    Hub's registered frameworks (``EVALUATION_FRAMEWORKS`` of huggingface.js, as transcribed in
    ``schemas/hub_eval_yaml.schema.json``), with what to do; None once it is."""
    registered = load_schema("hub_eval_yaml.schema.json")["properties"]["evaluation_framework"]["enum"]
    if HUB_EVALUATION_FRAMEWORK in registered:
        return None
    return (
        f"{EVAL_YAML}: the Hub refuses this file at push time: its evaluation_framework "
        f"{HUB_EVALUATION_FRAMEWORK!r} is not one of the Hub's {len(registered)} registered frameworks "
        "(EVALUATION_FRAMEWORKS in huggingface.js packages/tasks/src/eval.ts). To register the benchmark, open a "
        f"pull request there adding {HUB_EVALUATION_FRAMEWORK!r}, then ask the Hub team to put the dataset on its "
        f"allow-list (docs/export.md). The model-side {EVAL_RESULTS_DIR}/{EVAL_RESULTS_FILE} files need neither"
    )


def source_link(source_url: str, name: str, run_id: str) -> str:
    """``--source-url`` with :data:`SOURCE_URL_FIELDS` filled in by plain substitution (each value
    percent-encoded); :class:`ValueError` unless it is an ``http(s)`` URL (the Hub's ``source.url``).

    >>> source_link("https://h/{name}/{run_id}?x={foo}", "a_b", "r 1")
    'https://h/a_b/r%201?x={foo}'
    """
    if not source_url.lower().startswith(("http://", "https://")):
        raise ValueError(f"--source-url {source_url!r}: not an http(s) URL (the Hub links each result's source)")
    values = dict(zip(SOURCE_URL_FIELDS, (name, run_id)))
    return re.sub("|".join(map(re.escape, SOURCE_URL_FIELDS)), lambda m: quote(values[m.group(0)], safe=""), source_url)


def check_dataset_id(dataset_id: str | None) -> str:
    """``--dataset-id`` as given: the Hub dataset the results belong to, required (a run card's
    dataset ``source`` may be a local folder, :mod:`.source`), in the form ``ORG/NAME``."""
    if not dataset_id:
        raise ValueError(
            "--format hub needs --dataset-id ORG/NAME, the Hub dataset (a Benchmark) the results belong to; a run "
            "card's dataset source is never taken for it (it may be a local folder)"
        )
    if not HUB_REPO_ID.fullmatch(dataset_id):
        raise ValueError(f"--dataset-id {dataset_id!r}: not a Hub dataset id ORG/NAME")
    return dataset_id


def eval_results_file(run: ExportRun) -> str:
    """The run's model-side file: ``<run's folder name>/.eval_results/odu-bench.yaml``."""
    return f"{safe_name(run.system.name)}/{EVAL_RESULTS_DIR}/{EVAL_RESULTS_FILE}"


def hub_run_files(run: ExportRun, dataset_id: str | None, source_url: str | None) -> dict[str, Any]:
    """The run's file of a Hub export (:func:`eval_results_file`), its ``source`` link from
    ``source_url`` (:func:`source_link`, ``{name}`` the run's folder name)."""
    target = check_dataset_id(dataset_id)
    url = source_link(source_url, safe_name(run.system.name), run.run_id) if source_url else None
    return {eval_results_file(run): eval_results(run, target, run.card_revision(target), url)}


def safe_name(name: str) -> str:
    """A run's name as one folder name: path separators and other awkward characters as ``_``.

    >>> safe_name("Qwen/Qwen3-Omni 30B")
    'Qwen_Qwen3-Omni_30B'
    """
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or "run"


__all__ = [
    "EVAL_RESULTS_DIR",
    "EVAL_RESULTS_FILE",
    "EVAL_YAML",
    "HUB_EVALUATION_FRAMEWORK",
    "HUB_VALUE_DECIMALS",
    "benchmark_eval_yaml",
    "framework_notice",
    "hub_run_files",
]
