"""Shared pytest fixtures (keep small; the helpers live in ``tests/support/``).

Tests are grouped by the part of the toolkit they pin: ``scoring/``, ``judge/``, ``models/``,
``data/``, ``harness/``, ``report/``, ``cli/``, ``doors/`` (the ``evaluate`` metric), ``project/``
(layout, citation, docs, lint and types), ``real/`` (the real lane, docs/real-lane.md); test data in
``fixtures/``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # build tooling: synth, make_sample

from support.backend_media import media  # noqa: F401  (module fixture: short clips for the backend tests)
from support.dataset_fixtures import demo_dataset, demo_release, hf_cache  # noqa: F401  (session fixtures)
from support.openai_rules import API_KEY
from support.openai_server import OpenAIServer
from support.sample_runs import prepared_sample, sample_dataset  # noqa: F401  (the bundled sample, prepared)
from support.shard_runs import shards  # noqa: F401  (module fixture: the two shards of an eval run)
from support.view_support import runs, site  # noqa: F401  (session fixtures of the viewer tests)
from support.wheel import wheel_env  # noqa: F401  (session fixture: the wheel in a fresh venv, tests/doors/)

from odu.io.scrub import forget_secrets


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """``OPENAI_API_KEY`` set to the key the loopback server accepts (``openai_rules.API_KEY``)."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    return API_KEY


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A started loopback OpenAI-compatible server (``tests/support/openai_server.py``), as strict as a
    real one: it wants ``Authorization: Bearer API_KEY`` (``openai_key`` puts it in the environment;
    or set ``.api_key``), serves only ``.models`` (``["loopback"]``; add yours) and accepts no field
    outside the API unless in ``.extra_fields``. Set ``.responder``."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_secrets_between_tests() -> Iterator[None]:
    """Secrets registered by one test's clients (:mod:`odu.io.scrub`) are not scrubbed from the next's."""
    yield
    forget_secrets()


@pytest.fixture(autouse=True)
def _private_judge_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the LLM-judge verdict cache of every test out of the user's ~/.cache."""
    monkeypatch.setenv("ODU_CACHE_DIR", str(tmp_path_factory.mktemp("odu-cache")))
