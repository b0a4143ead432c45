"""What lm-eval's own output says about an ODU-Bench run: the dataset read, the judge, the caveats.

lm-eval writes ``results.json`` from the task configs, where ``dataset_path`` is the YAML's
placeholder (``odu-bench``) whatever folder the tasks read, and it records no judge. After
``lm_eval.evaluator.evaluate`` (wrapped by :mod:`.preflight`), :func:`annotate` sets each ODU-Bench
task's ``dataset_path`` to the source its docs came from and adds a top-level ``"odu"`` block:
per task, the dataset (source, config, revision, scene counts, content hash), the judge (name,
model, ``approximate``, accounting) and the caveats of :mod:`odu.core.caveats` (``--limit``, shard,
approximate judge, answers cut at the output-token limit, small sample). lm-eval's printed results
table ends with :func:`table_note` (the bridge wraps ``make_table``; :func:`install_table_note`),
so plain ``lm_eval`` shows them under the numbers they qualify. Results without the block are
printed unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.caveats import caveat_lines, run_caveats
from .runcard import RECORDER, RunRecorder
from .wrapping import wrap_once

#: The top-level key of ``results.json`` holding the ODU-Bench block.
RESULTS_KEY = "odu"
#: The filter name of every ODU-Bench task (``_odu_base_yaml``): its metrics are ``NAME,odu``.
FILTER = "odu"


def _task_facts(config: Mapping[str, Any]) -> tuple[str, str] | None:
    """(recorder dataset key, recorder judge key) of an ODU-Bench task config, else None."""
    from ..data.dataset import get_config

    kwargs = config.get("dataset_kwargs") or {}
    name = kwargs.get("config") if isinstance(kwargs, Mapping) else None
    if not isinstance(name, str):
        return None
    text_only = bool(kwargs.get("text_only"))
    try:
        modality = get_config(name).modality
    except KeyError:
        return None
    return f"{name}{'_text' if text_only else ''}", f"{modality}{' (text-only)' if text_only else ''}"


def annotate(results: dict[str, Any], limit: Any = None, recorder: RunRecorder = RECORDER) -> dict[str, Any]:
    """Add the ``"odu"`` block to ``results`` (lm-eval's, from ``evaluate``) and set the true
    ``dataset_path`` of each ODU-Bench task; returns the block (empty without ODU-Bench tasks)."""
    block: dict[str, Any] = {"datasets": {}, "judges": {}, "caveats": {}}
    metrics_of = results.get("results") or {}
    samples_of = results.get("n-samples") or {}
    for task, config in (results.get("configs") or {}).items():
        metrics = metrics_of.get(task) or {}
        facts = _task_facts(config) if f"m1,{FILTER}" in metrics else None
        if facts is None:
            continue
        dataset, judge = recorder.datasets.get(facts[0]), recorder.judges.get(facts[1])
        if dataset is not None:
            config["dataset_path"] = dataset["source"]
            block["datasets"][task] = dataset
        if judge is not None:
            block["judges"][task] = judge
        block["caveats"][task] = task_caveats(
            judge or {}, metrics, samples_of.get(task) or {}, limit, (dataset or {}).get("shard")
        )
    if block["datasets"] or block["caveats"]:
        results[RESULTS_KEY] = block
        return block
    return {}


def task_caveats(
    judge: Mapping[str, Any], metrics: Mapping[str, Any], counts: Mapping[str, Any], limit: Any, shard: str | None
) -> list[dict[str, str]]:
    """The caveats of one task from its judge block, lm-eval's metrics and ``n-samples`` counts."""
    return run_caveats(
        judge,
        {"": int(counts.get("effective") or 0)},
        limit=limit,
        shard=shard,
        truncated=int(metrics.get(f"truncated,{FILTER}") or 0),
        n_total=counts.get("original"),
    )


def table_note(results: Mapping[str, Any]) -> str:
    """The lines printed under lm-eval's results table: the dataset each task read and its caveats."""
    block = results.get(RESULTS_KEY)
    if not isinstance(block, Mapping):
        return ""
    lines = [f"odu-bench: {task} read {d['source']} ({d['n_scenes']} scenes)" for task, d in block["datasets"].items()]
    notes = caveat_lines(block["caveats"])
    if notes:
        lines += ['Caveats of these numbers (stored in results.json under "odu"):', *notes]
    return "\n".join(lines)


def with_table_note(make_table: Any) -> Any:
    """lm-eval's ``make_table`` with :func:`table_note` after a results table of ODU-Bench tasks;
    any other table as it was. The start-up bridge puts it in place when lm-eval starts (imported
    at the first table); :func:`install_table_note` where the bridge is off."""
    import functools

    @functools.wraps(make_table)
    def noted(result_dict: Any, column: str = "results", *args: Any, **kwargs: Any) -> Any:
        table = make_table(result_dict, column, *args, **kwargs)
        if column != "results" or not isinstance(result_dict, dict) or RESULTS_KEY not in result_dict:
            return table
        note = table_note(result_dict)
        return f"{table}{note}\n" if note else table

    return noted


def install_table_note() -> None:
    """Make lm-eval's printed results table end with :func:`table_note`, once."""
    import lm_eval.utils

    wrap_once(lm_eval.utils, "make_table", with_table_note)


__all__ = ["FILTER", "RESULTS_KEY", "annotate", "install_table_note", "table_note", "task_caveats", "with_table_note"]
