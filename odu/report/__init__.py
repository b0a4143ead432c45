"""The paper's analyses over scored runs (``odu-bench report``; App E.1, E.3, §5.4, §5.5).

Input: one or more ``odu-bench score`` output directories (summary.json + scenes.jsonl), one per
system. Output: headline metrics with scene-bootstrap 95% intervals in the Table 3 layout,
generated vs human-recorded deltas (Table 4), key-point coverage by evidence channel with the
request-minus-context gap and its interval (Table 6), M2 challenge profiles (Figs. 9/10) and
false-trigger patterns (Fig. 5), and paired comparisons between systems on the same scenes
(bootstrap interval of each difference, permutation p-value) — as ``report.json``,
``report.md``, CSV tables and heatmap PNGs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.caveats import SMALL_SAMPLE_SCENES
from ..core.constants import MODALITIES
from ..core.tables import table3_caveat
from ..io.jsonio import encode, write_json
from ..runs.outdir import ManifestKind, writing
from .bootstrap import BOOTSTRAP_PERCENTILES, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from .channels import channel_report
from .headline import headline, source_deltas
from .paired import paired_comparisons
from .plots import matplotlib_available, write_plots
from .render import markdown, write_csvs
from .runs import System, load_systems, unhashed
from .taxonomy import ftr_profile, m2_profile

REPORT_JSON = "report.json"
REPORT_MD = "report.md"
#: What the report writes: an existing ``--out`` holding anything else is never replaced (:mod:`odu.runs.outdir`).
REPORT = ManifestKind("an odu-bench report")


def build_report(
    systems: Sequence[System],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    cluster_by: str | None = None,
) -> dict[str, Any]:
    """Every analysis of the report, as one JSON-ready dict (fractions, ``None`` = undefined);
    ``cluster_by`` clusters the paired comparisons' draws by that scene attribute."""
    if not systems:
        raise ValueError("a report needs at least one scored run")
    present = [m for m in MODALITIES if any(s.rows_of(m) for s in systems)]
    return {
        "settings": {
            "resamples": resamples,
            "seed": seed,
            "percentiles": list(BOOTSTRAP_PERCENTILES),
            "small_sample_scenes": SMALL_SAMPLE_SCENES,
        },
        "systems": [
            {
                "name": s.name,
                "approximate": s.approximate,
                "judge": dict(s.summary.get("judge", {})),
                "n_scenes": len(s.rows),
                "annotation_language": s.summary.get("annotation_language"),
                "incomplete": s.incomplete,
                "caveats": s.caveats,
            }
            for s in systems
        ],
        "notes": comparability_notes(systems),
        "table3_caveat": table3_caveat([s.summary for s in systems]),
        "headline": headline(systems, resamples, seed),
        "paired": paired_comparisons(systems, resamples, seed, cluster_by),
        "sources": source_deltas(systems),
        "channels": {m: channel_report(systems, m, resamples, seed) for m in present},
        "taxonomy": {
            "m2": {m: m2_profile(systems, m) for m in present},
            "ftr": {m: ftr_profile(systems, m) for m in present},
        },
    }


def comparability_notes(systems: Sequence[System]) -> list[str]:
    """Warnings about comparing these runs side by side (shown at the top of report.md)."""
    notes = []
    languages = {str(s.summary.get("annotation_language")) for s in systems}
    if len(languages) > 1:
        notes.append(
            f"runs were scored against different reference languages ({', '.join(sorted(languages))}): "
            "M2 and M4 are not comparable across them"
        )
    judges = {
        (j.get("name"), j.get("model"), j.get("prompt_version")) for j in (s.summary.get("judge", {}) for s in systems)
    }
    if len(judges) > 1:
        notes.append("runs were judged by different judges: M2 differences mix model and judge (App E.2)")
    if len(systems) > 1 and (older := unhashed(systems)):
        notes.append(
            f"runs with scenes without content hashes ({', '.join(older)}: written before they were recorded, or "
            "null): those scenes are paired by id, modality and label only, not checked to be the same content"
        )
    approximate = [s.name for s in systems if s.approximate]
    if approximate:
        notes.append(f"approximate judge ({', '.join(approximate)}): M2 and Avg are not comparable with the paper")
    for key, what in (
        ("judge_errors", "judge errors remain (segments left out of M2; rerun the judge)"),
        ("inference_errors", "inference errors (scenes scored as no output; rerun the model)"),
    ):
        counts = [f"{s.name}: {s.summary[key]}" for s in systems if s.summary.get(key)]
        if counts:
            notes.append(f"{what}: {', '.join(counts)}")
    return notes + [f"{s.name}: {c['text']}" for s in systems for c in s.caveats]


def write_report(
    report: dict[str, Any], out_dir: str | Path, plots: bool = True, inputs: Sequence[str | Path | None] = ()
) -> tuple[list[Path], str | None]:
    """Write JSON, Markdown, CSVs and (if matplotlib is installed) PNGs into ``out_dir``, as one
    folder: replaced only once complete, and only when it holds an earlier report (:data:`REPORT`);
    ``inputs`` (the runs read) may not be, hold or lie inside it.

    Returns the written paths and a note when plots were skipped.
    """
    out = Path(out_dir)
    note = None
    with writing(out, REPORT, inputs=inputs) as work:
        write_json(work / REPORT_JSON, report)  # odu.io.jsonio: any text, no NaN
        (work / REPORT_MD).write_bytes(encode(markdown(report)))
        written = [work / REPORT_JSON, work / REPORT_MD, *write_csvs(report, work)]
        if plots and not matplotlib_available():
            from ..io.extras import install_hint

            note = f"matplotlib is not installed: heatmap PNGs skipped ({install_hint('report')})"
        elif plots:
            written += write_plots(report, work)
    return [out / p.relative_to(work) for p in written], note


__all__ = ["REPORT", "REPORT_JSON", "REPORT_MD", "System", "build_report", "load_systems", "write_report"]
