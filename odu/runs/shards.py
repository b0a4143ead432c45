"""Splitting one run over N machines and putting it back together (``odu-bench eval --shard K/N``,
``odu-bench merge``).

A scene belongs to shard ``K`` of ``N`` when the SHA-256 of its id, read as a number, is ``K - 1``
modulo ``N`` (:func:`shard_index`): a stable split that needs no list of scenes and gives each
scene the same shard on every machine. Each shard is an ordinary run directory whose run card
records the shard (``"shard": {"index": K, "count": N}``) and the fingerprint of the whole
dataset. :func:`merge_runs` checks that the shards are the N parts of one run (same dataset,
tasks, model, judge and settings; every shard once; no scene twice; each scene in its own shard;
every scene of the dataset present), then rebuilds the files of the unsharded run from the shards'
logged samples, in the unsharded run's order, so that the merged ``summary.json`` carries exactly
the numbers of one run over all scenes (only the run id and the file hashes differ).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.jsonio import JsonFileError, iter_jsonl, read_json
from .contract import FILES, RUN_CARD_NAME, RUN_ID, read_run, row_problem

#: The run card key of a shard's position: ``{"index": K, "count": N}``.
SHARD_KEY = "shard"
#: The run card key listing the tasks whose samples a run logged, in the run's order.
LOGGED_TASKS_KEY = "tasks_logged"
#: Run-card fields that must agree between the shards of one run (dotted paths).
SAME_RUN_FIELDS: tuple[str, ...] = (
    "prompt",
    "tasks",
    "model.name",
    "model.model_args",
    "lm_eval.limit",
    "lm_eval.bootstrap_iters",
)
#: Keys of the model backend's run-card block that describe a shard's work, not its settings.
_WORK_KEYS = frozenset({"stats"})
#: Keys of a judge block that count work rather than name settings (summed over shards, and over ranks).
JUDGE_COUNTERS = frozenset(
    {"segments", "requests", "cache_hits", "retries", "reasks", "errors", "prompt_tokens", "completion_tokens"}
    | {"wall_time_s"}
)


class ShardError(ValueError):
    """Shards that are not the parts of one run; the message names the problem."""


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as ``(K, N)`` with ``1 <= K <= N``; :class:`ValueError` otherwise.

    >>> parse_shard("2/3")
    (2, 3)
    """
    index, sep, count = text.partition("/")
    try:
        k, n = int(index), int(count)
    except ValueError:
        k = n = 0
    if not sep or n < 1 or not 1 <= k <= n:
        raise ValueError(f"--shard must be K/N with 1 <= K <= N (e.g. 1/2), got {text!r}")
    return k, n


#: A SLURM array's variables (``sbatch --array=0-3``: the task's id, the tasks' number, lowest and highest id).
SLURM_TASK_ID, SLURM_TASK_COUNT = "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"
SLURM_TASK_MIN, SLURM_TASK_MAX = "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX"
#: A Kubernetes indexed Job's index of the pod (0 to ``completions - 1``); the count is not in the environment.
JOB_INDEX = "JOB_COMPLETION_INDEX"
#: ``--shard`` values that take the shard from the environment.
AUTO = "auto"


def _env_number(env: Mapping[str, str], name: str) -> int:
    try:
        return int(env[name])
    except ValueError:
        raise ValueError(f"--shard {AUTO}: ${name} must be a whole number, got {env[name]!r}") from None


