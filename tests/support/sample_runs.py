"""A backend end to end on the bundled sample, as the backend tests run it: ``odu-bench eval
--sample``, its files free of the key, and its raw outputs replayed (``--model replay``) scoring
exactly the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from odu.cli import main
from odu.data.sample import sample_dataset_dir
from support.cli import argv


@pytest.fixture
def prepared_sample(hf_cache: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled sample, prepared where ``eval --sample`` prepares it (this test's
    ``$ODU_CACHE_DIR``), with ``datasets``' cache in the session's."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    return sample_dataset_dir()


@pytest.fixture(scope="module")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample prepared once per test module, in a cache of its own."""
    return sample_dataset_dir(tmp_path_factory.mktemp("sample-cache"))


def server_run_env(monkeypatch: pytest.MonkeyPatch, hf_cache: str, key: str) -> None:
    """What a test of runs against a loopback server sets: ``datasets``' cache in the session's,
    ``OPENAI_API_KEY`` = ``key``, and none of the caller's ``ODU_JUDGE`` / ``ODU_ASR`` / ``ODU_DATASET``."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    for name in ("ODU_JUDGE", "ODU_ASR", "ODU_DATASET"):
        monkeypatch.delenv(name, raising=False)


def scored_sample_run(out: Path, rows: list[dict[str, Any]] | None = None, seed: int = 4) -> Path:
    """A run of the bundled sample's scenes (``odu-bench score``'s layout, no run card) scored by
    the lexical judge from damaged reference outputs, written to ``out``; ``rows``: scene rows to
    write instead (another run's, changed), with their summary recomputed."""
    from odu.core.schema import load_scenes
    from odu.data.sample import sample_dir
    from odu.judge import make_judge
    from odu.runs.contract import ScoredRun, summarize_run, write_run
    from odu.runs.scoring import score_scenes
    from support.predictions import damaged_outputs

    records = [json.loads(line) for line in (sample_dir() / "scenes.jsonl").read_text(encoding="utf-8").splitlines()]
    run = score_scenes(load_scenes(records), damaged_outputs(records, 0.3, 0.5, seed=seed), make_judge("lexical"))
    if rows is not None:
        run = ScoredRun(summarize_run(rows, run.summary["judge"], run.summary["annotation_language"]), rows)
    return write_run(run, out)


def first_scene(dataset: Path, config: str) -> str:
    """The id of the first scene of ``config`` in a prepared dataset."""
    import datasets

    return str(next(iter(datasets.load_dataset(str(dataset), config, split="test")))["scene_id"])


def eval_sample(out: Path, model: str, tasks: str, model_args: str) -> Path:
    """``odu-bench eval --sample`` of one backend into ``out`` (exit 0 asserted): its run folder."""
    assert main(argv("eval", sample=True, model=model, tasks=tasks, model_args=model_args, out=out)) == 0
    [folder] = out.iterdir()
    return folder


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def assert_no_secret(folder: Path, secret: str, *texts: str) -> None:
    """``secret`` is in no file of the run and none of ``texts`` (captured output)."""
    for path in folder.iterdir():
        assert secret not in path.read_text(encoding="utf-8"), path.name
    assert all(secret not in text for text in texts)


def assert_replay_scores_the_same(folder: Path, tasks: str, out: Path) -> None:
    """The run's raw outputs replayed (``--model replay``) score exactly as the run did."""
    replayed = eval_sample(out, "replay", tasks, f"predictions={folder / 'predictions.jsonl'}")
    summary, again = read_json(folder / "summary.json"), read_json(replayed / "summary.json")
    for key in summary.keys() & {"audio-visual", "audio-only", "tasks", "parse_errors"}:
        assert again[key] == summary[key], key
