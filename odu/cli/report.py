"""``odu-bench report``: the paper's analyses over scored runs (docs/reports.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from ..core.constants import MODALITIES
from ..io.console import error_text, inert
from .common import add_bootstrap_options, add_run_dirs, check_resamples


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="channels, taxonomy, generated vs recorded, bootstrap CIs and tables over scored runs",
        description="Analyses of App E.1/E.3, §5.4/5.5 over `odu-bench score` output directories (one per system).",
    )
    add_run_dirs(p)
    p.add_argument("--out", default="odu-report", help="output directory (default: ./odu-report)")
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="report runs whose files disagree, whose judge errors remain or whose M2 is missing "
        "(default: refuse them); their rows are marked ‡ and have no Avg",
    )
    add_bootstrap_options(p)
    p.add_argument(
        "--cluster-by",
        metavar="ATTRIBUTE",
        help="resample and relabel scenes in clusters sharing this scenes.jsonl attribute in the paired "
        "comparisons (e.g. source, language, axes.axis1; default: each scene alone)",
    )
    p.add_argument("--no-plots", action="store_true", help="skip the heatmap PNGs")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..core.caveats import caveat_lines
    from ..core.tables import table3
    from ..report import REPORT, build_report, load_systems, write_report
    from ..report.render import marked_names, paired_line
    from ..runs.outdir import check_target

    try:
        check_resamples(args)
        systems = load_systems(args.run_dirs, args.names, args.allow_incomplete)
        check_target(args.out, REPORT, inputs=args.run_dirs)  # before the bootstrap's work
        report = build_report(systems, args.resamples, args.seed, args.cluster_by)
        written, note = write_report(report, args.out, plots=not args.no_plots, inputs=args.run_dirs)
    except (ValueError, OSError) as exc:
        print(f"odu-bench report: error: {error_text(exc)}", file=sys.stderr)
        return 2
    marked = marked_names(report)
    notes = []
    approximate = [s.name for s in systems if s.approximate]
    if approximate:
        notes.append(f"† approximate judge (not comparable with Table 3): {inert(', '.join(approximate))}")
    for s in systems:
        if s.incomplete:
            notes.append(f"‡ {inert(s.name)}: incomplete ({inert('; '.join(s.incomplete))}), no Avg shown")
    print(
        table3(
            {marked[s.name]: _without_avg(s.summary) if s.incomplete else s.summary for s in systems}, "\n".join(notes)
        )
    )
    if lines := caveat_lines({s.name: s.caveats for s in systems}):
        print("Caveats of these numbers:", *lines, sep="\n")
    print("\n".join(report["table3_caveat"]))
    for entry in report["paired"]["comparisons"]:
        print(inert(paired_line(entry)) + "".join(f"\n  warning: {inert(w)}" for w in entry["warnings"]))
    if note:
        print(note, file=sys.stderr)
    print(f"wrote {len(written)} files to {args.out}: " + ", ".join(p.name for p in written))
    return 0


def _without_avg(summary: Mapping[str, Any]) -> dict[str, Any]:
    """``summary`` with no Avg in any modality (an incomplete run's printed row)."""
    return {k: dict(v, avg=None) if k in MODALITIES and isinstance(v, Mapping) else v for k, v in summary.items()}
