"""The paper as the tests read it (``tests/fixtures/paper/``) is the paper: Table 3 byte for byte and
every copied paragraph a whole line of its clean text, checked against ``../shared/paper`` where the
paper sits beside the checkout (elsewhere the copy is all there is, and nothing is compared)."""

from __future__ import annotations

import pytest
from support.paper import EXCERPTS, SHARED, SHARED_TEXT, TABLE3, paper_lines, table3_rows

beside = pytest.mark.skipif(not SHARED.is_dir(), reason="no ../shared/paper beside the checkout to compare with")


def test_the_copy_is_in_the_repository() -> None:
    assert len(table3_rows()) == 15  # 14 native systems + the text-only baseline
    assert len(paper_lines()) >= 5 and all(paper_lines())


@beside
def test_table3_copy_equals_the_papers() -> None:
    assert TABLE3.read_bytes() == (SHARED / "table3.csv").read_bytes()


@beside
def test_every_copied_paragraph_is_a_line_of_the_paper() -> None:
    paper = set(SHARED_TEXT.read_text(encoding="utf-8").splitlines())
    missing = [line[:80] for line in paper_lines() if line not in paper]
    assert not missing, f"{EXCERPTS.name}: paragraphs not in {SHARED_TEXT}: {missing}"
