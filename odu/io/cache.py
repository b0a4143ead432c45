"""The toolkit's cache directory, in one place.

``$ODU_CACHE_DIR``, else ``$XDG_CACHE_HOME/odu-bench``, else ``~/.cache/odu-bench``. What lives
there: ``judge.sqlite`` (LLM-judge verdicts, :mod:`odu.judge.cache`), ``datasets/`` (the bundled
sample prepared for the lm-eval tasks, :func:`odu.data.sample.sample_dataset_dir`), ``media/``
(clips spooled to files for backends that take paths, :func:`odu.models.clips.spool_clip`) and
``asr/`` (transcriptions of the text-only tasks, :mod:`odu.harness.asr`).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the cache directory.
CACHE_DIR_ENV = "ODU_CACHE_DIR"


def cache_dir() -> Path:
    """The cache directory (not created here)."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "odu-bench"


__all__ = ["CACHE_DIR_ENV", "cache_dir"]
