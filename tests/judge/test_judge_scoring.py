"""``odu-bench score --judge openai:MODEL`` end to end against a loopback server (real sockets,
real subprocesses): clean result after SIGKILL + rerun, one new cache shared by eight processes, a
cache held locked past the bound that does not end the run, warm reruns that send nothing, judge
errors reported and failing the exit code, and the API key appearing nowhere but in the request
header."""

from __future__ import annotations

import copy
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.judge_fakes import judge_responder, rule_verdicts
from support.openai_server import Fault, OpenAIServer

from odu.cli import main
from odu.core.schema import KeyPoint
from odu.judge.cache import VerdictCache
from odu.runs.contract import read_run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "demo_scenes.json"
SECRET = "sk-live-7d41e0c9b2a84f16a3"
KEY_ENV = "ODU_TEST_JUDGE_KEY"


def _prediction(ref_segments: list[dict], copy_index: int) -> str:
    """A model output close to the reference; the copy index changes the wording and drops context."""
    segments = []
    for g in ref_segments:
        context = g["required_context"][: 1 + copy_index % 2]
        segments.append(
            {
                "start_ms": g["start_ms"],
                "end_ms": g["end_ms"],
                "transcript": g["transcript"],
                "structured_intent": f"{g['structured_intent']} (take {copy_index})",
                "required_context": [{"type": c["type"], "description": c["description"]} for c in context],
                "user_in_frame": g.get("user_in_frame", True),
                "user_gender": g["user_gender"],
                "user_age_group": g["user_age_group"],
            }
        )
    return json.dumps({"has_demand": bool(segments), "segments": segments}, ensure_ascii=False)


def write_dataset(directory: Path, copies: int) -> tuple[Path, Path, int]:
    """Demo scenes repeated ``copies`` times under new ids, with predictions; returns the number of
    segments the judge will see."""
    demo = json.loads(FIXTURE.read_text(encoding="utf-8"))
    scenes, predictions, segments = [], [], 0
    for c in range(copies):
        for rec in demo:
            rec = copy.deepcopy(rec)
            rec["scene_id"] = f"{rec['scene_id']}_c{c}"
            refs = rec["annotations"][rec["language"]]["evaluation_targets"]["segments"]
            segments += sum(1 for g in refs if g["key_points"])
            scenes.append(rec)
            predictions.append({"scene_id": rec["scene_id"], "output": _prediction(refs, c)})
    scenes_path, predictions_path = directory / "scenes.json", directory / "predictions.jsonl"
    scenes_path.write_text(json.dumps(scenes, ensure_ascii=False), encoding="utf-8")
    predictions_path.write_text(
        "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in predictions), encoding="utf-8"
    )
    return scenes_path, predictions_path, segments


def score_command(
    server: OpenAIServer, data: tuple[Path, Path, int], out: Path, cache: Path | None, *extra: str
) -> list[str]:
    scenes, predictions, _ = data
    command = [
        sys.executable,
        "-m",
        "odu",
        "score",
        "--scenes",
        str(scenes),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--judge",
        "openai:fake-judge",
        "--judge-base-url",
        server.base_url,
        "--judge-api-key-env",
        KEY_ENV,
        "--judge-timeout",
        "10",
        *extra,
    ]
    return command + (["--judge-cache", str(cache)] if cache else ["--no-cache"])


def run_score(*args, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, KEY_ENV: SECRET}
    return subprocess.run(score_command(*args, **kwargs), env=env, capture_output=True, text=True, timeout=300)


def results(out: Path) -> tuple[dict, list[dict]]:
    """summary.json without its judge accounting and what identifies the run (id, file hashes),
    and the scenes.jsonl rows."""
    run = read_run(out)
    return {k: v for k, v in run.summary.items() if k not in ("judge", "run_id", "files")}, run.scenes


@pytest.fixture
def server(openai_server: OpenAIServer) -> OpenAIServer:
    openai_server.api_key, openai_server.models = SECRET, ["fake-judge"]
    openai_server.responder = judge_responder()
    return openai_server


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    return write_dataset(tmp_path_factory.mktemp("data"), copies=4)


def test_verdicts_reach_scenes_jsonl_and_warm_rerun_sends_nothing(server: OpenAIServer, data, tmp_path: Path) -> None:
    cache = tmp_path / "judge.sqlite"
    first = run_score(server, data, tmp_path / "run1", cache)
    assert first.returncode == 0, first.stderr
    assert server.count() == data[2]
    summary, rows = results(tmp_path / "run1")
    assert summary["judge_errors"] == 0
    for row in rows:  # every judged key point carries the fake judge's verdict for its candidate
        texts = {c["segment"]: c["text"] for c in row["candidates"]}
        for k in row["key_points"]:
            if k["segment"] in texts:
                point = KeyPoint(k["qid"], k["point"])
                assert k["hit"] == rule_verdicts(texts[k["segment"]], [point])[k["qid"]]
    judge_block = json.loads((tmp_path / "run1" / "summary.json").read_text())["judge"]
    assert judge_block["model"] == "fake-judge" and judge_block["requests"] == data[2]
    assert "judge fake-judge (prompt odu-f4-en-1)" in first.stdout

    server.reset()
    again = run_score(server, data, tmp_path / "run2", cache)
    assert again.returncode == 0, again.stderr
    assert server.count() == 0
    assert results(tmp_path / "run2") == results(tmp_path / "run1")
    assert json.loads((tmp_path / "run2" / "summary.json").read_text())["judge"]["cache_hits"] == data[2]


