"""A scored run as the exports read it: its scene rows and summary, its run card, its raw outputs,
what its numbers rest on (the judge, the caveats) and what failed in it.

A run is an ``odu-bench score`` / ``eval`` folder or an lm-eval output folder written with
``--log_samples`` (read as ``view`` and ``report`` read it, :mod:`odu.report.runs`).

A run whose steps failed is refused unless the caller allows it (:class:`ExportRefused`): its
files disagree (:func:`odu.runs.contract.read_run`), judge errors remain or M2 is missing
(:func:`odu.runs.contract.incomplete`), or the model failed on scenes (inference errors, scored as no
output). Allowed, the run is exported with those reasons on every number, and without Avg when
the report would show none (:attr:`odu.report.runs.System.incomplete`).

What leaves the machine: the run card with every URL scrubbed (:func:`odu.io.scrub.scrub_value`) and
every absolute local path replaced by :data:`LOCAL_PATH` (:func:`without_local_paths`: a command
line, a replayed predictions file, an ASR sidecar name the exporting machine's folders); a
dataset's Hub id only as the caller names it (``--dataset-id``): a run card's dataset ``source``
may be a local folder (``--dataset data/odu`` reads like ``ORG/NAME``) and is never exported, nor
is it in a recorded command line, where ``--dataset``'s value becomes :data:`DATASET_ARGUMENT`
(:func:`without_dataset_argument`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.schema import read_predictions
from ..core.tables import table3_caveat
from ..io.scrub import scrub_value
from ..models import BASELINES
from ..models.providers import developer
from ..report.runs import System, harness_folder, load_systems, read_harness_run, read_object
from ..runs.contract import PREDICTIONS_FILE, RUN_CARD_NAME, RUN_ID, SCENES_FILE
from .fields import ExportRefused, check_date, check_model_id

#: The benchmark's name in every export.
BENCHMARK = "ODU-Bench"
#: A Hub repo id (``ORG/NAME``), as the Hub's own validators read one (``huggingface_hub``'s
#: ``REPO_ID_REGEX`` with a namespace).
HUB_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
#: The developer of the toolkit's own baselines (the floors), in their model ids.
TOOLKIT_DEVELOPER = "odu-bench"
#: The model id of each baseline backend (``odu-bench/floor-always-trigger`` ...): a model id is
#: ``developer/model`` in every export that names one.
BASELINE_MODEL_IDS: dict[str, str] = {b: f"{TOOLKIT_DEVELOPER}/floor-{b}-trigger" for b in BASELINES}
#: What an absolute local path is replaced by in an export.
LOCAL_PATH = "<local path>"
#: What the value of ``--dataset`` in a recorded command line is replaced by in an export.
DATASET_ARGUMENT = "<dataset>"
#: The option of ``odu-bench eval`` naming the dataset (argparse takes ``--da`` and longer prefixes of it).
DATASET_OPTION = "--dataset"
#: An absolute local path inside a text (``/home/me/x``, ``~/x``, ``C:\\x``): a ``/`` or ``\\``
#: not preceded by a character of a word, a URL or a relative path (``h/v1``, ``http://``, ``./x``)
#: and followed by a name, up to white space, a quote or a separator.
_LOCAL_PATH = re.compile(r"""(?<![\w.:/\\~-])(?:~|[A-Za-z]:)?[/\\](?=[^\s/\\"'|,;])[^\s"'|,;]*""")


def without_local_paths(value: Any) -> Any:
    """``value`` (JSON-like) with every absolute local path in its strings replaced by :data:`LOCAL_PATH`.

    >>> without_local_paths(["odu-bench", "eval", "--out=/home/me/runs", "--judge-base-url", "http://h:8/v1"])
    ['odu-bench', 'eval', '--out=<local path>', '--judge-base-url', 'http://h:8/v1']
    >>> without_local_paths({"predictions": "~/p.jsonl", "note": "and/or ./rel 24/7"})
    {'predictions': '<local path>', 'note': 'and/or ./rel 24/7'}
    """
    if isinstance(value, str):
        return _LOCAL_PATH.sub(LOCAL_PATH, value)
    if isinstance(value, Mapping):
        return {k: without_local_paths(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_local_paths(v) for v in value]
    return value


def without_dataset_argument(command: Sequence[Any]) -> list[Any]:
    """A recorded command line with the value of :data:`DATASET_OPTION` (given as ``--dataset
    VALUE`` or ``--dataset=VALUE``, or under a prefix argparse takes for it) replaced by
    :data:`DATASET_ARGUMENT`: a dataset's folder or Hub id is never exported from a run card.

    >>> without_dataset_argument(["odu-bench", "eval", "--dataset", "data/odu-bench", "--out", "ev"])
    ['odu-bench', 'eval', '--dataset', '<dataset>', '--out', 'ev']
    >>> without_dataset_argument(["odu-bench", "eval", "--data=ORG/odu-bench", "--dry-run"])
    ['odu-bench', 'eval', '--data=<dataset>', '--dry-run']
    """

    def names_dataset(token: Any) -> bool:
        return isinstance(token, str) and len(token) >= 4 and DATASET_OPTION.startswith(token)

    published: list[Any] = []
    for token in command:
        if published and names_dataset(published[-1]):
            published.append(DATASET_ARGUMENT)
            continue
        option, equals, _ = token.partition("=") if isinstance(token, str) else ("", "", "")
        published.append(f"{option}={DATASET_ARGUMENT}" if equals and names_dataset(option) else token)
    return published


def published_card(card: Mapping[str, Any]) -> dict[str, Any]:
    """A run card as exports carry it: every URL scrubbed, every absolute local path replaced
    (:func:`without_local_paths`), the dataset argument of its command line replaced
    (:func:`without_dataset_argument`)."""
    clean: dict[str, Any] = without_local_paths(scrub_value(card))
    if isinstance(clean.get("command"), list):
        clean["command"] = without_dataset_argument(clean["command"])
    return clean


@dataclass(frozen=True)
class ExportRun:
    """One run ready to export: the report's :class:`System` (name, summary, rows, problems), its
    run card (``None`` for ``odu-bench score`` runs; as :func:`published_card` gives it), raw
    outputs by scene id, the run folder, the model id the caller gave (``--model-ids``), and the
    time lm-eval stamped on its files (an lm-eval output folder's)."""

    system: System
    card: Mapping[str, Any] | None
    outputs: Mapping[str, str]
    run_dir: Path
    given_model_id: str | None = None
    harness_stamp: str | None = None

    @property
    def summary(self) -> Mapping[str, Any]:
        return self.system.summary

    @property
    def run_id(self) -> str:
        return str(self.summary.get(RUN_ID) or (self.card or {}).get(RUN_ID) or self.run_dir.name)

    @property
    def judge(self) -> Mapping[str, Any]:
        """summary.json's judge block, every URL in it scrubbed, less its cache (a local path)."""
        judge = scrub_value(self.summary.get("judge") or {})
        return {k: v for k, v in judge.items() if k != "cache"} if isinstance(judge, Mapping) else {}

    def card_block(self, *keys: str) -> Mapping[str, Any]:
        """The run card's mapping at ``keys`` (e.g. ``"model", "backend"``); empty when absent."""
        value: Any = self.card or {}
        for key in keys:
            value = value.get(key) if isinstance(value, Mapping) else None
        return value if isinstance(value, Mapping) else {}

    def generation_kwargs(self, config: str) -> Mapping[str, Any] | None:
        """The lm-eval generation settings the run card records for the task of dataset config ``config``."""
        return next(
            (
                t["generation_kwargs"]
                for k, t in self.card_block("tasks").items()
                if k.startswith(f"odu_{config}")
                and isinstance(t, Mapping)
                and isinstance(t.get("generation_kwargs"), Mapping)
            ),
            None,
        )

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
    def where(self) -> str:
        """The run as a refusal names it: its name and folder."""
        return f"{self.system.name} ({self.run_dir})"

    @property
    def model_id(self) -> str:
        """The model: ``--model-ids`` entry, else as the run card names it (``model_args.model`` /
        ``pretrained``, its developer added where the card's backend or provider profile knows it:
        :meth:`with_developer`; a baseline's :data:`BASELINE_MODEL_IDS`), else the run's name; checked
        (:func:`odu.export.fields.check_model_id`: :class:`ExportRefused` naming the run and field)."""
        if self.given_model_id:
            return check_model_id(self.given_model_id, self.where, "--model-ids entry")
        args = self.card_block("model", "model_args")
        for key in ("model", "pretrained"):
            if isinstance(args.get(key), str) and args[key]:
                return self.with_developer(
                    check_model_id(args[key], self.where, f"{RUN_CARD_NAME} model.model_args.{key}")
                )
        backend = self.card_block("model", "backend").get("backend")
        if isinstance(backend, str) and backend in BASELINE_MODEL_IDS:
            return BASELINE_MODEL_IDS[backend]
        return check_model_id(self.system.name, self.where, "name (taken for its model id)")

    def with_developer(self, model: str) -> str:
        """``model`` as ``developer/model``: as the card names it when it has a ``/``, else with the
        developer its server or family tells (:func:`odu.models.providers.developer`: the Gemini backend's
        ``google``, OpenAI's API, a Qwen-Omni name), else as it is (refused by :meth:`developer_model`)."""
        if "/" in model:
            return model
        backend = self.card_block("model", "backend")
        server = (
            self.card_block("model", "backend", "provider").get("name")
            if backend.get("backend") == "openai"
            else backend.get("backend")
        )
        found = developer(model, server if isinstance(server, str) else None)
        return f"{found}/{model}" if found else model

    def developer_model(self) -> tuple[str, str]:
        """The model id as ``(developer, model)``; :class:`ValueError` naming the run when the id has
        no developer (exports that name a model want the Hub form ``developer/model``)."""
        developer, _, model = self.model_id.partition("/")
        if not developer.strip() or not model.strip():
            raise ValueError(
                f"run {self.system.name}: its model id {self.model_id!r} is not in the form DEVELOPER/MODEL "
                "(e.g. Qwen/Qwen3-Omni-30B-A3B-Instruct, openai/gpt-4o-audio-preview): pass --model-ids, one per run"
            )
        return developer, model

    @property
    def date(self) -> str:
        """When the run was made (ISO 8601): the run card's date, else the run id's time (UTC), else
        lm-eval's stamp, else scenes.jsonl's time (UTC); checked (:func:`odu.export.fields.check_date`:
        :class:`ExportRefused` naming the run and field)."""
        if (card_date := (self.card or {}).get("date")) is not None:
            return check_date(card_date, self.where, f"{RUN_CARD_NAME} date")
        if stamp := re.match(r"(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z-", self.run_id):
            return check_date("{}-{}-{}T{}:{}:{}+00:00".format(*stamp.groups()), self.where, f"run id {self.run_id}")
        if self.harness_stamp and (harness := re.match(r"(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d)", self.harness_stamp)):
            return check_date(":".join(harness.groups()), self.where, f"lm-eval's file stamp {self.harness_stamp}")
        return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime((self.run_dir / SCENES_FILE).stat().st_mtime))

    def caveats(self) -> list[str]:
        """What comparing these numbers rests on: the Table 3 caveat (judge, matching thresholds,
        reference language; :func:`odu.core.tables.table3_caveat`) and the run card's pitfalls."""
        lines = [line.removeprefix("- ") for line in table3_caveat([self.summary])[1:]]
        pitfalls = (self.card or {}).get("pitfalls") or []
        return lines + [str(p) for p in pitfalls]

    def dataset(self) -> dict[str, Any]:
        """What the run card records of the data evaluated, per task config: revision, scenes and
        content hashes (its ``source`` is left out: it may be a local folder, module docstring)."""
        return {
            key: {k: v for k, v in info.items() if k != "source"}
            for key, info in self.card_block("dataset").items()
            if isinstance(info, Mapping)
        }

    def card_revision(self, dataset_id: str) -> str | None:
        """The dataset revision the run card records when every task read ``dataset_id``, else None."""
        found = {
            (info.get("source"), info.get("revision"))
            for info in self.card_block("dataset").values()
            if isinstance(info, Mapping)
        }
        source, revision = next(iter(found)) if len(found) == 1 else (None, None)
        return str(revision) if source == dataset_id and revision else None


def load_export_runs(
    run_dirs: Sequence[str | Path],
    names: Sequence[str] | None = None,
    allow_failed_steps: bool = False,
    model_ids: Sequence[str] | None = None,
) -> list[ExportRun]:
    """Read runs for export (names as ``odu-bench report --names``: one per run, unique; model ids,
    if given, one per run, ``-`` for the run card's); :class:`ExportRefused` names a run whose steps
    failed (module docstring) unless ``allow_failed_steps``, ``ValueError`` a run that cannot be read."""
    if model_ids and len(model_ids) != len(run_dirs):
        raise ValueError(f"--model-ids gives {len(model_ids)} id(s) for {len(run_dirs)} run(s)")
    systems = load_systems(run_dirs, names, allow_incomplete=True)
    runs = [
        _with_files(s, Path(d), model_ids[i] if model_ids and model_ids[i] != "-" else None)
        for i, (s, d) in enumerate(zip(systems, run_dirs))
    ]
    for run in runs:
        if run.failed_steps and not allow_failed_steps:
            raise ExportRefused(
                f"run {run.system.name} ({run.run_dir}) is not exported: {'; '.join(run.failed_steps)}. Its numbers "
                "rest on failed steps: score it again (--overwrite), or pass --allow-failed-steps to export it with "
                "these reasons on every number"
            )
    return runs


def _with_files(system: System, run_dir: Path, model_id: str | None) -> ExportRun:
    """``system`` with its run card (:func:`published_card`: exports never carry a credential, a local
    path or the dataset's place) and raw outputs (:func:`odu.core.schema.read_predictions`; an lm-eval folder's samples; scenes
    without output left out)."""
    stamp = None
    if (folder := harness_folder(run_dir)) is not None:
        harness = read_harness_run(folder)
        card: Mapping[str, Any] = harness.card
        outputs: Mapping[str, str | None] = harness.outputs
        run_dir, stamp = folder, harness.stamp
    else:
        card = read_object(run_dir / RUN_CARD_NAME)  # JsonFileError (a ValueError) names the file
        path = run_dir / PREDICTIONS_FILE
        outputs = read_predictions(path) if path.is_file() else {}
    kept = {sid: text for sid, text in outputs.items() if text is not None}
    clean = published_card(card) if card else None
    return ExportRun(system, clean, kept, run_dir, model_id, stamp)
