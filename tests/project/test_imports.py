"""The house's rules, checked from the source: no import circle among the project's own modules
(the doors included), and each wing imports only what docs/architecture.md's wing table allows.

Run alone: ``pytest tests/project/test_imports.py``. A failure names the modules of the circle, or
the arrow and the two wings it joins."""

from __future__ import annotations

from pathlib import Path

from support.imports import (
    DOORS,
    REPO,
    circles,
    drawing,
    import_graph,
    project_modules,
    wing_breaches,
    wing_of,
    wing_rules,
)


def test_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles (each line: the modules of one):\n" + "\n".join(" ".join(c) for c in found)


def test_each_wing_imports_only_what_the_architecture_page_allows() -> None:
    breaches = wing_breaches(import_graph(), wing_rules())
    assert not breaches, "arrows the wing table of docs/architecture.md does not allow:\n" + "\n".join(breaches)


def test_the_wing_table_names_every_wing_and_nothing_else() -> None:
    rules = wing_rules()
    wings = {wing_of(m) for m in project_modules()}
    assert set(rules) == wings
    assert all(target in wings for allowed in rules.values() for target in allowed)


def test_the_graph_sees_lazy_imports_and_the_doors() -> None:
    graph = import_graph()
    assert "odu.harness.folders" in graph["odu_lm_eval_bridge"]  # imported inside a hook function
    assert "odu.runs.scoring" in graph["odu"]  # under TYPE_CHECKING
    assert {"odu_bench", "odu_metric.odu_metric", "lm_eval_tasks.odu.utils"} <= set(graph)
    assert all((REPO / door).exists() for door in DOORS)


def test_a_circle_and_a_breach_are_found(tmp_path: Path, monkeypatch) -> None:
    """The checks can fail: a planted circle through a lazy import, and an arrow up a layer."""
    package = tmp_path / "odu"
    (package / "core").mkdir(parents=True)
    (package / "io").mkdir()
    (package / "__init__.py").write_text("")
    (package / "core" / "__init__.py").write_text("")
    (package / "io" / "__init__.py").write_text("")
    (package / "core" / "a.py").write_text("from . import b\n")
    (package / "core" / "b.py").write_text("def f():\n    from .a import x\n")
    (package / "io" / "c.py").write_text("from ..core.a import x\n")
    graph = import_graph(tmp_path)
    assert circles(graph) == [["odu.core.a", "odu.core.b"]]
    monkeypatch.setattr("support.imports.REPO", tmp_path)
    assert wing_breaches(graph, {"odu/core/": {"odu/io/"}, "odu/io/": set()}) == [
        "odu.io.c -> odu.core.a (odu/io/ -> odu/core/)"
    ]


def test_the_drawing_says_what_the_table_allows() -> None:
    """Every arrow the table allows runs down the drawing's rows, or is drawn within its row."""
    rows, arrows = drawing()
    rules = wing_rules()
    assert set(rows) == set(rules)
    sideways = [(a, b) for a, targets in rules.items() for b in targets if rows[b] <= rows[a] and (a, b) not in arrows]
    assert not sideways, f"allowed by the table but not drawn: {sideways}"
    assert all(b in rules[a] for a, b in arrows)
