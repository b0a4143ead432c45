"""Results that travel: scored runs in the formats others read (``odu-bench export``).

* ``hub``: the Hugging Face Hub's eval-results YAML (:mod:`.hub`): per run, the model repo's
  ``.eval_results/odu-bench.yaml``; and the benchmark dataset's ``eval.yaml``;
* ``eee``: Every Eval Ever 0.3.0 (:mod:`.eee`): per run, the aggregate JSON and the instance JSONL;
* ``inspect``: Inspect AI eval logs (:mod:`.inspect_log`): per run and modality, one log.

Every number carries what it rests on (the judge, the comparability caveats); a run whose steps
failed is refused unless allowed, and then says so on every number (:mod:`.source`). Nothing is
written until every file of the export is built, and no two runs may write the same file (two
names that reduce to one folder are refused, naming both). Secrets, one rule for every format:
what a run says of itself (its card, command, judge) goes out with every URL scrubbed and no
absolute local path (:mod:`.source`); model and scene text goes out as the run's own files hold
it, its URLs being data; and every file passes the registered-secret scrubber
(:func:`odu.io.scrub.scrub_value` with ``urls=False``) on its way out. The Hub schemas the tests
validate against are in ``odu/export/schemas/`` (:func:`load_schema`); EEE records are validated
by Every Eval Ever's own validator, Inspect logs by inspect_ai's own reader.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..io.files import replace_file
from ..io.jsonio import dump_line, encode, write_json
from ..io.scrub import scrub_value
from ..runs.outdir import check_apart, check_no_link
from .eee import eee_run_files
from .hub import EVAL_YAML, benchmark_eval_yaml, framework_notice, hub_run_files, load_schema
from .inspect_log import inspect_run_files
from .settings import EVALUATOR_RELATIONSHIPS, ExportSettings
from .source import ExportRefused, ExportRun, load_export_runs

#: Each format of ``odu-bench export --format``: the files of one run.
RUN_FILES: dict[str, Callable[[ExportRun, ExportSettings], Mapping[str, Any]]] = {
    "hub": lambda run, settings: hub_run_files(run, settings.dataset_id, settings.source_url),
    "eee": eee_run_files,
    "inspect": inspect_run_files,
}
#: The formats of ``odu-bench export --format``.
FORMATS: tuple[str, ...] = tuple(RUN_FILES)


def build_export(runs: Sequence[ExportRun], fmt: str, settings: ExportSettings | None = None) -> dict[str, Any]:
    """Relative path -> content of every file of the export of ``runs`` in ``fmt`` (module
    docstring); :class:`ValueError` when two runs would write the same file, naming both."""
    if fmt not in RUN_FILES:
        raise ValueError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    settings = settings or ExportSettings()
    files: dict[str, Any] = {EVAL_YAML: benchmark_eval_yaml()} if fmt == "hub" else {}
    owners: dict[str, ExportRun] = {}
    for run in runs:
        for path, content in RUN_FILES[fmt](run, settings).items():
            if (other := owners.get(path)) is not None:
                raise ValueError(
                    f"runs {other.system.name!r} ({other.run_dir}) and {run.system.name!r} ({run.run_dir}) would both "
                    f"be exported to {path}: give them names that differ as folder names (--names)"
                    + (" or model ids that differ (--model-ids)" if fmt == "eee" else "")
                )
            owners[path] = run
            files[path] = content
    return {path: scrub_value(content, urls=False) for path, content in files.items()}


def export_notices(fmt: str) -> list[str]:
    """What the console says about an export in ``fmt`` beyond its files (the Hub's refusal of
    ``eval.yaml`` while ``odu-bench`` is not a registered framework)."""
    notice = framework_notice() if fmt == "hub" else None
    return [notice] if notice else []


def write_export(files: Mapping[str, Any], out_dir: str | Path, inputs: Sequence[str | Path | None] = ()) -> list[Path]:
    """Write the files of :func:`build_export` under ``out_dir`` (YAML for ``.yaml``, one JSON line
    per item for ``.jsonl``, indented JSON otherwise); returns their paths. ``out_dir`` may not be,
    hold or lie inside one of ``inputs`` (the runs), nothing on the way to a file may be a link,
    and each file is replaced, never written through (:mod:`odu.runs.outdir`)."""
    import yaml

    out = Path(out_dir)
    check_apart(out, inputs)
    written = []
    for rel, content in files.items():
        path = out / rel
        check_no_link(out, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".yaml"):
            replace_file(path, encode(yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=1000)))
        elif rel.endswith(".jsonl"):
            replace_file(path, b"".join(dump_line(row) for row in content))
        else:
            write_json(path, content)
        written.append(path)
    return written


__all__ = [
    "EVALUATOR_RELATIONSHIPS",
    "FORMATS",
    "ExportRefused",
    "ExportRun",
    "ExportSettings",
    "build_export",
    "export_notices",
    "load_export_runs",
    "load_schema",
    "write_export",
]
