"""A scored run as the exports read it: its scene rows and summary, its run card, its raw outputs,
what its numbers rest on (the judge, the caveats) and what failed in it.

A run whose steps failed is refused unless the caller allows it (:class:`ExportRefused`): its
files disagree (:func:`odu.run.read_run`), judge errors remain or M2 is missing
(:func:`odu.run.incomplete`), or the model failed on scenes (inference errors, scored as no
output). Allowed, the run is exported with those reasons on every number, and without Avg when
the report would show none (:attr:`odu.report.runs.System.incomplete`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..report.runs import System, load_systems, read_object
from ..run import PREDICTIONS_FILE, RUN_CARD_NAME, RUN_ID, SCENES_FILE
from ..schema import read_predictions
from ..scrub import scrub_value
from ..tables import table3_caveat

#: The benchmark's name in every export.
BENCHMARK = "ODU-Bench"
#: A Hub repo id (``ORG/NAME``), as the Hub's own validators read one (``huggingface_hub``'s
#: ``REPO_ID_REGEX`` with a namespace).
HUB_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


class ExportRefused(ValueError):
    """A run that may not be exported as it is; the message names the run and why."""


@dataclass(frozen=True)
class ExportRun:
    """One run ready to export: the report's :class:`System` (name, summary, rows, problems), its
    run card (``None`` for ``odu-bench score`` runs), raw outputs by scene id, and the run folder."""

    system: System
    card: Mapping[str, Any] | None
    outputs: Mapping[str, str]
    run_dir: Path

    @property
    def summary(self) -> Mapping[str, Any]:
        return self.system.summary

    @property
    def run_id(self) -> str:
        return str(self.summary.get(RUN_ID) or self.run_dir.name)

    @property
    def judge(self) -> Mapping[str, Any]:
        return self.summary.get("judge") or {}

    def card_block(self, *keys: str) -> Mapping[str, Any]:
        """The run card's mapping at ``keys`` (e.g. ``"model", "backend"``); empty when absent."""
        value: Any = self.card or {}
        for key in keys:
            value = value.get(key) if isinstance(value, Mapping) else None
        return value if isinstance(value, Mapping) else {}

    @property
    def failed_steps(self) -> list[str]:
        """What failed in the run: files that disagree, judge errors, M2 missing, inference errors."""
        failed = list(self.system.incomplete)
        if self.summary.get("inference_errors"):
            failed.append(
                f"{self.summary['inference_errors']} inference error(s): those scenes were scored as no output"
            )
        return failed

    @property
    def model_id(self) -> str:
        """The model as the run card names it (``model_args.model`` / ``pretrained``), else the run's name."""
        args = self.card_block("model", "model_args")
        for key in ("model", "pretrained"):
            if isinstance(args.get(key), str) and args[key]:
                return str(args[key])
        return self.system.name

    @property
    def date(self) -> str:
        """When the run was made (ISO-8601, UTC): the run card's date, else the run id's time."""
        date = (self.card or {}).get("date")
        if isinstance(date, str) and date:
            return date
        stamp = re.match(r"(\d{8}T\d{6})Z-", self.run_id)
        if stamp:
            return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.strptime(stamp.group(1), "%Y%m%dT%H%M%S"))
        return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime((self.run_dir / SCENES_FILE).stat().st_mtime))

    def caveats(self) -> list[str]:
        """What comparing these numbers rests on: the Table 3 caveat (judge, matching thresholds,
        reference language; :func:`odu.tables.table3_caveat`) and the run card's pitfalls."""
        lines = [line.removeprefix("- ") for line in table3_caveat([self.summary])[1:]]
        pitfalls = (self.card or {}).get("pitfalls") or []
        return lines + [str(p) for p in pitfalls]

    def dataset(self) -> dict[str, Any]:
        """What the run card records of the data evaluated, per task config: Hub repo id or None
        (a local folder's path is left out: it names the exporting machine's folders), revision,
        scenes and content hashes."""
        out = {}
        for key, info in self.card_block("dataset").items():
            if isinstance(info, Mapping):
                source = info.get("source")
                hub = source if isinstance(source, str) and HUB_REPO_ID.fullmatch(source) else None
                out[key] = {k: v for k, v in info.items() if k != "source"} | {"hub_repo": hub}
        return out

    def hub_dataset(self) -> tuple[str | None, str | None]:
        """The Hub repo id and revision the run card names for every task, if one and the same."""
        found = {(d.get("hub_repo"), d.get("revision")) for d in self.dataset().values()}
        return next(iter(found)) if len(found) == 1 else (None, None)


def load_export_runs(
    run_dirs: Sequence[str | Path], names: Sequence[str] | None = None, allow_failed_steps: bool = False
) -> list[ExportRun]:
    """Read runs for export (names as ``odu-bench report --names``: one per run, unique);
    :class:`ExportRefused` names a run whose steps failed (module docstring) unless
    ``allow_failed_steps``, ``ValueError`` a run that cannot be read."""
    runs = [_with_files(s, Path(d)) for s, d in zip(load_systems(run_dirs, names, allow_incomplete=True), run_dirs)]
    for run in runs:
        if run.failed_steps and not allow_failed_steps:
            raise ExportRefused(
                f"run {run.system.name} ({run.run_dir}) is not exported: {'; '.join(run.failed_steps)}. Its numbers "
                "rest on failed steps: score it again (--overwrite), or pass --allow-failed-steps to export it with "
                "these reasons on every number"
            )
    return runs


def _with_files(system: System, run_dir: Path) -> ExportRun:
    """``system`` with its run card (scrubbed again: exports never carry a credential) and raw outputs
    (:func:`odu.schema.read_predictions`, scenes without output left out)."""
    card = read_object(run_dir / RUN_CARD_NAME)  # JsonFileError (a ValueError) names the file
    path = run_dir / PREDICTIONS_FILE
    outputs = read_predictions(path) if path.is_file() else {}
    kept = {sid: text for sid, text in outputs.items() if text is not None}
    return ExportRun(system, scrub_value(card) if card else None, kept, run_dir)
