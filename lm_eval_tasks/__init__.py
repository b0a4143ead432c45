"""The lm-eval task folder (``odu/`` holds the YAMLs). A wheel installs it as ``odu.harness.lm_eval_tasks``
(``setup.py``), which the ``lm_eval.tasks`` entry point names; nothing here is imported by the tasks."""
