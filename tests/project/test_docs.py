"""The documentation says what the code does: README.md and docs/*.md, checked against the code.

- Every ``NAME = value`` quoted in ``docs/scoring.md`` (the open choices and the parsing limits) is
  the value of ``odu.core.constants.NAME``; a quote elsewhere in the docs is the value of ``NAME`` in
  the module of ``odu`` that defines it (settings live next to the code that uses them), and a
  constant the docs place in a module (```NAME``` or ```PREFIX_*``` "in ``odu/x.py``") is defined
  there.
- README.md stays one screen (at most 250 lines); every relative link resolves to a file, and every
  ``#anchor`` to a heading of it; every page of ``docs/`` is on README's map.
- Every command shown in a shell code block that starts with ``odu-bench`` parses with the real
  parser (``odu.cli.build_parser()``), and every ``benchmarks/*.py`` named exists.
- Every repository path (``odu/core/constants.py``, ``tests/scoring/test_match.py``) and module
  (``odu.data.media``, ``from odu.data.dataset import ...``) the docs name exists, found as files
  without importing anything: when a module moves, this names each page that still points at the
  old place.

Placeholders in commands (``MODEL``, ``PATH``, ``scenes.jsonl``, ``path/to/release``, ``runs/mymodel``,
``ORG/odu-bench``) are parsed as written: argparse checks option names, arity, choices and types
(``--judge-extra-body`` JSON, ``--model-args``, integers), and no option type of the CLI opens a
file, so a placeholder parses exactly as a real value would. To make sure of that, the commands
are parsed in an empty temporary working directory where none of the named paths exists. Inline
code such as ``odu-bench score --out`` names a command or an option in prose; there the
subcommand and every ``--option`` must exist.

Only ``odu.cli`` and ``odu.core.constants`` are imported by name; the module of any other quoted constant
is found in the source (``odu/**/*.py``), so moving modules does not touch this file.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import shlex
from pathlib import Path

import pytest
from support.docs import FENCE, readme_section, shell_blocks, shell_commands

import odu.core.constants
from odu.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SCORING = DOCS / "scoring.md"
README_MAX_LINES = 250

#: The documentation: the README, docs/, the lm-eval task and metric cards, and the dataset card
#: wherever it lives.
DOC_FILES = [
    README,
    *sorted(DOCS.glob("*.md")),
    ROOT / "lm_eval_tasks/odu/README.md",
    ROOT / "odu_metric/README.md",
    *sorted({*ROOT.glob("dataset_card.md"), *(ROOT / "odu").rglob("dataset_card.md")}),
]

#: Constants that docs/scoring.md must quote: the scorer's open choices and the parsing limits.
SCORING_CONSTANT = re.compile(r"^(TRANSCRIPT_|IOU_|CONTAINMENT_|CJK_|MAX_)[A-Z0-9_]+$")

QUOTE = re.compile(r"`([A-Z][A-Z0-9_]*) = ([^`]+)`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _prose(text: str) -> str:
    """The text without fenced code blocks."""
    return FENCE.sub("", text)


def _doc_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


# --- quoted constants ------------------------------------------------------------------------------


def quoted_constants(text: str) -> list[tuple[str, object]]:
    """Every ``NAME = value`` in inline code, the value read as a Python literal."""
    quotes = []
    for name, value in QUOTE.findall(_prose(text)):
        try:
            quotes.append((name, ast.literal_eval(value.strip())))
        except (ValueError, SyntaxError):
            pytest.fail(f"`{name} = {value}`: the value is not a Python literal")
    return quotes


def test_scoring_doc_quotes_the_constants_as_they_are() -> None:
    quotes = quoted_constants(_text(SCORING))
    wrong = [
        (name, value, getattr(odu.core.constants, name, "<not in odu.core.constants>"))
        for name, value in quotes
        if getattr(odu.core.constants, name, object()) != value
    ]
    assert not wrong, f"docs/scoring.md quotes (name, doc value, constant): {wrong}"
    quoted = {name for name, _ in quotes}
    required = {name for name in vars(odu.core.constants) if SCORING_CONSTANT.match(name)}
    assert required, "no open-choice constants found in odu.core.constants"
    assert required <= quoted, f"docs/scoring.md does not quote {sorted(required - quoted)}"


def constant_homes() -> dict[str, list[str]]:
    """Upper-case names assigned at the top level of each module of ``odu`` -> those modules
    (dotted), read from the source without importing it (re-exports are imports, not homes)."""
    homes: dict[str, list[str]] = {}
    for path in sorted((ROOT / "odu").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(_text(path)).body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for target in targets:
                if isinstance(target, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]*", target.id):
                    homes.setdefault(target.id, []).append(module)
    return homes


def test_constant_homes_are_found_in_the_source() -> None:
    homes = constant_homes()
    assert homes["MAX_SEGMENTS"] == ["odu.core.constants"] and homes["PROMPT_VERSION"] == ["odu.core.prompts"]
    assert homes["BOOTSTRAP_SEED"] == ["odu.report.bootstrap"]  # odu.report re-exports it: not a home


@pytest.mark.parametrize("doc", DOC_FILES, ids=_doc_id)
def test_constants_quoted_elsewhere_match(doc: Path) -> None:
    homes = constant_homes()
    wrong = []
    for name, value in quoted_constants(_text(doc)):
        if name not in homes:
            wrong.append((name, value, "<defined in no module of odu>"))
        for module in homes.get(name, []):
            if (actual := getattr(importlib.import_module(module), name)) != value:
                wrong.append((name, value, f"{module}.{name} = {actual!r}"))
    assert not wrong, f"{_doc_id(doc)} quotes (name, doc value, constant): {wrong}"


#: ```NAME``` / ```NAME = value``` / ```PREFIX_*```, then (within a clause) "in ``odu/x.py``".
PLACED = re.compile(r"`([A-Z][A-Z0-9_]*)(\*?)(?: = [^`]+)?`[^`]{0,60}?\bin `(odu/[\w/]+\.py)`")


def misplaced_constants(text: str, homes: dict[str, list[str]]) -> list[str]:
    """The constants ``text`` places in a module that does not define them."""
    wrong = []
    for name, star, path in PLACED.findall(_prose(text)):
        module = path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        if not any(module in where for n, where in homes.items() if (n.startswith(name) if star else n == name)):
            wrong.append(f"`{name}{star}` in `{path}`")
    return wrong


def test_a_stale_placement_is_found() -> None:
    homes = constant_homes()
    text = "Defaults are the `JUDGE_*` constants in `odu/core/constants.py`; `MAX_SEGMENTS = 32` (in `odu/core/constants.py`)."
    assert misplaced_constants(text, homes) == ["`JUDGE_*` in `odu/core/constants.py`"]
    assert misplaced_constants("the `JUDGE_*` constants in `odu/judge/openai_judge.py`", homes) == []


@pytest.mark.parametrize("doc", DOC_FILES, ids=_doc_id)
def test_constants_are_where_the_docs_place_them(doc: Path) -> None:
    wrong = misplaced_constants(_text(doc), constant_homes())
    assert not wrong, f"{_doc_id(doc)} places constants where they are not defined: {wrong}"


# --- README size and links -------------------------------------------------------------------------


def test_readme_is_one_screen() -> None:
    lines = len(_text(README).splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES}); move detail to docs/"


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, spaces -> -)."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for _, title in HEADING.findall(_prose(text)):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_heading_anchors_follow_github() -> None:
    assert heading_anchors("## Parsing rules (model output → prediction)\n## `odu-bench score`\n## A\n## A\n") == {
        "parsing-rules-model-output--prediction",
        "odu-bench-score",
        "a",
        "a-1",
    }


@pytest.mark.parametrize("doc", DOC_FILES, ids=_doc_id)
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in LINK.findall(_prose(re.sub(r"`[^`\n]*`", "", _text(doc)))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.is_file() or ROOT not in file.parents:
            broken.append(f"{target} (no such file in the repository)")
        elif anchor and file.suffix == ".md" and anchor not in heading_anchors(_text(file)):
            broken.append(f"{target} (no heading #{anchor} in {file.name})")
    assert not broken, f"{_doc_id(doc)}: {broken}"


def test_readme_maps_every_page_of_docs() -> None:
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in LINK.findall(_text(README))}
    pages = sorted(DOCS.glob("*.md"))
    assert pages, "docs/ holds no page"
    missing = [_doc_id(page) for page in pages if page.resolve() not in linked]
    assert not missing, f"README.md's map does not link {missing}"


# --- commands --------------------------------------------------------------------------------------


def test_shell_commands_are_split_like_a_shell() -> None:
    block = (
        "```bash\npip install -e . && odu-bench eval --sample   # the sample\n"
        "odu-bench score --out x \\\n    --judge-extra-body '{\"a\": [1, 2]}'\n```\n"
    )
    assert shell_commands(block) == [
        ["pip", "install", "-e", "."],
        ["odu-bench", "eval", "--sample"],
        ["odu-bench", "score", "--out", "x", "--judge-extra-body", '{"a": [1, 2]}'],
    ]


def _odu_commands(commands: list[list[str]]) -> list[list[str]]:
    return [command for command in commands if command[0] == "odu-bench"]


def _parse(argv: list[str]) -> str | None:
    """``None`` if ``odu-bench argv`` parses, else argparse's message."""
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        return f"exit {exc.code}"
    return None


