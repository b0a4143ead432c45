"""Where each dependency may be imported (docs/architecture.md): the layout's rules, checked on the
source of every module of ``odu`` (function-level imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "odu"
#: The scoring core: schema -> parse -> match -> judge -> metrics -> run contract.
CORE = ("constants", "schema", "text", "parse", "match", "metrics", "scoring", "run", "prompts", "tables", "judge")


def imports(path: Path) -> set[str]:
    """Top-level package names ``path`` imports (``odu`` for its own relative imports)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("odu" if node.level else (node.module or "").split(".")[0])
    return found


def modules() -> dict[str, set[str]]:
    return {p.relative_to(ROOT).as_posix(): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def importers(package: str) -> list[str]:
    return [name for name, found in modules().items() if package in found]


def test_the_openai_sdk_is_imported_by_the_one_client_only() -> None:
    assert importers("openai") == ["odu/openai_client.py"]


def test_lm_eval_is_imported_only_by_the_harness_wing_and_the_cli() -> None:
    assert importers("lm_eval") and all(m.startswith(("odu/harness/", "odu/cli/")) for m in importers("lm_eval"))


@pytest.mark.parametrize("package", ["datasets", "lm_eval", "evaluate", "openai", "torch"])
def test_the_scoring_core_imports_no_heavy_dependency(package: str) -> None:
    core = [m for m in importers(package) if m.removeprefix("odu/").split("/")[0].removesuffix(".py") in CORE]
    assert core == []


def test_no_door_imports_another_door() -> None:
    doors = {
        "odu_bench.py": "odu_bench",
        "odu_metric/odu_metric.py": "odu_metric",
        "lm_eval_tasks/odu/utils.py": "utils",
    }
    for path, _ in doors.items():
        found = imports(ROOT / path)
        assert not found & {name for other, name in doors.items() if other != path}, path
    assert not any(importers(name) for name in ("odu_bench", "odu_metric"))
