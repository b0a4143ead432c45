"""The bundled offline sample: a small synthetic ODU-Bench release shipped with the package.

21 scenes in the release schema (``sample/scenes.jsonl`` + ``sample/media/``, clip ``src`` relative
to that folder), written by ``tools/make_sample.py`` (see its docstring); they exercise the
toolkit, they measure nothing. :func:`sample_dataset_dir` prepares it once into the cache, which
is what the lm-eval tasks and ``odu-bench eval`` read by default.
"""

from __future__ import annotations

from pathlib import Path

from ..io.cache import cache_dir


def sample_dir() -> Path:
    """The bundled sample release: ``scenes.jsonl`` and ``media/`` (clip ``src`` relative to it)."""
    return Path(__file__).resolve().parent / "sample"


def sample_dataset_dir(cache: str | Path | None = None) -> Path:
    """The bundled sample prepared once into the cache and reused until the sample changes:
    ``<cache>/datasets/sample-<fingerprint>/odu-bench`` (``cache`` default: :func:`odu.io.cache.cache_dir`)."""
    from .prepare import MANIFEST_NAME, prepare
    from .release import fingerprint

    raw = sample_dir()
    base = Path(cache) if cache is not None else cache_dir()
    out = base / "datasets" / f"sample-{fingerprint(raw)[:16]}" / "odu-bench"
    if not (out / MANIFEST_NAME).is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            prepare(raw, out)
        except OSError:  # another process finished first
            if not (out / MANIFEST_NAME).is_file():
                raise
    return out


__all__ = ["sample_dataset_dir", "sample_dir"]
