"""Issue 30 item 10: ``datasets`` keys a prepared folder's cache on its name, config and card only, so
a copy with the same folder name whose shards were rewritten (manifest updated, card unchanged) was
served the original's cached rows, and both runs recorded the same content hash. The loader
(:func:`odu.data.hub.load_split`) keys the cache on the shards' content."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from support.cli import argv

from odu.cli import main
from odu.data.hub import load_split
from odu.data.sample import sample_dataset_dir
from odu.io.jsonio import iter_jsonl


@pytest.fixture
def datasets_cache(hf_cache: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import datasets

    cache = tmp_path / "hf-datasets"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(cache))
    return cache


def _copy_rewritten(original: Path, copy: Path) -> str:
    """``original`` copied to ``copy`` (same folder name), each shard of ``av`` rewritten with every
    reference transcript changed, and the manifest's shard hashes updated; the card is untouched.
    Returns the first av scene's new first transcript."""
    import pyarrow.parquet as pq

    shutil.copytree(original, copy)
    manifest_path = copy / "media_manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    card = (copy / "README.md").read_bytes()
    for shard in sorted((copy / "data").glob("av_*/*.parquet")):
        table = pq.read_table(shard)
        rows = table.to_pylist()
        for row in rows:
            for annotation in row["annotations"].values():
                for segment in (annotation or {}).get("segments") or ():
                    segment["transcript"] = "REWRITTEN " + segment["transcript"]
        pq.write_table(type(table).from_pylist(rows, schema=table.schema), shard)
        rel = shard.relative_to(copy).as_posix()
        manifest["shards"][rel] = hashlib.sha256(shard.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    assert (copy / "README.md").read_bytes() == card
    return "REWRITTEN"


def _transcripts(ds) -> list[str]:
    return [s["transcript"] for row in ds for a in row["annotations"].values() if a for s in a["segments"]]


def test_a_copy_with_rewritten_shards_loads_its_own_rows(datasets_cache: Path, tmp_path: Path) -> None:
    original = sample_dataset_dir(tmp_path / "one")
    first = _transcripts(load_split(original, "av"))
    assert first and not any(t.startswith("REWRITTEN") for t in first)
    copy = tmp_path / "two" / original.name  # the same folder name: the same datasets cache entry before
    _copy_rewritten(original, copy)
    assert all(t.startswith("REWRITTEN ") for t in _transcripts(load_split(copy, "av")))
    assert _transcripts(load_split(original, "av")) == first  # and the original still its own
    same = tmp_path / "three" / original.name
    shutil.copytree(original, same)  # an unchanged copy: the same content, the same rows
    assert _transcripts(load_split(same, "av")) == first


def test_eval_on_a_rewritten_copy_scores_and_records_its_content(datasets_cache: Path, tmp_path: Path) -> None:
    original = sample_dataset_dir(tmp_path / "one")
    copy = tmp_path / "two" / original.name
    _copy_rewritten(original, copy)
    summaries, rows = [], []
    for name, dataset in (("a", original), ("b", copy)):
        out = tmp_path / name
        assert main(argv("eval", dataset=dataset, model="always", out=out, tasks="odu_av")) == 0
        summaries.append(json.loads((out / "always" / "summary.json").read_text(encoding="utf-8")))
        rows.append({r["scene_id"]: r for _, r in iter_jsonl(out / "always" / "scenes.jsonl")})
    hashes = [[d["content_sha256"] for d in s["dataset"].values()] for s in summaries]
    assert hashes[0] != hashes[1]
    candidates = [[c["text"] for r in run.values() for c in r["candidates"]] for run in rows]
    assert candidates[0] == candidates[1]  # the same model output ...
    refs = [{sid: r["reference_sha256"] for sid, r in run.items() if r["has_demand"]} for run in rows]
    assert all(refs[0][sid] != refs[1][sid] for sid in refs[0])  # ... scored against each copy's references


def test_a_shard_hash_is_remembered_only_for_the_same_version_of_the_file(tmp_path: Path) -> None:
    """The memo of :func:`odu.data.hub.file_sha256` is keyed on the file's version: bytes rewritten in
    place, same size, modification time put back (``touch -r``, ``rsync -t``), are hashed again."""
    import os

    from odu.data.hub import file_sha256

    shard = tmp_path / "train-00000.parquet"
    shard.write_bytes(b"first version")
    before = os.stat(shard)
    assert file_sha256(shard) == hashlib.sha256(b"first version").hexdigest()
    with shard.open("r+b") as fh:
        fh.write(b"other")
    os.utime(shard, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(shard)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert file_sha256(shard) == hashlib.sha256(b"other version").hexdigest()
    assert file_sha256(shard) == hashlib.sha256(b"other version").hexdigest()  # remembered now
