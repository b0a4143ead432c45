"""Write the script-free Hugging Face dataset directory from a raw release.

``datasets`` 5.x runs no loading scripts, so the benchmark ships as plain parquet plus a card that
``load_dataset`` reads natively::

    DIR/
      README.md                     dataset_card.md with YAML front matter: configs + dataset_info
      data/<leaf>/test-NNNNN-of-NNNNN.parquet
      media_manifest.json           sha256 of every clip's media and of every shard
      scenes.jsonl                  the release records (annotations, no media), for the scorer

Rows live once, in the eight leaf configs (``av_en_pos`` ... ``ao_zh_neg``: one modality,
language and label); every other config lists the leaf folders it unites, so ``all`` costs no
extra bytes and a Hub download of one config fetches only its leaves. ``datasets`` cannot load
an empty split, so a config without scenes in this release is left out of the card (the card's
row table still lists it, with 0). Media bytes are embedded in the
rows (:mod:`.dataset`). Shards stay under :data:`PARQUET_MAX_SHARD_BYTES`,
row groups under :data:`PARQUET_MAX_ROW_GROUP_BYTES`, and the output is
byte-for-byte the same on every run over the same release.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.citation import BIBTEX
from ..io.files import sha256_file
from ..io.jsonio import read_json
from ..runs.outdir import ManifestKind, check_target, writing
from .dataset import CONFIGS, DEFAULT_CONFIG, LEAF_CONFIGS, SPLIT, features, get_config, record_to_row
from .release import ReleaseProblem, ReleaseScene, find_records, read_release

MANIFEST_NAME = "media_manifest.json"
RECORDS_NAME = "scenes.jsonl"
CARD_NAME = "README.md"
DATA_DIR = "data"
MANIFEST_FORMAT = "odu-bench-manifest/1"
#: Files of a prepared directory besides the shards (what ``odu-bench download`` always fetches).
METADATA_FILES: tuple[str, ...] = (CARD_NAME, MANIFEST_NAME, RECORDS_NAME)
#: What ``prepare`` writes: an existing ``--out`` holding anything else is never replaced (:mod:`odu.runs.outdir`).
PREPARED = ManifestKind("a prepared ODU-Bench dataset")
#: Parquet shards of the prepared dataset stay under this many bytes of rows (``datasets``'
#: ``MAX_SHARD_SIZE``, which the Hub viewer expects) ...
PARQUET_MAX_SHARD_BYTES = 500_000_000
#: ... and their row groups under this many (``datasets``' ``MAX_ROW_GROUP_SIZE``): reading one
#: row reads its whole row group.
PARQUET_MAX_ROW_GROUP_BYTES = 100_000_000
#: Parquet compression of the shards (media bytes are stored as they are; zstd shrinks WAV and text).
PARQUET_COMPRESSION = "zstd"


def shard_pattern(leaf: str) -> str:
    """The ``data_files`` glob of one leaf config's shards, relative to the dataset root."""
    return f"{DATA_DIR}/{leaf}/{SPLIT}-*.parquet"


def config_patterns(name: str, present: Collection[str] | None = None) -> list[str]:
    """The shard globs of config ``name``: its leaves in order (only those in ``present`` if given)."""
    return [shard_pattern(leaf) for leaf in get_config(name).leaves if present is None or leaf in present]


@dataclass(slots=True)
class PrepareResult:
    """What :func:`prepare` wrote."""

    out: Path
    rows: dict[str, int]  # config name -> rows
    shards: list[str]  # relative paths
    media_files: int
    problems: list[ReleaseProblem] = field(default_factory=list)


# --- planning -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Shard:
    leaf: str
    groups: tuple[tuple[ReleaseScene, ...], ...]  # row groups


def _row_bytes(item: ReleaseScene) -> int:
    """Size estimate of one row before reading media: media file sizes plus the record as JSON."""
    return len(item.raw) + sum(p.stat().st_size for p in item.media_paths)


def _pack(items: Sequence[tuple[Any, int]], limit: int) -> list[list[Any]]:
    """Consecutive groups of ``items`` (value, size) whose sizes sum to at most ``limit``; an item
    larger than ``limit`` gets a group of its own."""
    groups: list[list[Any]] = []
    total = limit + 1
    for value, size in items:
        if total + size > limit:
            groups.append([])
            total = 0
        groups[-1].append(value)
        total += size
    return groups


