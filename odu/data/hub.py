"""Hugging Face Hub transfer of the dataset, and loading a split with a warning for stale copies.

``download`` takes a dataset repo in either layout:

* a prepared directory (:mod:`.prepare`, what ``upload`` pushes): the card, manifest and records
  plus the shards of the requested configs only (``snapshot_download`` with per-config
  ``allow_patterns``), checked against the manifest;
* the authors' release as published: a records file (``scenes.json`` / ``scenes.jsonl`` in the
  release schema) and each clip's media at its ``src`` path. The records come first; then only the
  media of the scenes in the requested configs, which are validated and prepared
  (:func:`.prepare.prepare`) into a directory ``load_dataset`` reads.

``upload`` checks a prepared directory and pushes it as a dataset repo (``HfApi.upload_folder``).
:func:`load_split` is ``load_dataset(source, config, split="test")`` that says when ``datasets``
fell back to an older cached copy. ``huggingface_hub`` and ``datasets`` are imported inside the
functions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..io.cache import cache_dir
from ..io.console import OduWarning, ProblemsError
from ..io.files import is_sha256, read_bounded, replace_file, sha256_file
from .dataset import CONFIG_NAMES, DEFAULT_CONFIG, SPLIT, DatasetConfig, get_config
from .prepare import DATA_DIR, MANIFEST_NAME, METADATA_FILES, PrepareResult, prepare, shard_pattern, verify_dataset_dir
from .release import RELEASE_RECORD_FILES, ReleaseProblem

REPO_TYPE = "dataset"
#: The module of the builder ``datasets`` returns when it could not resolve a dataset name (no such
#: folder, Hub offline or unreachable) and serves the newest copy in its cache instead
#: (``datasets.load.CachedDatasetModuleFactory``).
CACHE_BUILDER_MODULE = "datasets.packaged_modules.cache.cache"
#: Where a prepared folder's rows are cached, under ``HF_DATASETS_CACHE``: one folder per content of
#: its shards (:func:`shards_key`).
SHARDS_CACHE = "odu-bench-by-content"


class StaleDatasetWarning(OduWarning):
    """``datasets`` loaded a cached copy instead of the named dataset (it may be older)."""


class HubError(RuntimeError):
    """A Hub transfer failed: no network, no access, no such repo or revision, or a local I/O error."""


def transfer_errors() -> tuple[type[BaseException], ...]:
    """What a failed transfer raises: ``HfHubHTTPError`` and the HTTP library's own errors (its
    bases: httpx or requests, depending on the ``huggingface_hub`` release) and ``OSError``."""
    from huggingface_hub.errors import HfHubHTTPError

    return (OSError, *HfHubHTTPError.__bases__)


def allow_patterns(configs: Sequence[str] | None = None) -> list[str]:
    """What to fetch for ``configs`` (all when None): the metadata files and each config's shards."""
    names = list(configs) if configs else list(CONFIG_NAMES)
    leaves = dict.fromkeys(leaf for name in names for leaf in get_config(name).leaves)
    return [*METADATA_FILES, *(shard_pattern(leaf) for leaf in leaves)]


