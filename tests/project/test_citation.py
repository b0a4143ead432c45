"""One citation: CITATION.cff and odu.core.citation.BIBTEX agree, and every door and card quotes BIBTEX."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from odu.core.citation import BIBTEX, PAPER_URL
from odu.data.prepare import card_body

ROOT = Path(__file__).resolve().parents[2]


def bibtex_fields(entry: str) -> dict[str, str]:
    """``{field: value}`` of a BibTeX entry, values with their line breaks folded."""
    return {k: " ".join(v.split()) for k, v in re.findall(r"(\w+)\s*=\s*\{(.*?)\}(?:,|\s*\n\})", entry, re.DOTALL)}


def test_citation_cff_and_the_bibtex_agree() -> None:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    paper = cff["preferred-citation"]
    fields = bibtex_fields(BIBTEX)
    assert BIBTEX.startswith(f"@{paper['type']}{{chen2026odubench,")
    assert fields["title"] == paper["title"]
    assert fields["author"] == " and ".join(f"{a['family-names']}, {a['given-names']}" for a in paper["authors"])
    assert fields["journal"] == paper["journal"] and fields["year"] == str(paper["year"])
    assert paper["url"] == PAPER_URL and PAPER_URL.rsplit("/", 1)[1] in fields["journal"]


def test_every_card_quotes_the_one_bibtex() -> None:
    tracked = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    blocks = {
        path: re.findall(r"```bibtex\n(.*?)```", (ROOT / path).read_text(encoding="utf-8"), re.DOTALL)
        for path in tracked.split()
        if (ROOT / path).is_file()
    }
    quoted = {path: found for path, found in blocks.items() if found}
    assert {"odu_metric/README.md", "lm_eval_tasks/odu/README.md"} <= set(quoted)
    assert all(block == BIBTEX for found in quoted.values() for block in found), quoted
    assert f"```bibtex\n{BIBTEX}```" in card_body()


def test_the_doors_cite_the_one_bibtex() -> None:
    for door in ("odu_bench.py", "odu_metric/odu_metric.py"):
        text = (ROOT / door).read_text(encoding="utf-8")
        assert "citation=BIBTEX" in text and "@article" not in text and "@misc" not in text, door
