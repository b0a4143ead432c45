"""The harness wing: everything that exists for lm-evaluation-harness.

* :mod:`.tasks` — the ``odu_*`` task hooks as plain functions (docs, prompts, scoring, metrics);
  ``lm_eval_tasks/odu/utils.py`` is a thin door onto it;
* :mod:`.models` — the backends registered as lm-eval models (``odu-openai``, ...); the only
  module here that imports ``lm_eval`` when imported (itself imported only when lm-eval runs);
* :mod:`.preflight` — between model and first request: native tasks refuse other models, the
  text-only tasks' evaluated clips are transcribed (``lm_eval`` imported inside its functions);
* :mod:`.runcard` — the run card written beside lm-eval results;
* :mod:`.arguments` — lm-eval's model arguments checked before lm-eval prints them (the bridge's
  hooks on its parser; ``odu-bench lm-eval``);
* :mod:`.asr` — the ASR input of the text-only tasks (App D.2);
* :mod:`.folders` — where the shipped task folders lie (standard library only: the bridge's lookups);
* :mod:`.wrapping` — a wrapper of ours put around an lm-eval attribute once (bridge or not).
"""
