"""ODU-Bench core: schema, parsing, matching, judging and metrics (App A of the paper).

The user-facing doors (``odu_bench.py`` for ``datasets``, ``odu_metric/`` for ``evaluate``,
``lm_eval_tasks/odu`` for lm-eval and the ``odu-bench`` CLI) only translate to this package.

>>> from odu import load_scenes, score_scenes, make_judge
"""

from .judge import make_judge
from .parse import parse_output
from .run import ScoredRun, read_run, write_run
from .schema import Prediction, Scene, SchemaError, load_scenes
from .scoring import score_scenes

__version__ = "0.1.0"

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
