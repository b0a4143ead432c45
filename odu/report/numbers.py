"""Small conversions shared by the report tables: NaN/None and differences of optional values."""

from __future__ import annotations

import math


def optional(x: float | None) -> float | None:
    """``None`` for an undefined value (``None`` or NaN), else a plain ``float``."""
    return None if x is None or math.isnan(x) else float(x)


def difference(a: float | None, b: float | None) -> float | None:
    """``a - b``; ``None`` when either is undefined."""
    return None if a is None or b is None else a - b
