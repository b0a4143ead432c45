"""Scored runs as report inputs: one system per ``odu-bench score`` output directory.

A system's display name is, in order: the ``--names`` entry, the run card's ``system`` or model
(``run_card.json`` next to ``summary.json``, :mod:`odu.harness.runcard`), the ``system`` field of
``summary.json``, and finally the directory name.

A run is reported only when its numbers can stand: its files are one run (:func:`odu.runs.contract.read_run`)
and nothing is missing from them (:func:`odu.runs.contract.incomplete`: judge errors, M2). Otherwise loading
it is refused, naming the run and why, unless the caller allows incomplete runs: the system then
carries the reasons, and the report marks its rows and shows no Avg for it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.caveats import APPROXIMATE_JUDGE, run_caveats, summary_counts
from ..io.jsonio import iter_jsonl, read_json
from ..models import lm_eval_system_label
from ..runs.contract import (
    RUN_CARD_NAME,
    SCENES_FILE,
    SUMMARY_FILE,
    has_content_hashes,
    incomplete,
    read_run,
    row_problem,
    summarize_run,
)

#: scenes.jsonl fields the report reads.
ROW_FIELDS: tuple[str, ...] = (
    "scene_id",
    "modality",
    "language",
    "source",
    "label",
    "axes",
    "has_demand",
    "predicted_has_demand",
    "s2",
    "s3",
    "s4",
    "s5",
    "key_points",
)

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class System:
    """One scored run: its display name, summary.json and scenes.jsonl rows, and what
    :func:`odu.runs.contract.read_run` found disagreeing among its files (``problems``)."""

    name: str
    summary: Mapping[str, Any]
    rows: Sequence[Row]
    problems: Sequence[str] = ()

    @property
    def approximate(self) -> bool:
        """True when M2 came from an approximate judge (e.g. the offline lexical judge)."""
        return bool(self.summary.get("judge", {}).get("approximate"))

    @property
    def caveats(self) -> list[dict[str, str]]:
        """What qualifies this run's numbers (:mod:`odu.core.caveats`): those ``odu-bench eval`` stored in
        ``summary.json``, else the small-sample ones of its scene counts; the approximate judge is
        left to the † mark."""
        stored = self.summary.get("caveats")
        caveats: Sequence[Mapping[str, Any]] = (
            [c for c in stored if isinstance(c, Mapping) and "kind" in c and "text" in c]
            if isinstance(stored, list)
            else run_caveats({}, summary_counts(self.summary))
        )
        return [{"kind": str(c["kind"]), "text": str(c["text"])} for c in caveats if c["kind"] != APPROXIMATE_JUDGE]

    @property
    def incomplete(self) -> list[str]:
        """Why no Avg may rest on this run: its files disagree, judge errors remain, M2 is missing."""
        return [*self.problems, *incomplete(self.summary)]

    def rows_of(self, modality: str) -> list[Row]:
        return [r for r in self.rows if r["modality"] == modality]


def _card_name(run_dir: Path, summary: Mapping[str, Any]) -> str | None:
    """``system`` of the run card, else its model (``model_args.model`` / ``pretrained``, else the
    backend name; ``odu.harness.runcard`` layout), else ``system`` of summary.json."""
    if name := card_system_name(read_object(run_dir / RUN_CARD_NAME)):
        return name
    name = summary.get("system")
    return name if isinstance(name, str) and name else None


def card_system_name(card: Mapping[str, Any]) -> str | None:
    """A run card's ``system``, else its model (``model_args.model`` / ``pretrained``, else the
    backend name; ``odu.harness.runcard`` layout)."""
    model = card.get("model")
    if isinstance(model, Mapping):
        given = model.get("model_args")
        args = given if isinstance(given, Mapping) else {}
        model = args.get("model") or args.get("pretrained") or model.get("name")
    for name in (card.get("system"), model):
        if isinstance(name, str) and name:
            return name
    return None


#: The samples files lm-eval's CLI writes with ``--log_samples`` (``samples_<task>_<timestamp>.jsonl``).
HARNESS_SAMPLES = "samples_*_*.jsonl"


@dataclass(frozen=True, slots=True)
class HarnessRun:
    """The newest lm-eval run of an output folder: each scene's scored row and raw output, the
    judges' accounting, the reference language, its timestamp and its run card (``{}``: none)."""

    rows: list[dict[str, Any]]
    outputs: dict[str, str | None]
    judges: list[dict[str, Any]]
    language: str
    stamp: str
    card: dict[str, Any]


