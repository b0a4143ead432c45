"""The report for people (Markdown) and for spreadsheets (CSV); JSON is written as built.

Tables show percentages and percentage points with one decimal; CSV and JSON keep fractions.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.caveats import CAVEAT_MARK
from ..core.constants import MODALITIES
from ..core.tables import TABLE3_COLUMNS, percent, render
from ..io.jsonio import SURROGATE_ERRORS
from .channels import channel_rows
from .taxonomy import profile_rows

_SHORT = {"audio-visual": "AV", "audio-only": "AO"}
_NAMES = {"avg": "Avg", "m1": "M1", "m2": "M2", "m3": "M3", "m4": "M4", "m5": "M5", "ftr": "FTR"}


def points(value: float | None) -> str:
    """A difference of fractions in signed percentage points, one decimal; "-" when undefined.

    >>> points(-0.0723), points(None), points(-1e-17)
    ('-7.2', '-', '+0.0')
    """
    return "-" if value is None else f"{unsigned_zero(100 * value):+.1f}"


def unsigned_zero(x: float, decimals: int = 1) -> float:
    """``x``, or 0.0 when it rounds to zero at ``decimals`` (no "-0.0" from float noise)."""
    return 0.0 if round(x, decimals) == 0 else x


def interval(ci: Sequence[float | None] | None) -> str:
    """``[lo, hi]`` in percent; "-" when undefined."""
    if not ci or ci[0] is None or ci[1] is None:
        return "-"
    return f"[{unsigned_zero(100 * ci[0]):.1f}, {unsigned_zero(100 * ci[1]):.1f}]"


def _with_interval(metric: Mapping[str, Any]) -> str:
    if metric["value"] is None:
        return "-"
    return f"{percent(metric['value'])} {interval(metric['ci'])}"


#: Marks after a system's name: its M2 (and Avg) from an approximate judge; an incomplete run
#: (``--allow-incomplete``), shown without Avg.
APPROXIMATE_MARK, INCOMPLETE_MARK = "†", "‡"
#: Mark after the scene count of an interval resting on a small sample (:data:`odu.core.caveats.SMALL_SAMPLE_SCENES`).
SMALL_MARK = CAVEAT_MARK


def _mark(name: str, approximate: bool, incomplete: bool = False) -> str:
    marks = (APPROXIMATE_MARK if approximate else "") + (INCOMPLETE_MARK if incomplete else "")
    return f"{name} {marks}" if marks else name


def marked_names(report: Mapping[str, Any]) -> dict[str, str]:
    """Each system's name with its marks (:data:`APPROXIMATE_MARK`, :data:`INCOMPLETE_MARK`)."""
    return {s["name"]: _mark(s["name"], s["approximate"], bool(s.get("incomplete"))) for s in report["systems"]}


def table3_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per system with the paper's ``table3.csv`` columns (``av_avg`` ... ``ao_ftr``), in %."""
    rows: dict[str, dict[str, Any]] = {}
    marked = marked_names(report)
    for modality, entries in report["headline"].items():
        for e in entries:
            row = rows.setdefault(e["system"], {"model": marked[e["system"]] if e.get("incomplete") else e["system"]})
            for m in TABLE3_COLUMNS:
                value = e["metrics"][m]["value"]
                row[f"{_SHORT[modality].lower()}_{m}"] = None if value is None else round(100 * value, 4)
    columns = [f"{_SHORT[m].lower()}_{c}" for m in MODALITIES if m in report["headline"] for c in TABLE3_COLUMNS]
    return [{"model": r["model"], **{c: r.get(c) for c in columns}} for r in rows.values()]


