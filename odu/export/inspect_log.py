"""Inspect AI eval logs (https://inspect.aisi.org.uk/eval-logs.html): a scored run as the logs
``inspect view`` shows and ``inspect_ai.log.read_eval_log`` reads.

Per run and modality, one log in Inspect's JSON format (``<date>_odu-av_<id>.json``), built with
inspect_ai's own types (:class:`inspect_ai.log.EvalLog`, serialised by ``eval_log_json``) so that
what is written is what Inspect writes:

* ``eval``: the task (``odu_av`` / ``odu_ao``, the lm-eval task of the modality), the model (its
  id ``developer/model``), the run id, the date, the dataset (``--dataset-id`` when given) and its
  scene ids, the run card's generation settings, and in ``metadata`` the command line, the judge, every
  comparability caveat and the failed steps of a run exported with them;
* ``results``: one score ``odu`` whose metrics are the run's Avg, M1-M5 and FTR of the modality,
  as fractions, equal to summary.json's (a metric the run leaves undefined is left out, and Avg of
  a run the report shows without one), each with the scenes it is a mean over;
* ``samples``: one per scene: the scene description as input, the reference (demand label, key
  points) as target, the raw output as the model's output and transcript, and the score ``odu``:
  whether the demand decision was right and the scene scores s2-s5 (App A.3), the parsed answer,
  and the whole ``scenes.jsonl`` row in its metadata.

This is a record of a run made elsewhere (by ``odu-bench eval`` / lm-eval), not an Inspect
evaluation: the Hub's "verified" badge needs a ``verifyToken`` from a run of the benchmark's
``eval.yaml`` with inspect-ai in HF Jobs, which ODU-Bench cannot have (docs/export.md, "`--format inspect`: Inspect AI eval logs").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..core.prompts import PROMPT_VERSION
from ..data.dataset import MODALITY_CODES
from ..io.extras import install_hint
from .eee import instance
from .hub import judge_text, safe_name
from .settings import ExportSettings
from .source import BENCHMARK, ExportRun
from .tasks import METRIC_POPULATION, TASKS

#: The score of every sample and the scorer that made it.
INSPECT_SCORE = "odu"
INSPECT_SCORER = "odu-bench"


def _require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"--format inspect needs inspect-ai ({exc}): {install_hint('inspect')}") from None


def _log_id(run: ExportRun, task: str) -> str:
    """A stable id of the run's log of ``task`` (exporting again replaces the file)."""
    return hashlib.sha256(f"odu-bench-inspect:{run.run_id}:{run.model_id}:{task}".encode()).hexdigest()[:22]


def _generate_config(run: ExportRun, config: str) -> dict[str, Any]:
    kwargs = run.generation_kwargs(config)
    if not kwargs:
        return {}
    out: dict[str, Any] = {}
    if isinstance(kwargs.get("temperature"), (int, float)) and not isinstance(kwargs["temperature"], bool):
        out["temperature"] = float(kwargs["temperature"])
    if isinstance(kwargs.get("max_gen_toks"), int) and not isinstance(kwargs["max_gen_toks"], bool):
        out["max_tokens"] = kwargs["max_gen_toks"]
    return out


def _sample(run: ExportRun, row: Mapping[str, Any], model: str) -> Any:
    """One scene as an Inspect sample (module docstring); its input, target and parsed answer are
    those of the EEE instance (:func:`odu.export.eee.instance`)."""
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    record = instance(run, row, "")
    raw = run.outputs.get(row["scene_id"])
    messages: list[Any] = [ChatMessageUser(content=record["input"]["raw"])]
    if raw is not None:
        messages.append(ChatMessageAssistant(content=raw, model=model))
    value = {"demand_correct": record["evaluation"]["score"]} | {k: row.get(k) for k in ("s2", "s3", "s4", "s5")}
    return EvalSample(
        id=row["scene_id"],
        epoch=1,
        input=record["input"]["raw"],
        target=record["input"]["reference"],
        messages=messages,
        output=ModelOutput.from_content(model=model, content=raw or ""),
        scores={
            INSPECT_SCORE: Score(
                value=value,
                answer=record["answer_attribution"][0]["extracted_value"],
                explanation=f"scene scores of App A.3 (s2-s5; None: not a demand scene), judge {judge_text(run.judge)}",
                metadata={"scene_row": dict(row)},
            )
        },
        metadata={k: row.get(k) for k in ("modality", "language", "source", "label")}
        | {"raw_output_recorded": raw is not None, "error": record["error"]},
    )


