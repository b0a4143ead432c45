"""The paper's text and Table 3 as the tests read them: copies inside the repository
(``tests/fixtures/paper/``), so the checks run in a fresh clone; ``tests/project/test_paper_copy.py``
holds them equal to the paper beside the checkout (``../shared/paper``) where that is present."""

from __future__ import annotations

import csv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The copies: Table 3 verbatim, and whole paragraphs (lines) of the paper's clean text.
COPY = REPO / "tests" / "fixtures" / "paper"
TABLE3 = COPY / "table3.csv"
EXCERPTS = COPY / "excerpts.txt"
#: The paper beside the checkout (``../shared`` relative to the repository), when present.
SHARED = REPO.parent / "shared" / "paper"
SHARED_TEXT = SHARED / "odu-bench-paper.clean.txt"


def paper_lines() -> list[str]:
    """The copied paragraphs of the paper, one per line."""
    return EXCERPTS.read_text(encoding="utf-8").splitlines()


def paper_line(prefix: str) -> str:
    """The copied paragraph starting with ``prefix``."""
    return next(line for line in paper_lines() if line.startswith(prefix))


def paper_passage(words: str) -> str:
    """The copied paragraph containing ``words``."""
    return next(line for line in paper_lines() if words in line)


def table3_rows() -> list[dict[str, str]]:
    """Table 3 (``table3.csv``): one dict per system row, as printed (percent, one decimal)."""
    with TABLE3.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))
