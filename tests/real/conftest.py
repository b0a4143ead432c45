"""Fixtures of the real lane (docs/real-lane.md): tiny checkpoints built once per session, and one
``transformers serve`` per checkpoint kind, started on first use and stopped at the session's end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.real_lane import Served, build_checkpoints, require_lane, serve


@pytest.fixture(autouse=True)
def _lane_installed() -> None:
    """Every real-lane test needs the ``[torch]`` extra (skip, or fail under ODU_REQUIRE_REAL_LANE=1)."""
    require_lane()


@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """kind -> folder of every tiny checkpoint (``tools/tiny_checkpoints.py``), built once."""
    require_lane()
    return build_checkpoints(tmp_path_factory.mktemp("tiny-checkpoints"))


def _served(kind: str, checkpoints: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(checkpoints[kind], tmp_path_factory.mktemp(f"serve-{kind}")) as served:
        yield served


@pytest.fixture(scope="session")
def omni_server(checkpoints: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``transformers serve`` on the published Qwen2.5-Omni layout."""
    yield from _served("qwen2_5_omni", checkpoints, tmp_path_factory)


@pytest.fixture(scope="session")
def thinker_server(checkpoints: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``transformers serve`` on a thinker-only Qwen2.5-Omni checkpoint."""
    yield from _served("qwen2_5_omni_thinker", checkpoints, tmp_path_factory)


@pytest.fixture(scope="session")
def text_server(checkpoints: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``transformers serve`` on the tiny text LLM (text-only tasks, the judge)."""
    yield from _served("text", checkpoints, tmp_path_factory)
