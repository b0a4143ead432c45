"""The run contract: what a scored run is, how it is summarised, and how it is stored.

A scored run is one :class:`SceneRow` per scene (``scenes.jsonl``) and a :class:`RunSummary`
(``summary.json``): per modality present, the dataset scores of :func:`summarize` (App A.3-A.4),
and run-wide counts and the judge's block. Every door that produces or reads runs uses this
module: ``odu-bench score`` (:mod:`odu.runs.scoring`), ``odu-bench eval`` (rows from lm-eval's logged
samples, plus inference errors), the lm-eval tasks (:func:`summarize` over a task's rows) and
``odu-bench report`` / ``view`` / ``judge-audit`` (:func:`read_run`).

A run directory is one unit (docs/scoring.md, "Files of a run"): :class:`RunWriter` writes every
file into a hidden temporary folder beside the target and renames it into place once complete, so
a killed run leaves the target as it was; every file carries the run's id (``run_id``: each JSONL
row, each JSON file) and ``summary.json`` lists every other file with its SHA-256. A folder that
holds another run's files is refused unless the caller overwrites it. :func:`read_run` checks all
of this and names what disagrees; it refuses scene rows :func:`summarize` cannot count or
:func:`odu.report.runs.check_labels_agree` cannot pair (:func:`row_problem`: a NaN score, a flag
that is not a boolean, a content hash that is not a SHA-256) and a summary whose numbers its scene
rows do not give (:func:`summary_disagreements`: ``summary.json`` edited, its hashes or not);
:func:`incomplete` names what a run's numbers lack (judge errors, M2 missing).
"""

from __future__ import annotations

import hashlib
import json
import math
import reprlib
import secrets
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypedDict, cast

from ..core.constants import MODALITIES
from ..core.metrics import avg, false_trigger_rate_counts, macro_f1_counts
from ..io.files import is_sha256, open_regular, sha256_file
from ..io.jsonio import JsonFileError, bounded_lines, dumps, iter_lines, json_text, read_json, utf8, write_json
from ..io.scrub import needs_scrub
from .outdir import FolderKind, OutDirError, check_target, manifest_object, shown, swap_in, unwritten, work_dir

#: Files of a run directory: the summary, the scene rows, and (runs made through lm-eval) the run card.
SUMMARY_FILE = "summary.json"
SCENES_FILE = "scenes.jsonl"
RUN_CARD_NAME = "run_card.json"
#: Raw model outputs of a run (``odu-bench eval``; ``score --predictions`` reads the same rows).
PREDICTIONS_FILE = "predictions.jsonl"
#: The key holding the run id in every file of a run (first key of each JSON file and JSONL row).
RUN_ID = "run_id"
#: ``summary.json``'s list of the run's other files: name -> ``{"sha256": ..., "rows": ...}``.
FILES = "files"
#: Names of files that runs write (odu-bench score / eval, lm-eval's CLI): such a file in a run
#: directory that its summary does not list is stale (:func:`read_run`). What ``--overwrite`` may
#: clear is decided by the summary's list: such names with their hashes (:func:`listed_files`, :data:`RUN`).
RUN_FILE_PATTERNS: tuple[str, ...] = (
    SUMMARY_FILE,
    SCENES_FILE,
    PREDICTIONS_FILE,
    "results*.json",
    "run_card*.json",
    "samples_*.jsonl",
)


class MatchRow(TypedDict):
    """One reference segment's match (:mod:`odu.core.match`)."""

    reference: int
    predictions: list[int]
    method: str
    iou: float
    similarity: float


class KeyPointRow(TypedDict):
    """One key point of a reference segment and its verdict (``hit`` None: undecided, see ``judge_error``)."""

    segment: int
    qid: str
    point: str
    source: str
    tiers: list[str]
    matched: bool
    hit: bool | None
    judge_error: str | None


class CandidateRow(TypedDict):
    """The candidate text sent to the judge for one matched reference segment (App A.5)."""

    segment: int
    text: str