def shard_from_env(text: str, env: Mapping[str, str]) -> tuple[tuple[int, int], str]:
    """``--shard auto`` or ``auto/N`` as ``((K, N), where)``, read from a SLURM array or a Kubernetes
    indexed Job (``where`` says which variables gave it); :class:`ValueError` naming what is missing.

    A SLURM array gives both: K is the task's place in its range (``SLURM_ARRAY_TASK_ID`` minus
    ``SLURM_ARRAY_TASK_MIN``, plus 1), N its ``SLURM_ARRAY_TASK_COUNT``; the range must be whole
    (``--array=0-3`` or ``1-4``: ``MAX - MIN + 1`` tasks, no step or list). An indexed Job gives K only
    (``JOB_COMPLETION_INDEX`` + 1): N is the Job's ``completions``, given as ``auto/N``. A SLURM array
    is read first.

    >>> shard_from_env("auto", {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4",
    ...                         "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "3"})[0]
    (2, 4)
    >>> shard_from_env("auto/3", {"JOB_COMPLETION_INDEX": "2"})
    ((3, 3), 'JOB_COMPLETION_INDEX=2')
    """
    head, sep, given = text.partition("/")
    try:
        count: int | None = int(given) if sep else None
    except ValueError:
        count = None
    if head != AUTO or (sep and (count is None or count < 1)):
        raise ValueError(f"--shard must be K/N, {AUTO} or {AUTO}/N with N >= 1, got {text!r}")
    if SLURM_TASK_ID in env:
        task = _env_number(env, SLURM_TASK_ID)
        low = _env_number(env, SLURM_TASK_MIN) if SLURM_TASK_MIN in env else None
        if low is None or SLURM_TASK_COUNT not in env or SLURM_TASK_MAX not in env:
            need = f"${SLURM_TASK_MIN}, ${SLURM_TASK_MAX} and ${SLURM_TASK_COUNT}"
            raise ValueError(f"--shard {AUTO}: ${SLURM_TASK_ID} is set but not {need} (set by sbatch --array)")
        tasks, high = _env_number(env, SLURM_TASK_COUNT), _env_number(env, SLURM_TASK_MAX)
        if tasks != high - low + 1:
            raise ValueError(
                f"--shard {AUTO}: the SLURM array's ids {low}..{high} hold {tasks} task(s), not a whole range: "
                "use --array=0-N-1 (or 1-N), without a step or a list"
            )
        if count is not None and count != tasks:
            raise ValueError(f"--shard {text}: the SLURM array has {tasks} task(s) (${SLURM_TASK_COUNT})")
        where = f"{SLURM_TASK_ID}={task} of {low}-{high}"
        return _checked(task - low + 1, tasks, text, where), where
    if JOB_INDEX in env:
        if count is None:
            raise ValueError(
                f"--shard {AUTO}: ${JOB_INDEX} gives this pod's index but not the number of shards "
                f"(a Kubernetes indexed Job puts no count in the environment): give --shard {AUTO}/N, "
                "N the Job's completions"
            )
        where = f"{JOB_INDEX}={env[JOB_INDEX]}"
        return _checked(_env_number(env, JOB_INDEX) + 1, count, text, where), where
    raise ValueError(
        f"--shard {text}: neither ${SLURM_TASK_ID} (a SLURM array, sbatch --array) nor ${JOB_INDEX} "
        "(a Kubernetes indexed Job) is set: give --shard K/N"
    )


def _checked(index: int, count: int, text: str, where: str) -> tuple[int, int]:
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text}: {where} is shard {index} of {count}, not 1 to {count}")
    return index, count


def shard_index(scene_id: str, count: int) -> int:
    """The shard (1-based) of ``scene_id`` among ``count``: SHA-256 of the id modulo ``count``, plus 1."""
    return int(hashlib.sha256(scene_id.encode("utf-8")).hexdigest(), 16) % count + 1


def in_shard(scene_id: str, shard: tuple[int, int] | None) -> bool:
    """True when ``scene_id`` belongs to ``shard`` (``(K, N)``; None: the whole run)."""
    return shard is None or shard_index(scene_id, shard[1]) == shard[0]


# --- merging ------------------------------------------------------------------------------------------


@dataclass
class Shard:
    """One shard's run directory as read back."""

    path: Path
    index: int
    count: int
    card: dict[str, Any]
    summary: dict[str, Any]
    results: dict[str, Any]
    samples: dict[str, list[dict[str, Any]]]


def _get(card: Mapping[str, Any], dotted: str) -> Any:
    """A run-card field by dotted path, without what differs between the shards of one run: the
    tasks' sample counts and the ``preflight`` model argument."""
    value: Any = card
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if dotted == "tasks" and isinstance(value, Mapping):
        value = {
            t: {k: v for k, v in c.items() if k != "n_samples"} for t, c in value.items() if isinstance(c, Mapping)
        }
    if dotted == "model.model_args" and isinstance(value, Mapping):
        value = {k: v for k, v in value.items() if k != "preflight"}
    return value


def _judge_settings(judge: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in judge.items() if k not in JUDGE_COUNTERS}


def _backend_settings(card: Mapping[str, Any]) -> Any:
    backend = _get(card, "model.backend")
    return {k: v for k, v in backend.items() if k not in _WORK_KEYS} if isinstance(backend, Mapping) else backend


def _datasets(card: Mapping[str, Any]) -> dict[str, Any]:
    """The dataset fingerprint of a shard, without what depends on the shard (its scene count)."""
    return {
        key: {k: v for k, v in info.items() if k not in ("n_scenes", SHARD_KEY)}
        for key, info in (card.get("dataset") or {}).items()
        if isinstance(info, Mapping)
    }


