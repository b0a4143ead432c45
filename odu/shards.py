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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .jsonio import JsonFileError, iter_lines, read_json
from .run import FILES, RUN_CARD_NAME, RUN_ID, RunError, read_run

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
#: Keys of a judge block that count work rather than name settings (they are summed when merged).
_JUDGE_COUNTERS = frozenset(
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
    return {k: v for k, v in judge.items() if k not in _JUDGE_COUNTERS}


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


def _read_shard(path: Path) -> Shard:
    run = read_run(path)  # RunError when the files are not one run
    try:
        card = read_json(path / RUN_CARD_NAME)
        results = read_json(path / "results.json")
    except (JsonFileError, OSError) as exc:
        raise ShardError(f"{path}: not a run of odu-bench eval ({exc})") from None
    shard = card.get(SHARD_KEY) if isinstance(card, dict) else None
    if not isinstance(shard, Mapping) or not isinstance(shard.get("index"), int):
        raise ShardError(f"{path}: not a shard (its run card names no --shard K/N)")
    summary: dict[str, Any] = dict(run.summary)
    listed: dict[str, Any] = dict(summary.get(FILES) or {})
    logged = card.get(LOGGED_TASKS_KEY)
    names = {n.removeprefix("samples_").removesuffix(".jsonl") for n in listed if n.startswith("samples_")}
    if not isinstance(logged, list) or set(logged) != names:
        raise ShardError(f"{path}: its run card's {LOGGED_TASKS_KEY} does not name its samples files")
    if not isinstance(results, dict):
        raise ShardError(f"{path}: results.json is not a JSON object")
    samples: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(listed):
        if name.startswith("samples_") and name.endswith(".jsonl"):
            with (path / name).open("rb") as fh:
                rows = [row for _, row in iter_lines(fh, path / name)]
            samples[name.removeprefix("samples_").removesuffix(".jsonl")] = [
                {k: v for k, v in row.items() if k != RUN_ID} for row in rows
            ]
    return Shard(path, shard["index"], shard["count"], card, summary, results, samples)


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
    for key, info in _datasets(shards[0].card).items():
        total = info.get("n_scenes_total")
        found = sum(int((s.card.get("dataset") or {}).get(key, {}).get("n_scenes") or 0) for s in shards)
        if isinstance(total, int) and found != total:
            raise ShardError(f"dataset {key}: the shards hold {found} of its {total} scenes")


def _row(sample: Mapping[str, Any]) -> int:
    """The dataset row of a logged sample (its doc's media locator), the unsharded run's order."""
    return int(json.loads(sample["doc"]["media"])["row"])


def read_shards(paths: Sequence[str | Path]) -> list[Shard]:
    """The shards at ``paths``, checked to be the parts of one run (:class:`ShardError`,
    :class:`~odu.run.RunError` otherwise), in shard order."""
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


def task_metrics(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A task's metrics over its logged samples, as lm-eval aggregates them (:mod:`odu.harness.tasks`)."""
    from .harness.tasks import METRICS, process_results, summarize_items

    items = [process_results(s["doc"], s["filtered_resps"])[METRICS[0]] for s in samples]
    summary = summarize_items(items)
    return {metric: summary[metric] for metric in METRICS}


def merged_judge(shards: Sequence[Shard]) -> dict[str, Any]:
    """The judge block of the merged run: the settings, the counters summed over the shards."""
    blocks = [s.summary.get("judge") or {} for s in shards]
    merged = dict(blocks[0])
    for key in _JUDGE_COUNTERS:
        if any(key in b for b in blocks):
            total = sum(b.get(key, 0) for b in blocks)
            merged[key] = round(total, 3) if isinstance(total, float) else total
    return merged


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


def check_merge_target(out: Path, shards: Sequence[Shard]) -> None:
    """Refuse an output folder that is one of the shards."""
    for s in shards:
        if out.resolve() == s.path.resolve():
            raise RunError(f"--out {out}: is shard {s.index}/{s.count} itself; choose a new folder")


__all__ = [
    "LOGGED_TASKS_KEY",
    "SAME_RUN_FIELDS",
    "SHARD_KEY",
    "Shard",
    "ShardError",
    "check_merge_target",
    "in_shard",
    "merged_card",
    "merged_datasets",
    "merged_judge",
    "merged_samples",
    "parse_shard",
    "read_shards",
    "shard_index",
    "task_metrics",
]
