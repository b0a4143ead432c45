"""ODU-Bench core: schema, parsing, matching, judging and metrics (App A of the paper).

The user-facing doors (``odu_bench.py`` for ``datasets``, ``odu_metric/`` for ``evaluate``,
``lm_eval_tasks/odu`` for lm-eval and the ``odu-bench`` CLI) only translate to this package.
"""

__version__ = "0.1.0"
