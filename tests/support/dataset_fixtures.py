"""Session fixtures for the dataset tests: the 27 real demo records with synthetic media, prepared.

Imported by ``conftest.py``. Building them once per session keeps the dataset tests fast.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from synth import synthesize_media

from odu.data.dataset import LABEL_CODES, MODALITY_CODES
from odu.data.prepare import prepare

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DEMO_SCENES = FIXTURES / "demo_scenes.json"


def demo_records() -> list[dict[str, Any]]:
    return json.loads(DEMO_SCENES.read_text(encoding="utf-8"))


def expected_rows(records: list[dict[str, Any]]) -> dict[str, int]:
    """Rows per config counted straight from the records (independent of odu.data.dataset's filters)."""
    counts: Counter[str] = Counter()
    for r in records:
        m, lang, lab = MODALITY_CODES[r["modality"]], r["language"], LABEL_CODES[r["label"]]
        for name in ("all", m, f"{m}_{lang}", f"{m}_{lab}", f"{m}_{lang}_{lab}"):
            counts[name] += 1
    return dict(counts)


@pytest.fixture(scope="session")
def demo_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A raw release folder: ``scenes.json`` (the demo records, verbatim) + media of each clip's duration."""
    root = tmp_path_factory.mktemp("demo-release")
    shutil.copyfile(DEMO_SCENES, root / "scenes.json")
    synthesize_media(demo_records(), root)
    return root


@pytest.fixture(scope="session")
def demo_dataset(demo_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo release prepared into ``<tmp>/odu-bench`` (read-only for tests: copy to modify)."""
    out = tmp_path_factory.mktemp("prepared") / "odu-bench"
    prepare(demo_release, out)
    return out


@pytest.fixture(scope="session")
def hf_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A private ``datasets`` cache dir for ``load_dataset(..., cache_dir=hf_cache)``."""
    return str(tmp_path_factory.mktemp("hf-datasets-cache"))
