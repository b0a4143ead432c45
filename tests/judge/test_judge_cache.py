"""The verdict cache: location, key material, WAL mode, first verdict wins, threads."""

from __future__ import annotations

import concurrent.futures
import sqlite3
from pathlib import Path

import pytest

from odu.judge.cache import VerdictCache, cache_key, default_cache_path
from odu.schema import KeyPoint

POINTS = (KeyPoint("kp01", "mute the chime", tiers=("T1",)), KeyPoint("kp02", "phone", tiers=("T2",)))


def test_default_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ODU_CACHE_DIR", str(tmp_path / "odu"))
    assert default_cache_path() == tmp_path / "odu" / "judge.sqlite"
    monkeypatch.delenv("ODU_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "odu-bench" / "judge.sqlite"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_path() == Path.home() / ".cache" / "odu-bench" / "judge.sqlite"


def test_key_covers_every_input() -> None:
    base = cache_key("m", "v1", "text", POINTS)
    variants = [
        cache_key("m2", "v1", "text", POINTS),
        cache_key("m", "v2", "text", POINTS),
        cache_key("m", "v1", "text.", POINTS),
        cache_key("m", "v1", "text", POINTS[:1]),
        cache_key("m", "v1", "text", (POINTS[0], KeyPoint("kp02", "phone", tiers=("T1",)))),
        cache_key("m", "v1", "text", (POINTS[0], KeyPoint("kp02", "the phone", tiers=("T2",)))),
        cache_key("m", "v1", "text", POINTS, {"extra_body": {"enable_thinking": True}}),
    ]
    assert len({base, *variants}) == 1 + len(variants)
    # The source label is not shown to the judge, so it does not change the decision.
    assert cache_key("m", "v1", "text", (KeyPoint("kp01", "mute the chime", "intent", ("T1",)), POINTS[1])) == base


def test_wal_first_verdict_wins_and_threads(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "sub" / "judge.sqlite")
    cache.put("k", "m", "v1", {"kp01": True}, {"kp01": "r"})
    cache.put("k", "m", "v1", {"kp01": False}, {"kp01": "other"})
    assert cache.get_many(["k", "absent"]) == {"k": ({"kp01": True}, {"kp01": "r"})}
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: cache.put(f"k{i}", "m", "v1", {"kp01": i % 2 == 0}, {}), range(200)))
    assert len(cache) == 201
    found = cache.get_many(f"k{i}" for i in range(1200))  # more keys than one SQL chunk
    assert len(found) == 200 and found["k3"] == ({"kp01": False}, {})
    cache.close()
    with sqlite3.connect(tmp_path / "sub" / "judge.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
