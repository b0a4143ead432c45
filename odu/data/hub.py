"""Hugging Face Hub transfer of a prepared dataset directory (:mod:`.prepare`).

``download`` fetches the card, manifest and records plus the shards of the requested configs only
(``snapshot_download`` with per-config ``allow_patterns``) and checks the shards against the
manifest; ``upload`` checks a directory and pushes it as a dataset repo (``HfApi.upload_folder``).
``huggingface_hub`` is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .dataset import CONFIG_NAMES, get_config
from .prepare import DATA_DIR, METADATA_FILES, shard_pattern, verify_dataset_dir

REPO_TYPE = "dataset"


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
) -> Path:
    """Download the dataset repo ``repo_id`` (shards of ``configs`` only) and verify it.

    Returns the local directory: ``out`` when given, else the Hub cache snapshot. Raises
    :class:`ValueError` when a fetched shard is missing or its sha256 differs from the manifest,
    :class:`HubError` when the transfer fails.
    """
    from huggingface_hub import snapshot_download

    patterns = allow_patterns(configs)
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
    problems = verify_dataset_dir(local, configs)
    if problems:
        raise ValueError(f"{repo_id}: downloaded copy is not sound:\n  " + "\n  ".join(problems))
    return Path(local)


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
        raise ValueError(f"{folder}: not a sound prepared dataset, not uploading:\n  " + "\n  ".join(problems))
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type=REPO_TYPE,
            revision=revision,
            allow_patterns=[*METADATA_FILES, f"{DATA_DIR}/*/*.parquet"],
            delete_patterns=[f"{DATA_DIR}/*/*.parquet"],
            commit_message=commit_message,
        )
    except transfer_errors() as exc:
        raise HubError(f"{repo_id}: upload failed: {type(exc).__name__}: {exc}") from None
    return str(getattr(commit, "commit_url", commit))


__all__ = ["REPO_TYPE", "HubError", "allow_patterns", "download", "transfer_errors", "upload"]