_KINDS = {dict: "a JSON object", list: "a JSON array", str: "text", int: "an integer"}


def _need(value: Any, kind: type, where: Path | str, field: str) -> Any:
    """``value`` if it is a ``kind`` (an ``int`` is never a ``bool``), else :class:`ShardError`
    naming the file (and line) and the field."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        held = "nothing" if value is None else f"{type(value).__name__} {json.dumps(value, default=str)[:60]}"
        raise ShardError(f"{where}: {field} must be {_KINDS[kind]}, got {held}")
    return value


def _card_fields(card: Any, where: Path) -> tuple[int, int]:
    """Check what merging reads of a shard's run card; its ``(K, N)``."""
    _need(card, dict, where, "the run card")
    if not isinstance(card.get(SHARD_KEY), Mapping):
        raise ShardError(f"{where.parent}: not a shard (its run card names no --shard K/N)")
    index = _need(card[SHARD_KEY].get("index"), int, where, f"{SHARD_KEY}.index")
    count = _need(card[SHARD_KEY].get("count"), int, where, f"{SHARD_KEY}.count")
    if not 1 <= index <= count:
        raise ShardError(f"{where}: {SHARD_KEY} is {index}/{count}, not K/N with 1 <= K <= N")
    for i, task in enumerate(_need(card.get(LOGGED_TASKS_KEY), list, where, LOGGED_TASKS_KEY)):
        _need(task, str, where, f"{LOGGED_TASKS_KEY}[{i}]")
    for key, info in _need(card.get("dataset"), dict, where, "dataset").items():
        _need(info, dict, where, f"dataset.{key}")
        for field in ("n_scenes", "n_scenes_total"):
            _need(info.get(field), int, where, f"dataset.{key}.{field}")
    for field in ("model", "tasks", "lm_eval"):
        if card.get(field) is not None:
            _need(card[field], dict, where, field)
    if isinstance(card.get("model"), Mapping) and card["model"].get("backend") is not None:
        _need(card["model"]["backend"], dict, where, "model.backend")
    return index, count


def _results_fields(results: Any, where: Path) -> None:
    """Check what merging reads of a shard's lm-eval results."""
    _need(results, dict, where, "results.json")
    for task, block in _need(results.get("results"), dict, where, "results").items():
        _need(block, dict, where, f"results.{task}")
    for task, block in (_need(results.get("n-samples") or {}, dict, where, "n-samples")).items():
        for name, value in _need(block, dict, where, f"n-samples.{task}").items():
            _need(value, int, where, f"n-samples.{task}.{name}")


def _sample_fields(sample: Any, where: str) -> dict[str, Any]:
    """Check what merging reads of one logged sample (a line of ``samples_<task>.jsonl``)."""
    _need(sample, dict, where, "the line")
    doc = _need(sample.get("doc"), dict, where, "doc")
    _need(doc.get("scene_id"), str, where, "doc.scene_id")
    try:
        media = json.loads(_need(doc.get("media"), str, where, "doc.media"))
    except ValueError as exc:
        raise ShardError(f"{where}: doc.media must be a JSON dataset locator, got undecodable text ({exc})") from None
    _need(_need(media, dict, where, "doc.media").get("row"), int, where, "doc.media.row")
    _need(media.get("config"), str, where, "doc.media.config")
    responses = _need(sample.get("filtered_resps"), list, where, "filtered_resps")
    if not responses:
        raise ShardError(f"{where}: filtered_resps must hold the scored record, got an empty list")
    scored = _need(responses[0], dict, where, "filtered_resps[0]")
    row = _need(scored.get("scene"), dict, where, "filtered_resps[0].scene")
    if (problem := row_problem(row)) is not None:
        raise ShardError(f"{where}: filtered_resps[0].scene is not a scene row: {problem}")
    if row.get("scene_id") != doc["scene_id"]:
        raise ShardError(
            f"{where}: filtered_resps[0].scene is scene {row.get('scene_id')!r}, the doc {doc['scene_id']!r}"
        )
    for field in ("raw_output", "inference_error"):
        if scored.get(field) is not None:
            _need(scored[field], str, where, f"filtered_resps[0].{field}")
    if scored.get("judge") is not None:
        _need(scored["judge"], dict, where, "filtered_resps[0].judge")
    return {k: v for k, v in sample.items() if k != RUN_ID}


