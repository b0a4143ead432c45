"""Fixtures of the property tests (Hypothesis reruns a test body many times: only fixtures that
outlive one call may be used)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def tmp_path_factory_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder shared by all the examples of a module's tests (each overwrites its own file)."""
    return tmp_path_factory.mktemp("property")