def _plan(scenes: Sequence[ReleaseScene], max_shard_bytes: int, max_row_group_bytes: int) -> list[_Shard]:
    shards: list[_Shard] = []
    for leaf in (c.name for c in LEAF_CONFIGS):
        items = [item for item in scenes if item.leaf == leaf]  # release order (in_config_order)
        sized = [(item, _row_bytes(item)) for item in items]
        size_of = {id(item): size for item, size in sized}
        groups = [(tuple(g), sum(size_of[id(i)] for i in g)) for g in _pack(sized, max_row_group_bytes)]
        packed = _pack(groups, max_shard_bytes)
        shards.extend(_Shard(leaf, tuple(p)) for p in packed)
    return shards


def _shard_path(shard: _Shard, index: int, count: int) -> str:
    return f"{DATA_DIR}/{shard.leaf}/{SPLIT}-{index:05d}-of-{count:05d}.parquet"


# --- writing ----------------------------------------------------------------------------------------


def prepare(
    raw: str | Path,
    out: str | Path,
    *,
    media_root: str | Path | None = None,
    skip_invalid: bool = False,
    max_shard_bytes: int = PARQUET_MAX_SHARD_BYTES,
    max_row_group_bytes: int = PARQUET_MAX_ROW_GROUP_BYTES,
    progress: bool = False,
    link_root: str | Path | None = None,
) -> PrepareResult:
    """Validate the release at ``raw`` (records file or its folder) and write the dataset to ``out``.

    ``out`` is replaced only once the new directory is complete, and only when it is empty or holds
    an earlier prepared dataset and nothing else (:data:`PREPARED`); it may not be,
    hold or lie inside the records file or the media root (:class:`odu.runs.outdir.OutDirError`).
    Raises :class:`odu.data.release.ReleaseError` on invalid scenes unless ``skip_invalid``; media
    must lie inside the media root (:func:`odu.data.release.media_path`). The work happens in a
    hidden folder beside ``out``; one left by a killed run is removed by the next
    (:func:`odu.runs.outdir.remove_leftovers`).
    """
    out = Path(out)
    records_path = find_records(raw)
    inputs = [records_path, media_root if media_root is not None else records_path.parent]
    check_target(out, PREPARED, inputs=inputs)  # before the release is read
    release = read_release(raw, media_root, skip_invalid=skip_invalid, progress=progress, link_root=link_root)
    if not release.scenes:
        raise ValueError(f"{release.records_path}: no valid scene to prepare ({len(release.problems)} skipped)")
    shards = _plan(release.scenes, max_shard_bytes, max_row_group_bytes)
    with writing(out, PREPARED, inputs=inputs) as tmp:
        result = _write(tmp, shards, release.scenes, progress)
    result.out = out
    result.problems = release.problems
    return result


#: Rows converted to Arrow at a time while a row group is built: a row as Python objects costs
#: several times its Arrow size. The row group is still written whole (``row_group_size``).
_ROWS_PER_BATCH = 256


