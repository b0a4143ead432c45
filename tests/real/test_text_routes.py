"""lm-eval's own API model and the OpenAI-compatible judge against a real ``transformers serve`` running
the tiny text LLM (docs/real-lane.md): the text-only tasks end to end, and random-weight verdicts
counted as judge errors (exit 1), never as misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support.asr_sidecar import write_sidecar
from support.cli import argv
from support.omni_fakes import reference_output
from support.real_lane import Served, request_fault_status
from support.sample_runs import read_json

from odu.cli import main
from odu.data.sample import sample_dir


def sample_records() -> dict[str, dict]:
    lines = (sample_dir() / "scenes.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["scene_id"]: r for r in map(json.loads, lines)}


@pytest.mark.usefixtures("prepared_sample")
def test_text_only_tasks_on_lm_evals_local_chat_completions(text_server: Served, tmp_path: Path) -> None:
    """``lm_eval --tasks odu_ao_text,odu_av_text --model local-chat-completions`` from an empty folder:
    every sample scene sent to the real server and scored (random weights: parse errors, no crash)."""
    sidecar = write_sidecar(sample_records(), tmp_path / "asr.jsonl")
    cwd = tmp_path / "empty"
    cwd.mkdir()
    env = {**os.environ, "ODU_ASR": str(sidecar), "OPENAI_API_KEY": "unused", "HF_HUB_OFFLINE": "1"}
    model_args = (
        f"model={text_server.model},base_url={text_server.base_url}/chat/completions,num_concurrent=1,max_retries=1"
    )
    command = [
        sys.executable,
        "-m",
        "lm_eval",
        "--tasks",
        "odu_ao_text,odu_av_text",
        "--model",
        "local-chat-completions",
        "--model_args",
        model_args,
        "--apply_chat_template",
        "--gen_kwargs",
        "max_gen_toks=16,until=<|im_end|>",  # lm-eval sends "stop": [] for until: [], which the server refuses
        "--output_path",
        "out",
    ]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    [results] = (cwd / "out").rglob("results_*.json")
    data = json.loads(results.read_text(encoding="utf-8"))
    for task, scenes in (("odu_ao_text", 9), ("odu_av_text", 12)):
        assert data["n-samples"][task]["effective"] == scenes
        assert data["results"][task]["inference_errors,odu"] == 0 and "avg,odu" in data["results"][task]
    assert text_server.log_text().count('POST /v1/chat/completions HTTP/1.1" 200') >= 21


def test_an_empty_stop_list_is_refused_by_the_real_server(text_server: Served) -> None:
    """``transformers serve`` turns ``"stop": []`` into empty stop strings and fails the request
    (chat_completion.py ``_build_generation_config``: HTTP 500 up to 5.24, 400 with the reason from 5.25,
    ``request_fault_status``); lm-eval's local-chat-completions sends exactly that for our tasks'
    ``until: []`` when it has no tokenizer: hence ``--gen_kwargs until=<|im_end|>`` in docs/real-lane.md.
    Our own backend never sends an empty list."""
    from odu.models.base import Decoding

    assert "stop" not in Decoding.of({"until": []}, 16).fields("max_tokens", "stop")
    statuses, bodies = [], []
    for stop in ([], ["<|im_end|>"]):
        body = {
            "model": text_server.model,
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 2,
            "stop": stop,
        }
        request = urllib.request.Request(
            f"{text_server.base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                statuses.append(reply.status)
        except urllib.error.HTTPError as exc:
            statuses.append(exc.code)
            bodies.append(exc.read().decode("utf-8", "replace"))
    assert statuses == [request_fault_status(), 200]
    assert "Stop string preprocessing" in text_server.log_text() + "".join(bodies)


@pytest.mark.usefixtures("openai_key")
def test_unparseable_verdicts_of_a_real_judge_are_judge_errors(text_server: Served, tmp_path: Path) -> None:
    """The OpenAI-compatible judge on a random-weight LLM: its verdicts cannot be parsed, so every asked
    key point is a judge error, exit 1, and M2 rests on no verdict (never on misses)."""
    records = sample_records()
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"scene_id": s, "output": reference_output(r)}) + "\n" for s, r in records.items()),
        encoding="utf-8",
    )
    out = tmp_path / "run"
    code = main(
        argv(
            "score",
            scenes=sample_dir() / "scenes.jsonl",
            predictions=predictions,
            out=out,
            judge=f"openai:{text_server.model}",
            judge_base_url=text_server.base_url,
            judge_max_tokens=16,
            judge_retries=0,
            judge_concurrency=2,
        )
    )
    assert code == 1
    summary = read_json(out / "summary.json")
    assert summary["judge_errors"] > 0
    for block in (summary["audio-visual"], summary["audio-only"]):
        assert block["judge_error_points"] > 0 and block["m2"] is None
        assert block["m2_errors_as_misses"] == 0.0
