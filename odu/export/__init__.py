"""Results that travel: scored runs in the formats others read (``odu-bench export``).

* ``hub``: the Hugging Face Hub's eval-results YAML (:mod:`.hub`): per run, the model repo's
  ``.eval_results/odu-bench.yaml``; and the benchmark dataset's ``eval.yaml``;
* ``eee``: Every Eval Ever 0.2.0 (:mod:`.eee`): per run, the aggregate JSON and the instance JSONL.

Every number carries what it rests on (the judge, the comparability caveats); a run whose steps
failed is refused unless allowed, and then says so on every number (:mod:`.source`). Nothing is
written until every file of the export is built; every file passes the credential scrubber
(:func:`odu.scrub.scrub_value`) on its way out. The schemas the tests validate against are in
``odu/export/schemas/`` (:func:`load_schema`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ..jsonio import dump_line, encode, write_json
from ..scrub import scrub_value
from .eee import EVALUATOR_RELATIONSHIPS, EeeSettings, eee_files
from .hub import hub_files
from .source import ExportRefused, ExportRun, load_export_runs

#: The formats of ``odu-bench export --format``.
FORMATS: tuple[str, ...] = ("hub", "eee")


def load_schema(name: str) -> dict[str, Any]:
    """A JSON Schema of ``odu/export/schemas/`` by file name (e.g. ``eee_eval_0.2.0.schema.json``)."""
    data: dict[str, Any] = json.loads(
        resources.files(__package__).joinpath(f"schemas/{name}").read_text(encoding="utf-8")
    )
    return data


def build_export(
    runs: Sequence[ExportRun], fmt: str, settings: EeeSettings | None = None, source_url: str | None = None
) -> dict[str, Any]:
    """Relative path -> content of every file of the export of ``runs`` in ``fmt`` (scrubbed);
    ``settings`` (its ``dataset_id`` serves both formats), ``source_url`` (hub)."""
    settings = settings or EeeSettings()
    if fmt == "hub":
        files: Mapping[str, Any] = hub_files(runs, settings.dataset_id, source_url)
    elif fmt == "eee":
        files = eee_files(runs, settings)
    else:
        raise ValueError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    return {path: scrub_value(content) for path, content in files.items()}


def write_export(files: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Write the files of :func:`build_export` under ``out_dir`` (YAML for ``.yaml``, one JSON line
    per item for ``.jsonl``, indented JSON otherwise); returns their paths."""
    import yaml

    out = Path(out_dir)
    written = []
    for rel, content in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".yaml"):
            text = yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=1000)
            path.write_bytes(encode(text))
        elif rel.endswith(".jsonl"):
            path.write_bytes(b"".join(dump_line(row) for row in content))
        else:
            write_json(path, content)
        written.append(path)
    return written


__all__ = [
    "EVALUATOR_RELATIONSHIPS",
    "FORMATS",
    "EeeSettings",
    "ExportRefused",
    "ExportRun",
    "build_export",
    "load_export_runs",
    "load_schema",
    "write_export",
]
