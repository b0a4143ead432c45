"""The tests shipped with the package, for an installation without a checkout (a wheel).

``odu-bench selftest`` runs them with pytest, offline, each in an empty folder, in under a
minute (README "From a wheel"); a checkout's ``pytest`` collects them with the rest of its suite.
Each checks the installed toolkit and fails when it is wrong: the scorer against the paper's
App A.5 worked example and against the bundled sample's own references, the floors of
``odu-bench eval --sample`` against App A.3's formulas, plain ``lm_eval``, ``load_dataset`` and
``evaluate.load`` by name from an empty folder, the parsing rules, and bad input said in one line.
None of them reads the repository, the network, or the user's caches, keys and settings
(``conftest.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..core.schema import Scene

#: This folder: the tests, their pytest settings (:data:`CONFIG`) and their data (:data:`DATA`).
SELFTEST_DIR = Path(__file__).resolve().parent
#: The pytest settings of ``odu-bench selftest`` (passed with ``-c``; never found by pytest itself).
CONFIG = SELFTEST_DIR / "selftest.ini"
#: The tests' data: ``worked_example_a5.json`` (App A.5, rebuilt from what the paper prints).
DATA = SELFTEST_DIR / "data"


def perfect_output(scene: Scene, language: str = "scene") -> str:
    """The ``language`` annotation of ``scene`` as a model output (App A.1 fields)."""
    ann = scene.annotation(language)
    return json.dumps(
        {
            "has_demand": ann.has_demand,
            "segments": [
                {
                    "start_ms": g.start_ms,
                    "end_ms": g.end_ms,
                    "transcript": g.transcript,
                    "structured_intent": g.structured_intent,
                    "required_context": [{"type": c.type, "description": c.description} for c in g.required_context],
                    "user_in_frame": g.user_in_frame,
                    "user_gender": g.user_gender,
                    "user_age_group": g.user_age_group,
                }
                for g in ann.segments
            ],
        },
        ensure_ascii=False,
    )


__all__ = ["CONFIG", "DATA", "SELFTEST_DIR", "perfect_output"]
