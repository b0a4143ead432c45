"""How long lm-eval keeps a newcomer waiting: a run of our tasks with and without lm-eval's index of
its built-in tasks, and the commands that need that index.

The bridge (``odu_lm_eval_bridge``) builds the TaskManager of a command line asking only for ``odu*``
tasks without lm-eval's ~14,700 built-in task names. Both sides run ``odu-bench lm-eval run --tasks
odu_ao --model odu-never --limit 1`` in a fresh process, offline: the baseline with the bridge off
(``ODU_LM_EVAL_BRIDGE=0``: ``odu-bench lm-eval`` still registers the models and adds the task
folder, and lm-eval indexes its own tasks as it always did), the other with it on. Also timed:
plain ``lm_eval`` with the bridge, and ``lm_eval ls tasks``, which lists every task and so needs the
whole index. For each: wall time of the whole process (imports included) and the time until it
printed its first line; the best of ``--repeat`` runs.

Run: ``python benchmarks/bench_startup.py [--repeat 2] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _figures import add_json_option, write_json

ROOT = Path(__file__).resolve().parents[1]
RUN = ["--tasks", "odu_ao", "--model", "odu-never", "--limit", "1"]
COMMANDS: dict[str, tuple[list[str], dict[str, str]]] = {
    "odu-bench lm-eval, full index (bridge off)": (["-m", "odu", "lm-eval", "run", *RUN], {"ODU_LM_EVAL_BRIDGE": "0"}),
    "odu-bench lm-eval, our tasks only (bridge)": (["-m", "odu", "lm-eval", "run", *RUN], {}),
    "lm_eval, our tasks only (bridge)": (["-m", "lm_eval", *RUN], {}),
    "lm_eval ls tasks (needs the full index)": (["-m", "lm_eval", "ls", "tasks"], {}),
}


def timed(args: list[str], extra_env: dict[str, str]) -> tuple[float, float, int]:
    """(seconds to the first line printed, seconds in all, exit code) of one fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ODU_", "HF_"))}
        env |= {"PYTHONPATH": str(ROOT), "ODU_CACHE_DIR": str(Path(tmp) / "cache"), "HF_HUB_OFFLINE": "1"}
        env |= {"HF_DATASETS_CACHE": str(Path(tmp) / "hf"), **extra_env}
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, *args], cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert proc.stdout is not None
        first = None
        for line in proc.stdout:
            if first is None and line.strip():
                first = time.perf_counter() - start
        code = proc.wait()
        total = time.perf_counter() - start
    return first if first is not None else total, total, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    add_json_option(parser)
    args = parser.parse_args()

    results = {}
    for name, (command, env) in COMMANDS.items():
        runs = [timed(command, env) for _ in range(args.repeat)]
        assert all(code == 0 for _, _, code in runs), (name, runs)
        results[name] = {"first_line_s": min(r[0] for r in runs), "total_s": min(r[1] for r in runs)}
    for name, r in results.items():
        print(f"{name:48s} first line {r['first_line_s']:5.1f} s   total {r['total_s']:5.1f} s")
    base, ours = (results[k]["total_s"] for k in list(COMMANDS)[:2])
    print(f"odu-bench lm-eval run of our tasks: {base / ours:.1f}x faster without the built-in index")
    write_json(args.json, results)


if __name__ == "__main__":
    main()
