"""Issue 37 item 5: bounded and said. A judge or model server answering 429 with ``Retry-After:
999999`` held ``score`` for minutes without a console word; now each wait is cut, said in one line
(server, model, reason, seconds), and the client gives up once a call has waited ``MAX_WAITING_S``
in all (judge or inference errors, exit 1). A ``summary.json`` of millions of empty objects ended
in ``MemoryError``; now it is refused before decoding (exit 2, one line). Real loopback servers,
real child processes; the caps made small through their documented environment variables."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from support.cli import argv
from support.openai_rules import API_KEY, DEFAULT_MODEL
from support.openai_server import Fault, OpenAIServer
from support.predictions import damaged_outputs
from support.process import fresh_env, run_odu

from odu.data.sample import sample_dir
from odu.io.jsonio import MAX_JSON_VALUES
from odu.transport.openai_client import MAX_RETRY_AFTER_ENV, MAX_WAITING_ENV

SAMPLE_SCENES = sample_dir() / "scenes.jsonl"
#: Seconds a child may take (a hang is killed here; each ends within seconds).
WITHIN_S = 120
#: The caps of these runs: a wait of at most 1 s, 2 s of waits in all.
SMALL_CAPS = {MAX_RETRY_AFTER_ENV: "1", MAX_WAITING_ENV: "2"}
#: Address space a child may take: enough for any command, not for a file decoded to 2 GB of objects.
ADDRESS_SPACE = 2**30


def _rate_limited(server: OpenAIServer, reason: str = "rate limited") -> OpenAIServer:
    """``server`` answering every request with 429, ``Retry-After: 999999`` and ``reason``."""
    error = {"error": {"message": reason, "type": "rate_limit_exceeded"}}
    server.fault_plan = lambda req: Fault(429, error, {"Retry-After": "999999"})
    return server


def _no_outputs(path: Path) -> Path:
    rows = [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").splitlines() if line]
    path.write_text("".join(json.dumps({"scene_id": r["scene_id"], "output": None}) + "\n" for r in rows))
    return path


def _wait_lines(err: str, who: str) -> tuple[list[str], list[str]]:
    """The console lines of ``who``'s waits, and of its giving up."""
    lines = [line for line in err.splitlines() if line.startswith(who)]
    return [line for line in lines if "; retrying in " in line], [line for line in lines if "; giving up " in line]