def download(
    repo_id: str,
    configs: Sequence[str] | None = None,
    out: str | Path | None = None,
    *,
    revision: str | None = None,
    token: str | bool | None = None,
    skip_invalid: bool = False,
    problems: list[ReleaseProblem] | None = None,
) -> Path:
    """Download the dataset repo ``repo_id`` in either layout (module docstring), ``configs`` only
    (all when None), and return the directory ``load_dataset`` reads.

    A prepared repo lands in ``out`` (default: the Hub cache snapshot); a release is prepared into
    ``out`` (default: ``<cache>/datasets/hub-<org>--<name>[...]/odu-bench``), its invalid scenes
    raising a ``ReleaseError`` or, with ``skip_invalid``, left out and appended to ``problems``.
    Raises :class:`ValueError` when a shard is missing or differs from the manifest, or the repo is
    in neither layout, and :class:`HubError` when a transfer fails.
    """
    from huggingface_hub import repo_info

    names = list(configs) if configs else [DEFAULT_CONFIG]
    try:  # the repo's file list (what snapshot_download asks first, too)
        info = repo_info(repo_id, repo_type=REPO_TYPE, revision=revision, token=token)
        files = {sibling.rfilename for sibling in getattr(info, "siblings", None) or ()}
    except transfer_errors() as exc:
        raise HubError(f"{repo_id}: download failed: {type(exc).__name__}: {exc}") from None
    if MANIFEST_NAME in files:
        return _download_prepared(repo_id, configs, out, revision, token)
    records = next((name for name in RELEASE_RECORD_FILES if name in files), None)
    if records is None:
        raise ValueError(
            f"{repo_id}: neither a prepared ODU-Bench dataset ({MANIFEST_NAME}) nor a release "
            f"({' or '.join(RELEASE_RECORD_FILES)} at the top level)"
        )
    if out is None:
        tag = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{repo_id.replace('/', '--')}@{revision or 'main'}+{'+'.join(names)}")
        out = cache_dir() / "datasets" / f"hub-{tag}" / "odu-bench"
    result = _download_release(repo_id, records, names, Path(out), revision, token, skip_invalid)
    if problems is not None:
        problems.extend(result.problems)
    return result.out


def _snapshot(repo_id: str, revision: str | None, token: str | bool | None, patterns: list[str], out: Any) -> Path:
    from huggingface_hub import snapshot_download

    try:
        local = snapshot_download(
            repo_id=repo_id,
            repo_type=REPO_TYPE,
            revision=revision,
            allow_patterns=patterns,
            local_dir=str(out) if out is not None else None,
            token=token,
        )
    except transfer_errors() as exc:
        raise HubError(f"{repo_id}: download failed: {type(exc).__name__}: {exc}") from None
    return Path(local)


def _download_prepared(
    repo_id: str, configs: Sequence[str] | None, out: str | Path | None, revision: str | None, token: str | bool | None
) -> Path:
    local = _snapshot(repo_id, revision, token, allow_patterns(configs), out)
    problems = verify_dataset_dir(local, configs)
    if problems:
        raise ProblemsError(f"{repo_id}: downloaded copy is not sound:", problems)
    return local


def _in_configs(record: Any, configs: Sequence[DatasetConfig]) -> bool:
    """Whether a release record may belong to one of ``configs`` (a record too broken to tell is
    kept, so that preparing it reports what is wrong)."""
    if not isinstance(record, Mapping):
        return True
    return any(
        all(
            wanted is None or record.get(key) in (None, wanted)
            for key, wanted in (("modality", c.modality), ("language", c.language), ("label", c.label))
        )
        for c in configs
    )


def _pattern(path: str) -> str:
    """An ``allow_patterns`` entry matching exactly ``path`` (fnmatch's special characters bracketed)."""
    return re.sub(r"([*?\[\]])", r"[\1]", path.removeprefix("./"))


def _download_release(
    repo_id: str,
    records_name: str,
    configs: Sequence[str],
    out: Path,
    revision: str | None,
    token: str | bool | None,
    skip_invalid: bool,
) -> PrepareResult:
    from ..core.schema import read_json_records

    wanted = [get_config(name) for name in configs]
    snapshot = _snapshot(repo_id, revision, token, [records_name], None)
    records = [r for r in read_json_records(snapshot / records_name) if _in_configs(r, wanted)]
    media = sorted(
        {
            clip["src"]
            for r in records
            if isinstance(r, Mapping)
            for clip in r.get("clips") or ()
            if isinstance(clip, Mapping) and isinstance(clip.get("src"), str) and not Path(clip["src"]).is_absolute()
        }
    )
    snapshot = _snapshot(repo_id, revision, token, [records_name, *map(_pattern, media)], None)
    with tempfile.TemporaryDirectory(prefix="odu-release-") as tmp:
        chosen = Path(tmp) / f"{repo_id.replace('/', '--')}.scenes.jsonl"  # the repo is named in errors
        chosen.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        out.parent.mkdir(parents=True, exist_ok=True)
        # the Hub cache keeps a snapshot's files as links into the repo folder's blobs/
        repo_folder = snapshot.parent.parent if snapshot.parent.name == "snapshots" else snapshot
        return prepare(chosen, out, media_root=snapshot, skip_invalid=skip_invalid, link_root=repo_folder)


