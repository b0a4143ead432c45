"""lm-eval path costs, each against its naive baseline in the same run.

A loopback OpenAI-compatible server (``tests/support/openai_server.py``) runs in its own process, adds a
fixed latency to every call and plays both the omni model (a fixed JSON answer) and the App F.4
judge (``tests/support/judge_fakes.py``). Measured:

* ``model``: the OpenAI-compatible omni backend on the bundled sample's scenes (repeated), media
  read from the prepared dataset and encoded as data URLs: ``concurrency=1`` (one scene at a time,
  the naive loop) vs ``concurrency=8``;
* ``judge``: the lm-eval filter scores a task's outputs in ONE ``score_scenes`` call, so the judge
  sees every segment at once (``--judge-concurrency 16``) vs judging scene by scene, as a per-doc
  lm-eval metric would (same judge, same concurrency), on the 27 real demo records x 8 with their
  reference annotations as outputs; verdict cache off;
* ``cache_key``: lm-eval's ``--use_cache`` key (``hash_args``) over our scene-reference prompt vs a
  prompt that inlines the scene's media as base64 (the naive alternative), per request.

Run: ``python benchmarks/bench_lm_eval.py [--latency 0.25] [--repeat 3] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _figures import add_json_option, write_json  # noqa: E402
from _server_process import server_process  # noqa: E402

ANSWER = '{"has_demand": false, "segments": []}'


def _serve(latency: float, ready: Any, stop: Any) -> None:
    from support.judge_fakes import judge_responder
    from support.openai_server import OpenAIServer

    from odu.judge.prompt import JUDGE_INSTRUCTION

    judge = judge_responder()
    server = OpenAIServer(
        lambda body: judge(body) if body["messages"][0]["content"] == JUDGE_INSTRUCTION else ANSWER,
        latency=latency,
        models=["omni-bench", "judge-bench"],
        api_key=None,  # a local vLLM started without --api-key
    ).start()
    ready.put(server.base_url)
    stop.wait()
    server.close()


def bench_model(base_url: str, repeat: int, cache_dir: Path) -> dict[str, Any]:
    import datasets

    from odu.data.sample import sample_dataset_dir
    from odu.harness.tasks import load_docs, scene_request
    from odu.models.clips import DatasetClips
    from odu.models.openai_omni import OpenAIOmni

    dataset = sample_dataset_dir(cache_dir)
    datasets.config.HF_DATASETS_CACHE = str(cache_dir / "hf")
    docs = [d for config in ("av", "ao") for d in load_docs(config, dataset=str(dataset))["test"]]
    clips = DatasetClips()
    where = {d["scene_id"]: d["media"] for d in docs}
    requests = [scene_request(d) for d in docs] * repeat
    load = lambda req, ref: clips.load(where[req.scene_id], req.scene_id, ref)  # noqa: E731
    out: dict[str, Any] = {"scenes": len(requests)}
    for concurrency in (1, 8):
        model = OpenAIOmni("omni-bench", base_url=base_url, concurrency=concurrency, progress=False)
        started = time.perf_counter()
        generations = model.generate(requests, load, {"max_gen_toks": 4096})
        out[f"concurrency_{concurrency}_s"] = round(time.perf_counter() - started, 3)
        assert all(g.text == ANSWER for g in generations)
        out["media_mb_per_scene"] = round(model.info()["stats"]["media_bytes"] / 1e6 / len(requests), 3)
    out["speedup"] = round(out["concurrency_1_s"] / out["concurrency_8_s"], 1)
    return out


def bench_judge(base_url: str) -> dict[str, Any]:
    from support.omni_fakes import reference_output

    from odu.core.schema import load_scenes
    from odu.judge import OpenAIJudge
    from odu.runs.scoring import score_scenes

    records = json.loads((ROOT / "tests" / "fixtures" / "demo_scenes.json").read_text(encoding="utf-8"))
    copies = []
    for k in range(8):  # distinct candidate texts per copy, so that no judge call is shared
        for r in records:
            copy = json.loads(json.dumps(r))
            copy["scene_id"] = f"{r['scene_id']}_{k}"
            for ann in copy["annotations"].values():
                for seg in ann["evaluation_targets"]["segments"]:
                    seg["structured_intent"] += f" (take {k})"
            copies.append(copy)
    scenes = load_scenes(copies)
    outputs = {s.scene_id: reference_output(r) for s, r in zip(scenes, copies)}

    def judge() -> OpenAIJudge:
        return OpenAIJudge("judge-bench", base_url=base_url, concurrency=16, no_cache=True, progress=False)

    started = time.perf_counter()
    naive = [score_scenes([s], {s.scene_id: outputs[s.scene_id]}, judge()).scenes[0] for s in scenes]
    naive_s = time.perf_counter() - started
    batch_judge = judge()
    started = time.perf_counter()
    batched = score_scenes(scenes, outputs, batch_judge).scenes
    batched_s = time.perf_counter() - started
    assert [r["s2"] for r in naive] == [r["s2"] for r in batched]
    return {
        "scenes": len(scenes),
        "segments_judged": batch_judge.info()["requests"],
        "per_scene_s": round(naive_s, 3),
        "one_batch_s": round(batched_s, 3),
        "speedup": round(naive_s / batched_s, 1),
    }


def bench_cache_key(cache_dir: Path) -> dict[str, Any]:
    from lm_eval.api.model import hash_args

    from odu.data.sample import sample_dataset_dir
    from odu.harness.tasks import doc_to_text, load_docs

    dataset = sample_dataset_dir(cache_dir)
    import datasets

    rows = datasets.load_dataset(str(dataset), "av", split="test")
    docs = load_docs("av", dataset=str(dataset))["test"]
    gen = {"until": [], "max_gen_toks": 4096, "do_sample": False, "temperature": 0.0}
    ours = [doc_to_text(d) for d in docs]
    inline = [
        json.dumps(
            {"clips": [base64.b64encode(t["media"]["bytes"]).decode() for t in row["turns"] if t["role"] == "user"]}
        )
        for row in rows
    ]
    timings = {}
    for name, prompts in (("reference", ours), ("inline_media", inline)):
        started = time.perf_counter()
        for _ in range(20):
            for prompt in prompts:
                hash_args("generate_until", (prompt, gen))
        timings[name] = (time.perf_counter() - started) / (20 * len(prompts))
    return {
        "mean_prompt_bytes_reference": round(sum(map(len, ours)) / len(ours)),
        "mean_prompt_bytes_inline": round(sum(map(len, inline)) / len(inline)),
        "key_us_reference": round(timings["reference"] * 1e6, 1),
        "key_us_inline": round(timings["inline_media"] * 1e6, 1),
        "ratio": round(timings["inline_media"] / timings["reference"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.25, help="seconds the server adds to every call")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the sample's scenes (model bench)")
    add_json_option(parser)
    args = parser.parse_args()
    with server_process(_serve, args.latency) as base_url, tempfile.TemporaryDirectory() as tmp:
        figures = {
            "latency_s": args.latency,
            "model": bench_model(base_url, args.repeat, Path(tmp)),
            "judge": bench_judge(base_url),
            "cache_key": bench_cache_key(Path(tmp)),
        }
    print(json.dumps(figures, indent=2))
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
