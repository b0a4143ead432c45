"""Table 3-style text tables (odu/core/tables.py): percentages with one decimal, Table 3's column order."""

from __future__ import annotations

from odu.core.tables import TABLE3_COLUMNS, percent, table3


def test_percent() -> None:
    assert percent(0.8234) == "82.3"
    assert percent(1.0) == "100.0"
    assert percent(0.0) == "0.0"
    assert percent(None) == "-"


def test_table3_column_order_and_cells() -> None:
    assert TABLE3_COLUMNS == ("avg", "m1", "m2", "m3", "m4", "m5", "ftr")
    summary = {"audio-visual": {"avg": 0.5, "m1": 0.61, "m2": 0.42, "m3": 0.33, "m4": 0.74, "m5": 0.95, "ftr": None}}
    header, rule, line = table3({"S": summary}).splitlines()
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "System", "AV Avg", "AV M1", "AV M2", "AV M3", "AV M4", "AV M5", "AV FTR",
    ]  # fmt: skip
    assert [c.strip() for c in line.strip("|").split("|")] == ["S", "50.0", "61.0", "42.0", "33.0", "74.0", "95.0", "-"]
