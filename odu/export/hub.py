"""The Hugging Face Hub's eval-results format (https://huggingface.co/docs/hub/eval-results).

Model side: one ``.eval_results/odu-bench.yaml`` per run, for the model's repo: a list with one
result per reported number (:data:`odu.export.tasks.TASKS`: Avg, M1-M5, FTR per modality; a
number the run leaves undefined is left out). Each result names the benchmark dataset
(``dataset.id``) and its task (``task_id``), the value in percent (as Table 3 prints it), the
run's date, a ``source`` linking to the run when its address is given, and ``notes`` carrying
what the number rests on: the metric, the judge, every comparability caveat, and the failed
steps of a run exported with them.

Dataset side: ``eval.yaml``, which registers the benchmark dataset (its tasks are the model
side's ``task_id`` s). The format takes our numbers as tasks, but two things stand between this
file and the Hub (docs/export.md): its ``evaluation_framework`` must be one of the Hub's
registered frameworks (``odu-bench`` is not one yet) and the Hub must put the dataset on its
allow-list; and a task cannot say that lower is better (FTR), so the description says it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..citation import PAPER_URL
from .source import BENCHMARK, ExportRun
from .tasks import SPLIT, TASKS

#: The model-side file, under ``.eval_results/`` of the model's repo.
EVAL_RESULTS_DIR, EVAL_RESULTS_FILE = ".eval_results", "odu-bench.yaml"
#: The dataset-side file, at the root of the benchmark dataset's repo.
EVAL_YAML = "eval.yaml"
#: The ``evaluation_framework`` of eval.yaml: this toolkit. Not (yet) among the Hub's registered
#: frameworks (``EVALUATION_FRAMEWORKS``, huggingface.js ``packages/tasks/src/eval.ts``).
HUB_EVALUATION_FRAMEWORK = "odu-bench"


def judge_text(judge: Mapping[str, Any]) -> str:
    """The judge as one phrase: name, model, prompt version, APPROXIMATE when it is."""
    text = f"{judge.get('name')} ({judge.get('model')}"
    if judge.get("prompt_version"):
        text += f", prompt {judge['prompt_version']}"
    return text + (", APPROXIMATE: not comparable with the paper's Table 3" if judge.get("approximate") else "") + ")"


def result_notes(run: ExportRun, task_description: str, n_scenes: int) -> str:
    """``notes`` of one result: the metric, the run, every caveat (the judge first), the failed steps."""
    parts = [f"{task_description}; value in %", f"{n_scenes} scenes", f"run {run.run_id}", *run.caveats()]
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
        entry: dict[str, Any] = {"dataset": dataset, "value": 100 * value, "date": run.date}
        if source_url:
            entry["source"] = {"url": source_url, "name": f"{BENCHMARK} run {run.run_id} ({run.system.name})"}
        entry["notes"] = result_notes(run, task.description, int(block.get("n_scenes") or 0))
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


def hub_files(
    runs: Sequence[ExportRun], dataset_id: str | None, source_url: str | None
) -> dict[str, list[dict[str, Any]] | dict[str, Any]]:
    """Relative path -> content of every file of a Hub export: ``eval.yaml`` and each run's
    ``<name>/.eval_results/odu-bench.yaml``. ``source_url`` may hold ``{name}`` and ``{run_id}``.
    :class:`ValueError` when no Hub dataset is named and a run's card names none."""
    files: dict[str, list[dict[str, Any]] | dict[str, Any]] = {EVAL_YAML: benchmark_eval_yaml()}
    for run in runs:
        repo, revision = run.hub_dataset()
        target = dataset_id or repo
        if not target:
            raise ValueError(
                f"run {run.system.name}: its run card names no Hub dataset; pass --dataset-id ORG/NAME, the Hub "
                "dataset (a Benchmark) the results belong to"
            )
        folder = safe_name(run.system.name)  # also the URL's {name}: a system's name may hold ": " (a floor's)
        url = source_url.format(name=folder, run_id=run.run_id) if source_url else None
        files[f"{folder}/{EVAL_RESULTS_DIR}/{EVAL_RESULTS_FILE}"] = eval_results(
            run, target, revision if target == repo else None, url
        )
    return files


def safe_name(name: str) -> str:
    """A run's name as one folder name: path separators and other awkward characters as ``_``.

    >>> safe_name("Qwen/Qwen3-Omni 30B")
    'Qwen_Qwen3-Omni_30B'
    """
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".") or "run"


__all__ = ["EVAL_RESULTS_DIR", "EVAL_RESULTS_FILE", "EVAL_YAML", "HUB_EVALUATION_FRAMEWORK", "hub_files"]
