"""Hostile inputs: the judge's transport limits against hostile servers, and the JSONL reader on
hostile lines.

**Servers** (``--servers``, the default part): time to a judge error and peak memory.

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

**Lines** (``--lines``, issue 30 item 2): every read of the toolkit (``score``, ``view``,
``report``, ``judge-audit``, lmms-eval's ``write_predictions``) decodes a line through
:func:`odu.io.jsonio.iter_lines`; its time on each hostile line of :data:`LINES`, at sizes up to
``--max-mb`` (default the line limit, ``MAX_LINE_BYTES`` = 64 MiB), against ``json.loads`` of the
same bytes in the same run (the baseline: what decoding costs at all). The goal is a ratio of at
most 2 on every line, and a time per MB that does not grow with the size (linear).
Run: ``python benchmarks/bench_hostile.py --lines [--max-mb 64] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _timing import best_of  # noqa: E402
from support.hostile_servers import HostileServer  # noqa: E402
from support.judge_fakes import judge_responder  # noqa: E402
from support.openai_server import OpenAIServer  # noqa: E402

CHILD = """
import json, os, sys
os.environ.setdefault("OPENAI_API_KEY", "EMPTY")
from odu.judge import JudgeRequest, OpenAIJudge
from odu.core.schema import KeyPoint
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


#: Hostile JSONL lines, each made of ``n`` repeats of a piece (a prefix and a suffix around them).
LINES: dict[str, tuple[str, str, str]] = {
    # (prefix, piece, suffix)
    "cut line of escaped quotes": ('{"scene_id": "x", "output": ' + "[" * 100 + '"', '\\"', ""),
    "cut string ending in a lone backslash": ('{"output": "', "\\\\", "\\"),
    "brackets in many short strings": ("[", '"[{", "]}", ', '""]'),
    "a million empty arrays": ("[", "[], ", "[]]"),
    "blocks nested MAX_RECORD_DEPTH deep": ("[", "[" * 63 + "]" * 63 + ", ", "[]]"),
    "objects nested MAX_RECORD_DEPTH deep": ("[", '{"k": ' * 63 + "1" + "}" * 63 + ", ", "{}]"),
    "nested past the decoder's limit": ("", "[", ""),
    "']['' without end": ("", "][", ""),
    "a long reply full of escapes": ('{"output": "', 'say \\"stop\\"\\n [then] {go} ', '"}'),
}


def hostile_line(case: str, size: int) -> bytes:
    prefix, piece, suffix = LINES[case]
    return (prefix + piece * max(1, (size - len(prefix) - len(suffix)) // len(piece)) + suffix).encode()


def time_lines(max_mb: float, repeats: int) -> None:
    from odu.io.jsonio import JsonFileError, iter_lines

    name = Path("hostile.jsonl")

    def read(raw: bytes) -> None:
        try:
            list(iter_lines([raw], name))
        except JsonFileError:
            pass

    def decode(raw: bytes) -> None:
        try:
            json.loads(raw)
        except (ValueError, RecursionError):
            pass

    sizes = [s for s in (64 * 2**10, 2**20, 8 * 2**20, 64 * 2**20) if s <= max_mb * 2**20]
    print(f"{'line':40} {'size':>7} {'json.loads s':>12} {'read s':>9} {'ratio':>6} {'read s/MB':>10}")
    for case in LINES:
        for size in sizes:
            raw = hostile_line(case, size)
            base = best_of(repeats, functools.partial(decode, raw))
            ours = best_of(repeats, functools.partial(read, raw))
            mb = len(raw) / 2**20
            print(
                f"{case:40} {_size(len(raw)):>7} {base:12.4f} {ours:9.4f} {ours / base:6.2f} {ours / mb:10.4f}",
                flush=True,
            )


def _size(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n >= 2**20 else f"{n / 2**10:.0f} KB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", action="store_true", help="time the JSONL reader on hostile lines instead")
    parser.add_argument("--max-mb", type=float, default=64.0, help="the longest line timed (--lines)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs per line (--lines)")
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--retries", type=int, default=0)
    parser.add_argument("--limit", type=float, default=40.0)
    args = parser.parse_args()
    if args.lines:
        time_lines(args.max_mb, args.repeats)
        return
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
