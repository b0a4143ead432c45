"""The report's scene bootstrap uses the paper's settings by default (App E.1: "For each of
10 000 resamples ..."; 95% percentile intervals), and ``odu-bench report`` records them."""

from __future__ import annotations

from odu.cli import build_parser
from odu.report.bootstrap import BOOTSTRAP_PERCENTILES, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED


def test_the_papers_resamples_and_percentiles() -> None:
    assert BOOTSTRAP_RESAMPLES == 10_000
    assert BOOTSTRAP_PERCENTILES == (2.5, 97.5)


def test_odu_bench_report_defaults_to_them() -> None:
    args = build_parser().parse_args(["report", "run"])
    assert (args.resamples, args.seed) == (10_000, BOOTSTRAP_SEED)