def load_split(source: str | Path, config: str = DEFAULT_CONFIG, revision: str | None = None) -> Any:
    """``load_dataset(source, config, split="test", revision=revision)``, warning
    (:class:`StaleDatasetWarning`) when ``datasets`` could not resolve ``source`` (no such folder, Hub
    offline or unreachable) and served the newest copy from its cache instead, which may be older
    than the dataset is now; a path to a prepared folder never falls back, and its rows are cached
    under the content of its shards (:func:`shards_key`), never under its name alone."""
    import datasets

    builder = _builder(source, config, revision)
    check_data_files(source, builder.config.data_files)
    if Path(source).is_dir():  # datasets keys a folder's cache on its name, config and card only
        key = shards_key(builder.config.data_files)
        builder = _builder(source, config, revision, os.path.join(datasets.config.HF_DATASETS_CACHE, SHARDS_CACHE, key))
    if type(builder).__module__ == CACHE_BUILDER_MODULE:
        warnings.warn(
            f"dataset {source} ({config}): not found as a folder or on the Hub, so datasets loaded its newest "
            f"cached copy from {builder.cache_dir}, which may be older than the dataset; pass the path of a "
            "prepared folder (odu-bench prepare / download) to load exactly that",
            StaleDatasetWarning,
            stacklevel=2,
        )
    try:
        builder.download_and_prepare()
    except datasets.exceptions.DatasetGenerationError as exc:  # e.g. a parquet file of another schema
        cause = exc.__cause__ or exc
        raise ValueError(
            f"dataset {source} ({config}): its data files are not an ODU-Bench dataset ({type(cause).__name__}: "
            f"{str(cause)[:300]}); prepare it again with odu-bench prepare"
        ) from None
    return builder.as_dataset(split=SPLIT)