def test_sigkill_mid_run_then_rerun_gives_the_clean_result(server: OpenAIServer, data, tmp_path: Path) -> None:
    clean = run_score(server, data, tmp_path / "clean", None)
    assert clean.returncode == 0, clean.stderr
    total = data[2]

    server.reset()
    server.latency = 0.05
    cache = tmp_path / "judge.sqlite"
    env = {**os.environ, KEY_ENV: SECRET}
    victim = subprocess.Popen(
        score_command(server, data, tmp_path / "killed", cache, "--judge-concurrency", "2"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while server.count() < total // 3 and time.monotonic() < deadline and victim.poll() is None:
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait() == -signal.SIGKILL
    asked = server.count()
    assert asked < total  # killed mid-run
    kept = len(VerdictCache(cache))
    assert asked - 2 <= kept <= asked  # only the (at most 2) in-flight calls were lost
    assert not (tmp_path / "killed" / "summary.json").exists()

    server.reset()
    server.latency = 0.0
    resumed = run_score(server, data, tmp_path / "resumed", cache)
    assert resumed.returncode == 0, resumed.stderr
    assert server.count() == total - kept  # what was judged before the kill is reused
    assert results(tmp_path / "resumed") == results(tmp_path / "clean")


def test_eight_processes_share_one_new_cache(server: OpenAIServer, data, tmp_path: Path) -> None:
    server.latency = 0.01
    cache = tmp_path / "shared.sqlite"  # new: all eight open it, and switch it to WAL, at once
    env = {**os.environ, KEY_ENV: SECRET}
    procs = [
        subprocess.Popen(
            score_command(server, data, tmp_path / f"p{i}", cache, "--no-progress"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err[-2000:] for _, err in outputs]
    assert not any("verdict cache" in err for _, err in outputs)  # waited for, never left alone
    first = results(tmp_path / "p0")
    assert all(results(tmp_path / f"p{i}") == first for i in range(1, 8))
    assert data[2] <= server.count() <= 8 * data[2]
    assert len(VerdictCache(cache)) == data[2]

    server.reset()
    warm = run_score(server, data, tmp_path / "warm", cache)
    assert warm.returncode == 0 and server.count() == 0
    assert results(tmp_path / "warm") == first


@pytest.mark.parametrize("state", ["new", "wal"])
def test_a_cache_locked_past_the_bound_does_not_end_the_run(
    state: str,
    server: OpenAIServer,
    data,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    monkeypatch.setattr("odu.judge.cache.JUDGE_CACHE_BUSY_TIMEOUT_S", 1.0)
    monkeypatch.setenv(KEY_ENV, SECRET)
    cache = tmp_path / "judge.sqlite"
    if state == "wal":  # an existing cache: reads go on, the first verdict stored waits out the bound
        existing = VerdictCache(cache)
        existing.check()
        existing.close()
    holder = sqlite3.connect(cache, isolation_level=None)
    assert holder.execute("PRAGMA journal_mode").fetchone()[0] == ("wal" if state == "wal" else "delete")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert main(score_command(server, data, tmp_path / "run", cache, "--no-progress")[3:]) == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert err.count(f"odu-bench: verdict cache {cache} stayed locked by another connection for 1 s") == 1
    summary, _ = results(tmp_path / "run")
    assert summary["judge_errors"] == 0 and server.count() == data[2]
    assert len(VerdictCache(cache)) == 0  # nothing stored while it was held


def test_judge_errors_fail_the_run_and_the_key_never_leaks(server: OpenAIServer, data, tmp_path: Path) -> None:
    def reject_some(req) -> Fault | None:  # a server quoting the credentials back in its error
        if "(take 1)" in json.dumps(req.json):
            return Fault(400, {"error": {"message": f"bad request for {req.headers['authorization']}"}})
        return None

    server.fault_plan = reject_some
    cache = tmp_path / "cache" / "judge.sqlite"
    strict = run_score(server, data, tmp_path / "strict", cache)
    assert strict.returncode == 1
    assert "could not be judged" in strict.stderr and "--allow-judge-errors" in strict.stderr
    summary = json.loads((tmp_path / "strict" / "summary.json").read_text())
    failed = summary["judge_errors"]
    assert 0 < failed < data[2]
    assert summary["judge"]["errors"] == failed
    av = summary["audio-visual"]
    assert av["judge_error_points"] > 0 and av["m2_errors_as_misses"] < av["m2"]
    rows = [json.loads(x) for x in (tmp_path / "strict" / "scenes.jsonl").read_text().splitlines()]
    errored = [k for r in rows for k in r["key_points"] if k["judge_error"]]
    assert errored and all(k["hit"] is None and "HTTP 400" in k["judge_error"] for k in errored)

    lenient = run_score(server, data, tmp_path / "lenient", cache, "--allow-judge-errors")
    assert lenient.returncode == 0, lenient.stderr

    assert any(r.headers.get("authorization") == f"Bearer {SECRET}" for r in server.requests)  # the key was used
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.startswith("judge.sqlite") for p in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    for proc in (strict, lenient):
        assert SECRET not in proc.stdout and SECRET not in proc.stderr
