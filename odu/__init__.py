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
    "Prediction": "schema",
    "Scene": "schema",
    "SchemaError": "schema",
    "load_scenes": "schema",
    "ScoredRun": "run",
    "read_run": "run",
    "write_run": "run",
    "make_judge": "judge",
    "parse_output": "parse",
    "score_scenes": "scoring",
}

if TYPE_CHECKING:  # pragma: no cover
    from .judge import make_judge
    from .parse import parse_output
    from .run import ScoredRun, read_run, write_run
    from .schema import Prediction, Scene, SchemaError, load_scenes
    from .scoring import score_scenes


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
