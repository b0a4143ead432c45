"""How soon a run against a dead server stops: preflight (``odu.transport.server_check``) vs. the run's own
retries, the same command on both sides.

Both sides run ``odu-bench eval --sample --model openai --tasks odu_ao --limit 1`` in a fresh
process with ``base_url`` on a loopback port nothing listens on: with the preflight (the default)
the run stops before its first scene with exit 2 and a message naming the URL; with
``--no-preflight`` the one scene spends the client's retries (``odu.transport.openai_client.RETRIES``, the
default backoff) and the run ends with exit 1 and an inference error. Wall time of the whole
process, imports included; the best of ``--repeat`` runs.

Run: ``python benchmarks/bench_preflight.py [--repeat 2] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _figures import add_json_option, write_json

ROOT = Path(__file__).resolve().parents[1]


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def timed_eval(*extra: str) -> tuple[float, int, str]:
    """(seconds, exit code, stderr) of one ``odu-bench eval`` process against a dead server."""
    url = dead_url()
    with tempfile.TemporaryDirectory() as tmp:
        args = ["eval", "--sample", "--model", "openai", "--tasks", "odu_ao", "--limit", "1"]
        args += ["--model-args", f"model=bench,base_url={url},progress=false", "--out", str(Path(tmp) / "out"), *extra]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "ODU_CACHE_DIR": str(Path(tmp) / "cache")}
        env.pop("OPENAI_API_KEY", None)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "odu", *args], env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    return elapsed, proc.returncode, proc.stderr.replace(url, "URL")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    add_json_option(parser)
    args = parser.parse_args()

    runs = {"preflight": [timed_eval() for _ in range(args.repeat)]}
    runs["retries"] = [timed_eval("--no-preflight") for _ in range(args.repeat)]
    for name, code, needle in (("preflight", 2, "preflight: model server URL"), ("retries", 1, "inference error")):
        for _, rc, err in runs[name]:
            assert rc == code and needle in err, (name, rc, err[-500:])
    best = {name: min(t for t, _, _ in results) for name, results in runs.items()}
    report = {
        "preflight_s": round(best["preflight"], 2),
        "retries_s": round(best["retries"], 2),
        "ratio": round(best["retries"] / best["preflight"], 1),
    }
    print(
        f"dead server, one scene: preflight stops the run in {report['preflight_s']} s; without it the "
        f"scene's retries take {report['retries_s']} s ({report['ratio']}x)"
    )
    write_json(args.json, report)


if __name__ == "__main__":
    main()
