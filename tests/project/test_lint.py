"""Lint, format and types, as part of the test run: ``ruff check`` and ``ruff format --check`` over
the tree and ``mypy`` over ``odu/`` (settings in pyproject.toml; both tools come with the ``test``
extra). After a merge, ``ruff check --fix . && ruff format .`` puts the tree back in shape."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_lint_is_clean() -> None:
    pytest.importorskip("ruff")
    proc = run_tool("ruff", "check", "--no-fix", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_applied() -> None:
    pytest.importorskip("ruff")
    proc = run_tool("ruff", "format", "--check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_package_type_checks() -> None:
    pytest.importorskip("mypy")
    proc = run_tool("mypy")
    assert proc.returncode == 0 and "Success: no issues found" in proc.stdout, proc.stdout + proc.stderr
