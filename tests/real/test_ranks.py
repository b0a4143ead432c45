"""``torchrun --nproc_per_node 2 -m lm_eval --model odu-qwen-omni ...``: how lm-eval users scale a local
model over processes (``accelerate launch -m lm_eval`` on GPUs; on CPU torchrun gives the two ranks,
gloo between them). The ranks split the scenes, and rank 0 alone writes one result equal to a
single process's (docs/harness.md "Across processes")."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.process import fresh_env

from odu.cli import main

#: Seconds the two ranks may take: start-up, the tiny model's load and 2 scenes each (about 1 minute here).
TORCHRUN_S = 600.0


def lm_eval_args(checkpoint: Path, dataset: Path, out: Path) -> list[str]:
    """lm-eval's arguments for 4 audio-only scenes of ``dataset`` on the tiny Qwen2.5-Omni thinker."""
    return [
        *("--model", "odu-qwen-omni", "--model_args", f"pretrained={checkpoint},max_tokens=8"),
        *("--tasks", "odu_ao", "--limit", "4", "--metadata", json.dumps({"dataset": str(dataset)})),
        *("--log_samples", "--output_path", str(out)),
    ]


def written(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The one results file lm-eval wrote under ``out`` and its logged samples in doc order."""
    [results] = out.rglob("results_*.json")
    [samples] = out.rglob("samples_odu_ao_*.jsonl")
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    return json.loads(results.read_text(encoding="utf-8")), sorted(rows, key=lambda row: row["doc_id"])


def scored(sample: dict[str, Any]) -> dict[str, Any]:
    """A logged sample's scored record without the judge's accounting of its batch (each rank's first
    record carries its rank's, as each shard's does)."""
    [record] = sample["filtered_resps"]  # lm-eval logs it as Python's repr
    return {k: v for k, v in ast.literal_eval(record).items() if k != "judge"}


def test_two_ranks_split_the_scenes_and_write_one_result(
    checkpoints: dict[str, Path], sample_dataset: Path, hf_cache: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    for name in ("ODU_JUDGE", "ODU_ASR", "ODU_DATASET"):
        monkeypatch.delenv(name, raising=False)
    checkpoint = checkpoints["qwen2_5_omni_thinker"]
    launch = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "lm_eval"]
    ranks = subprocess.run(
        [*launch, *lm_eval_args(checkpoint, sample_dataset, tmp_path / "ranks")],
        env=fresh_env(tmp_path, HF_HUB_OFFLINE="1"),
        capture_output=True,
        text=True,
        timeout=TORCHRUN_S,
    )
    assert ranks.returncode == 0, ranks.stderr[-4000:]
    for rank in (0, 1):  # before the ranks were declared, both processes built every scene as rank 0
        assert f"Building contexts for odu_ao on rank {rank}" in ranks.stderr
    assert main(["lm-eval", "run", *lm_eval_args(checkpoint, sample_dataset, tmp_path / "one")]) == 0

    (together, rows), (alone, expected) = written(tmp_path / "ranks"), written(tmp_path / "one")
    for key in ("results", "n-samples", "odu"):
        assert together[key] == alone[key], key
    backend = together["config"]["odu_backend"]
    assert backend == alone["config"]["odu_backend"]  # the counters of both ranks, summed
    assert backend["stats"]["scenes"] == 4 and backend["stats"]["audio_tokens"] > 0
    assert together["config"]["odu_pitfalls"] == alone["config"]["odu_pitfalls"]  # "4 answer(s) stopped ..."
    assert [row["doc_id"] for row in rows] == [0, 1, 2, 3]
    for row, want in zip(rows, expected):
        assert (row["doc"], row["resps"]) == (want["doc"], want["resps"])
        assert scored(row) == scored(want)


def test_eval_on_two_ranks_writes_one_run_equal_to_one_process(
    sample_dataset: Path, hf_cache: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``torchrun ... -m odu eval``: rank 0 alone writes the run's folder and prints its table, the rows
    and summary of one process's run (the floor: no model to load)."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    for name in ("ODU_JUDGE", "ODU_ASR", "ODU_DATASET"):
        monkeypatch.delenv(name, raising=False)
    args = ["eval", "--dataset", str(sample_dataset), "--model", "never", "--tasks", "odu_ao"]
    ranks = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "odu", *args, "--out", "ranks"],
        env=fresh_env(tmp_path, HF_HUB_OFFLINE="1"),
        capture_output=True,
        text=True,
        timeout=TORCHRUN_S,
        cwd=tmp_path,
    )
    assert ranks.returncode == 0, ranks.stderr[-4000:]
    assert ranks.stdout.count("| floor: never-trigger") == 1  # one table, rank 0's
    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    together, alone = tmp_path / "ranks" / "never", tmp_path / "one" / "never"
    for name in ("scenes.jsonl", "predictions.jsonl"):
        assert rows(together / name) == rows(alone / name), name
    assert summary(together) == summary(alone)


def rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a run's JSONL file, without the run id."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "run_id"} for line in lines]


def summary(folder: Path) -> dict[str, Any]:
    """A run's summary without its run id and file hashes."""
    found = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    found.pop("run_id")
    for entry in found["files"].values():
        entry.pop("sha256")
    return found
