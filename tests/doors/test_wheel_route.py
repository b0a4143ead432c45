"""Issue 31 item 1: README's wheel route, followed as a user follows it.

"From a wheel" shows two commands. In a folder holding the wheel built from this tree, for a fresh
venv that reaches the dependencies but nothing of odu-bench (``support.wheel.installed_by_pip``):
the first, ``pip install "<the wheel>[selftest]"`` (offline: ``--no-index``), installs it; the
second, ``odu-bench selftest`` (the venv's own console script), runs the tests shipped in the
package, all of them, and every one passes, leaving the folder as it was. The same install with
one wrong number (an Eq. 6 weight) fails the self-test: its tests can fail.
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from support.docs import readme_section, shell_blocks
from support.wheel import REPO, WheelEnv, installed_by_pip, user_env, without_packages

from odu.selftest import CONFIG, SELFTEST_DIR

SECTION = "## From a wheel"


def wheel_commands() -> list[list[str]]:
    return [shlex.split(block) for block in shell_blocks(readme_section((REPO / "README.md").read_text(), SECTION))]


def built_wheel_name() -> str:
    """The file ``pip wheel`` makes of this tree (setup.cfg's name and version; pure Python)."""
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg", encoding="utf-8")
    name, version = setup["metadata"]["name"].replace("-", "_"), setup["metadata"]["version"]
    return f"{name}-{version}-py3-none-any.whl"


def test_readme_s_wheel_route_is_two_commands_naming_the_wheel_the_build_makes() -> None:
    install, selftest = wheel_commands()
    assert install == ["pip", "install", f"{built_wheel_name()}[selftest]"]
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg", encoding="utf-8")
    assert "pytest" in setup["options.extras_require"]["selftest"]
    assert selftest == ["odu-bench", "selftest"]


def shipped_tests() -> int:
    """How many tests the checkout's ``odu/selftest/`` holds (collected with the shipped settings)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-c", str(CONFIG), "--rootdir", str(SELFTEST_DIR)]
        + [str(SELFTEST_DIR)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    return int(re.search(r"^(\d+) tests? collected", proc.stdout, re.M).group(1))  # type: ignore[union-attr]


#: What a user's folder and environment may hold that the self-test must not heed: pytest settings
#: and a conftest.py that would break any test run there, and the settings of docs/harness.md
#: "Settings by environment" pointing at what is not there.
HOSTILE_FILES = {
    "pytest.ini": "[pytest]\naddopts = --no-such-option\n",
    "conftest.py": "raise RuntimeError('the conftest.py of the user folder was loaded')\n",
}
HOSTILE_SETTINGS = {
    "ODU_DATASET": "/nonexistent/odu-bench",
    "ODU_JUDGE": "openai:no-such-judge",
    "ODU_ASR": "openai:no-such-asr",
    "OPENAI_API_KEY": "sk-not-a-key",
}


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def follow(env: WheelEnv, name: str, edit: tuple[str, str, str] | None = None) -> tuple[WheelEnv, int, str]:
    """README's two commands in a fresh venv, from a user's folder holding the wheel and
    :data:`HOSTILE_FILES`, with :data:`HOSTILE_SETTINGS` (``edit``: first replace, in the installed
    package's file, one text by another); the venv, the self-test's exit status and output. Neither
    the user's folder nor the installed package gains a file."""
    install, selftest = wheel_commands()
    venv, installed = installed_by_pip(env, name, install[2])
    assert installed.returncode == 0, installed.stderr[-3000:]
    if edit:
        path, old, new = edit
        source = venv.site_packages / path
        assert source.read_text(encoding="utf-8").count(old) == 1
        source.write_text(source.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    folder, package = venv.home / "user", venv.site_packages / "odu"
    for file, text in HOSTILE_FILES.items():
        (folder / file).write_text(text, encoding="utf-8")
    before = files(folder), files(package)
    environ, _ = user_env(venv, "selftest", **HOSTILE_SETTINGS)
    environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's environment (scripts/mutation.py sets it)
    environ["PATH"] = f"{venv.python.parent}{os.pathsep}{environ['PATH']}"
    proc = subprocess.run(selftest, env=environ, cwd=folder, capture_output=True, text=True, timeout=900)
    assert (files(folder), files(package)) == before  # no .pytest_cache, no bytecode, no run left behind
    return venv, proc.returncode, proc.stdout + proc.stderr


#: pytest's last line when every test passed (warnings allowed; no skip, failure or deselection).
ALL_PASSED = r"=*\s*(\d+) passed(, \d+ warnings?)? in [\d.]+s( \(.*\))?\s*=*"


def test_the_readme_s_two_commands_install_the_wheel_and_every_shipped_test_passes(wheel_env: WheelEnv) -> None:
    venv, code, out = follow(wheel_env, "wheel-route")
    assert code == 0, out[-3000:]
    assert f"odu-bench selftest: the tests in {venv.site_packages / 'odu' / 'selftest'}, offline," in out
    passed = re.fullmatch(ALL_PASSED, out.strip().splitlines()[-1])
    assert passed and int(passed.group(1)) == shipped_tests(), out[-3000:]


def test_a_wrong_number_in_the_installed_package_fails_the_selftest(wheel_env: WheelEnv) -> None:
    """Eq. 6 with M1 weighted 0.25 and M2 0.5 (App A.4: 0.15 and 0.60)."""
    edit = ("odu/core/constants.py", '"m1": 0.15, "m2": 0.60,', '"m1": 0.25, "m2": 0.5,')
    _, code, out = follow(wheel_env, "wheel-route-faulty", edit)
    assert code == 1 and "FAILED test_sample.py::test_eval_sample_scores_the_floors_as_app_a3_says" in out, out[-3000:]
    assert re.search(r"\b1 failed, \d+ passed", out.strip().splitlines()[-1]), out[-3000:]


def test_without_pytest_the_selftest_says_how_to_get_it(wheel_env: WheelEnv) -> None:
    bare = without_packages(wheel_env, ("pytest", "_pytest"), "no-pytest")
    environ, cwd = user_env(bare, "selftest")
    proc = subprocess.run(
        [str(bare.python), "-m", "odu", "selftest"], env=environ, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "odu-bench selftest: error: the self-test runs on pytest, which is not installed: "
        "pip install 'pytest>=8' (or install odu-bench with its [selftest] extra)"
    )
