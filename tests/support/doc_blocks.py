"""The code blocks of a documentation page as a reader meets them (``tests/project/test_docs_run.py``):
its fenced shell (``bash``, ``sh``, ``shell``) and ``python`` blocks in page order, each with the line
of its fence and, when the page says it cannot run here, the reason of its marker: an HTML comment
``<!-- not run: REASON -->`` among the comment lines right above the fence. A shell block's
``pip install`` of odu-bench (``-e .``, ``-e ".[test]"``, the wheel's file) becomes the install of
the wheel built from this tree, with the extras named, offline."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

#: The languages of the blocks a reader runs: a shell's and Python's (``console`` blocks are
#: transcripts, command and output, checked by their own tests; ``text`` and the rest are not code).
RUN_LANGUAGES = {"bash": "shell", "sh": "shell", "shell": "shell", "python": "python"}
FENCE = re.compile(r"^```(\w*)\s*$")
COMMENT = re.compile(r"^<!--.*-->\s*$")
NOT_RUN = re.compile(r"^<!-- not run: (.*?)\s*-->\s*$")
#: ``pip install`` of odu-bench as the docs write it: a checkout (``.``, editable or not) or the
#: wheel's file, its extras in brackets, quoted or not.
ODU_INSTALL = re.compile(
    r"""\bpip install +(?:-e +)?(["']?)(?:\.|odu_bench-[\w.+-]+\.whl)(\[[\w,-]+\])?\1(?=[\s;&|)]|$)"""
)
OTHER_INSTALL = re.compile(r"\bpip3? install\b")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, the line of its opening fence (1-based), its language
    (a key of :data:`RUN_LANGUAGES`), its text, and its ``not run`` reason (None: it runs)."""

    page: Path
    line: int
    language: str
    text: str
    not_run: str | None

    @property
    def kind(self) -> str:
        return RUN_LANGUAGES[self.language]

    def where(self, root: Path) -> str:
        return f"{self.page.relative_to(root)}:{self.line}"


def page_blocks(page: Path) -> list[Block]:
    """The runnable-language blocks of ``page`` in order; :class:`ValueError` for a ``not run``
    marker without a reason or above no fence of a runnable language, or a fence left open."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, at = [], 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if opening is None:
            if NOT_RUN.match(lines[at]) and not _above_fence(lines, at):
                raise ValueError(f"{page.name}:{at + 1}: a not-run marker above no code block")
            at += 1
            continue
        end = next((i for i in range(at + 1, len(lines)) if lines[i].strip() == "```"), None)
        if end is None:
            raise ValueError(f"{page.name}:{at + 1}: a code block that is never closed")
        language = opening.group(1)
        reason = _marker(lines, at)
        if reason is not None and language not in RUN_LANGUAGES:
            raise ValueError(f"{page.name}:{at + 1}: a not-run marker above a {language or 'plain'} block")
        if reason == "":
            raise ValueError(f"{page.name}:{at + 1}: a not-run marker gives no reason")
        if language in RUN_LANGUAGES:
            blocks.append(Block(page, at + 1, language, "\n".join(lines[at + 1 : end]) + "\n", reason))
        at = end + 1
    return blocks


def _marker(lines: list[str], fence: int) -> str | None:
    """The reason of the ``not run`` marker among the comment lines right above line ``fence``."""
    at = fence - 1
    while at >= 0 and COMMENT.match(lines[at]):
        if found := NOT_RUN.match(lines[at]):
            return found.group(1)
        at -= 1
    return None


def _above_fence(lines: list[str], at: int) -> bool:
    """Whether only comment lines lie between line ``at`` and the next fence."""
    nxt = at + 1
    while nxt < len(lines) and COMMENT.match(lines[nxt]):
        nxt += 1
    return nxt < len(lines) and FENCE.match(lines[nxt]) is not None


def with_wheel_installs(script: str, pip: list[str], wheel: Path) -> str:
    """``script`` (a shell block) with each ``pip install`` of odu-bench replaced by ``pip`` (the
    command that installs into the reader's environment) installing ``wheel`` with the extras named,
    offline; :class:`ValueError` for any other ``pip install``, which would reach a package index."""

    def install(found: re.Match[str]) -> str:
        return shlex.join([*pip, "install", "-q", "--no-index", f"{wheel}{found.group(2) or ''}"])

    mapped = ODU_INSTALL.sub(install, script)
    if OTHER_INSTALL.search(ODU_INSTALL.sub("", script)):
        raise ValueError("a pip install of something other than odu-bench: it reaches a package index")
    return mapped