def _builder(source: str | Path, config: str, revision: str | None, cache_dir: str | None = None) -> Any:
    """``datasets.load_dataset_builder`` of ``source`` (its rows cached under ``cache_dir`` if given);
    ``ValueError`` naming the dataset when its card or files cannot be read."""
    import datasets
    import yaml

    try:
        return datasets.load_dataset_builder(str(source), config, revision=revision, cache_dir=cache_dir)
    except (datasets.exceptions.DatasetGenerationError, ValueError, TypeError, KeyError, yaml.YAMLError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else ""  # a YAML error's message spans lines
        raise ValueError(f"dataset {source} ({config}): cannot be read ({type(exc).__name__}: {reason})") from None
    except ConnectionError as exc:  # no folder of that name here, the Hub unreachable, no cached copy
        raise ValueError(
            f"dataset {source} ({config}): not a folder here, and datasets could neither reach it on the Hub nor "
            f"find a cached copy ({exc}); pass the path of a prepared folder (odu-bench prepare / download)"
        ) from None


def shards_key(data_files: Mapping[str, Sequence[Any]] | None) -> str:
    """The cache key of a prepared folder's split: 16 hex digits of the SHA-256 over each data file's
    name and content (:func:`file_sha256`), so rewritten shards (in a copy under the same folder name,
    say) are read again and identical ones share one cache."""
    digest = hashlib.sha256()
    for split, files in sorted((data_files or {}).items()):
        for file in sorted(map(str, files)):
            digest.update(f"{split}\0{Path(file).name}\0{file_sha256(Path(file))}\n".encode())
    return digest.hexdigest()[:16]


def file_sha256(path: Path) -> str:
    """:func:`odu.io.files.sha256_file` of ``path``, remembered per version of the file (device, inode,
    size, modification and change times: any write changes the change time, which no user can set)
    in the cache (``<cache>/sha256/``), so a large shard is read once per version, not per load."""
    info = path.stat()
    version = f"{os.path.realpath(path)}\0{info.st_dev}\0{info.st_ino}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}"
    memo = cache_dir() / "sha256" / hashlib.sha256(version.encode("utf-8", "surrogateescape")).hexdigest()
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if is_sha256(held := read_bounded(memo, 64, 5.0).decode("ascii")):
            return held
    digest = sha256_file(path)
    with contextlib.suppress(OSError):
        memo.parent.mkdir(parents=True, exist_ok=True)
        replace_file(memo, digest.encode("ascii"))
    return digest


def check_data_files(source: str | Path, data_files: Mapping[str, Sequence[Any]] | None) -> None:
    """:class:`ValueError` when a prepared folder's card points ``data_files`` outside the folder
    (``../elsewhere/*.parquet``, an absolute path, a URL): a dataset is the files it holds, and
    rows from elsewhere are never scored. A Hub repo (no local folder) is left to the Hub."""
    root = Path(source)
    if not root.is_dir():
        return
    real_root = root.resolve()
    for split, files in (data_files or {}).items():
        for file in files:
            text = str(file)
            real = Path(os.path.realpath(text)) if "://" not in text else None
            if real is None or not (real == real_root or real_root in real.parents):
                raise ValueError(
                    f"dataset {source}: its card's data_files ({split}) point outside the folder ({text}); "
                    "a prepared dataset's data are the files under it: prepare it again with odu-bench prepare"
                )


def load_dataset_call(path: str | Path, config: str = DEFAULT_CONFIG) -> str:
    """The exact Python call that loads ``config`` of the prepared folder ``path`` (absolute: a path never
    falls back to a cached copy, a bare name may).

    >>> load_dataset_call("/data/odu-bench", "av_en")
    "load_dataset('/data/odu-bench', 'av_en', split='test')"
    """
    return f"load_dataset({str(Path(path).resolve())!r}, {config!r}, split={SPLIT!r})"


def upload(
    folder: str | Path,
    repo_id: str,
    *,
    private: bool | None = None,
    revision: str | None = None,
    token: str | bool | None = None,
    commit_message: str = "Upload ODU-Bench dataset (odu-bench upload)",
) -> str:
    """Verify the prepared ``folder`` and upload it to the dataset repo ``repo_id`` (created if
    needed); only the layout's files are sent. Returns the commit URL."""
    problems = verify_dataset_dir(folder)
    if problems:
        raise ProblemsError(f"{folder}: not a sound prepared dataset, not uploading:", problems)
    return push_folder(
        folder,
        repo_id,
        REPO_TYPE,
        token=token,
        private=private,
        revision=revision,
        allow_patterns=[*METADATA_FILES, f"{DATA_DIR}/*/*.parquet"],
        delete_patterns=[f"{DATA_DIR}/*/*.parquet"],
        commit_message=commit_message,
    )


def push_folder(
    folder: str | Path,
    repo_id: str,
    repo_type: str,
    *,
    token: str | bool | None = None,
    private: bool | None = None,
    create: Mapping[str, Any] | None = None,
    **commit: Any,
) -> str:
    """Create the repo ``repo_id`` if needed (``HfApi.create_repo`` with ``create``, e.g. a Space's
    ``space_sdk``) and commit ``folder`` to it (``HfApi.upload_folder`` with ``commit``); returns the
    commit URL. A failed transfer is a :class:`HubError`."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True, **(create or {}))
        pushed = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type=repo_type, **commit)
    except transfer_errors() as exc:
        raise HubError(f"{repo_id}: upload failed: {type(exc).__name__}: {exc}") from None
    return str(getattr(pushed, "commit_url", pushed))


__all__ = [
    "CACHE_BUILDER_MODULE",
    "REPO_TYPE",
    "HubError",
    "StaleDatasetWarning",
    "allow_patterns",
    "download",
    "load_dataset_call",
    "check_data_files",
    "load_split",
    "shards_key",
    "push_folder",
    "transfer_errors",
    "upload",
]