def _headline_md(report: Mapping[str, Any]) -> list[str]:
    present = [m for m in MODALITIES if m in report["headline"]]
    header = ["System"] + [f"{_SHORT[m]} {_NAMES[c]}" for m in present for c in TABLE3_COLUMNS]
    names = [s["name"] for s in report["systems"]]
    cells: dict[str, dict[str, str]] = {n: {} for n in names}
    for m in present:
        for e in report["headline"][m]:
            for c in TABLE3_COLUMNS:
                cells[e["system"]][f"{_SHORT[m]} {_NAMES[c]}"] = percent(e["metrics"][c]["value"])
    marked = marked_names(report)
    table = render(header, [[marked[n]] + [cells[n].get(h, "-") for h in header[1:]] for n in names])
    small = report["settings"]["small_sample_scenes"]
    ci_header = ["System", "Modality", "n"] + [_NAMES[c] for c in TABLE3_COLUMNS]
    ci_rows = [
        [marked[e["system"]], _SHORT[m], f"{e['n_scenes']}{SMALL_MARK if e['n_scenes'] < small else ''}"]
        + [_with_interval(e["metrics"][c]) for c in TABLE3_COLUMNS]
        for m in present
        for e in report["headline"][m]
    ]
    few = any(e["n_scenes"] < small for m in present for e in report["headline"][m])
    return [
        "## Main results (Table 3 layout)",
        "",
        table,
        "",
        f"Scene-bootstrap 95% intervals ({report['settings']['resamples']} resamples, seed "
        f"{report['settings']['seed']}; scenes resampled within modality, M1 recomputed per resample):",
        "",
        render(ci_header, ci_rows),
        "",
        *(
            [
                f"{SMALL_MARK} fewer than {small} scenes: a small sample, whose intervals say little (one scene "
                "gives [100.0, 100.0]); read them as a smoke test, not a measurement.",
                "",
            ]
            if few
            else []
        ),
    ]


def p_value(p: float | None) -> str:
    """A p-value with two significant digits; "-" when undefined.

    >>> p_value(0.0123), p_value(1.0), p_value(0.00009999), p_value(None)
    ('0.012', '1', '0.0001', '-')
    """
    return "-" if p is None else f"{p:.2g}"


def paired_line(entry: Mapping[str, Any], metric: str = "avg") -> str:
    """One comparison in a line: ``A − B (modality, n scenes): Avg +6.2 pp [1.0, 11.3], p = 0.012``."""
    head = f"{entry['a']} − {entry['b']} ({entry['modality']}, {entry['n_scenes']} common scenes)"
    cell = entry["metrics"].get(metric)
    if not cell or cell["difference"] is None:
        return f"{head}: {_NAMES[metric]} -"
    return f"{head}: {_NAMES[metric]} {points(cell['difference'])} pp {interval(cell['ci'])}, p = {p_value(cell['p_value'])}"


def _paired_md(report: Mapping[str, Any]) -> list[str]:
    paired = report["paired"]
    if not paired["comparisons"]:
        return []
    settings = paired["settings"]
    clustered = f", clustered by `{settings['cluster_by']}`" if settings["cluster_by"] else ""
    lines = [
        "## Paired comparisons (same scenes)",
        "",
        f"Difference = first − second system on the scenes both scored, percentage points; 95% paired "
        f"scene-bootstrap interval ({settings['resamples']} resamples shared by both systems, seed {settings['seed']}"
        f"{clustered}) and two-sided paired permutation p-value ({settings['permutations']} random swaps of the "
        "two systems' outputs per scene).",
        "",
    ]
    marked = marked_names(report)
    for entry in paired["comparisons"]:
        lines += [
            f"### {marked[entry['a']]} − {marked[entry['b']]}, {entry['modality']}: {entry['n_scenes']} common scenes",
            "",
        ]
        if entry["metrics"]:
            header = ["Metric", "n", entry["a"], entry["b"], "Δ (pp)", "95% CI (pp)", "p"]
            rows = [
                [
                    _NAMES[m],
                    str(c["n"]),
                    percent(c["a"]),
                    percent(c["b"]),
                    points(c["difference"]),
                    interval(c["ci"]),
                    p_value(c["p_value"]),
                ]
                for m, c in entry["metrics"].items()
            ]
            lines += [render(header, rows), ""]
        lines += [f"- **warning**: {w}" for w in entry["warnings"]]
        lines += [""] if entry["warnings"] else []
    return lines


