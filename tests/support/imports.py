"""The project's own import graph, read from the source (``ast``), never by importing it.

Every ``import`` and ``from ... import`` counts wherever it stands (module level, inside a function,
under ``TYPE_CHECKING``), and so does ``importlib.import_module("...")`` with a literal name: a lazy
import is still an arrow, and a circle through one breaks as soon as both sides run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: The doors outside the package, as files or folders of the repository.
DOORS = ("odu_bench.py", "odu_lm_eval_bridge.py", "odu_metric", "lm_eval_tasks", "lmms_eval_tasks")


def _is_test(path: Path) -> bool:
    return path.name == "conftest.py" or path.name.startswith("test_")


def project_modules(root: Path = REPO) -> dict[str, Path]:
    """Dotted module name -> file, for ``odu/`` and the doors (tests left out)."""
    files = [p for p in sorted((root / "odu").rglob("*.py")) if not _is_test(p)]
    for door in DOORS:
        path = root / door
        files += [p for p in sorted(path.rglob("*.py")) if not _is_test(p)] if path.is_dir() else [path]
    modules = {}
    for path in files:
        if not path.is_file():
            continue
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def _named(node: ast.AST, package: str) -> Iterable[str]:
    """The dotted names an import node may mean (a ``from X import y`` may import module ``X.y``)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join([*base, node.module] if node.module else base)
        else:
            target = node.module or ""
        yield target
        yield from (f"{target}.{alias.name}" for alias in node.names)
    elif (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and not node.args[0].value.startswith(".")
    ):
        yield node.args[0].value


def imports_of(name: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The project modules ``name`` (at ``path``) imports, each by its longest known prefix."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        for target in _named(node, package):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(root: Path = REPO) -> dict[str, set[str]]:
    modules = project_modules(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def wing_of(module: str) -> str:
    """The wing a module belongs to, spelled as a path: ``odu/core/``, ``odu_metric/``, ``odu_bench.py``;
    the package root's own files are ``odu/__init__.py`` and ``odu/__main__.py``."""
    parts = module.split(".")
    if parts[0] == "odu":
        if len(parts) == 1:
            return "odu/__init__.py"
        if (REPO / "odu" / parts[1]).is_dir():
            return f"odu/{parts[1]}/"
        return f"odu/{parts[1]}.py"
    return f"{parts[0]}/" if (REPO / parts[0]).is_dir() else f"{parts[0]}.py"


#: A row of the wing table in docs/architecture.md: | `wing` | what it holds | `may` `import` |
_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|[^|]*\|([^|]*)\|\s*$")


def wing_rules(page: Path = REPO / "docs" / "architecture.md") -> dict[str, set[str]]:
    """Each wing's allowed imports, read from the table under "## The wings" in the architecture page."""
    text = page.read_text(encoding="utf-8")
    section = text.split("## The wings", 1)[1].split("\n## ", 1)[0]
    rules = {}
    for line in section.splitlines():
        if match := _ROW.match(line):
            rules[match.group(1)] = set(re.findall(r"`([^`]+)`", match.group(2)))
    return rules


def wing_breaches(graph: Mapping[str, set[str]], rules: Mapping[str, set[str]]) -> list[str]:
    """Every arrow from one wing to another that the rules do not allow, as ``a -> b (wing -> wing)``;
    the package root (``odu/__init__.py``: ``__version__``) may be imported from anywhere."""
    breaches = []
    for module, targets in sorted(graph.items()):
        source = wing_of(module)
        for target in sorted(targets):
            wing = wing_of(target)
            if wing == source or wing == "odu/__init__.py":
                continue
            if source not in rules:
                breaches.append(f"{module}: its wing {source} is not in the table")
            elif wing not in rules[source]:
                breaches.append(f"{module} -> {target} ({source} -> {wing})")
    return breaches


#: A wing in the architecture page's drawing, and an arrow within a row (``a ──► b``, ``b ◄── a``).
_WING = re.compile(r"(?:odu/)?[\w.]+(?:/|\.py)")
_RIGHT, _LEFT = re.compile(r"(\S+) ──► (\S+)"), re.compile(r"(\S+) ◄── (\S+)")


def drawing(page: Path = REPO / "docs" / "architecture.md") -> tuple[dict[str, int], set[tuple[str, str]]]:
    """The drawing under "## The wings": each wing's row (0 at the top) and the arrows within a row."""
    section = page.read_text(encoding="utf-8").split("## The wings", 1)[1]
    block = section.split("```\n", 2)[1]
    rows: dict[str, int] = {}
    arrows: set[tuple[str, str]] = set()
    for number, line in enumerate(block.splitlines()):
        body = line[17:]  # after the row's label
        rows.update((wing, number) for wing in _WING.findall(body))
        arrows.update(_RIGHT.findall(body))
        arrows.update((a, b) for b, a in _LEFT.findall(body))
    return rows, arrows