def inspect_log(run: ExportRun, modality: str, settings: ExportSettings) -> dict[str, Any] | None:
    """The Inspect eval log of ``run``'s ``modality`` scenes as JSON (module docstring); None when
    the run has none."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalScore, EvalSpec
    from inspect_ai.log._file import eval_log_json
    from inspect_ai.model import GenerateConfig

    rows = run.system.rows_of(modality)
    if not rows:
        return None
    config = MODALITY_CODES[modality]
    task = f"odu_{config}"
    developer, name = run.developer_model()
    model = f"{developer}/{name}"
    block = run.summary.get(modality) or {}
    notes = {"caveats": run.caveats(), "failed_steps": run.failed_steps}
    metrics: dict[str, Any] = {}
    for t in TASKS:
        value = block.get(t.metric)
        if t.modality != modality or value is None or (t.metric == "avg" and run.system.incomplete):
            continue
        metrics[t.metric] = EvalMetric(
            name=t.metric,
            value=value,
            metadata={
                "description": t.description,
                "scenes": t.scenes(block),
                "population": METRIC_POPULATION[t.metric],
                "lower_is_better": t.lower_is_better,
                "failed_steps": run.failed_steps,
            },
        )
    spec = EvalSpec(
        eval_id=_log_id(run, task),
        run_id=run.run_id,
        created=run.date,
        task=task,
        task_id=_log_id(run, task),
        task_version=1,
        task_display_name=f"{BENCHMARK} {modality}",
        dataset=EvalDataset(
            name=BENCHMARK,
            location=settings.dataset_id,
            samples=len(rows),
            sample_ids=[r["scene_id"] for r in rows],
        ),
        model=model,
        model_generate_config=GenerateConfig(**_generate_config(run, config)),
        config=EvalConfig(),
        packages={str(k): str(v) for k, v in run.card_block("packages").items() if v},
        metadata={
            "exported_by": "odu-bench export --format inspect: a record of a run made with odu-bench, not an Inspect run",
            "system": run.system.name,
            "command": " ".join(map(str, command))
            if isinstance(command := (run.card or {}).get("command"), list)
            else None,
            "prompt_version": PROMPT_VERSION,
            "judge": run.judge,
            "annotation_language": run.summary.get("annotation_language"),
            "run_dataset": run.dataset().get(config),
        }
        | notes,
    )
    log = EvalLog(
        status="success",
        eval=spec,
        results=EvalResults(
            total_samples=len(rows),
            completed_samples=len(rows),
            scores=[EvalScore(name=INSPECT_SCORE, scorer=INSPECT_SCORER, scored_samples=len(rows), metrics=metrics)],
        ),
        samples=[_sample(run, row, model) for row in rows],
    )
    data: dict[str, Any] = json.loads(eval_log_json(log))
    return data


def inspect_run_files(run: ExportRun, settings: ExportSettings) -> dict[str, Any]:
    """The run's files of an Inspect export: ``<run's folder name>/<date>_odu-<av|ao>_<id>.json``."""
    _require_inspect()
    files = {}
    stamp = run.date[:19].replace(":", "-")
    for modality, config in MODALITY_CODES.items():
        log = inspect_log(run, modality, settings)
        if log is not None:
            files[f"{safe_name(run.system.name)}/{stamp}_odu-{config}_{_log_id(run, f'odu_{config}')}.json"] = log
    return files


__all__ = ["INSPECT_SCORE", "INSPECT_SCORER", "inspect_log", "inspect_run_files"]