def _sources_md(report: Mapping[str, Any]) -> list[str]:
    lines = ["## Generated vs human-recorded scenes (Table 4)", ""]
    if not report["sources"]:
        return [*lines, "No modality and language holds both generated and human-recorded scenes.", ""]
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for entry in report["sources"]:
        groups.setdefault((entry["modality"], entry["language"]), []).append(entry)
    for (modality, language), entries in groups.items():
        header = ["Metric"]
        for e in entries:
            header += [f"{e['system']} Syn. (n={e['n_generated']})", f"Rec. (n={e['n_recorded']})", "Δ"]
        rows = [
            [_NAMES[m]]
            + [
                v
                for e in entries
                for v in (
                    percent(e["metrics"][m]["generated"]),
                    percent(e["metrics"][m]["human-recorded"]),
                    points(e["metrics"][m]["delta"]),
                )
            ]
            for m in TABLE3_COLUMNS
        ]
        lines += [f"### {modality}, {language}", "", render(header, rows), ""]
    return [*lines, "Δ = recorded − generated, percentage points; modality and language held fixed.", ""]


def _channels_md(report: Mapping[str, Any]) -> list[str]:
    lines = ["## Key-point coverage by evidence channel (App E.1, Table 6)", ""]
    for modality, ch in report["channels"].items():
        lines += [f"### {modality}: {ch['n_scenes']} positive scenes common to all systems", ""]
        if not ch["systems"]:
            lines += ["No common positive scenes.", ""]
            continue
        header = ["System", "Channel", "Points (n)", "Coverage (%)", "Gap (pp)", "95% CI for gap (pp)"]
        rows = []
        for s in ch["systems"]:
            for c in s["channels"]:
                if not c["points"]:
                    continue
                gap = "–" if c["gap"] is None else f"{unsigned_zero(100 * c['gap']):.1f}"
                ci = "–" if c["gap_ci"] is None else interval(c["gap_ci"])
                rows.append(
                    [
                        marked_names(report)[s["system"]],
                        c["channel"],
                        str(c["points"]),
                        percent(c["coverage"]),
                        gap,
                        ci,
                    ]
                )
        errors = ", ".join(f"{s['system']}: {s['judge_error_points']}" for s in ch["systems"])
        lines += [
            render(header, rows),
            "",
            f"Gap = spoken-request coverage − channel coverage (full sample). Points of unmatched "
            f"segments are misses; points with a judge error are left out (per system: {errors}). "
            f'"all points" also holds points with no assigned channel.',
            "",
        ]
    return lines


def _profile_md(title: str, table: Mapping[str, Any], base_label: str, note: str) -> list[str]:
    if not table["columns"]:
        return [f"### {title}", "", "No categories in the common population.", ""]
    systems = [r["system"] for r in table["rows"]]
    header = ["Category", "n"] + systems
    rows = [
        [col, str(table["rows"][0]["cells"][col]["n"])] + [points(r["cells"][col]["delta"]) for r in table["rows"]]
        for col in table["columns"]
    ]
    base = [base_label, ""] + [percent(r["base"]) if r["base"] is not None else "" for r in table["rows"]]
    return [f"### {title}", "", render(header, [*rows, base]), "", note, ""]


def _taxonomy_md(report: Mapping[str, Any]) -> list[str]:
    lines = ["## Positive challenge profiles: M2 by category (App E.3, Figs. 9/10)", ""]
    for modality, t in report["taxonomy"]["m2"].items():
        lines += _profile_md(
            f"{modality}: {t['n_scenes']} common positive scenes",
            t,
            "system M2 (%)",
            "Cells: category mean M2 − the system's mean M2 on these scenes, percentage points "
            "(negative = harder than the system's average). Last row: the system mean itself (%).",
        )
    lines += ["## False-trigger patterns (§5.4, Fig. 5)", ""]
    for modality, t in report["taxonomy"]["ftr"].items():
        for dimension, label in (("signal", "signal type"), ("reason", "invalidation reason")):
            lines += _profile_md(
                f"{modality}: FTR by {label} ({t['n_scenes']} common labelled negatives)",
                t[dimension],
                "system FTR (%)",
                "Cells: subtype FTR − the system's FTR on these negatives, percentage points "
                "(positive = more false triggers). Last row: the system FTR itself (%).",
            )
    return lines


