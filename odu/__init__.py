"""ODU-Bench core: schema, parsing, matching, judging and metrics (App A of the paper).

The user-facing doors (``odu_bench.py`` for ``datasets``, ``odu_metric/`` for ``evaluate``,
``lm_eval_tasks/odu`` for lm-eval and the ``odu-bench`` CLI) only translate to this package.

>>> from odu import load_scenes, score_scenes, make_judge

The names below are imported on first use (PEP 562), so that importing one part of the package
(``odu.data.dataset`` to iterate the dataset, say) does not import the scorer, the judges and
their dependencies.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each re-exported name and the module defining it.
_EXPORTS = {
    "Prediction": "core.schema",
    "Scene": "core.schema",
    "SchemaError": "core.schema",
    "load_scenes": "core.schema",
    "ScoredRun": "runs.contract",
    "read_run": "runs.contract",
    "write_run": "runs.contract",
    "make_judge": "judge",
    "parse_output": "core.parse",
    "score_scenes": "runs.scoring",
}

if TYPE_CHECKING:  # pragma: no cover
    from .core.parse import parse_output
    from .core.schema import Prediction, Scene, SchemaError, load_scenes
    from .judge import make_judge
    from .runs.contract import ScoredRun, read_run, write_run
    from .runs.scoring import score_scenes


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Prediction",
    "Scene",
    "SchemaError",
    "ScoredRun",
    "load_scenes",
    "make_judge",
    "parse_output",
    "read_run",
    "score_scenes",
    "write_run",
]