class SceneRow(TypedDict):
    """One line of ``scenes.jsonl``: a scene's labels, its prediction's shape and its scene scores
    (``s2``..``s5``: None for negatives and scenes without reference segments)."""

    scene_id: str
    modality: str
    language: str
    source: str
    label: str
    axes: dict[str, str]
    negative_reason: str
    negative_signal: str
    has_demand: bool
    predicted_has_demand: bool
    parse_error: bool
    no_output: bool
    issues: list[str]
    scene_sha256: str  # the scene as scored: odu.core.schema.content_hashes (issue 30 item 8)
    reference_sha256: str
    s2: float | None
    s2_errors_as_misses: float | None
    s3: float | None
    s4: float | None
    s5: float | None
    matches: list[MatchRow]
    key_points: list[KeyPointRow]
    candidates: list[CandidateRow]


class EvalSceneRow(SceneRow, total=False):
    """A scene row of a run made through lm-eval (``odu-bench eval``): also the model's inference
    error, if any (the scene is then scored as no output)."""

    inference_error: str | None


class ModalitySummary(TypedDict, total=False):
    """The scores of one modality (App A.3-A.4; fractions, None where undefined), from :func:`summarize`."""

    n_scenes: int
    n_positive: int
    n_negative: int
    m1: float | None
    m2: float | None
    m3: float | None
    m4: float | None
    m5: float | None
    avg: float | None
    ftr: float | None
    m2_errors_as_misses: float | None
    avg_errors_as_misses: float | None
    judge_error_points: int
    parse_errors: int
    no_output: int
    inference_errors: int  # runs made through lm-eval only


#: ``summary.json``: the run id, a :class:`ModalitySummary` per modality present (``"audio-visual"``,
#: ``"audio-only"``), the judge's ``info()`` block, run-wide counts, the reference language; runs
#: made through lm-eval add ``inference_errors``, per-task metrics (``tasks``), the system's name,
#: the answers cut at the output-token limit (``truncated``), the dataset each task read and the
#: ``caveats`` of the numbers (:mod:`odu.core.caveats`); last, the run's other ``files`` with their
#: SHA-256 (added by :meth:`RunWriter.commit`).
RunSummary = TypedDict(
    "RunSummary",
    {
        "run_id": str,
        "audio-visual": ModalitySummary,
        "audio-only": ModalitySummary,
        "judge": dict[str, Any],
        "parse_errors": int,
        "no_output": int,
        "inference_errors": int,
        "judge_errors": int,
        "annotation_language": str,
        "tasks": dict[str, dict[str, Any]],
        "system": str,
        "truncated": int,
        "dataset": dict[str, Any],
        "caveats": list[dict[str, str]],
        "files": dict[str, dict[str, Any]],
    },
    total=False,
)


# --- summarising ---------------------------------------------------------------------------------


class _Mean:
    """Sum and count of the defined values of one scene score, added in scene order."""

    __slots__ = ("count", "total")

    def __init__(self) -> None:
        self.total: float = 0
        self.count = 0

    def add(self, value: float | None) -> None:
        if value is not None:
            self.total += value
            self.count += 1

    @property
    def mean(self) -> float | None:
        """App A.4: the equal-weight mean over the scenes where the score is defined (as
        :func:`odu.core.metrics.mean_defined`, summed in the same order)."""
        return self.total / self.count if self.count else None


