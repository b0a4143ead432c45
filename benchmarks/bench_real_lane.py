"""The real lane's costs (docs/real-lane.md): is the harness ever the bottleneck against a real server?

A tiny checkpoint is built (``tools/tiny_checkpoints.py``) and served by a real ``transformers serve``
subprocess; ``odu-bench eval --sample --model openai`` then runs the 21 sample scenes one at a time
(``concurrency=1``), with the backend's two halves timed per scene:

* **client**: ``encode`` (the scene's media read from the prepared dataset, spooled, the video's track
  left out and served by URL, the audio part made, the request built) plus the parse and score of the
  answer (``odu.runs.scoring`` on the run's own outputs, timed apart);
* **server**: ``send``, the HTTP round trip, in which the server fetches the clip from our clip
  server, decodes it, runs its processor and generates.

Two checkpoints: the published Qwen2.5-Omni layout (whose ``generate`` answers 1,024 tokens whatever
``max_tokens`` says) and a thinker-only one held to ``max_tokens=8``, the least work a server can do
per scene, hence the harshest ratio for the harness. Also timed: building the checkpoints, the
server's start (to ``/health``), and each whole ``eval`` process step.

``--lane vllm``: the same against vLLM's own server (the vLLM lane, ``scripts/install_vllm_lane.sh``), on
the published Qwen2.5-Omni and Qwen3-Omni layouts built ``--for vllm``, both held to ``max_tokens=8``
(vLLM keeps to it); the server is started with ``--trust-request-mm-kwargs``, the videos travel as data
URLs with ``use_audio_in_video``, so the client's ``encode`` is reading and Base64-encoding the clips.

``--lane vllm`` serves every layout of the lane, each started as the tests start it (``--enforce-eager``, the
family's own flags): Qwen2.5-Omni, Qwen3-Omni, MiniCPM-o 4.5 and Nemotron 3 Nano Omni on both tasks,
Kimi-Audio on the audio-only task its model allows; ``--kind`` picks some of them.

Run: ``python benchmarks/bench_real_lane.py [--lane transformers|vllm] [--kind KIND] [--json out.json]`` (needs
the ``[torch]`` extra; ``--lane vllm`` also the vLLM lane's venv).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _figures import add_json_option, write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tools")]


def timed(owner: type, name: str, into: list[float]) -> Callable[[], None]:
    """Wrap ``owner.name`` (sync or async) to append each call's seconds to ``into``; returns the undo."""
    import inspect

    original = getattr(owner, name)
    if inspect.iscoroutinefunction(original):

        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                into.append(time.perf_counter() - start)

    else:

        def wrapper(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                into.append(time.perf_counter() - start)

    setattr(owner, name, wrapper)
    return lambda: setattr(owner, name, original)


def run_eval(served: Any, out: Path, model_args: dict[str, Any], tasks: str = "odu_av,odu_ao") -> dict[str, Any]:
    """One ``odu-bench eval`` in this process, ``encode`` / ``send`` timed per scene; the figures."""
    from odu.cli import main
    from odu.models.openai_omni import OpenAIOmni

    encode: list[float] = []
    send: list[float] = []
    undo = [timed(OpenAIOmni, "encode", encode), timed(OpenAIOmni, "send", send)]
    args = {"model": served.model, "base_url": served.base_url, "concurrency": 1, **model_args}
    cut = ["--allow-truncated"] if "max_tokens" in model_args else []  # random weights run to any limit
    start = time.perf_counter()
    try:
        code = main(
            ["eval", "--sample", "--tasks", tasks, "--model", "openai", "--model-args", json.dumps(args)]
            + ["--out", str(out), *cut]
        )
    finally:
        for step in undo:
            step()
    wall = time.perf_counter() - start
    assert code == 0, f"eval exited {code}"
    [folder] = out.iterdir()
    score = score_seconds(folder)
    return {
        "scenes": len(encode),
        "eval_wall_s": round(wall, 2),
        "client_ms_per_scene": round(1000 * (statistics.fmean(encode) + score / len(encode)), 1),
        "encode_ms_per_scene": round(1000 * statistics.fmean(encode), 1),
        "parse_score_ms_per_scene": round(1000 * score / len(encode), 1),
        "server_ms_per_scene": round(1000 * statistics.fmean(send), 1),
        "server_ms_median": round(1000 * statistics.median(send), 1),
    }


def score_seconds(folder: Path) -> float:
    """Seconds ``odu-bench score`` takes on the run's own outputs (parse, match, lexical judge, metrics)."""
    from odu.cli import main
    from odu.data.sample import sample_dir

    start = time.perf_counter()
    code = main(
        [
            "score",
            "--scenes",
            str(sample_dir() / "scenes.jsonl"),
            "--predictions",
            str(folder / "predictions.jsonl"),
            "--out",
            str(folder.parent / "rescored"),
            "--no-progress",
        ]
    )
    assert code in (0, 1)
    return time.perf_counter() - start


def client_share(result: dict[str, Any]) -> float:
    return round(result["client_ms_per_scene"] / (result["client_ms_per_scene"] + result["server_ms_per_scene"]), 3)


def transformers_lane(root: Path) -> dict[str, Any]:
    """``transformers serve`` on the published Qwen2.5-Omni layout and a thinker-only checkpoint."""
    from support.real_lane import build_checkpoints, serve

    figures: dict[str, Any] = {}
    start = time.perf_counter()
    checkpoints = build_checkpoints(root / "checkpoints")
    figures["build_all_checkpoints_s"] = round(time.perf_counter() - start, 1)
    for kind, model_args in (("qwen2_5_omni", {}), ("qwen2_5_omni_thinker", {"max_tokens": 8})):
        os.environ["ODU_CACHE_DIR"] = str(root / f"cache-{kind}")  # each run spools its clips afresh
        start = time.perf_counter()
        with serve(checkpoints[kind], root) as served:
            started = time.perf_counter() - start
            result = run_eval(served, root / f"run-{kind}", model_args)
        result["server_start_s"] = round(started, 1)
        result["client_share"] = client_share(result)
        figures[kind] = result
    return figures


#: The tasks each vLLM checkpoint's modalities allow (Kimi-Audio hears audio only; Table 3: AO).
VLLM_TASKS = {"kimi_audio": "odu_ao"}


def vllm_lane(root: Path, kinds: list[str] | None = None) -> dict[str, Any]:
    """vLLM 0.32.0 (CPU build) on the published layouts sized for it (``kinds``: some of them)."""
    from support.vllm_lane import CHECKPOINTS, VllmServers, build_vllm_checkpoints, lane_python

    if not lane_python().is_file():
        raise SystemExit(f"no vLLM lane at {lane_python()}: run scripts/install_vllm_lane.sh (or set ODU_VLLM_PYTHON)")
    figures: dict[str, Any] = {}
    start = time.perf_counter()
    servers = VllmServers(build_vllm_checkpoints(root / "checkpoints"), root)
    figures["build_checkpoints_s"] = round(time.perf_counter() - start, 1)
    try:
        for kind in kinds or CHECKPOINTS:
            os.environ["ODU_CACHE_DIR"] = str(root / f"cache-{kind}")
            served = servers.get(kind)
            result = run_eval(served, root / f"run-{kind}", {"max_tokens": 8}, VLLM_TASKS.get(kind, "odu_av,odu_ao"))
            result["server_start_s"] = served.start_s
            result["client_share"] = client_share(result)
            figures[kind] = result
    finally:
        servers.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lane", choices=("transformers", "vllm"), default="transformers")
    parser.add_argument("--kind", action="append", help="--lane vllm: only this checkpoint kind (repeatable)")
    add_json_option(parser)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "unused")
    with tempfile.TemporaryDirectory() as tmp:
        figures = vllm_lane(Path(tmp), args.kind) if args.lane == "vllm" else transformers_lane(Path(tmp))
    print(json.dumps(figures, indent=2))
    write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
