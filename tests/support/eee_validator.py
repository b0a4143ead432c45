"""Every Eval Ever's own validator (``python -m every_eval_ever validate``, PyPI every-eval-ever),
run on an ``odu-bench export --format eee`` folder.

every-eval-ever needs Python >= 3.12 and huggingface-hub < 2, so it lives in an environment of its
own (``scripts/install_eee_validator.sh``: ``<active env>/odu-eee-validator``), or in this one where
it can be imported. Without it these tests skip; under ``ODU_REQUIRE_EEE_VALIDATOR=1`` (CI,
``.ci/run``) they fail.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.real_lane import skip_or_fail

#: Set by CI: the validator must be there, its absence fails instead of skipping.
REQUIRED = os.environ.get("ODU_REQUIRE_EEE_VALIDATOR") == "1"
#: Where ``scripts/install_eee_validator.sh`` puts the validator's environment.
VALIDATOR_ENV = Path(sys.prefix) / "odu-eee-validator"


def validator_python() -> str:
    """The Python that runs ``every_eval_ever`` (skip, or fail under :data:`REQUIRED`, without one)."""
    if importlib.util.find_spec("every_eval_ever") is not None:
        return sys.executable
    python = VALIDATOR_ENV / "bin" / "python"
    missing = [] if python.is_file() else [f"every-eval-ever ({VALIDATOR_ENV})"]
    skip_or_fail(
        missing, REQUIRED, "ODU_REQUIRE_EEE_VALIDATOR", "the EEE tests need", "scripts/install_eee_validator.sh"
    )
    return str(python)


def eee_validate(out: Path) -> tuple[int, list[dict[str, Any]]]:
    """Upstream's validator on every file of the datastore layout under ``out``
    (``data/<collection>/<developer>/<model>/<file>``, paths as the datastore holds them): its exit
    status (0 clean, 1 errors, 2 warnings only) and its JSON report, one entry per file."""
    done = subprocess.run(
        [validator_python(), "-m", "every_eval_ever", "validate", "--format", "json", "data/*/*/*/*"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout)
