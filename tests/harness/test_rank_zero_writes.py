"""Started as several processes (``torchrun -m odu eval`` / ``lm-eval``), only rank 0 writes: a process
whose ``RANK`` is not 0 leaves the output folder to it (here alone, with the files rank 0 would have
written in place: the race the check prevents)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.shard_runs import eval_always

from odu.cli import main


def test_eval_on_another_rank_writes_and_prints_nothing(
    shards: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ODU_CACHE_DIR", str(shards / "cache"))
    monkeypatch.setenv("RANK", "1")
    assert eval_always(tmp_path / "out") == 0
    assert not (tmp_path / "out").exists() and capsys.readouterr().out == ""


def test_lm_eval_on_another_rank_leaves_rank_0s_files_alone(
    sample_dataset: Path, hf_cache: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    monkeypatch.setenv("RANK", "1")
    args = ["--model", "odu-never", "--tasks", "odu_ao", "--limit", "2", "--output_path", str(tmp_path / "out")]
    assert main(["lm-eval", "run", *args, "--metadata", json.dumps({"dataset": str(sample_dataset)})]) == 0
    [results] = (tmp_path / "out").rglob("results_*.json")  # lm-eval's (its model ran as one process)
    assert not list((tmp_path / "out").rglob("run_card_*.json"))