def harness_folder(run_dir: Path) -> Path | None:
    """The lm-eval output folder ``run_dir`` names: itself when it holds samples files and no
    ``summary.json`` / ``scenes.jsonl`` of a scored run, or its one model folder when it is the
    ``--output_path`` lm-eval wrote that folder into; else None."""
    if (run_dir / SUMMARY_FILE).is_file() or (run_dir / SCENES_FILE).is_file() or not run_dir.is_dir():
        return None
    if any(run_dir.glob(HARNESS_SAMPLES)):
        return run_dir
    inner = [d for d in run_dir.iterdir() if d.is_dir() and any(d.glob(HARNESS_SAMPLES))]
    return inner[0] if len(inner) == 1 else None


def read_harness_run(run_dir: Path) -> HarnessRun:
    """The newest lm-eval run in ``run_dir``: its samples files hold each scene's scored row
    (``filtered_resps[0]``, written by ``odu.harness.tasks.score_responses``; lm-eval's CLI logs it as
    a Python literal, read with ``ast.literal_eval``, which evaluates no code) and raw output."""
    files = sorted(run_dir.glob(HARNESS_SAMPLES))
    stamp = max(f.stem.rsplit("_", 1)[1] for f in files)
    rows: dict[str, dict[str, Any]] = {}
    outputs: dict[str, str | None] = {}
    judges: list[dict[str, Any]] = []
    language = "scene"
    for path in sorted(f for f in files if f.stem.endswith(f"_{stamp}")):
        for n, sample in iter_jsonl(path):  # bounded lines; JsonFileError names the file and line
            try:
                scored = sample["filtered_resps"][0]
                if isinstance(scored, str):  # lm-eval's CLI logs the filter's dict as its repr
                    scored = ast.literal_eval(scored)
                sid = scored["scene"]["scene_id"]
            except (KeyError, IndexError, TypeError, ValueError, SyntaxError) as exc:
                raise ValueError(f"{path}:{n}: not an ODU-Bench sample ({exc!r})") from None
            if (problem := row_problem(scored["scene"])) is not None:
                raise ValueError(f"{path}:{n}: not an ODU-Bench sample: its scene row {problem}")
            rows.setdefault(sid, {**scored["scene"], "inference_error": scored.get("inference_error")})
            outputs.setdefault(sid, scored.get("raw_output"))
            judges += [scored["judge"]] if scored.get("judge") else []
            language = scored.get("annotation_language") or language
    card = read_object(run_dir / f"run_card_{stamp}.json")
    if not card.get("system"):  # plain lm_eval writes no run card: the system named from its results
        config = read_object(run_dir / f"results_{stamp}.json").get("config") or {}
        card = {**card, "system": lm_eval_system_label(config.get("model"), config.get("model_args"))}
    return HarnessRun(list(rows.values()), outputs, judges, language, stamp, card)


def harness_system(run_dir: Path, harness: HarnessRun, name: str | None = None) -> System:
    """The system of an lm-eval run: its rows summarised as ``odu-bench score`` does
    (:func:`odu.runs.contract.summarize_run`), named by ``name``, its run card, or the folder."""
    from ..judge.openai_judge import merge_judge_infos

    summary = summarize_run(harness.rows, merge_judge_infos(harness.judges), harness.language)
    return System(name or card_system_name(harness.card) or run_dir.resolve().name, summary, harness.rows)


def read_object(path: Path) -> dict[str, Any]:
    """A JSON object file: a run card, lm-eval's results (``{}`` when there is none or it holds no
    object); :class:`odu.io.jsonio.JsonFileError` (a ``ValueError``) naming the file when it is not JSON."""
    if not path.is_file():
        return {}
    card = read_json(path)
    return card if isinstance(card, dict) else {}


def load_system(run_dir: str | Path, name: str | None = None, allow_incomplete: bool = False) -> System:
    """Read a scored run directory, or an lm-eval output folder written with ``--log_samples``
    (:func:`read_harness_run`); ``ValueError`` names the directory and what is wrong with it,
    including an incomplete run (:attr:`System.incomplete`) unless ``allow_incomplete``."""
    run_dir = Path(run_dir)
    if (folder := harness_folder(run_dir)) is not None:
        return _checked(harness_system(folder, read_harness_run(folder), name), folder, allow_incomplete)
    run = read_run(run_dir, strict=False)
    for n, row in enumerate(run.scenes, 1):
        missing = [k for k in ROW_FIELDS if k not in row]
        if missing:
            raise ValueError(f"{run_dir / SCENES_FILE}: line {n} lacks {', '.join(missing)}")
    ids = [r["scene_id"] for r in run.scenes]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{run_dir}: duplicate scene ids in {SCENES_FILE}")
    name = name or _card_name(run_dir, run.summary) or run_dir.resolve().name
    return _checked(System(name, run.summary, run.scenes, tuple(run.problems)), run_dir, allow_incomplete)