def _write(root: Path, shards: list[_Shard], scenes: Sequence[ReleaseScene], progress: bool) -> PrepareResult:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .media import read_media

    feats = features()
    schema = feats.arrow_schema
    counts: dict[str, int] = {}
    for shard in shards:
        counts[shard.leaf] = counts.get(shard.leaf, 0) + 1
    seen: dict[str, int] = {}
    leaf_rows = {leaf.name: 0 for leaf in LEAF_CONFIGS}
    leaf_bytes = {leaf.name: 0 for leaf in LEAF_CONFIGS}
    media: list[dict[str, Any]] = []
    shard_files: dict[str, str] = {}
    bar = _bar(len(scenes), progress)
    for shard in shards:
        index = seen[shard.leaf] = seen.get(shard.leaf, -1) + 1
        rel = _shard_path(shard, index, counts[shard.leaf])
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with pq.ParquetWriter(path, schema, compression=PARQUET_COMPRESSION) as writer:
            for group in shard.groups:
                rows, batches = [], []
                for item in group:
                    data = [read_media(p) for p in item.media_paths]
                    row = record_to_row(item.record, data)
                    rows.append(row)
                    media.extend(
                        {
                            "scene_id": row["scene_id"],
                            "clip_id": t["clip_id"],
                            "path": t["media"]["path"],
                            "sha256": t["sha256"],
                            "bytes": len(t["media"]["bytes"]),
                        }
                        for t in row["turns"]
                        if t["role"] == "user"
                    )
                    bar.update(1)
                    if len(rows) == _ROWS_PER_BATCH:  # to Arrow now: Python rows cost several times more
                        batches.append(pa.RecordBatch.from_pylist(rows, schema=schema))
                        rows = []
                batches.append(pa.RecordBatch.from_pylist(rows, schema=schema))
                # one row group from the batches, not copied into one chunk first (the card's Arrow byte
                # counts, table.nbytes, then include each batch's offset buffers)
                table = pa.Table.from_batches(batches, schema=schema)
                writer.write_table(table, row_group_size=len(group))
                leaf_rows[shard.leaf] += len(group)
                leaf_bytes[shard.leaf] += table.nbytes
        shard_files[rel] = sha256_file(path)
    bar.close()
    rows_by_config = {c.name: sum(leaf_rows[leaf] for leaf in c.leaves) for c in CONFIGS}
    sizes = {
        c.name: (
            sum(leaf_bytes[leaf] for leaf in c.leaves),
            sum((root / rel).stat().st_size for rel in shard_files if rel.split("/")[1] in c.leaves),
        )
        for c in CONFIGS
    }
    _write_records(root / RECORDS_NAME, scenes)
    manifest = {"format": MANIFEST_FORMAT, "algorithm": "sha256", "media": media, "shards": shard_files}
    (root / MANIFEST_NAME).write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (root / CARD_NAME).write_text(render_card(rows_by_config, sizes, feats), encoding="utf-8")
    return PrepareResult(root, rows_by_config, sorted(shard_files), len(media))


def _write_records(path: Path, scenes: Sequence[ReleaseScene]) -> None:
    with path.open("wb") as fh:
        for item in scenes:
            fh.write(item.raw + b"\n")


def _bar(total: int, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="writing shards", unit="scene", disable=not enabled)


# --- the card -----------------------------------------------------------------------------------------


def card_body() -> str:
    """The dataset card: ``odu/data/dataset_card.md`` (shipped inside the package) and its
    citation section, the BibTeX of :mod:`odu.core.citation`."""
    card = resources.files(__package__).joinpath("dataset_card.md").read_text(encoding="utf-8")
    return f"{card.rstrip()}\n\n## Citation\n\n```bibtex\n{BIBTEX}```\n"


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M"


def card_metadata(rows: Mapping[str, int], sizes: Mapping[str, tuple[int, int]], feats: Any) -> dict[str, Any]:
    """The YAML front matter: Hub metadata, ``configs`` (default first) and ``dataset_info``."""
    from datasets import DatasetInfo, SplitDict, SplitInfo

    present = {leaf.name for leaf in LEAF_CONFIGS if rows[leaf.name]}
    configs = []
    infos = []
    shared_features = feats._to_yaml_list()
    for config in CONFIGS:
        if not rows[config.name]:
            continue  # datasets cannot load an empty split
        entry: dict[str, Any] = {"config_name": config.name}
        if config.name == DEFAULT_CONFIG:
            entry["default"] = True
        entry["data_files"] = [{"split": SPLIT, "path": config_patterns(config.name, present)}]
        configs.append(entry)
        num_bytes, download = sizes[config.name]
        splits = SplitDict()
        splits.add(SplitInfo(name=SPLIT, num_bytes=num_bytes, num_examples=rows[config.name]))
        info = DatasetInfo(features=feats, splits=splits, download_size=download, dataset_size=num_bytes)
        # one shared features list: YAML writes it once (an anchor) and aliases it for the other
        # configs, so the card stays small and quick to parse (load_dataset parses it every call)
        infos.append({"config_name": config.name, **info._to_yaml_dict(), "features": shared_features})
    return {
        "pretty_name": "ODU-Bench",
        "language": ["en", "zh"],
        "license": "other",
        "license_name": "odu-bench-evaluation-only",
        "task_categories": ["video-text-to-text", "audio-text-to-text"],
        "tags": ["benchmark", "audio-visual", "omni", "intent-understanding", "multi-turn"],
        "size_categories": [_size_category(rows[DEFAULT_CONFIG])],
        "configs": configs,
        "dataset_info": infos,
    }


