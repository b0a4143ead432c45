"""``odu-bench merge RUN_DIR... --out DIR``: join the N runs of ``odu-bench eval --shard K/N`` (one
model each) into the run they split (:mod:`odu.runs.shards`): the same files, the same numbers as one
run over all scenes. Shards of different runs, a shard given twice, a missing shard or a scene in
two shards are refused (exit 2) with a message naming the problem."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..io.console import error_text
from .common import add_overwrite


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("merge", help="join the shard runs of `odu-bench eval --shard K/N` into one run")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="the model folders the N shards wrote")
    p.add_argument("--out", required=True, metavar="DIR", help="folder of the merged run (new or empty)")
    add_overwrite(p)
    p.set_defaults(run=run)


def merged_results(results: dict[str, Any], samples: dict[str, list[dict[str, Any]]], shards: Any) -> dict[str, Any]:
    """lm-eval's results of the merged run: the first shard's, each task's metrics recomputed over
    all its samples (as lm-eval aggregates them), its sample counts (``n-samples``,
    ``sample_len``) those of all the shards."""
    from ..harness.annotate import RESULTS_KEY, task_caveats
    from ..harness.tasks import task_metrics
    from ..runs.shards import merged_datasets

    out = {k: v for k, v in results.items() if k != "samples"}
    tasks = {}
    for task, block in (results.get("results") or {}).items():
        metrics = task_metrics(samples[task]) if task in samples else {}
        tasks[task] = {
            k: metrics.get(k.split(",")[0], v) if "," in k and "_stderr" not in k else v for k, v in block.items()
        }
        if "sample_len" in block and task in samples:  # lm-eval's count of the task's samples: all shards'
            tasks[task]["sample_len"] = len(samples[task])
    out["results"] = tasks
    counts = {}
    for task, block in (results.get("n-samples") or {}).items():
        counts[task] = {
            k: sum((s.results.get("n-samples") or {}).get(task, {}).get(k, 0) for s in shards) for k in block
        }
    out["n-samples"] = counts
    if isinstance(block := results.get(RESULTS_KEY), dict):  # the dataset, judge and caveats of the whole run
        datasets = merged_datasets([(s.results.get(RESULTS_KEY) or {}).get("datasets") or {} for s in shards])
        caveats = {
            task: task_caveats((block.get("judges") or {}).get(task) or {}, tasks.get(task) or {}, n, None, None)
            for task, n in counts.items()
        }
        out[RESULTS_KEY] = {**block, "datasets": datasets, "caveats": caveats}
    return {**out, "samples": samples}


def run(args: argparse.Namespace) -> int:
    from ..io.scrub import scrub_command, scrub_value
    from ..runs.contract import RUN_CARD_NAME, SCENES_FILE, RunError, RunWriter
    from ..runs.shards import ShardError, merged_card, merged_judge, merged_samples, read_shards
    from .common import runs_table
    from .eval import summary_of, write_model_outputs

    out = Path(args.out)
    try:
        shards = read_shards(args.runs)
        results = merged_results(shards[0].results, merged_samples(shards), shards)
        judge = merged_judge(shards)
        with RunWriter(out, args.overwrite, inputs=args.runs) as writer:
            rows = write_model_outputs(results, writer)
            language = shards[0].summary.get("annotation_language", "scene")
            summary = summary_of(rows, results, judge, language, system=shards[0].summary.get("system"))
            with writer.jsonl(SCENES_FILE) as scenes:
                for row in rows:
                    scenes.write(row)
            command = ["odu-bench", *scrub_command(sys.argv[1:])]
            writer.json(RUN_CARD_NAME, scrub_value(merged_card(shards, command)), default=str)
            writer.commit(summary)
    except (ShardError, RunError, OSError) as exc:
        print(f"odu-bench merge: error: {error_text(exc)}", file=sys.stderr)
        return 2
    from ..models import BASELINES

    backend = (shards[0].card.get("model") or {}).get("backend") or {}
    label = BASELINES.get(backend.get("backend", "")) or str(backend.get("model") or "merged")
    print(runs_table({label: summary}))
    print(f"merged {len(shards)} shard(s), {len(rows)} scenes: {out}")
    return 0
