"""scripts/mutation.py's list of faults still fits the code: each fault's original text occurs
exactly once in its file and the faulty file still parses, so every fault is a real one-line
change. (The mutation run itself is slow and is not part of the suite: docs/performance.md.)"""

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


@pytest.mark.parametrize("fault", MUTATION.FAULTS, ids=lambda f: f.name)
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
    names = [f.name for f in MUTATION.FAULTS]
    assert len(names) == len(set(names))
    assert {f.group for f in MUTATION.FAULTS} == set(MUTATION.GROUP_TESTS)
    for group, tests in MUTATION.GROUP_TESTS.items():
        missing = [t for t in tests if not (ROOT / t).is_file()]
        assert not missing, f"group {group}: no such test file {missing}"


def test_apply_refuses_text_that_is_not_there_exactly_once() -> None:
    fault = MUTATION.Fault("x", "match", "odu/core/match.py", "a", "b")
    with pytest.raises(ValueError, match="found 2 times"):
        MUTATION.apply("a a", fault)
    with pytest.raises(ValueError, match="found 0 times"):
        MUTATION.apply("c", fault)
    assert MUTATION.apply("cac", fault) == "cbc"