def render_card(rows: Mapping[str, int], sizes: Mapping[str, tuple[int, int]], feats: Any) -> str:
    """``README.md`` of the prepared directory: YAML front matter, the card, this copy's row counts."""
    import yaml

    meta = yaml.safe_dump(card_metadata(rows, sizes, feats), sort_keys=False, allow_unicode=True, width=1000)
    table = "\n".join(f"| `{c.name}` | {rows[c.name] or '0 (not in this copy: no scenes)'} |" for c in CONFIGS)
    return (
        f"---\n{meta}---\n\n{card_body().rstrip()}\n\n## Rows in this copy\n\n"
        f"| config | rows (split `{SPLIT}`) |\n|---|---|\n{table}\n"
    )


# --- checking a prepared directory ----------------------------------------------------------------------


def check_dataset(source: str) -> None:
    """Raise :class:`ValueError` unless ``source`` is a prepared dataset directory (card + data) or,
    when no such path exists, has the shape of a Hub repo id (``ORG/NAME``): a mistyped path fails
    at once, with its name, instead of after retries against the Hub."""
    path = Path(source)
    if path.exists():
        if not (path / CARD_NAME).is_file() or not (path / DATA_DIR).is_dir():
            raise ValueError(
                f"dataset {source}: not a prepared ODU-Bench dataset directory (no {CARD_NAME} + "
                f"{DATA_DIR}/); make one with odu-bench prepare, or fetch one with odu-bench download"
            )
        check_card(path / CARD_NAME)
    elif source.startswith((".", "/", "~")) or not re.fullmatch(r"[\w-][\w.-]*/[\w.-]+", source):
        raise ValueError(
            f"dataset {source}: no such directory (looked in {Path.cwd()}), and not a Hub repo id (ORG/NAME). "
            f"Make it with odu-bench prepare RELEASE --out {source}, fetch it with odu-bench download ORG/NAME "
            f"--out {source} (odu-bench eval and view take --sample for the bundled sample)"
        )


def check_card(card: Path) -> None:
    """Raise :class:`ValueError` naming ``card`` when its YAML front matter is not what ``datasets``
    reads (huggingface_hub's ``metadata_load``, a safe loader): malformed YAML, a tag of a Python
    object (``!!python/object/apply``, never constructed), or no mapping; one line, no traceback."""
    import yaml
    from huggingface_hub.repocard import metadata_load

    try:
        metadata_load(card)
    except yaml.MarkedYAMLError as exc:
        line = f"line {exc.problem_mark.line + 2}: " if exc.problem_mark else ""  # + the opening '---'
        raise ValueError(f"{card}: {line}its YAML front matter cannot be read ({exc.problem})") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise ValueError(f"{card}: its YAML front matter cannot be read ({str(exc).splitlines()[0]})") from None


def verify_dataset_dir(root: str | Path, configs: Sequence[str] | None = None) -> list[str]:
    """Problems of a prepared directory (empty when sound): card and manifest present, every
    shard of ``configs`` (default: all) present with the manifest's sha256, no unlisted shard."""
    root = Path(root)
    problems = [f"{root}: missing {name}" for name in (CARD_NAME, MANIFEST_NAME) if not (root / name).is_file()]
    if problems:
        return problems
    try:
        manifest = read_json(root / MANIFEST_NAME)
        listed: dict[str, str] = manifest["shards"]
    except (ValueError, KeyError, TypeError, OSError) as exc:
        return [f"{root / MANIFEST_NAME}: not an ODU-Bench manifest ({exc})"]
    if manifest.get("format") != MANIFEST_FORMAT:
        return [f"{root / MANIFEST_NAME}: format {manifest.get('format')!r}, expected {MANIFEST_FORMAT!r}"]
    leaves = {leaf for name in (configs or [DEFAULT_CONFIG]) for leaf in _leaves(name)}
    for rel, digest in sorted(listed.items()):
        if rel.split("/")[1] not in leaves:
            continue
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: missing shard")
        elif sha256_file(path) != digest:
            problems.append(f"{rel}: sha256 differs from {MANIFEST_NAME} (corrupt or modified)")
    present = {p.relative_to(root).as_posix() for p in (root / DATA_DIR).glob("*/*.parquet")}
    problems.extend(f"{rel}: shard not listed in {MANIFEST_NAME}" for rel in sorted(present - set(listed)))
    return problems


def _leaves(name: str) -> tuple[str, ...]:
    return get_config(name).leaves


__all__ = [
    "METADATA_FILES",
    "PREPARED",
    "PrepareResult",
    "card_body",
    "card_metadata",
    "check_dataset",
    "config_patterns",
    "prepare",
    "render_card",
    "shard_pattern",
    "verify_dataset_dir",
]
