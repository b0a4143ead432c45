"""The judge's transport limits against hostile servers: time to a judge error and peak memory.

Each case runs one ``OpenAIJudge`` call (``--judge-timeout`` / ``--judge-retries`` as given, one
segment, no cache) in a child process against a loopback server of
``tests/support/hostile_servers.py`` or, as the baseline, the well-behaved loopback server of
``tests/support/openai_server.py``; the parent samples the child's peak RSS (``VmHWM``) and stops
it after ``--limit`` seconds:

* ``healthy``: an ordinary verdict (baseline time and memory);
* ``trickle``: a valid reply sent one byte every 0.5 s;
* ``endless``: a chunked body that never ends;
* ``huge``: 1 GiB announced in ``Content-Length``.

Run: ``python benchmarks/bench_hostile.py [--timeout 2] [--retries 0] [--limit 40]``; to measure
another checkout of the toolkit, put it first on ``PYTHONPATH``. Prints one row per case: wall
seconds, whether the call ended by itself, peak RSS in MB and the verdict's error.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.hostile_servers import HostileServer  # noqa: E402
from support.judge_fakes import judge_responder  # noqa: E402
from support.openai_server import OpenAIServer  # noqa: E402

CHILD = """
import json, os, sys
os.environ.setdefault("OPENAI_API_KEY", "EMPTY")
from odu.judge import JudgeRequest, OpenAIJudge
from odu.schema import KeyPoint
url, timeout, retries = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
judge = OpenAIJudge("judge", base_url=url, timeout=timeout, retries=retries, no_cache=True, progress=False)
(verdict,) = judge.judge([JudgeRequest("s", 0, "mute the sound", (KeyPoint("kp01", "the sound muted"),))])
print(json.dumps({"error": verdict.error, "hits": verdict.hits}))
"""


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_case(url: str, timeout: float, retries: int, limit: float) -> dict[str, object]:
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, url, str(timeout), str(retries)], stdout=subprocess.PIPE, text=True
    )
    peak = 0.0
    while child.poll() is None and time.perf_counter() - start < limit:
        try:
            peak = max(peak, peak_rss_mb(child.pid))
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.1)
    ended = child.poll() is not None
    if not ended:
        peak = max(peak, peak_rss_mb(child.pid))
        child.kill()
    out = child.communicate()[0]
    wall = time.perf_counter() - start
    result = (
        json.loads(out.splitlines()[-1]) if ended and out.strip() else {"error": f"still running after {limit:g} s"}
    )
    return {"wall_s": round(wall, 1), "ended": ended, "peak_rss_mb": round(peak, 1), "error": result.get("error")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--retries", type=int, default=0)
    parser.add_argument("--limit", type=float, default=40.0)
    args = parser.parse_args()
    rows = {}
    with OpenAIServer(judge_responder()) as healthy:
        rows["healthy"] = run_case(healthy.base_url, args.timeout, args.retries, args.limit)
    for mode in ("trickle", "endless", "huge"):
        with HostileServer(mode) as server:
            rows[mode] = run_case(server.base_url, args.timeout, args.retries, args.limit)
    print(f"--judge-timeout {args.timeout:g} --judge-retries {args.retries}, stopped after {args.limit:g} s")
    print(f"{'server':8} {'wall s':>7} {'ended':>6} {'peak RSS MB':>12}  error")
    for name, row in rows.items():
        print(f"{name:8} {row['wall_s']:7.1f} {row['ended']!s:>6} {row['peak_rss_mb']:12.1f}  {row['error']}")


if __name__ == "__main__":
    main()
