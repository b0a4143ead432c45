"""Heatmap PNGs of the report (matplotlib, optional extra ``report``; imported lazily).

* ``taxonomy_m2_{av,ao}.png`` — Figs. 9/10: category M2 minus system mean (pp), one colour scale
  shared by both modalities; red = below the system's own mean.
* ``ftr_{av,ao}.png`` — Fig. 5: subtype FTR minus system FTR (pp), signal type and invalidation
  reason side by side; red = more false triggers than the system's own rate.
* ``channels_{av,ao}.png`` — Fig. 4 / Table 6: key-point coverage (%) by evidence channel.

Every panel ends with the "panel mean" row where the table has one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .channels import ALL_POINTS
from .render import unsigned_zero

_SHORT = {"audio-visual": "av", "audio-only": "ao"}


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _profile_matrix(table: Mapping[str, Any]) -> tuple[list[str], list[str], list[list[float]]]:
    rows = [r["system"] for r in table["rows"]]
    cols = list(table["columns"])
    values = [[_pp(r["cells"][c]["delta"]) for c in cols] for r in table["rows"]]
    return rows, [f"{c} (n={table['rows'][0]['cells'][c]['n']})" for c in cols], values


def _pp(x: float | None) -> float:
    return math.nan if x is None else 100 * x


def _draw(
    ax: Any,
    rows: Sequence[str],
    cols: Sequence[str],
    values: Sequence[Sequence[float]],
    cmap: str,
    vmin: float,
    vmax: float,
    fmt: str,
) -> Any:
    import numpy as np

    data = np.ma.masked_invalid(np.array(values, dtype=float))
    image = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(cols)), labels=cols, rotation=40, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_yticks(range(len(rows)), labels=rows, fontsize=8)
    span = vmax - vmin
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            if not math.isnan(v):
                frac = (v - vmin) / span  # diverging maps are dark at both ends, viridis at the low end
                dark = abs(frac - 0.5) > 0.3 if cmap.startswith("RdBu") else frac < 0.55
                ax.text(
                    j,
                    i,
                    format(unsigned_zero(v), fmt),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if dark else "black",
                )
    if len(rows) > 1 and rows[-1] == "panel mean":
        ax.axhline(len(rows) - 1.5, color="black", linewidth=1)
    return image


def _figure(n_rows: int, n_cols: int, panels: int = 1) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    width = max(5.0, 2.0 + 0.6 * n_cols) * panels
    height = 3.0 + 0.4 * n_rows  # room for the rotated category labels
    fig, axes = plt.subplots(1, panels, figsize=(width, height), squeeze=False, constrained_layout=True)
    return fig, axes[0]


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def _symmetric_limit(tables: Sequence[Mapping[str, Any]]) -> float:
    values = [abs(v) for t in tables for _, _, m in [_profile_matrix(t)] for row in m for v in row if not math.isnan(v)]
    return max(5.0, math.ceil(max(values, default=0.0)))


def write_plots(report: Mapping[str, Any], out: Path) -> list[Path]:
    """Render every heatmap of ``report`` into ``out``; raises ImportError without matplotlib."""
    import matplotlib  # noqa: F401  (fail early with ImportError)

    written = []
    m2_tables = [t for t in report["taxonomy"]["m2"].values() if t["columns"]]
    limit = _symmetric_limit(m2_tables)  # one scale shared by AV and AO (Fig. 9 caption)
    for modality, table in report["taxonomy"]["m2"].items():
        if not table["columns"]:
            continue
        rows, cols, values = _profile_matrix(table)
        fig, (ax,) = _figure(len(rows), len(cols))
        image = _draw(ax, rows, cols, values, "RdBu", -limit, limit, "+.1f")
        fig.colorbar(image, ax=ax, label="Δ M2 (pp)")
        ax.set_title(
            f"M2 by category minus the system's mean M2, {modality} ({table['n_scenes']} common scenes)", fontsize=10
        )
        written.append(_save(fig, out / f"taxonomy_m2_{_SHORT[modality]}.png"))
    for modality, ftr in report["taxonomy"]["ftr"].items():
        tables = [ftr[d] for d in ("signal", "reason") if ftr[d]["columns"]]
        if not tables:
            continue
        limit = _symmetric_limit(tables)
        fig, axes = _figure(len(tables[0]["rows"]), max(len(t["columns"]) for t in tables), len(tables))
        for ax, table, title in zip(axes, tables, ("signal type", "invalidation reason")):
            rows, cols, values = _profile_matrix(table)
            image = _draw(ax, rows, cols, values, "RdBu_r", -limit, limit, "+.1f")
            ax.set_title(f"FTR by {title}", fontsize=10)
        fig.colorbar(image, ax=list(axes), label="Δ FTR (pp)")
        fig.suptitle(
            f"Subtype FTR minus the system's FTR, {modality} ({ftr['n_scenes']} labelled negatives)", fontsize=10
        )
        written.append(_save(fig, out / f"ftr_{_SHORT[modality]}.png"))
    for modality, ch in report["channels"].items():
        if not ch["systems"]:
            continue
        names = [
            c["channel"]
            for c in ch["systems"][0]["channels"]
            if c["channel"] != ALL_POINTS
            and any(s_c["points"] for s in ch["systems"] for s_c in s["channels"] if s_c["channel"] == c["channel"])
        ]
        rows = [s["system"] for s in ch["systems"]]
        values = [
            [_pp(next(c["coverage"] for c in s["channels"] if c["channel"] == n)) for n in names] for s in ch["systems"]
        ]
        fig, (ax,) = _figure(len(rows), len(names))
        image = _draw(ax, rows, names, values, "viridis", 0, 100, ".1f")
        fig.colorbar(image, ax=ax, label="coverage (%)")
        ax.set_title(f"Key-point coverage by evidence channel, {modality} ({ch['n_scenes']} scenes)", fontsize=10)
        written.append(_save(fig, out / f"channels_{_SHORT[modality]}.png"))
    return written