def _checked(system: System, run_dir: Path, allow_incomplete: bool) -> System:
    """``system``, unless it is incomplete and that is not allowed (``ValueError`` naming why)."""
    if system.incomplete and not allow_incomplete:
        raise ValueError(
            f"run {system.name} ({run_dir}) is not reported: {'; '.join(system.incomplete)}. No Avg may rest on it: "
            "score it again (--overwrite), or pass --allow-incomplete to show it marked, without Avg"
        )
    return system


def load_systems(
    run_dirs: Sequence[str | Path], names: Sequence[str] | None = None, allow_incomplete: bool = False
) -> list[System]:
    """Load several runs; names must be unique and, if given, one per run."""
    if names and len(names) != len(run_dirs):
        raise ValueError(f"--names gives {len(names)} name(s) for {len(run_dirs)} run(s)")
    systems = [load_system(d, names[i] if names else None, allow_incomplete) for i, d in enumerate(run_dirs)]
    seen = [s.name for s in systems]
    dupes = sorted({n for n in seen if seen.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate system name(s) {', '.join(dupes)}: pass --names")
    check_labels_agree(systems)
    return systems


def reference_language(system: System, row: Row) -> str:
    """The language of the reference ``row``'s scene was scored against in ``system``."""
    chosen = system.summary.get("annotation_language")
    return str(row.get("language")) if chosen in (None, "", "scene") else str(chosen)


def check_labels_agree(systems: Sequence[System]) -> None:
    """Runs compared scene by scene must hold the same scenes: per scene id, the same modality and
    label, the same content (``scene_sha256``: clips, replies, labels, axes) and, where they were
    scored against the same reference language, the same reference (``reference_sha256``). A row
    without a hash (absent: a run written before they were recorded; or null) is checked by modality
    and label only (:func:`unhashed`); a hash that is not a SHA-256 was refused when the run was read
    (:func:`odu.runs.contract.row_problem`). ``ValueError`` names the scene and both runs."""
    seen: dict[str, tuple[str, Row, str]] = {}
    for s in systems:
        for r in s.rows:
            language = reference_language(s, r)
            first_name, first, first_language = seen.setdefault(r["scene_id"], (s.name, r, language))
            both = f"{first_name} has {{}} but {s.name} has {{}}"
            if (first["modality"], first["label"]) != (r["modality"], r["label"]):
                pair = (f"{first['modality']}/{first['label']}", f"{r['modality']}/{r['label']}")
                raise ValueError(f"scene {r['scene_id']}: {both.format(*pair)}")
            for key, what, applies in (
                ("scene_sha256", "its clips, replies or labels differ", True),
                ("reference_sha256", f"its {language} reference differs", language == first_language),
            ):
                if applies and None not in (first.get(key), r.get(key)) and first[key] != r[key]:
                    raise ValueError(
                        f"scene {r['scene_id']}: {first_name} and {s.name} scored different content under this id "
                        f"({what}: {key} {first[key][:12]}... vs {r[key][:12]}...); pairing them would compare "
                        "different scenes: compare runs scored against the same dataset"
                    )


def unhashed(systems: Sequence[System]) -> list[str]:
    """Names of the systems with a row that lacks a content hash, absent or null
    (:func:`odu.runs.contract.has_content_hashes`: :func:`check_labels_agree` then pairs that scene by
    id, modality and label only)."""
    return [s.name for s in systems if not all(has_content_hashes(r) for r in s.rows)]


def common_rows(
    systems: Sequence[System], modality: str, keep: Callable[[Row], bool]
) -> tuple[list[str], list[dict[str, Row]]]:
    """Scene ids (sorted) kept by ``keep`` in EVERY system, and each system's rows by id.

    This is the paper's common population ("scored by all systems", App E.1 / E.3).
    """
    per_system = [{r["scene_id"]: r for r in s.rows_of(modality) if keep(r)} for s in systems]
    ids = set(per_system[0]) if per_system else set()
    for rows in per_system[1:]:
        ids &= set(rows)
    return sorted(ids), per_system
