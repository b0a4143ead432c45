"""The runs ``tests/export/`` exports: ``odu-bench eval --sample`` (the two floors, with run cards
and raw outputs), an ``odu-bench score`` run of the sample (no run card) and runs of served models
(Gemini on its fake, a model a local server names without its developer), how the tests copy a run
with its card changed, call ``odu-bench export`` and read an Every Eval Ever export back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from odu.cli import main
from odu.runs.contract import PREDICTIONS_FILE, RUN_CARD_NAME, read_run, write_run
from support.cli import argv
from support.gemini_fake import GeminiFake
from support.omni_fakes import FakeOmni
from support.openai_rules import API_KEY
from support.openai_server import OpenAIServer
from support.sample_runs import scored_sample_run

DATASET = "ORG/odu-bench"
ORGANIZATION = "Test Lab"
#: The model id given to the sample's ``odu-bench score`` run (no run card, so no model of its own).
SCORED_ID = "lab/scored"
#: The served runs' models: Gemini (docs/providers.md's Gemini 3.1 Pro), and a name a local server
#: gives a model that says nothing of its developer.
GEMINI, UNNAMED = "gemini-3.1-pro-preview", "my-omni"
GEMINI_KEY = "AIza-export-5e6f7a8b"


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory: pytest.TempPathFactory, hf_cache: str) -> dict[str, Path]:
    """``odu-bench eval --sample`` (the two floors, through lm-eval, with run cards and raw
    outputs) and an ``odu-bench score`` run of the sample (no run card), by run folder name."""
    import datasets

    root = tmp_path_factory.mktemp("export-runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ODU_CACHE_DIR", str(root / "cache"))
        mp.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
        assert main(argv("eval", sample=True, out=root / "eval")) == 0
    runs = {p.parent.name: p.parent for p in (root / "eval").rglob("summary.json")}
    assert sorted(runs) == ["always", "never"]
    runs["scored"] = scored_sample_run(root / "scored")
    return runs


@pytest.fixture(scope="module")
def served_runs(tmp_path_factory: pytest.TempPathFactory, hf_cache: str) -> dict[str, Path]:
    """``odu-bench eval --sample --limit 2`` of served models, by backend: ``gemini`` (:data:`GEMINI`
    through the Gemini backend, on the Gemini fake) and ``openai`` (:data:`UNNAMED` on a loopback
    OpenAI-compatible server): their run cards as those runs write them."""
    import datasets

    from odu.data.sample import sample_dataset_dir

    root = tmp_path_factory.mktemp("served-runs")
    runs = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ODU_CACHE_DIR", str(root / "cache"))
        mp.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
        mp.setenv("GEMINI_API_KEY", GEMINI_KEY)
        mp.delenv("GOOGLE_API_KEY", raising=False)
        mp.setenv("OPENAI_API_KEY", API_KEY)
        dataset = sample_dataset_dir()
        with OpenAIServer() as http:
            GeminiFake(dataset, key=GEMINI_KEY, model=GEMINI).attach(http)
            runs["gemini"] = _served(root / "gemini", "gemini", f"model={GEMINI},base_url={http.origin}")
        with OpenAIServer(FakeOmni(dataset), models=(UNNAMED,)) as server:
            runs["openai"] = _served(root / "openai", "openai", f"model={UNNAMED},base_url={server.base_url}")
    return runs


def _served(out: Path, backend: str, model_args: str) -> Path:
    """The run folder of ``odu-bench eval --sample --limit 2`` of ``backend`` (exit 0 asserted)."""
    assert main(argv("eval", sample=True, model=backend, model_args=model_args, limit=2, out=out)) == 0
    [folder] = out.iterdir()
    return folder


def export(runs: list[Path], fmt: str, out: Path, **options: Any) -> int:
    """``odu-bench export``; eee with ``--organization`` unless given, and ``--model-ids`` for the
    runs without a run card (``odu-bench score`` runs have no model id of their own)."""
    if fmt == "eee":
        options.setdefault("organization", ORGANIZATION)
    if fmt in ("eee", "inspect") and "model_ids" not in options:
        # "-": the run card's model (the floors'); a score run has no card: lab/<folder>
        options["model_ids"] = ["-" if (r / RUN_CARD_NAME).is_file() else f"lab/{r.name}" for r in runs]
    return main(argv("export", *runs, format=fmt, out=out, **options))


def eee_records(out: Path) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """model name -> (aggregate, instances) of an EEE export."""
    found = {}
    for path in out.rglob("*.json"):
        aggregate = json.loads(path.read_text(encoding="utf-8"))
        lines = (out / aggregate["detailed_evaluation_results"]["file_path"]).read_text(encoding="utf-8").splitlines()
        found[aggregate["model_info"]["name"]] = (aggregate, [json.loads(line) for line in lines])
    return found


def scene_rows(instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scenes.jsonl rows an EEE export's instances carry (``metadata.scene_row``, as JSON)."""
    return [json.loads(i["metadata"]["scene_row"]) for i in instances]


def copy_run(source: Path, out: Path, card_changes: dict | None = None, outputs: dict | None = None) -> Path:
    """``source`` (a run with a card) written again to ``out`` with its card and raw outputs changed."""
    card = json.loads((source / RUN_CARD_NAME).read_text(encoding="utf-8")) | (card_changes or {})
    lines = (source / PREDICTIONS_FILE).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    said = [{"scene_id": r["scene_id"], "output": (outputs or {}).get(r["scene_id"], r["output"])} for r in rows]
    return write_run(read_run(source), out, json_files={RUN_CARD_NAME: card}, jsonl_files={PREDICTIONS_FILE: said})
