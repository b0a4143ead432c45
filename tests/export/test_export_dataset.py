"""Two promises of docs/export.md, at their edges: ``--resamples`` takes 1 to 100,000
(``MAX_RESAMPLES``: the bound itself is taken, one past it or below 1 is exit 2), and the Hub
dataset's revision goes out only when the run card read the very dataset ``--dataset-id`` names
(every task from it, at one revision): never a revision of another dataset, never an empty one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.export_runs import DATASET, copy_run, eee_records, export

from odu.export import ExportSettings
from odu.report.bootstrap import MAX_RESAMPLES
from odu.runs.contract import RUN_CARD_NAME

#: What ``_revisions`` gives for an entry without a revision (not even a null one).
ABSENT = "(no revision key)"


@pytest.mark.parametrize("resamples", [1, MAX_RESAMPLES])
def test_resamples_from_one_to_the_bound_are_taken(resamples: int) -> None:
    assert ExportSettings(resamples=resamples).resamples == resamples


@pytest.mark.parametrize("resamples", [0, -1, MAX_RESAMPLES + 1])
def test_resamples_outside_the_bounds_are_refused(resamples: int) -> None:
    with pytest.raises(ValueError, match=f"--resamples {resamples}: from 1 to {MAX_RESAMPLES:,}"):
        ExportSettings(resamples=resamples)


def test_export_takes_resamples_at_the_bound(sample_runs, tmp_path: Path, capsys) -> None:
    assert export([sample_runs["never"]], "eee", tmp_path / "eee", resamples=MAX_RESAMPLES) == 0, capsys.readouterr()
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    uncertainty = [r["score_details"]["uncertainty"] for r in aggregate["evaluation_results"]]
    assert {u["num_bootstrap_samples"] for u in uncertainty} == {MAX_RESAMPLES}


def test_export_refuses_resamples_below_one(sample_runs, tmp_path: Path, capsys) -> None:
    assert export([sample_runs["never"]], "eee", tmp_path / "eee", resamples=0) == 2
    assert "--resamples must be at least 1" in capsys.readouterr().err and not (tmp_path / "eee").exists()


def _card_datasets(run: Path, **by_config: tuple[str, str | None]) -> dict[str, Any]:
    """The run card's dataset block of ``run`` with each config's (source, revision) set."""
    card = json.loads((run / RUN_CARD_NAME).read_text(encoding="utf-8"))
    return {
        key: dict(info, source=by_config[key][0], revision=by_config[key][1]) for key, info in card["dataset"].items()
    }


def _revisions(run: Path, tmp_path: Path) -> tuple[set[Any], set[Any]]:
    """The revisions a Hub and an EEE export with ``--dataset-id DATASET`` give (:data:`ABSENT`: no key)."""
    assert export([run], "hub", tmp_path / "hub", dataset_id=DATASET) == 0
    entries = yaml.safe_load(next((tmp_path / "hub").rglob("odu-bench.yaml")).read_text(encoding="utf-8"))
    hub = {e["dataset"].get("revision", ABSENT) for e in entries}
    assert {e["dataset"]["id"] for e in entries} == {DATASET}
    assert export([run], "eee", tmp_path / "eee", dataset_id=DATASET, resamples=20) == 0
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    sources = [r["source_data"] for r in aggregate["evaluation_results"]]
    assert {s["hf_repo"] for s in sources} == {DATASET}
    return hub, {s["additional_details"].get("revision", ABSENT) for s in sources}


def test_the_revision_of_the_named_dataset_goes_to_every_format(sample_runs, tmp_path: Path) -> None:
    run = sample_runs["never"]
    named = copy_run(
        run, tmp_path / "run", {"dataset": _card_datasets(run, av=(DATASET, "abc123"), ao=(DATASET, "abc123"))}
    )
    assert _revisions(named, tmp_path) == ({"abc123"}, {"abc123"})


CASES = {
    "another-dataset": {"av": ("ORG/other", "abc123"), "ao": ("ORG/other", "abc123")},
    "a-local-folder-named-like-it": {"av": ("data/odu-bench", "abc123"), "ao": ("data/odu-bench", "abc123")},
    "one-task-from-another-dataset": {"av": (DATASET, "abc123"), "ao": ("ORG/other", "abc123")},
    "two-revisions": {"av": (DATASET, "abc123"), "ao": (DATASET, "def456")},
    "no-revision": {"av": (DATASET, None), "ao": (DATASET, None)},
}


@pytest.mark.parametrize("case", list(CASES))
def test_no_revision_goes_but_that_of_the_dataset_named(case: str, sample_runs, tmp_path: Path) -> None:
    run = sample_runs["never"]
    changed = copy_run(run, tmp_path / "run", {"dataset": _card_datasets(run, **CASES[case])})
    assert _revisions(changed, tmp_path) == ({ABSENT}, {ABSENT})
