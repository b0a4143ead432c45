"""scripts/mutation.py's faults (one TOML file per group in scripts/mutation/) still fit the code:
each fault's original text occurs exactly once in its file and the faulty file still parses, so
every fault is a real one-line change; a malformed fault file is refused, naming the file and the
fault. (The mutation run itself is slow and is not part of the suite: docs/performance.md.)"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("odu_mutation_script", ROOT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


MUTATION = _script()
GROUPS = MUTATION.read_groups(MUTATION.FAULTS_DIR, MUTATION.GROUPS)
FAULTS = [f for group in GROUPS.values() for f in group.faults]


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_fault_applies_once_and_parses(fault, tmp_path: Path) -> None:
    """Python faults parse; the viewer's JavaScript faults pass ``node --check`` where Node is installed."""
    source = (ROOT / fault.path).read_text(encoding="utf-8")
    assert source.count(fault.old) == 1, f"{fault.name}: original text not found exactly once in {fault.path}"
    assert fault.new != fault.old
    mutated = MUTATION.apply(source, fault)
    if fault.path.endswith(".py"):
        ast.parse(mutated)
    elif fault.path.endswith(".js") and shutil.which("node"):
        (tmp_path / "mutated.js").write_text(mutated, encoding="utf-8")
        subprocess.run(["node", "--check", str(tmp_path / "mutated.js")], check=True, capture_output=True)


def test_faults_are_named_once_and_grouped_with_existing_tests() -> None:
    names = [f.name for f in FAULTS]
    assert len(names) == len(set(names))
    assert list(GROUPS) == list(MUTATION.GROUPS)
    assert sorted(p.stem for p in MUTATION.FAULTS_DIR.glob("*.toml")) == sorted(MUTATION.GROUPS)
    for group in GROUPS.values():
        missing = [t for t in group.tests if not (ROOT / t).is_file()]
        assert not missing, f"group {group.name}: no such test file {missing}"


def test_apply_refuses_text_that_is_not_there_exactly_once() -> None:
    fault = MUTATION.Fault("x", "match", "odu/core/match.py", "a", "b")
    with pytest.raises(ValueError, match="found 2 times"):
        MUTATION.apply("a a", fault)
    with pytest.raises(ValueError, match="found 0 times"):
        MUTATION.apply("c", fault)
    assert MUTATION.apply("cac", fault) == "cbc"


GOOD_GROUP = """description = "one thing"
tests = ["tests/project/test_mutation_faults.py"]
"""


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            GOOD_GROUP + "[[fault]]\nname = 'x'\npath = 'odu/core/match.py'\nold = 'a'\n",
            "fault 'x': missing key(s) ['new']",
        ),
        (
            GOOD_GROUP + "tset = ['a']\n[[fault]]\nname = 'x'\npath = 'p'\nold = 'a'\nnew = 'b'\n",
            "unknown key(s) ['tset']",
        ),
        (
            GOOD_GROUP + "[[fault]]\nname = 'x'\ngroup = 'match'\npath = 'p'\nold = 'a'\nnew = 'b'\n",
            "fault 'x': unknown key(s) ['group']",
        ),
        (
            GOOD_GROUP + "[[fault]]\nname = 'x'\npath = 'p'\nold = 'a'\nnew = 'b'\n" * 2,
            "fault 'x': named twice in the file",
        ),
        (GOOD_GROUP.replace("one thing", "one\\nthing"), "description must be one line"),
        (GOOD_GROUP + "[[fault]]\nname = 'x'\npath = 'p'\nold = ''\nnew = 'b'\n", "fault 'x': empty: ['old']"),
        (GOOD_GROUP + "[[fault]]\nname = 'x'\npath = 'p'\nold = 'a'\nnew = 1\n", "fault 'x': not text: ['new']"),
        (GOOD_GROUP + "[[fault]\n", "Expected ']]' at the end of an array declaration (at line 3"),
    ],
    ids=[
        "missing-key",
        "unknown-group-key",
        "unknown-fault-key",
        "duplicate-name",
        "two-line-description",
        "empty-old",
        "number",
        "not-toml",
    ],
)
def test_a_malformed_fault_file_is_refused_naming_the_file_and_the_fault(text: str, said: str, tmp_path: Path) -> None:
    (tmp_path / "one.toml").write_text(text, encoding="utf-8")
    with pytest.raises(MUTATION.FaultFileError) as refused:
        MUTATION.read_groups(tmp_path, ("one",))
    assert str(refused.value).startswith(f"{tmp_path / 'one.toml'}: {said}")


def test_a_fault_named_in_two_groups_or_a_file_of_no_group_is_refused(tmp_path: Path) -> None:
    fault = "[[fault]]\nname = 'x'\npath = 'p'\nold = 'a'\nnew = ''\n"
    (tmp_path / "one.toml").write_text(GOOD_GROUP + fault, encoding="utf-8")
    (tmp_path / "two.toml").write_text(GOOD_GROUP + fault, encoding="utf-8")
    with pytest.raises(MUTATION.FaultFileError, match=r"two\.toml: fault 'x': named in one\.toml too$"):
        MUTATION.read_groups(tmp_path, ("one", "two"))
    with pytest.raises(MUTATION.FaultFileError, match=r"fault file\(s\) of no group in GROUPS: \['two\.toml'\]$"):
        MUTATION.read_groups(tmp_path, ("one",))
    (tmp_path / "one.toml").unlink()
    assert [f.new for f in MUTATION.read_groups(tmp_path, ("two",))["two"].faults] == [""]  # a fault may delete


def test_the_script_says_a_malformed_fault_file_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "match.toml").write_text(GOOD_GROUP + "[[fault]]\nname = 'x'\n", encoding="utf-8")
    monkeypatch.setattr(MUTATION, "FAULTS_DIR", tmp_path)
    monkeypatch.setattr(MUTATION, "GROUPS", ("match",))
    with pytest.raises(
        SystemExit, match=r"^mutation: .*match\.toml: fault 'x': missing key\(s\) \['path', 'old', 'new'\]$"
    ):
        MUTATION.main(["--list"])
