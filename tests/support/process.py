"""Child processes in the tests: ``python -m odu ...`` with the caller's environment, without its
ODU_* and HF_* settings, private caches under ``tmp_path`` and the repository on ``PYTHONPATH``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def fresh_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ODU_", "HF_"))}
    return (
        env
        | {
            "ODU_CACHE_DIR": str(tmp_path / "cache"),
            "HF_DATASETS_CACHE": str(tmp_path / "hf"),
            "HF_HOME": str(tmp_path / "hf-home"),
            "PYTHONPATH": str(REPO),
        }
        | extra
    )


def run_odu(
    args: Sequence[str], env: Mapping[str, str], cwd: Path | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``python -m odu ARGS`` to its end, text output captured."""
    return subprocess.run(
        [sys.executable, "-m", "odu", *args], cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout
    )
