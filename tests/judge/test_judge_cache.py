"""The verdict cache: location, key material, WAL mode, first verdict wins, threads, damaged files,
other connections holding the file (waited for, then left alone)."""

from __future__ import annotations

import concurrent.futures
import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from odu.cli import main
from odu.core.schema import KeyPoint
from odu.judge import JudgeCacheError, OpenAIJudge
from odu.judge.cache import VerdictCache, cache_key, default_cache_path

SAMPLE_SCENES = Path(__file__).resolve().parents[2] / "odu" / "data" / "sample" / "scenes.jsonl"
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


def test_key_does_not_depend_on_the_order_of_the_extra_bodys_keys() -> None:
    """docs/judges.md, "Cache": one extra request body, its keys in any order and at any depth, is
    one key; another value under one of them is another."""
    body = {"enable_thinking": True, "chat_template_kwargs": {"thinking": True, "budget": 512}}
    reordered = {"chat_template_kwargs": {"budget": 512, "thinking": True}, "enable_thinking": True}
    assert list(body) != list(reordered)
    key = cache_key("m", "v1", "text", POINTS, {"extra_body": body})
    assert cache_key("m", "v1", "text", POINTS, {"extra_body": reordered}) == key
    changed = {**reordered, "chat_template_kwargs": {"budget": 256, "thinking": True}}
    assert cache_key("m", "v1", "text", POINTS, {"extra_body": changed}) != key


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


def damaged_cache(path: Path, how: str) -> Path:
    """A verdict cache with 2,000 verdicts, then ``truncated`` to half its size or ``overwritten`` with text."""
    cache = VerdictCache(path)
    for i in range(2000):
        cache.put(f"k{i}", "m", "v1", {"kp01": True}, {"kp01": "a reason of some length"})
    cache.close()
    if how == "truncated":
        with path.open("r+b") as f:
            f.truncate(path.stat().st_size // 2)
    else:
        path.write_text("not a database at all " * 100)
    return path


@pytest.mark.parametrize("how", ["truncated", "overwritten"])
def test_a_damaged_cache_is_named_with_the_way_out(how: str, tmp_path: Path) -> None:
    path = damaged_cache(tmp_path / "judge.sqlite", how)
    with pytest.raises(JudgeCacheError) as failure:
        VerdictCache(path).check()
    message = str(failure.value)
    assert str(path) in message and "delete it" in message and "--judge-cache" in message
    with pytest.raises(JudgeCacheError, match="judge.sqlite cannot be used"):  # before any call is paid for
        OpenAIJudge("j", base_url="http://127.0.0.1:9/v1", cache_path=path)
    assert OpenAIJudge("j", base_url="http://127.0.0.1:9/v1", cache_path=path, no_cache=True).cache is None


def test_score_with_a_damaged_cache_exits_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = damaged_cache(tmp_path / "judge.sqlite", "truncated")
    rows = [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").splitlines()]
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"scene_id": r["scene_id"], "output": "{}"}) + "\n" for r in rows))
    judge = ["--judge", "openai:j", "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-cache", str(path)]
    args = ["score", "--scenes", str(SAMPLE_SCENES), "--predictions", str(predictions), "--out", str(tmp_path / "o")]
    assert main([*args, *judge]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"odu-bench score: error: verdict cache {path} cannot be used") and "Traceback" not in err


def test_eval_checks_the_cache_before_any_inference(
    tmp_path: Path, demo_dataset: Path, capsys: pytest.CaptureFixture
) -> None:
    path = damaged_cache(tmp_path / "judge.sqlite", "overwritten")
    args = [
        "eval",
        "--dataset",
        str(demo_dataset),
        "--model",
        "openai",
        "--tasks",
        "odu_ao",
        "--out",
        str(tmp_path / "run"),
    ]
    args += ["--model-args", "model=m,base_url=http://127.0.0.1:9/v1", "--judge", "openai:j"]
    args += ["--judge-base-url", "http://127.0.0.1:9/v1", "--judge-cache", str(path)]
    assert main(args) == 2  # the model server is unreachable: reaching inference would be exit 1
    err = capsys.readouterr().err
    assert f"verdict cache {path} cannot be used" in err and "delete it" in err and "Traceback" not in err


def holding(path: Path, statement: str) -> sqlite3.Connection:
    """Another connection to ``path`` in the transaction ``statement`` began (committed by the caller)."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute(statement)
    return holder


def test_a_new_file_being_written_is_waited_for_before_the_wal_switch(tmp_path: Path) -> None:
    # Two processes opening a new cache together: one writes while the other switches the file to
    # WAL, which SQLite refuses at once ("database is locked"), busy timeout or not.
    path = tmp_path / "judge.sqlite"
    holder = holding(path, "BEGIN IMMEDIATE")
    holder.execute("CREATE TABLE other (x)")
    threading.Timer(0.5, holder.execute, ["COMMIT"]).start()
    started = time.monotonic()
    verdicts = VerdictCache(path)
    verdicts.check()
    assert time.monotonic() - started >= 0.4 and not verdicts.left_alone
    verdicts.put("k", "m", "v1", {"kp01": True}, {})
    assert len(verdicts) == 1
    verdicts.close()
    holder.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize("state", ["new", "wal"])
def test_a_cache_held_past_the_bound_is_left_alone_and_said_once(
    state: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr("odu.judge.cache.JUDGE_CACHE_BUSY_TIMEOUT_S", 0.5)
    path = tmp_path / "judge.sqlite"
    if state == "wal":  # in WAL mode an exclusive transaction holds writers only: reads go on
        stored = VerdictCache(path)
        stored.put("old", "m", "v1", {"kp01": True}, {})
        stored.close()
    holder = holding(path, "BEGIN EXCLUSIVE")
    verdicts = VerdictCache(path)
    verdicts.check()  # no JudgeCacheError: the run goes on
    found = verdicts.get_many(["old", "new"])
    verdicts.put("new", "m", "v1", {"kp01": False}, {})
    assert verdicts.left_alone
    started = time.monotonic()
    verdicts.put("newer", "m", "v1", {"kp01": False}, {})
    assert verdicts.get_many(["old"]) == {} and time.monotonic() - started < 0.2  # no second wait
    verdicts.close()
    holder.execute("COMMIT")
    holder.close()
    assert found == ({"old": ({"kp01": True}, {})} if state == "wal" else {})
    reopened = VerdictCache(path)
    assert reopened.get_many(["old", "new", "newer"]).keys() == ({"old"} if state == "wal" else set())
    reopened.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"odu-bench: verdict cache {path} stayed locked")
    assert "for 0.5 s" in err and "the run goes on without it" in err
