"""LLM-judge throughput: sequential vs concurrent calls, and a warm-cache rerun.

A loopback OpenAI-compatible server (``tests/support/openai_server.py``, in its own process like a real
judge server) adds a fixed latency to every call and answers with valid App F.4 verdicts. In the
same run, on the same ~2,000 segments of realistic shape (3 key points, a candidate of two or
three sentences), this times:

* ``sequential``: ``OpenAIJudge`` with ``concurrency=1``, no cache: the naive one-call-at-a-time
  baseline of the peers' judges;
* ``concurrent``: ``--judge-concurrency 32`` (default here), cold cache (verdicts are written);
* ``warm``: a fresh judge on the warm cache (must send 0 requests).

Run: ``python benchmarks/bench_judge.py [--segments 2000] [--latency 0.1] [--concurrency 32]
[--json out.json]``. Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _figures import add_json_option, write_json  # noqa: E402
from _server_process import server_process  # noqa: E402

from odu.core.schema import KeyPoint  # noqa: E402
from odu.judge import JudgeRequest, OpenAIJudge  # noqa: E402

_INTENTS = (
    "The user wants to mute the electronic notification sound currently playing",
    "The user asks what the red indicator on the washing machine panel means",
    "The user wants a reminder to water the plants on the balcony tomorrow morning",
    "The user wants to know whether the milk in the fridge is still fine to drink",
)
_CONTEXT = (
    "audio: a short notification chime comes from the phone held at the bottom of the frame",
    "visual: the user points at a blinking red light on the control panel",
    "dialogue_history: earlier the user said the plants looked dry",
)


def make_requests(n: int) -> list[JudgeRequest]:
    """``n`` distinct segments of realistic shape."""
    requests = []
    for i in range(n):
        intent = _INTENTS[i % len(_INTENTS)]
        points = (
            KeyPoint("kp01", intent, "intent", ("T1",)),
            KeyPoint(
                "kp02", _CONTEXT[i % 3].split(": ", 1)[1], f"required_context.{_CONTEXT[i % 3].split(':')[0]}", ("T2",)
            ),
            KeyPoint(
                "kp03",
                "The request refers to the object the user is pointing at",
                "required_context.visual",
                ("T1", "T2"),
            ),
        )
        candidate = f"{intent} (variant {i}). | {_CONTEXT[(i + 1) % 3]}"
        requests.append(JudgeRequest(f"avp_gen_{i:06d}", 0, candidate, points))
    return requests


def _serve(latency: float, ready: Any, stop: Any) -> None:
    from support.judge_fakes import judge_responder
    from support.openai_server import OpenAIServer, Reply

    server = OpenAIServer(
        judge_responder(), latency=latency, models=["bench-judge"], api_key=None
    ).start()  # keyless vLLM

    def reset(req: Any) -> Reply:
        server.reset()
        return Reply(body={})

    server.route(
        "GET", "/stats", lambda req: Reply(body={"requests": server.count(), "max_in_flight": server.max_in_flight})
    )
    server.route("POST", "/reset", reset)
    ready.put(server.base_url)
    stop.wait()
    server.close()


def _call(base_url: str, path: str, method: str = "GET") -> dict[str, Any]:
    origin = base_url.removesuffix("/v1")
    with urllib.request.urlopen(
        urllib.request.Request(origin + path, method=method, data=b"" if method == "POST" else None)
    ) as r:
        return json.loads(r.read())


def _timed(base_url: str, judge: OpenAIJudge, requests: list[JudgeRequest]) -> dict[str, Any]:
    _call(base_url, "/reset", "POST")
    started = time.perf_counter()
    verdicts = judge.judge(requests)
    seconds = time.perf_counter() - started
    stats = _call(base_url, "/stats")
    judge.close()
    return {
        "seconds": round(seconds, 3),
        "server_requests": stats["requests"],  # chat completions only
        "max_in_flight": stats["max_in_flight"] if stats["requests"] else 0,  # (the /stats call itself counts)
        "judge_errors": sum(v.error is not None for v in verdicts),
        "verdicts": [dict(v.hits or {}) for v in verdicts],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the server adds to every call")
    parser.add_argument("--concurrency", type=int, default=32)
    add_json_option(parser)
    args = parser.parse_args()

    requests = make_requests(args.segments)
    with server_process(_serve, args.latency) as base_url, tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "judge.sqlite"

        def judge(concurrency: int, **options: Any) -> OpenAIJudge:
            return OpenAIJudge("bench-judge", base_url=base_url, concurrency=concurrency, progress=False, **options)

        judge(1, no_cache=True).judge(requests[:4])  # import and connect once before timing
        phases = {
            "sequential": _timed(base_url, judge(1, no_cache=True), requests),
            "concurrent": _timed(base_url, judge(args.concurrency, cache_path=cache), requests),
            "warm": _timed(base_url, judge(args.concurrency, cache_path=cache), requests),
        }
    same = phases["sequential"]["verdicts"] == phases["concurrent"]["verdicts"] == phases["warm"]["verdicts"]
    for phase in phases.values():
        del phase["verdicts"]
    seq, conc, warm = (phases[p]["seconds"] for p in ("sequential", "concurrent", "warm"))
    result = {
        "segments": args.segments,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "phases": phases,
        "speedup_concurrent_vs_sequential": round(seq / conc, 1),
        "ideal_speedup": args.concurrency,
        "warm_rerun_s": warm,
        "same_verdicts": same,
        "goals": {
            "speedup>=20": seq / conc >= 20,
            "warm<2s": warm < 2,
            "warm_sends_0": phases["warm"]["server_requests"] == 0,
        },
    }
    print(json.dumps(result, indent=2))
    write_json(args.json, result)
    print(f"\n{'phase':<12}{'seconds':>10}{'requests':>10}{'peak in flight':>16}{'errors':>8}")
    for name, p in phases.items():
        print(
            f"{name:<12}{p['seconds']:>10.2f}{p['server_requests']:>10}{p['max_in_flight']:>16}{p['judge_errors']:>8}"
        )
    print(
        f"speed-up {result['speedup_concurrent_vs_sequential']}x (goal >= 20x); warm rerun {warm:.2f} s (goal < 2 s); "
        f"same verdicts in all phases: {same}"
    )


if __name__ == "__main__":
    main()
