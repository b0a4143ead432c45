"""Where each dependency may be imported (docs/architecture.md): the layout's rules, checked on the
source of every module of ``odu`` (function-level imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "odu"
#: The scoring core, by wing: the paper (schema -> parse -> match -> metrics), the judges, the run
#: contract (scoring, files) and the safe-file layer under them.
CORE = ("core", "judge", "runs", "io")


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
    assert importers("openai") == ["odu/transport/openai_client.py"]


def test_lm_eval_is_imported_only_by_the_harness_wing_and_the_cli() -> None:
    assert importers("lm_eval") and all(m.startswith(("odu/harness/", "odu/cli/")) for m in importers("lm_eval"))


@pytest.mark.parametrize("package", ["datasets", "lm_eval", "evaluate", "openai", "torch"])
def test_the_scoring_core_imports_no_heavy_dependency(package: str) -> None:
    assert all((PACKAGE / wing / "__init__.py").is_file() for wing in CORE)  # a renamed wing fails here, not silently
    core = [m for m in importers(package) if m.removeprefix("odu/").split("/")[0] in CORE]
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _odu_imports(path: Path, known: set[str]) -> set[str]:
    """The ``odu`` modules ``path`` imports, function-level imports included, ``TYPE_CHECKING``
    blocks left out (they never run)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    class Imports(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                for child in node.orelse:
                    self.visit(child)
            else:
                self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.update([module, *(f"{module}.{alias.name}" for alias in node.names)])

    Imports().visit(ast.parse(path.read_text(encoding="utf-8")))
    resolved = set()
    for module in found:
        while module and module not in known:
            module = module.rpartition(".")[0]
        if module and module != name:
            resolved.add(module)
    return resolved


def import_cycles() -> list[list[str]]:
    """Groups of ``odu`` modules that import each other, directly or around a loop (Tarjan's
    strongly connected components of the import graph)."""
    paths = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph = {name: _odu_imports(path, set(paths)) for name, path in paths.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = [stack.pop()]
            while group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_no_import_cycle() -> None:
    """Issue 23: ``harness/tasks`` <-> ``harness/preflight`` <-> ``shards`` imported each other
    (inside functions); no group of modules may."""
    assert import_cycles() == []


def test_one_reader_of_a_servers_model_list() -> None:
    """Issue 23: the preflight and ``provider=auto`` read ``GET /models`` through one function
    (``OpenAIClient.fetch_models``), not two."""
    readers = [
        p.relative_to(ROOT).as_posix()
        for p in sorted(PACKAGE.rglob("*.py"))
        if ".models.list(" in p.read_text(encoding="utf-8")
    ]
    assert readers == ["odu/transport/openai_client.py"]


def test_one_url_scrubber() -> None:
    """Issue 23: ``openai_client.public_url`` and ``odu.io.scrub.scrub_url`` scrubbed URLs by two rules;
    only ``odu/io/scrub.py`` takes a URL's credentials apart now."""
    marks = ("def public_url", "def url_secrets", 'rpartition("@")', ".password")
    takers = [
        p.relative_to(ROOT).as_posix()
        for p in sorted(PACKAGE.rglob("*.py"))
        if any(mark in p.read_text(encoding="utf-8") for mark in marks)
    ]
    assert takers == ["odu/io/scrub.py"]
