"""Shard runs of the tests: ``odu-bench eval --shard 1/2`` and ``2/2`` of the always-trigger floor
(a module fixture), copies to damage, and :func:`rehash` to make a damaged run's file list agree."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from odu.cli import main
from support.cli import argv


def eval_always(out: Path, *extra: str) -> int:
    return main([*argv("eval", sample=True, model="always", out=out), *extra])


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``<root>/s1/always`` and ``<root>/s2/always``: the two shards of one run (read-only: copy
    them), the sample prepared in the private cache ``<root>/cache``."""
    root = tmp_path_factory.mktemp("shards")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ODU_CACHE_DIR", str(root / "cache"))
        for k in (1, 2):
            assert eval_always(root / f"s{k}", "--shard", f"{k}/2") == 0
    return root


def copy_shards(shards: Path, tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(shards, tmp_path / "shards")
    return tmp_path / "shards" / "s1" / "always", tmp_path / "shards" / "s2" / "always"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def write_lines(path: Path, rows: list[Any]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def rehash(run: Path) -> None:
    """Rewrite ``summary.json``'s file list to match the files as they are now (what an editor
    who knows the format does after changing them)."""
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    for name, entry in summary["files"].items():
        data = (run / name).read_bytes()
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        if "rows" in entry:
            entry["rows"] = sum(1 for line in data.split(b"\n") if line.strip())
    (run / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


def merge(one: Path, two: Path, out: Path) -> int:
    return main(["merge", str(one), str(two), "--out", str(out)])