class ModalityTally:
    """What :func:`summarize` needs of a modality's scenes, added one scene at a time, so that a run
    is summarised as it streams by, with the numbers of the whole list of rows to the last digit."""

    __slots__ = ("tp", "fp", "fn", "tn", "s2", "s2_misses", "s3", "s4", "s5", "error_points", "parse", "none", "infer")

    def __init__(self) -> None:
        self.tp = self.fp = self.fn = self.tn = 0
        self.s2, self.s2_misses, self.s3, self.s4, self.s5 = (_Mean() for _ in range(5))
        self.error_points = self.parse = self.none = 0
        self.infer: int | None = None  # counted once a row carries ``inference_error``

    def add(
        self,
        has_demand: bool,
        predicted: bool,
        scores: Sequence[float | None],
        judge_error_points: int,
        parse_error: bool,
        no_output: bool,
    ) -> None:
        """One scene: true and predicted demand, ``(s2, s2_errors_as_misses, s3, s4, s5)``, counts."""
        if has_demand:
            self.tp += bool(predicted)
            self.fn += not predicted
        else:
            self.fp += bool(predicted)
            self.tn += not predicted
        for mean, value in zip((self.s2, self.s2_misses, self.s3, self.s4, self.s5), scores):
            mean.add(value)
        self.error_points += judge_error_points
        self.parse += bool(parse_error)
        self.none += bool(no_output)

    def add_row(self, row: Mapping[str, Any]) -> None:
        """One scene row (a :class:`SceneRow`, or the compact rows of the lm-eval tasks)."""
        scores = [row["s2"], row.get("s2_errors_as_misses"), row["s3"], row["s4"], row["s5"]]
        points = sum(1 for k in row["key_points"] if k["judge_error"] is not None)
        self.add(row["has_demand"], row["predicted_has_demand"], scores, points, row["parse_error"], row["no_output"])
        if "inference_error" in row:
            self.infer = (self.infer or 0) + bool(row["inference_error"])

    def summary(self) -> ModalitySummary:
        """The :class:`ModalitySummary` of the scenes added (App A.3-A.4)."""
        n_positive, n_negative = self.tp + self.fn, self.fp + self.tn
        metrics: dict[str, Any] = {
            "m1": macro_f1_counts(self.tp, self.fp, self.fn, self.tn),
            "m2": self.s2.mean,
            "m3": self.s3.mean,
            "m4": self.s4.mean,
            "m5": self.s5.mean,
        }
        lower = dict(metrics, m2=self.s2_misses.mean)
        out: dict[str, Any] = {
            "n_scenes": n_positive + n_negative,
            "n_positive": n_positive,
            "n_negative": n_negative,
            **metrics,
            "avg": avg(metrics),
            "ftr": false_trigger_rate_counts(n_negative, self.fp),
            "m2_errors_as_misses": lower["m2"],
            "avg_errors_as_misses": avg(lower),
            "judge_error_points": self.error_points,
            "parse_errors": self.parse,
            "no_output": self.none,
        }
        if self.infer is not None:
            out["inference_errors"] = self.infer
        return cast(ModalitySummary, out)


class RunTally:
    """:func:`summarize_run` one scene at a time: a :class:`ModalityTally` per modality and the
    run-wide counts."""

    def __init__(self) -> None:
        self.modalities: dict[str, ModalityTally] = {}
        self.judge_errors = 0  # segments with a judge error

    def of(self, modality: str) -> ModalityTally:
        """The tally of ``modality`` (created on first use)."""
        tally = self.modalities.get(modality)
        if tally is None:
            tally = self.modalities[modality] = ModalityTally()
        return tally

    def add_row(self, row: Mapping[str, Any]) -> None:
        self.of(row["modality"]).add_row(row)
        self.judge_errors += len({k["segment"] for k in row["key_points"] if k["judge_error"]})

    def summary(self, judge: Mapping[str, Any], annotation_language: str) -> RunSummary:
        """``summary.json`` of the scenes added: modalities in reporting order, then the judge block
        and the run-wide counts."""
        out: dict[str, Any] = {m: self.modalities[m].summary() for m in MODALITIES if m in self.modalities}
        tallies = [self.modalities[m] for m in MODALITIES if m in self.modalities]
        out |= {
            "judge": dict(judge),
            "parse_errors": sum(t.parse for t in tallies),
            "no_output": sum(t.none for t in tallies),
        }
        if any(t.infer is not None for t in tallies):
            out["inference_errors"] = sum(t.infer or 0 for t in tallies)
        out |= {"judge_errors": self.judge_errors, "annotation_language": annotation_language}
        return cast(RunSummary, out)


def summarize(rows: Iterable[Mapping[str, Any]]) -> ModalitySummary:
    """Dataset scores of one modality's scene rows (App A.3-A.4): a :class:`ModalitySummary`.

    Reads ``has_demand``, ``predicted_has_demand``, ``s2``..``s5``, ``s2_errors_as_misses``,
    ``parse_error``, ``no_output``, each key point's ``judge_error`` and, where the rows carry it,
    ``inference_error``: full :class:`SceneRow` s or the compact rows of the lm-eval tasks.
    """
    tally = ModalityTally()
    for row in rows:
        tally.add_row(row)
    return tally.summary()


