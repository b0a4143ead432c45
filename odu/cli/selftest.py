"""``odu-bench selftest``: run the tests shipped in the package (:mod:`odu.selftest`) with pytest.

The check of an installation without a checkout (README "From a wheel"): pytest runs in a child
process, offline, with the shipped settings only (``-c odu/selftest/selftest.ini``: no ``pytest.ini``
or ``conftest.py`` of the folder the command was started from applies), Hugging Face's and
odu-bench's caches in a temporary folder removed after, each test in an empty folder of its own,
and no bytecode written into the installed package. The exit status is pytest's: 0 every test
passed, 1 one failed, ...
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: How to get pytest, said when it is missing (setup.cfg's ``selftest`` extra).
PYTEST_FIX = "pip install 'pytest>=8' (or install odu-bench with its [selftest] extra)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "selftest",
        help="run the tests shipped with the package (pytest, offline; under a minute)",
        description="Runs odu/selftest/ with pytest: the App A.5 worked example, the sample scored end to end, "
        "the floors of eval --sample, plain lm_eval, load_dataset and evaluate.load by name, the parsing rules. "
        "Exit status: pytest's (0: every test passed).",
    )
    p.add_argument(
        "pytest_args", nargs="*", metavar="PYTEST_ARG", help="after --, arguments for pytest (e.g. -- -x -k parse)"
    )
    p.set_defaults(run=run)


def pytest_command(pytest_args: list[str]) -> list[str]:
    """The child's command line: pytest on the shipped tests, with their settings only."""
    from ..selftest import CONFIG, SELFTEST_DIR

    folder = str(SELFTEST_DIR)
    return [sys.executable, "-m", "pytest", folder, "-c", str(CONFIG), "--rootdir", folder, *pytest_args]


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("pytest") is None:
        print(
            f"odu-bench selftest: error: the self-test runs on pytest, which is not installed: {PYTEST_FIX}",
            file=sys.stderr,
        )
        return 2
    from ..selftest import SELFTEST_DIR

    with tempfile.TemporaryDirectory(prefix="odu-selftest-") as folder:
        home = Path(folder)
        environ = dict(os.environ) | {
            "HF_HOME": str(home / "hf"),
            "ODU_CACHE_DIR": str(home / "odu"),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        print(f"odu-bench selftest: the tests in {SELFTEST_DIR}, offline, caches in {home}", flush=True)
        # started in the tests' folder, so that pytest names them by file; each test runs in a folder
        # of its own (odu/selftest/conftest.py)
        return subprocess.run(pytest_command(list(args.pytest_args)), cwd=SELFTEST_DIR, env=environ).returncode