def test_a_judge_asking_to_wait_for_ever_is_waited_on_within_the_caps_and_said(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").splitlines() if line]
    predictions = tmp_path / "p.jsonl"
    outputs = damaged_outputs(rows, flip=0.0, drop_context=0.0, seed=1)
    predictions.write_text("".join(json.dumps({"scene_id": k, "output": v}) + "\n" for k, v in outputs.items()))
    with _rate_limited(OpenAIServer(), f"rate limited for key {API_KEY}") as server:  # the key said back
        args = argv(
            "score",
            scenes=SAMPLE_SCENES,
            predictions=predictions,
            out="run",
            judge=f"openai:{DEFAULT_MODEL}",
            judge_base_url=server.base_url,
            no_cache=True,
            no_progress=True,
        )
        started = time.monotonic()
        done = run_odu(args, fresh_env(tmp_path, OPENAI_API_KEY=API_KEY, **SMALL_CAPS), cwd=tmp_path, timeout=WITHIN_S)
        took = time.monotonic() - started
        requests, url = server.count(), server.base_url
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    segments = summary["judge"]["segments"]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert summary["judge_errors"] == segments > 8 and requests <= 3 * segments  # at most 2 waits a call
    assert summary["judge"]["wall_time_s"] < 10 and took < 60
    who = f"judge server {url} (model '{DEFAULT_MODEL}'): HTTP 429: Error code: 429 - rate limited for key ***; "
    waits, gave_up = _wait_lines(done.stderr, who)
    assert API_KEY not in done.stderr
    # every call waited twice, at once with the others: each wait said once, not once a call
    said = "; retrying in 1 s (asked for 999999 s), giving up after 2 s of waits"
    assert len(waits) == 2 and all(line.endswith(said) for line in waits)
    assert len(gave_up) == 1 and gave_up[0].endswith(
        "; giving up after 2 s of waits (MAX_WAITING_S): its failing calls are not retried until one succeeds"
    )
    assert f"odu-bench score: {segments} segment(s) could not be judged" in done.stderr
    assert "(given up after 2 s of waits, MAX_WAITING_S)" in (tmp_path / "run" / "scenes.jsonl").read_text(
        encoding="utf-8"
    )


def test_a_model_server_asking_to_wait_for_ever_gives_inference_errors_within_the_caps(tmp_path: Path) -> None:
    with _rate_limited(OpenAIServer(models=["omni"])) as server:
        model_args = f"model=omni,base_url={server.base_url},provider=generic,progress=false"
        run = dict(sample=True, model="openai", model_args=model_args, tasks="odu_ao", limit=3, no_preflight=True)
        args = argv("eval", **run, out="o")
        done = run_odu(args, fresh_env(tmp_path, OPENAI_API_KEY=API_KEY, **SMALL_CAPS), cwd=tmp_path, timeout=WITHIN_S)
        requests, url = server.count(), server.base_url
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert requests <= 9 and "odu-bench eval: 3 scene(s) got no answer from the model" in done.stderr
    waits, gave_up = _wait_lines(done.stderr, f"model server {url} (model 'omni'): HTTP 429: ")
    assert len(waits) == 2 and len(gave_up) == 1
    assert "(given up after 2 s of waits, MAX_WAITING_S)" in done.stderr


def test_a_cap_that_is_no_number_of_seconds_is_refused_in_one_line(tmp_path: Path) -> None:
    predictions = _no_outputs(tmp_path / "p.jsonl")
    args = argv("score", scenes=SAMPLE_SCENES, predictions=predictions, out="o", judge="openai:j")
    args += ["--judge-base-url", "http://127.0.0.1:9/v1"]
    done = run_odu(args, fresh_env(tmp_path, **{MAX_WAITING_ENV: "soon"}), cwd=tmp_path, timeout=WITHIN_S)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"odu-bench score: error: {MAX_WAITING_ENV}='soon': not a number of seconds (a finite number >= 0)"
    ]


# --- a summary.json of millions of empty objects -----------------------------------------------------------

#: ``python -c``: ``odu-bench ARGS`` with its address space capped at ``sys.argv[1]`` bytes.
CAPPED = (
    "import resource, runpy, sys\n"
    "resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2)\n"
    "sys.argv = ['odu-bench', *sys.argv[2:]]\n"
    "runpy.run_module('odu', run_name='__main__')\n"
)


def _capped(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CAPPED, str(ADDRESS_SPACE), *args],
        env=fresh_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=WITHIN_S,
    )


def test_a_summary_of_millions_of_empty_objects_is_refused_before_decoding(tmp_path: Path) -> None:
    """30 million ``{}`` (90 MB, 2 GB as Python objects): every reader of a run refuses it in one
    line, exit 2, within an address space of 1 GiB that the healthy run needs no more than."""
    predictions = _no_outputs(tmp_path / "p.jsonl")
    run = tmp_path / "run"
    scored = run_odu(argv("score", scenes=SAMPLE_SCENES, predictions=predictions, out=run), fresh_env(tmp_path))
    assert scored.returncode == 0, scored.stderr
    assert _capped(tmp_path, "report", str(run)).returncode == 0
    objects = 30_000_000
    with (run / "summary.json").open("wb") as fh:
        fh.write(b'{"run_id": "x", "pad": [' + b"{}," * (objects - 1) + b"{}]}")
    line = (
        f"unreadable run ({run / 'summary.json'}: more than MAX_JSON_VALUES = {MAX_JSON_VALUES:,} values (arrays, "
        "objects, keys, strings, numbers), refused before decoding)"
    )
    for command in (
        ["report", str(run)],
        ["view", str(run), "--dataset", str(sample_dir()), "--out", "site", "--no-progress"],
        ["export", str(run), "--format", "inspect", "--out", "exported"],
        ["merge", str(run), "--out", "merged"],
    ):
        done = _capped(tmp_path, *command)
        assert done.returncode == 2 and done.stderr.strip().splitlines() == [
            f"odu-bench {command[0]}: error: {run}: {line}"
        ], done.stderr[-2000:]
