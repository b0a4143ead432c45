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


def follow(env: WheelEnv, name: str, edit: tuple[str, str, str] | None = None) -> tuple[WheelEnv, Path, str]:
    """README's two commands in a fresh venv (``edit``: first replace, in the installed package's
    file, one text by another); the venv, the user's folder and the self-test's output."""
    install, selftest = wheel_commands()
    venv, installed = installed_by_pip(env, name, install[2])
    assert installed.returncode == 0, installed.stderr[-3000:]
    if edit:
        path, old, new = edit
        source = venv.site_packages / path
        assert source.read_text(encoding="utf-8").count(old) == 1
        source.write_text(source.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    environ, _ = user_env(venv, "selftest")
    environ["PATH"] = f"{venv.python.parent}{os.pathsep}{environ['PATH']}"
    folder = venv.home / "user"
    proc = subprocess.run(selftest, env=environ, cwd=folder, capture_output=True, text=True, timeout=900)
    return venv, folder, proc.stdout + proc.stderr if proc.returncode else proc.stdout


def test_the_readme_s_two_commands_install_the_wheel_and_every_shipped_test_passes(wheel_env: WheelEnv) -> None:
    venv, folder, out = follow(wheel_env, "wheel-route")
    assert f"odu-bench selftest: the tests in {venv.site_packages / 'odu' / 'selftest'}, offline," in out, out[-3000:]
    summary = out.strip().splitlines()[-1]
    assert re.fullmatch(rf"=*\s*{shipped_tests()} passed(, \d+ warnings?)? in [\d.]+s( \(.*\))?\s*=*", summary), out[
        -3000:
    ]
    assert sorted(p.name for p in folder.iterdir()) == [wheel_env.wheel.name]  # nothing written here


def test_a_wrong_number_in_the_installed_package_fails_the_selftest(wheel_env: WheelEnv) -> None:
    """Eq. 6 with M1 weighted 0.25 and M2 0.5 (App A.4: 0.15 and 0.60)."""
    edit = ("odu/constants.py", '"m1": 0.15, "m2": 0.60,', '"m1": 0.25, "m2": 0.5,')
    _, _, out = follow(wheel_env, "wheel-route-faulty", edit)
    assert "FAILED test_sample.py::test_eval_sample_scores_the_floors_as_app_a3_says" in out, out[-3000:]
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