@pytest.mark.parametrize("doc", DOC_FILES, ids=_doc_id)
def test_commands_shown_parse(
    doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # none of the paths the commands name exists here
    failed = []
    for command in _odu_commands(shell_commands(_text(doc))):
        if (error := _parse(command[1:])) is not None:
            failed.append(f"{shlex.join(command)}: {error}: {capsys.readouterr().err.strip()}")
    assert not failed, f"{_doc_id(doc)}: " + "\n".join(failed)


def test_the_commands_checked_are_many_and_cover_every_subcommand() -> None:
    commands = [c for doc in DOC_FILES for c in _odu_commands(shell_commands(_text(doc)))]
    assert len(commands) >= 10
    assert {c[1] for c in commands} >= set(_subcommands(build_parser()))


def test_a_wrong_command_does_not_parse(capsys: pytest.CaptureFixture[str]) -> None:
    assert _parse(["score", "--scenes", "s.jsonl", "--predictions", "p.jsonl", "--out", "o"]) is None
    assert _parse(["score", "--scenes", "s.jsonl", "--out", "o"]) is not None  # --predictions missing
    assert (
        _parse(["score", "--scenes", "s", "--predictions", "p", "--out", "o", "--judge-extra-body", "{x"]) is not None
    )
    assert _parse(["eval", "--sample", "--annotation-language", "fr"]) is not None


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


@pytest.mark.parametrize("doc", DOC_FILES, ids=_doc_id)
def test_commands_named_in_prose_exist(doc: Path) -> None:
    subcommands = _subcommands(build_parser())
    wrong = []
    for span in re.findall(r"`(odu-bench [^`\n]+)`", _prose(_text(doc))):
        words = shlex.split(span)
        parser = subcommands.get(words[1])
        if parser is None:
            wrong.append(f"{span}: no subcommand {words[1]!r}")
            continue
        if words[1] == "lm-eval":  # every argument is lm-eval's
            continue
        options = set(parser._option_string_actions)
        ours = words[2 : words.index("--")] if "--" in words else words[2:]  # after --: another program's
        wrong += [f"{span}: no option {w}" for w in ours if w.startswith("--") and w.split("=")[0] not in options]
    assert not wrong, f"{_doc_id(doc)}: {wrong}"


def test_setup_commands_are_the_ones_ci_runs() -> None:
    """README's test command (the second set-up command) is what `.ci/run` runs."""
    blocks = shell_blocks(readme_section(_text(README), "## Set-up"))
    assert len(blocks) == 2, "README's set-up section shows two commands"
    assert blocks[1] in _text(ROOT / ".ci/run").splitlines()


@pytest.mark.parametrize("doc", DOC_FILES, ids=_doc_id)
def test_benchmark_scripts_named_exist(doc: Path) -> None:
    names = set(re.findall(r"\bbenchmarks/[\w./-]+\.py\b", _text(doc)))
    names |= {f"benchmarks/{n}" for n in re.findall(r"`(bench_\w+\.py)`", _text(doc))}
    missing = sorted(name for name in names if not (ROOT / name).is_file())
    assert not missing, f"{_doc_id(doc)} names {missing}"


def test_performance_figures_name_their_scripts() -> None:
    """Each measured section of docs/performance.md names the script that produced its figures
    (a benchmark, or scripts/mutation.py for the mutation check)."""
    text = _text(DOCS / "performance.md")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert sections
    unnamed = [
        s.splitlines()[0] for s in sections if not re.search(r"(?:benchmarks/bench_\w+|scripts/mutation)\.py", s)
    ]
    assert not unnamed, f"sections without their benchmark script: {unnamed}"


# --- paths and modules named -----------------------------------------------------------------------

REPO_PATH = re.compile(r"^(?:odu|odu_metric|lm_eval_tasks|tests|benchmarks|docs)/[\w./-]*$")
MODULE = re.compile(r"\bodu(?:\.[A-Za-z_]\w*)+")


def module_exists(dotted: str) -> bool:
    """Whether ``odu.x[.y...]`` names a module of the repository: ``odu.x`` must be a module or
    package; below a package, a name that is no module may be an attribute (``odu.judge.make_judge``)."""
    parts = dotted.split(".")
    here = ROOT / parts[0]
    for depth, part in enumerate(parts[1:], start=1):
        if (here / f"{part}.py").is_file():
            return True  # the rest are attributes of that module
        if (here / part / "__init__.py").is_file():
            here = here / part
            continue
        return depth > 1
    return True


def test_module_exists_looks_at_files() -> None:
    assert module_exists("odu.core.constants.MAX_SEGMENTS") and module_exists("odu.cli")
    assert module_exists("odu.cli.build_parser")  # an attribute of a package
    assert not module_exists("odu.no_such_module")


def named_paths_and_modules(text: str) -> tuple[set[str], set[str]]:
    """Repository paths in inline code, and ``odu.*`` modules in inline code and Python imports."""
    spans = re.findall(r"`([^`\n]+)`", _prose(text))
    paths = {span for span in spans if REPO_PATH.match(span)}
    code = " ".join(spans) + " ".join(body for language, body in FENCE.findall(text) if language.strip() == "python")
    modules = {m for m in MODULE.findall(code) if not re.match(r"odu\.(add_batch|compute)\b", m)}
    return paths, modules


@pytest.mark.parametrize("doc", DOC_FILES, ids=_doc_id)
def test_paths_and_modules_named_exist(doc: Path) -> None:
    paths, modules = named_paths_and_modules(_text(doc))
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    missing += sorted(m for m in modules if not module_exists(m))
    assert not missing, f"{_doc_id(doc)} names what is not in the repository: {missing}"


# --- sections and pages named in prose, code and --help -----------------------------------------------

#: ``README "Set-up"``, ``docs/judges.md, "What comparability ..."``, ``docs/harness.md#dry-run``: a
#: page, optionally a section (its heading starts with the quoted words) or an anchor.
SECTION_REF = re.compile(r"""\b(README|docs/[\w-]+\.md)(?:#([\w-]+)|,? ["“']([^"”'\n]{3,80})["”'])?""")


def section_refs(text: str) -> list[tuple[str, str, str]]:
    """(page, anchor, quoted section) of every reference to a page of the docs in ``text``."""
    return SECTION_REF.findall(text)


def test_section_refs_are_read_like_a_reader_would() -> None:
    text = 'see README "Set-up" and docs/judges.md, "Cache", or docs/harness.md#dry-run; docs/x.md alone'
    assert section_refs(text) == [
        ("README", "", "Set-up"),
        ("docs/judges.md", "", "Cache"),
        ("docs/harness.md", "dry-run", ""),
        ("docs/x.md", "", ""),
    ]


def broken_refs(text: str) -> list[str]:
    """The references of ``text`` to a page, section or anchor that does not exist."""
    broken = []
    for page, anchor, section in section_refs(text):
        path = README if page == "README" else ROOT / page
        if not path.is_file():
            broken.append(f"{page}: no such page")
            continue
        headings = [title.strip("`") for _, title in HEADING.findall(_prose(_text(path)))]
        if section and not any(h.replace("`", "").startswith(section.replace("`", "")) for h in headings):
            broken.append(f'{page}, "{section}": no such section')
        if anchor and anchor not in heading_anchors(_text(path)):
            broken.append(f"{page}#{anchor}: no such heading")
    return broken


def _help_texts() -> dict[str, str]:
    parser = build_parser()
    texts = {"odu-bench --help": parser.format_help()}
    for name, sub in _subcommands(parser).items():
        texts[f"odu-bench {name} --help"] = sub.format_help()
    return texts


def test_help_texts_name_pages_and_sections_that_exist() -> None:
    """Issue 21: ``eval --help`` pointed to a README section that no longer existed."""
    texts = _help_texts()
    assert any(section_refs(t) for t in texts.values())  # the check has something to check
    wrong = {where: b for where, text in texts.items() if (b := broken_refs(text))}
    assert not wrong, wrong


SOURCES = sorted(
    p
    for folder in ("odu", "tests", "odu_metric", "lm_eval_tasks", "benchmarks", "scripts")
    for p in (ROOT / folder).rglob("*")
    if p.suffix in (".py", ".md", ".yaml", ".js", ".sh", ".toml") and "fixtures" not in p.parts and p.is_file()
    if p != Path(__file__).resolve()  # this file's examples name pages that do not exist, on purpose
)


@pytest.mark.parametrize("doc", [*DOC_FILES, *SOURCES], ids=_doc_id)
def test_pages_and_sections_named_exist(doc: Path) -> None:
    """Every ``README "Section"``, ``docs/page.md, "Section"`` or ``docs/page.md#anchor`` in the docs,
    the code (messages, docstrings, comments) and the tests names a page and section that exist."""
    assert not broken_refs(_text(doc)), f"{_doc_id(doc)}: {broken_refs(_text(doc))}"