def _read_shard(path: Path) -> Shard:
    """One shard's files, every field merging reads checked (:class:`ShardError` naming the file,
    line and field); :class:`~odu.runs.contract.RunError` when the files are not one run."""
    run = read_run(path)
    try:
        card = read_json(path / RUN_CARD_NAME)
        results = read_json(path / "results.json")
    except (JsonFileError, OSError) as exc:
        raise ShardError(f"{path}: not a run of odu-bench eval ({exc})") from None
    index, count = _card_fields(card, path / RUN_CARD_NAME)
    _results_fields(results, path / "results.json")
    summary: dict[str, Any] = dict(run.summary)
    _need(summary.get("judge") or {}, dict, path / "summary.json", "judge")
    listed: dict[str, Any] = dict(summary.get(FILES) or {})
    names = {n.removeprefix("samples_").removesuffix(".jsonl") for n in listed if n.startswith("samples_")}
    if set(card[LOGGED_TASKS_KEY]) != names:
        raise ShardError(f"{path}: its run card's {LOGGED_TASKS_KEY} does not name its samples files")
    samples: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(listed):
        if name.startswith("samples_") and name.endswith(".jsonl"):
            rows = [_sample_fields(row, f"{path / name}:{n}") for n, row in iter_jsonl(path / name)]
            samples[name.removeprefix("samples_").removesuffix(".jsonl")] = rows
    held = {r["filtered_resps"][0]["scene"]["scene_id"] for rows in samples.values() for r in rows}
    if held != {row["scene_id"] for row in run.scenes}:
        raise ShardError(f"{path}: its samples files and scenes.jsonl hold different scenes")
    return Shard(path, index, count, card, summary, results, samples)


def _check_same_run(shards: Sequence[Shard]) -> None:
    first = shards[0]
    checks: list[tuple[str, Any]] = [(f, lambda s, f=f: _get(s.card, f)) for f in SAME_RUN_FIELDS]
    checks += [
        ("dataset", lambda s: _datasets(s.card)),
        ("model backend settings", lambda s: _backend_settings(s.card)),
        ("judge", lambda s: _judge_settings(s.summary.get("judge") or {})),
        ("annotation_language", lambda s: s.summary.get("annotation_language")),
        ("tasks logged", lambda s: s.card.get(LOGGED_TASKS_KEY)),
    ]
    for what, value in checks:
        for other in shards[1:]:
            if value(other) != value(first):
                raise ShardError(
                    f"{other.path} and {first.path} are shards of different runs: their {what} differ "
                    f"({json.dumps(value(other), default=str)[:160]} vs {json.dumps(value(first), default=str)[:160]})"
                )


