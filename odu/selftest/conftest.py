"""Isolation of the shipped tests: none of the user's keys, settings or caches reaches them, each
runs in an empty folder of its own, and whatever they write goes to pytest's temporary folders;
offline (``HF_*_OFFLINE``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Settings of the user's environment that would change what the tests run (docs/harness.md
#: "Settings by environment") or where they write.
USER_SETTINGS = (
    "OPENAI_API_KEY",
    "ODU_JUDGE",
    "ODU_ASR",
    "ODU_ASR_BASE_URL",
    "ODU_DATASET",
    "ODU_LM_EVAL_BRIDGE",
    "HF_DATASETS_CACHE",
    "HF_MODULES_CACHE",
)
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}


@pytest.fixture(scope="session")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's private caches: ``odu/`` (``$ODU_CACHE_DIR``) and ``hf/`` (``$HF_HOME``)."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture(autouse=True)
def _isolated(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test runs in its own empty folder (``odu-bench selftest`` starts pytest in this package's
    folder, so that it names the tests by file: nothing may be written there)."""
    import datasets

    monkeypatch.chdir(tmp_path)

    for name in USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    for name, value in {**OFFLINE, "ODU_CACHE_DIR": str(home / "odu")}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(home / "hf" / "datasets"))


@pytest.fixture
def child_env(home: Path) -> dict[str, str]:
    """The environment of a child process: the test's (isolated above), with Hugging Face's caches
    under the session's ``home`` too, and no bytecode written into the installed package."""
    return dict(os.environ) | {"HF_HOME": str(home / "hf"), "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.fixture(scope="session")
def sample(home: Path) -> Path:
    """The bundled sample prepared once for the session (where ``eval --sample`` prepares it)."""
    from odu.data.sample import sample_dataset_dir

    return sample_dataset_dir(home / "odu")