def markdown(report: Mapping[str, Any]) -> str:
    """The whole report as one Markdown document."""
    lines = ["# ODU-Bench report", ""]
    marked = marked_names(report)
    for s in report["systems"]:
        judge = s["judge"]
        lines.append(
            f"- **{marked[s['name']]}**: {s['n_scenes']} scenes, judge {judge.get('name')} ({judge.get('model')})"
            + (f"; INCOMPLETE: {'; '.join(s['incomplete'])}" if s.get("incomplete") else "")
        )
    if any(s["approximate"] for s in report["systems"]):
        lines += [
            "",
            f"{APPROXIMATE_MARK} M2 (and Avg) from an APPROXIMATE judge: not comparable with the paper's Table 3.",
        ]
    if any(s.get("incomplete") for s in report["systems"]):
        lines += [
            "",
            f"{INCOMPLETE_MARK} incomplete run, reported with --allow-incomplete: its files disagree or its M2 "
            "lacks verdicts, so no Avg is shown for it.",
        ]
    lines += ["", *report["table3_caveat"]]
    other = [n for n in report["notes"] if not n.startswith("approximate judge")]
    if other:
        lines += ["", "**Comparability:**", *(f"- {n}" for n in other)]
    lines.append("")
    lines += (
        _headline_md(report) + _paired_md(report) + _sources_md(report) + _channels_md(report) + _taxonomy_md(report)
    )
    return "\n".join(lines).rstrip() + "\n"


def _write_csv(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    rows = list(rows)
    fields: list[str] = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with path.open("w", newline="", encoding="utf-8", errors=SURROGATE_ERRORS) as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in rows)
    return path


def write_csvs(report: Mapping[str, Any], out: Path) -> list[Path]:
    """``table3.csv`` (the paper's columns, %), and fractions in the other tables."""
    headline = [
        {
            "system": e["system"],
            "modality": m,
            "metric": c,
            "value": e["metrics"][c]["value"],
            "ci_low": e["metrics"][c]["ci"][0],
            "ci_high": e["metrics"][c]["ci"][1],
            "n_scenes": e["n_scenes"],
        }
        for m, entries in report["headline"].items()
        for e in entries
        for c in TABLE3_COLUMNS
    ]
    sources = [
        {
            "system": s["system"],
            "modality": s["modality"],
            "language": s["language"],
            "metric": m,
            "generated": v["generated"],
            "human_recorded": v["human-recorded"],
            "delta": v["delta"],
            "n_generated": s["n_generated"],
            "n_recorded": s["n_recorded"],
        }
        for s in report["sources"]
        for m, v in s["metrics"].items()
    ]
    paired = [
        {
            "a": e["a"],
            "b": e["b"],
            "modality": e["modality"],
            "metric": m,
            "a_value": c["a"],
            "b_value": c["b"],
            "difference": c["difference"],
            "ci_low": c["ci"][0],
            "ci_high": c["ci"][1],
            "p_value": c["p_value"],
            "n": c["n"],
            "n_scenes": e["n_scenes"],
            "cluster_by": report["paired"]["settings"]["cluster_by"],
        }
        for e in report["paired"]["comparisons"]
        for m, c in e["metrics"].items()
    ]
    channels = [row for ch in report["channels"].values() for row in channel_rows(ch)]
    m2 = [r for m, t in report["taxonomy"]["m2"].items() for r in profile_rows(t, m, "m2")]
    ftr = [
        r for m, t in report["taxonomy"]["ftr"].items() for d in ("signal", "reason") for r in profile_rows(t[d], m, d)
    ]
    return [
        _write_csv(out / "table3.csv", table3_rows(report)),
        _write_csv(out / "headline_ci.csv", headline),
        _write_csv(out / "paired.csv", paired),
        _write_csv(out / "sources.csv", sources),
        _write_csv(out / "channels.csv", channels),
        _write_csv(out / "taxonomy_m2.csv", m2),
        _write_csv(out / "taxonomy_ftr.csv", ftr),
    ]
