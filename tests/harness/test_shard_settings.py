"""Which settings the shards of one run must share and which may differ, as docs/harness.md
("Shards") and ``odu/runs/shards.py`` promise: ``odu-bench merge`` refuses (exit 2, naming what
differs) shards of different runs, by dataset, tasks, model and its arguments, backend settings,
judge, prompt, reference language, ``--limit`` (and the bootstrap and the tasks logged, which make
the run's numbers and order); what depends on the shard's own work (its sample and scene counts,
the backend's statistics, the judge's counters, the ``preflight`` model argument) may differ."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.shard_runs import copy_shards, merge, rehash


def _edit(run: Path, name: str, change: Callable[[dict[str, Any]], Any]) -> None:
    """``change`` applied to the JSON file ``name`` of ``run``; the run's file list made to agree."""
    value = json.loads((run / name).read_text(encoding="utf-8"))
    change(value)
    (run / name).write_text(json.dumps(value, indent=2), encoding="utf-8")
    rehash(run)


def _each_task(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    return lambda card: [change(block) for block in card["tasks"].values()]


def _each_dataset(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    return lambda card: [change(block) for block in card["dataset"].values()]


SAME = [
    ("prompt", "run_card.json", lambda card: card["prompt"].update(version="other"), "prompt"),
    (
        "task-settings",
        "run_card.json",
        _each_task(lambda task: task["generation_kwargs"].update(temperature=0.7)),
        "tasks",
    ),
    ("model-name", "run_card.json", lambda card: card["model"].update(name="odu-never"), "model.name"),
    ("bootstrap", "run_card.json", lambda card: card["lm_eval"].update(bootstrap_iters=100), "lm_eval.bootstrap_iters"),
    (
        "dataset-content",
        "run_card.json",
        _each_dataset(lambda info: info.update(content_sha256="0" * 64)),
        "dataset",
    ),
    ("dataset-revision", "run_card.json", _each_dataset(lambda info: info.update(revision="abc123")), "dataset"),
    (
        "backend",
        "run_card.json",
        lambda card: card["model"]["backend"].update(backend="never"),
        "model backend settings",
    ),
    ("tasks-logged-order", "run_card.json", lambda card: card["tasks_logged"].reverse(), "tasks logged"),
    (
        "reference-language",
        "summary.json",
        lambda summary: summary.update(annotation_language="en"),
        "annotation_language",
    ),
]


@pytest.mark.parametrize(("file", "change", "differ"), [c[1:] for c in SAME], ids=[c[0] for c in SAME])
def test_shards_that_differ_in_a_setting_of_the_run_are_refused_naming_it(
    file: str, change: Callable[[dict[str, Any]], Any], differ: str, shards: Path, tmp_path: Path, capsys
) -> None:
    one, two = copy_shards(shards, tmp_path)
    _edit(two, file, change)
    assert merge(one, two, tmp_path / "m") == 2
    assert f"are shards of different runs: their {differ} differ" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


MAY_DIFFER = [
    ("sample-counts", _each_task(lambda task: task.update(n_samples=task["n_samples"] + 1))),
    ("preflight", lambda card: card["model"]["model_args"].update(preflight="false")),
    ("backend-stats", lambda card: card["model"]["backend"].update(stats={"requests": 7, "wall_time_s": 1.5})),
]


@pytest.mark.parametrize("change", [c[1] for c in MAY_DIFFER], ids=[c[0] for c in MAY_DIFFER])
def test_what_depends_on_a_shards_own_work_may_differ(
    change: Callable[[dict[str, Any]], Any], shards: Path, tmp_path: Path, capsys
) -> None:
    one, two = copy_shards(shards, tmp_path)
    _edit(two, "run_card.json", change)
    assert merge(one, two, tmp_path / "m") == 0, capsys.readouterr().err


def test_the_shards_own_scene_counts_differ_and_still_merge(shards: Path, tmp_path: Path) -> None:
    """Each shard's run card names its own position and scene count: they differ by design."""
    one, two = copy_shards(shards, tmp_path)
    cards = [json.loads((s / "run_card.json").read_text(encoding="utf-8")) for s in (one, two)]
    assert cards[0]["dataset"]["av"]["shard"] != cards[1]["dataset"]["av"]["shard"]
    assert merge(two, one, tmp_path / "m") == 0