def _check_parts(shards: Sequence[Shard]) -> None:
    """One split (the same N), every shard of it once."""
    counts = {s.count for s in shards}
    if len(counts) > 1:
        raise ShardError(f"shards of different splits: N = {', '.join(map(str, sorted(counts)))}")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for s in shards:
        if s.index in seen:
            raise ShardError(f"shard {s.index}/{count} given twice: {seen[s.index]} and {s.path}")
        seen[s.index] = s.path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise ShardError(f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing")


def _check_scenes(shards: Sequence[Shard]) -> None:
    """Each scene in its own shard, in one shard only, and every scene of the dataset present."""
    count = shards[0].count
    owner: dict[tuple[str, str], Path] = {}
    for s in shards:
        for task, rows in s.samples.items():
            for row in rows:
                sid = row["doc"]["scene_id"]
                if shard_index(sid, count) != s.index:
                    raise ShardError(f"{s.path}: scene {sid} of task {task} does not belong to shard {s.index}/{count}")
                if (task, sid) in owner:
                    raise ShardError(f"scene {sid} of task {task} is in {owner[task, sid]} and in {s.path}")
                owner[task, sid] = s.path
    for task in shards[0].samples:  # every scene present, as many as each run card says
        rows_of = {s.path: s.samples.get(task, []) for s in shards}
        first = next((rows[0] for rows in rows_of.values() if rows), None)
        if first is None:
            continue
        key = _dataset_key(first)
        for s in shards:
            said = (s.card["dataset"].get(key) or {}).get("n_scenes")
            if said != len(rows_of[s.path]):
                raise ShardError(
                    f"{s.path}: task {task} holds {len(rows_of[s.path])} scene(s) but its run card says {said} "
                    "(a scene dropped or added?)"
                )
        total = (shards[0].card["dataset"].get(key) or {}).get("n_scenes_total")
        found = sum(len(rows) for rows in rows_of.values())
        if found != total:
            raise ShardError(f"dataset {key} (task {task}): the shards hold {found} of its {total} scenes")


def _dataset_key(sample: Mapping[str, Any]) -> str:
    """The run card's dataset key of a logged sample: its config, ``_text`` for a text-only doc."""
    return json.loads(sample["doc"]["media"])["config"] + ("_text" if sample["doc"].get("asr") else "")


def _row(sample: Mapping[str, Any]) -> int:
    """The dataset row of a logged sample (its doc's media locator), the unsharded run's order."""
    return int(json.loads(sample["doc"]["media"])["row"])


def read_shards(paths: Sequence[str | Path]) -> list[Shard]:
    """The shards at ``paths``, checked to be the parts of one run (:class:`ShardError`,
    :class:`~odu.runs.contract.RunError` otherwise), in shard order."""
    if not paths:
        raise ShardError("no shard given")
    shards = sorted((_read_shard(Path(p)) for p in paths), key=lambda s: s.index)
    _check_parts(shards)
    _check_same_run(shards)
    _check_scenes(shards)
    return shards


def merged_samples(shards: Sequence[Shard]) -> dict[str, list[dict[str, Any]]]:
    """Every task's logged samples over all shards, in the unsharded run's order (dataset rows)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for task in shards[0].card.get(LOGGED_TASKS_KEY) or shards[0].samples:
        rows = [row for s in shards for row in s.samples.get(task, [])]
        out[task] = sorted(rows, key=_row)
        for doc_id, row in enumerate(out[task]):
            row["doc_id"] = doc_id
    return out


def summed_counters(blocks: Sequence[Mapping[str, Any]], counters: Collection[str]) -> dict[str, Any]:
    """The first of ``blocks`` with each of ``counters`` that any block holds summed over them all
    (a float rounded to 3 places): the accounting of several parts of one run as one.

    >>> summed_counters([{"requests": 2, "model": "m"}, {"requests": 3, "model": "m"}], JUDGE_COUNTERS)
    {'requests': 5, 'model': 'm'}
    """
    merged = dict(blocks[0])
    for key in counters:
        if any(key in b for b in blocks):
            total = sum(b.get(key, 0) for b in blocks)
            merged[key] = round(total, 3) if isinstance(total, float) else total
    return merged


def merged_judge(shards: Sequence[Shard]) -> dict[str, Any]:
    """The judge block of the merged run: the settings, the counters summed over the shards."""
    return summed_counters([s.summary.get("judge") or {} for s in shards], JUDGE_COUNTERS)


def merged_datasets(per_shard: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The dataset records of the shards (key -> record, as the run card or results.json's ``"odu"``
    block holds them) as those of one run: the first shard's, scene counts summed, the shard dropped."""
    datasets = {}
    for key, info in (per_shard[0] or {}).items():
        n = sum(int((d or {}).get(key, {}).get("n_scenes") or 0) for d in per_shard)
        kept = {k: v for k, v in info.items() if k not in (SHARD_KEY, "n_scenes_total")}
        datasets[key] = {**kept, "n_scenes": n}
    return datasets


def merged_card(shards: Sequence[Shard], command: Sequence[str]) -> dict[str, Any]:
    """The run card of the merged run: the first shard's, its dataset counts summed, the shard
    replaced by the list of shards merged."""
    card = {k: v for k, v in shards[0].card.items() if k not in (RUN_ID, SHARD_KEY, "command")}
    card["dataset"] = merged_datasets([s.card.get("dataset") or {} for s in shards])
    card["command"] = list(command)
    card["merged_from"] = [
        {"run_id": s.summary.get(RUN_ID), "shard": f"{s.index}/{s.count}", "command": s.card.get("command")}
        for s in shards
    ]
    return card


__all__ = [
    "JUDGE_COUNTERS",
    "LOGGED_TASKS_KEY",
    "SAME_RUN_FIELDS",
    "AUTO",
    "JOB_INDEX",
    "SHARD_KEY",
    "SLURM_TASK_COUNT",
    "SLURM_TASK_ID",
    "SLURM_TASK_MAX",
    "SLURM_TASK_MIN",
    "Shard",
    "ShardError",
    "in_shard",
    "merged_card",
    "merged_datasets",
    "merged_judge",
    "merged_samples",
    "parse_shard",
    "read_shards",
    "shard_from_env",
    "shard_index",
    "summed_counters",
]