def summarize_run(rows: Iterable[Mapping[str, Any]], judge: Mapping[str, Any], annotation_language: str) -> RunSummary:
    """``summary.json`` of a run's scene rows (a :class:`RunSummary`): :func:`summarize` per
    modality present, in reporting order, then the judge block and the run-wide counts."""
    tally = RunTally()
    for row in rows:
        tally.add_row(row)
    return tally.summary(judge, annotation_language)


# --- a run on disk ---------------------------------------------------------------------------------


class RunError(ValueError):
    """A folder that cannot take a new run, or a run directory whose files are not one consistent
    run; the message names the folder and what is wrong."""


@dataclass(slots=True)
class ScoredRun:
    """``summary`` is summary.json; ``scenes`` are the scenes.jsonl rows, in input order;
    ``problems``: what :func:`read_run` found disagreeing among the run's files (none when written)."""

    summary: RunSummary
    scenes: list[SceneRow]
    problems: list[str] = field(default_factory=list)


def new_run_id() -> str:
    """A fresh run id: UTC time of the start, then 8 random hex digits (``20260501T080535Z-3f9a2c71``)."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(4)}"


def is_run_file(name: str) -> bool:
    """True for the name of a file runs write (:data:`RUN_FILE_PATTERNS`)."""
    return any(fnmatch(name, pattern) for pattern in RUN_FILE_PATTERNS)


def listed_files(run_dir: str | Path) -> dict[str, str] | None:
    """The files ``summary.json`` of ``run_dir`` lists as the run's own, with their SHA-256 (None: no
    readable summary with a run id listing them). Only names of files runs write
    (:data:`RUN_FILE_PATTERNS`) with a SHA-256 are kept: a summary naming anything else vouches for
    nothing (a planted one cannot make ``--overwrite`` delete a user's file)."""
    summary = manifest_object(Path(run_dir) / SUMMARY_FILE)
    if summary is None or not isinstance(summary.get(RUN_ID), str):
        return None
    listed = summary.get(FILES)
    if not isinstance(listed, dict):
        return None
    return {
        name: entry["sha256"]
        for name, entry in listed.items()
        if "/" not in name and is_run_file(name) and isinstance(entry, dict) and is_sha256(entry.get("sha256"))
    }


class RunKind:
    """A run directory as an output folder (:mod:`odu.runs.outdir`): ``summary.json`` (its manifest) and
    the files it lists, each with the listed SHA-256, nothing else."""

    what = "a run"

    def foreign(self, folder: Path) -> list[str]:
        listed = listed_files(folder)
        if listed is None:
            return [e.name for e in sorted(folder.iterdir())]
        return unwritten(folder, listed, manifest=SUMMARY_FILE)


class RunsKind:
    """The output folder of ``odu-bench eval``: one run directory per model, nothing else."""

    what = "the runs of odu-bench eval"

    def foreign(self, folder: Path) -> list[str]:
        found = []
        for entry in sorted(folder.iterdir()):
            if not entry.is_dir() or entry.is_symlink() or not any(entry.iterdir()):
                found.append(entry.name)
            else:
                found += [f"{entry.name}/{name}" for name in RUN.foreign(entry)]
        return found


RUN: FolderKind = RunKind()
RUNS: FolderKind = RunsKind()


def _regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def check_out_dir(out_dir: str | Path, overwrite: bool = False, inputs: Iterable[str | Path | None] = ()) -> bool:
    """Refuse (:class:`RunError`) an output folder that cannot take a new run (:mod:`odu.runs.outdir`): a
    file or a link, a folder that is, holds or lies inside one of ``inputs``, a folder holding
    another run unless ``overwrite``, or (even with ``overwrite``) anything that is not a run's own
    file (``summary.json`` and the files it lists), which is never cleared. Returns True when the
    folder holds a run to replace."""
    try:
        return check_target(out_dir, RUN, inputs=inputs, overwrite=overwrite)
    except OutDirError as exc:
        raise RunError(str(exc)) from None


class JsonlFile:
    """A JSONL file of a run being written: each row gets the run id as its first key; the file's
    SHA-256 and row count go into ``summary.json``."""

    def __init__(self, path: Path, run_id: str, files: dict[str, dict[str, Any]]) -> None:
        self.path, self._files = path, files
        self._prefix = '{"' + RUN_ID + '": ' + dumps(run_id)
        self._fh: IO[bytes] = path.open("wb")
        self._hash = hashlib.sha256()
        self.rows = 0

    def write(self, row: Mapping[str, Any], default: Callable[[Any], Any] | None = None) -> None:
        """One row (a JSON object; ``default`` as in :func:`json.dumps`); a ``run_id`` it holds is
        replaced by this run's."""
        if RUN_ID in row:
            row = {k: v for k, v in row.items() if k != RUN_ID}
        self._write_line(json_text(row, default=default))

    def write_json(self, text: str) -> None:
        """One row given as the one-line JSON text of an object (``{...}``, no ``run_id`` key): a
        registered secret is replaced in its string values only, a request body stored by its rule
        (:func:`odu.io.jsonio.json_text`)."""
        self._write_line(json_text(json.loads(text)) if needs_scrub(text) else text)

    def _write_line(self, text: str) -> None:
        data = utf8(self._prefix + (", " + text[1:] if text != "{}" else "}")) + b"\n"
        self._hash.update(data)
        self._fh.write(data)
        self.rows += 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
            self._files[self.path.name] = {"sha256": self._hash.hexdigest(), "rows": self.rows}

    def __enter__(self) -> JsonlFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RunWriter:
    """One run directory, written as a unit (module docstring).

    Use as a context manager: add files with :meth:`jsonl` and :meth:`json`, then :meth:`commit`
    the summary, which renames the finished folder into place (replacing a run there only with
    ``overwrite``). Leaving the block without a commit (an error) removes the temporary folder;
    a killed process leaves it hidden (``.NAME.partial-PID-...``), and the next run into the same
    place removes it (:mod:`odu.runs.outdir`). ``RunError`` when ``out_dir`` cannot take the run
    (:func:`check_out_dir`; ``inputs``: the paths the command reads, which ``out_dir`` may not be,
    hold or lie inside).
    """

    def __init__(
        self,
        out_dir: str | Path,
        overwrite: bool = False,
        run_id: str | None = None,
        inputs: Iterable[str | Path | None] = (),
    ) -> None:
        self.target = Path(out_dir)
        self.overwrite = overwrite
        check_out_dir(self.target, overwrite, inputs)
        self.run_id = run_id or new_run_id()
        self.files: dict[str, dict[str, Any]] = {}
        try:
            self.folder = work_dir(self.target)
        except OutDirError as exc:
            raise RunError(str(exc)) from None
        self._open: list[JsonlFile] = []
        self.committed = False

    def jsonl(self, name: str) -> JsonlFile:
        """A JSONL file of the run (rows tagged with the run id); close it, or use it as a context."""
        handle = JsonlFile(self.folder / name, self.run_id, self.files)
        self._open.append(handle)
        return handle

    def json(self, name: str, value: Mapping[str, Any], default: Callable[[Any], Any] | None = None) -> None:
        """A JSON file of the run: ``value`` with the run id as its first key."""
        data = write_json(self.folder / name, self._tagged(value), default=default)
        self.files[name] = {"sha256": hashlib.sha256(data).hexdigest()}

    def _tagged(self, value: Mapping[str, Any]) -> dict[str, Any]:
        return {RUN_ID: self.run_id, **{k: v for k, v in value.items() if k not in (RUN_ID, FILES)}}

    def commit(self, summary: Mapping[str, Any]) -> Path:
        """Write ``summary.json`` (run id first, the other files with their hashes last) and move
        the run into place; returns the run directory."""
        for handle in self._open:
            handle.close()
        write_json(self.folder / SUMMARY_FILE, {**self._tagged(summary), FILES: dict(sorted(self.files.items()))})
        target = self.target
        if not self.overwrite and target.is_dir() and any(target.iterdir()):  # another run wrote here meanwhile
            raise RunError(f"--out {target}: another run wrote into it meanwhile; pass --overwrite to replace it")
        try:
            swap_in(self.folder, target, RUN)
        except OutDirError as exc:
            raise RunError(str(exc)) from None
        self.committed = True
        return target

    def discard(self) -> None:
        """Remove the temporary folder (nothing reaches the target)."""
        for handle in self._open:
            handle.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if not self.committed:
            self.discard()


def write_run(
    run: ScoredRun,
    out_dir: str | Path,
    overwrite: bool = False,
    json_files: Mapping[str, Mapping[str, Any]] | None = None,
    jsonl_files: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
) -> Path:
    """Write ``run`` (``scenes.jsonl`` + ``summary.json``, and other files of the run by name:
    ``json_files`` such as a run card, ``jsonl_files`` such as the raw outputs) as one run
    directory (:class:`RunWriter`); returns it."""
    with RunWriter(out_dir, overwrite) as writer:
        for name, rows in {SCENES_FILE: run.scenes, **(jsonl_files or {})}.items():
            with writer.jsonl(name) as handle:
                for row in rows:
                    handle.write(row)
        for name, value in (json_files or {}).items():
            writer.json(name, value)
        return writer.commit(run.summary)


def _file_problems(run_dir: Path, run_id: str, listed: Mapping[str, Any], scenes_hash: str, rows: int) -> list[str]:
    """What disagrees between ``summary.json``'s file list and the files in ``run_dir``."""
    problems = []
    for name, expected in listed.items():
        path = run_dir / name
        if not isinstance(expected, Mapping) or not isinstance(expected.get("sha256"), str):
            problems.append(f"{SUMMARY_FILE} lists {name} without its sha256")
        elif name == SCENES_FILE:
            if scenes_hash != expected["sha256"] or rows != expected.get("rows", rows):
                problems.append(
                    f"{SCENES_FILE} is not the one run {run_id} wrote ({rows} rows, "
                    f"{expected.get('rows')} written; sha256 differs)"
                )
        elif not path.is_file():
            problems.append(f"{name} of run {run_id} is missing")
        elif sha256_file(path) != expected["sha256"]:
            problems.append(f"{name} is not the one run {run_id} wrote (sha256 differs)")
    if SCENES_FILE not in listed:
        problems.append(f"{SUMMARY_FILE} does not list {SCENES_FILE}")
    stale = sorted(
        p.name
        for p in run_dir.iterdir()
        if p.is_file() and is_run_file(p.name) and p.name not in (*listed, SUMMARY_FILE)
    )
    if stale:
        problems.append(f"{shown(stale)} not written by run {run_id} (left from another run?)")
    return problems


#: Scene-row scores: each a fraction in [0, 1] or None (App A.3; NaN is refused when read).
SCORE_FIELDS: tuple[str, ...] = ("s2", "s2_errors_as_misses", "s3", "s4", "s5")
#: Scene-row flags: each a JSON boolean.
FLAG_FIELDS: tuple[str, ...] = ("has_demand", "predicted_has_demand", "parse_error", "no_output")
#: Scene-row content hashes (:func:`odu.core.schema.content_hashes`): each a SHA-256 as
#: :func:`odu.io.files.is_sha256` takes one (64 lowercase hex digits), or null or absent: a row written
#: before the hashes were recorded, paired by id, modality and label only (:func:`has_content_hashes`).
HASH_FIELDS: tuple[str, ...] = ("scene_sha256", "reference_sha256")
#: A value quoted in a row problem, bounded (a 65-character "hash" shown whole, an object cut short).
_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 72


def row_problem(row: Any) -> str | None:
    """What makes ``row`` no scene row :func:`summarize` can count or a report can pair (None: it is
    one): the field named, with what it holds. Scores must be fractions in [0, 1] or null, flags booleans, the
    modality one of :data:`odu.core.constants.MODALITIES`, each key point's ``judge_error`` text or null,
    each content hash (:data:`HASH_FIELDS`) a SHA-256 or null (its problem names the scene too).

    >>> row_problem({"modality": "audio-only", "s2": float("nan")})
    "'has_demand' must be true or false, got nothing"
    """
    if not isinstance(row, Mapping):
        return f"not a JSON object but {type(row).__name__}"
    if not isinstance(row.get("scene_id", ""), str):
        return f"'scene_id' must be text, got {row.get('scene_id')!r}"
    if row.get("modality") not in MODALITIES:
        return f"'modality' must be one of {', '.join(MODALITIES)}, got {row.get('modality')!r}"
    for name in FLAG_FIELDS:
        if not isinstance(row.get(name), bool):
            return f"{name!r} must be true or false, got {_held(row, name)}"
    for name in SCORE_FIELDS:
        value = row.get(name)
        if name not in row and name == "s2_errors_as_misses":
            continue
        fine = value is None or (type(value) in (int, float) and 0 <= value <= 1)  # NaN fails the range
        if not fine:
            return f"{name!r} must be a score in [0, 1] or null, got {_held(row, name)}"
    points = row.get("key_points")
    if not isinstance(points, list) or not all(
        isinstance(k, Mapping) and isinstance(k.get("judge_error"), (str, type(None))) for k in points
    ):
        return "'key_points' must be a list of objects, each with 'judge_error' text or null"
    if not isinstance(row.get("inference_error"), (str, type(None))):
        return f"'inference_error' must be text or null, got {_held(row, 'inference_error')}"
    for name in HASH_FIELDS:
        if row.get(name) is not None and not is_sha256(row[name]):
            return (
                f"{name!r} of scene {row.get('scene_id')} must be a SHA-256 (64 lowercase hex digits) or null, "
                f"got {_SHOWN.repr(row[name])}"
            )
    return None


def has_content_hashes(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` (read: :func:`row_problem` refused any hash that is not a SHA-256) carries
    both content hashes (:data:`HASH_FIELDS`): only then can two runs' rows of a scene be checked
    to hold the same content."""
    return all(row.get(name) is not None for name in HASH_FIELDS)


def _held(row: Mapping[str, Any], name: str) -> str:
    return repr(row[name]) if name in row else "nothing"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        )
    return type(a) is type(b) and a == b


def summary_disagreements(summary: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where ``summary`` disagrees with what :func:`summarize_run` computes from ``rows`` (each
    modality's scores and counts, the run-wide counts): a summary edited by hand, or another run's."""
    computed: dict[str, Any] = dict(summarize_run(rows, {}, ""))
    found = []
    for modality in MODALITIES:
        mine, theirs = computed.get(modality), summary.get(modality)
        if mine is None and theirs is None:
            continue
        if not isinstance(theirs, Mapping) or mine is None:
            found.append(
                f"{modality}: {'no block' if mine is not None else 'a block'} in {SUMMARY_FILE} but "
                f"{'scenes' if mine is not None else 'no scene'} of it in {SCENES_FILE}"
            )
            continue
        for key, value in mine.items():
            if not _same(theirs.get(key), value):
                found.append(f"{modality} {key} is {theirs.get(key)!r} in {SUMMARY_FILE}, {value!r} from {SCENES_FILE}")
    for key in ("parse_errors", "no_output", "inference_errors", "judge_errors"):
        if key in computed and not _same(summary.get(key), computed[key]):
            found.append(f"{key} is {summary.get(key)!r} in {SUMMARY_FILE}, {computed[key]!r} from {SCENES_FILE}")
    return found


def read_run(run_dir: str | Path, strict: bool = True) -> ScoredRun:
    """Read back a run directory and check that its files are one run (module docstring).

    ``RunError`` names the folder when ``summary.json`` or ``scenes.jsonl`` is missing or
    unreadable; disagreements between the files (another run's rows or files, a hash that does not
    match, a stale file, no run id) raise it too when ``strict``, else they are returned in
    :attr:`ScoredRun.problems`. The rows come back without their ``run_id``.
    """
    run_dir = Path(run_dir)
    for needed in (SUMMARY_FILE, SCENES_FILE):
        if not (run_dir / needed).is_file():
            raise RunError(f"{run_dir}: no {needed} (is this an `odu-bench score` output directory?)")
    try:
        summary = read_json(run_dir / SUMMARY_FILE)
    except (JsonFileError, OSError) as exc:
        raise RunError(f"{run_dir}: unreadable run ({exc})") from None
    if not isinstance(summary, dict):
        raise RunError(f"{run_dir}: {SUMMARY_FILE} is not a JSON object")
    run_id = summary.get(RUN_ID)
    digest, rows, foreign = hashlib.sha256(), [], []

    def hashed(lines: Iterable[bytes]) -> Iterator[bytes]:
        for line in lines:
            digest.update(line)
            yield line

    try:
        fh = open_regular(run_dir / SCENES_FILE)
    except (JsonFileError, OSError) as exc:
        raise RunError(f"{run_dir}: unreadable run ({exc})") from None
    with fh:
        try:
            for number, row in iter_lines(hashed(bounded_lines(fh, run_dir / SCENES_FILE)), run_dir / SCENES_FILE):
                if (problem := row_problem(row)) is not None:
                    raise RunError(f"{run_dir / SCENES_FILE}:{number}: not a scene row: {problem}")
                if row.pop(RUN_ID, None) != run_id and run_id is not None:
                    foreign.append(number)
                rows.append(row)
        except JsonFileError as exc:
            raise RunError(f"{run_dir}: unreadable run ({exc})") from None
    problems = []
    if not isinstance(run_id, str):
        problems.append(
            "no run id: written by an older odu-bench or by hand, so its files cannot be checked against each other"
        )
    else:
        if foreign:
            problems.append(f"{len(foreign)} row(s) of {SCENES_FILE} are not of run {run_id} (line {foreign[0]})")
        listed = summary.get(FILES)
        problems += _file_problems(
            run_dir, run_id, listed if isinstance(listed, Mapping) else {}, digest.hexdigest(), len(rows)
        )
    if problems and strict:
        raise RunError(f"{run_dir}: " + "; ".join(problems))
    disagree = summary_disagreements(summary, rows)
    if disagree:  # no number may be shown that its scene rows do not give, whatever is allowed
        raise RunError(
            f"{run_dir}: "
            + "".join(f"{p}; " for p in problems)
            + f"{SUMMARY_FILE} disagrees with {SCENES_FILE} ({shown(disagree, 3)}); edited by hand or "
            "mixed with another run: score it again"
        )
    return ScoredRun(cast(RunSummary, summary), cast(list[SceneRow], rows), problems)


def incomplete(summary: Mapping[str, Any]) -> list[str]:
    """What a run's numbers lack, so that no Avg may rest on them: judge errors that remain
    (segments left out of M2) and a modality with positive scenes but no M2."""
    reasons = []
    if summary.get("judge_errors"):
        reasons.append(f"{summary['judge_errors']} judge error(s) remain")
    for modality in MODALITIES:
        block = summary.get(modality)
        if isinstance(block, Mapping) and block.get("n_positive") and block.get("m2") is None:
            reasons.append(f"M2 missing for {modality}")
    return reasons


__all__ = [
    "FILES",
    "RUN",
    "RUNS",
    "RUN_CARD_NAME",
    "RUN_FILE_PATTERNS",
    "RUN_ID",
    "SCENES_FILE",
    "SUMMARY_FILE",
    "SCORE_FIELDS",
    "FLAG_FIELDS",
    "HASH_FIELDS",
    "CandidateRow",
    "EvalSceneRow",
    "JsonlFile",
    "KeyPointRow",
    "MatchRow",
    "ModalitySummary",
    "ModalityTally",
    "RunError",
    "RunSummary",
    "RunTally",
    "RunWriter",
    "ScoredRun",
    "SceneRow",
    "check_out_dir",
    "has_content_hashes",
    "listed_files",
    "incomplete",
    "is_run_file",
    "new_run_id",
    "read_run",
    "row_problem",
    "summary_disagreements",
    "summarize",
    "summarize_run",
    "write_run",
]
