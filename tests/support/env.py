"""The environment of a child process in the tests: the caller's, without its ODU_* and HF_*
settings, with private caches under ``tmp_path`` and the repository on ``PYTHONPATH``."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def fresh_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ODU_", "HF_"))}
    return env | {"ODU_CACHE_DIR": str(tmp_path / "cache"), "HF_DATASETS_CACHE": str(tmp_path / "hf"),
                  "HF_HOME": str(tmp_path / "hf-home"), "PYTHONPATH": str(REPO)} | extra
