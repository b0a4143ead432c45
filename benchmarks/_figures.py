"""A benchmark's figures in a file: the ``--json`` option and the JSON it writes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--json PATH``: also write the figures there."""
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here (JSON)")


def write_json(path: Path | None, figures: Any) -> None:
    """Write ``figures`` to ``path`` as JSON indented by 2 (nothing when no ``--json`` was given)."""
    if path:
        path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
