"""The video-SALMONN 2+ route (Table 3): lmms-eval 0.7.3's own ``video_salmonn_2`` backend runs ``odu_av``.

The backend (``models/simple/video_salmonn_2.py``) loads ``base_model`` as
``Qwen2_5_VLForConditionalGeneration``, puts the LoRA adapter ``pretrained`` on it with peft and reads
frames with ``qwen_vl_utils.process_vision_info``; the tiny checkpoint (``tools/tiny_checkpoints.py
--kind video_salmonn_2``) is a random Qwen2.5-VL and a random, non-zero adapter in that layout. lmms-eval's
CLI runs as a user starts it, on the environment's transformers, with one thing supplied that this machine
lacks: the backend moves its inputs to ``"cuda"`` (``device_map="auto"``), kept on the CPU here
(:data:`support.lmms_lane.CPU_RUNNER`). Answers are cut at :data:`NEW_TOKENS` with lmms-eval's own
``--gen_kwargs``: a random model never ends its answer, and the task's 4,096 tokens over a ~3,000-token
prompt of frames did not finish one scene in 20 minutes here (fp16 on CPU, as the backend loads it). Checked: every scene answered (0 inference errors), each clip of a
scene reaching the model as frames, in order, and nothing else of it (the backend builds no audio branch);
the console and ``results.json`` saying so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.lmms_lane import CPU_RUNNER, require_lmms
from support.process import fresh_env

from odu.data.sample import sample_dataset_dir
from odu.harness import lmms

#: Scenes of the run (lmms-eval's --limit) and the answer length (--gen_kwargs max_new_tokens).
LIMIT = 2
NEW_TOKENS = 16
#: What the console and results.json say of this backend on audio-visual scenes.
FRAMES_ONLY = "lmms-eval backend video_salmonn_2 sees the frames of each video only, no audio"


@dataclass
class Run:
    code: int
    err: str
    results: dict
    prompts: list[list[int]]
    checkpoint: Path
    dataset: Path


@pytest.fixture(scope="module")
def salmonn_run(tmp_path_factory: pytest.TempPathFactory, hf_cache: str) -> Run:
    import tiny_checkpoints

    require_lmms()
    root = tmp_path_factory.mktemp("video-salmonn")
    tiny = tiny_checkpoints.build("video_salmonn_2", root / "tiny")
    dataset = sample_dataset_dir(root / "sample")
    out, prompts = root / "out", root / "prompts.jsonl"
    env = fresh_env(
        root,
        ODU_DATASET=str(dataset),
        HF_DATASETS_CACHE=hf_cache,
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        ODU_TEST_PROMPTS=str(prompts),
    )
    model_args = (
        f"pretrained={tiny / tiny_checkpoints.SALMONN_ADAPTER},base_model={tiny / tiny_checkpoints.SALMONN_BASE},"
        "device=cpu,attn_implementation=sdpa"
    )
    args = ["--tasks", "odu_av", "--model", "video_salmonn_2", "--model_args", model_args, "--limit", str(LIMIT),
            "--gen_kwargs", f"max_new_tokens={NEW_TOKENS}"]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", CPU_RUNNER, *args, "--log_samples", "--output_path", str(out)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    results = [json.loads(p.read_text(encoding="utf-8")) for p in out.rglob("*_results.json")]
    logged = (
        [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()] if prompts.is_file() else []
    )
    return Run(proc.returncode, proc.stdout + proc.stderr, results[0] if results else {}, logged, tiny, dataset)


def test_video_salmonn_2_answers_every_scene(salmonn_run: Run) -> None:
    assert salmonn_run.code == 0 and salmonn_run.results, salmonn_run.err[-3000:]  # lmms-eval exits 0 on failure
    assert "in generating" not in salmonn_run.err  # the backend's log line for an exception ("Error ... in generating")
    metrics = salmonn_run.results["results"]["odu_av"]
    assert metrics["inference_errors,none"] == 0 and metrics["no_output,none"] == 0, metrics
    assert salmonn_run.results["n-samples"]["odu_av"]["effective"] == LIMIT
    assert salmonn_run.results["config"]["model_backend"].startswith("lmms_eval.models.simple.video_salmonn_2.")


def test_each_clip_reaches_the_model_as_frames_in_order(
    salmonn_run: Run, hf_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One ``<|vision_start|><|video_pad|>…<|vision_end|>`` block per clip of each scene, and no other media
    (the published Qwen2.5-VL vocabulary has no audio token: the backend skips audio items)."""
    import datasets
    import tiny_checkpoints
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(salmonn_run.checkpoint / tiny_checkpoints.SALMONN_BASE)
    start, pad, image = (
        tokenizer.convert_tokens_to_ids(t) for t in ("<|vision_start|>", "<|video_pad|>", "<|image_pad|>")
    )
    monkeypatch.setenv("ODU_DATASET", str(salmonn_run.dataset))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    scenes = lmms.process_docs("av")(None)
    assert len(salmonn_run.prompts) == LIMIT
    assert all(ids.count(pad) > 0 and image not in ids for ids in salmonn_run.prompts)
    # the backend reorders requests: compare the clip counts as a multiset
    assert Counter(ids.count(start) for ids in salmonn_run.prompts) == Counter(
        len(scenes[n]["clips"]) for n in range(LIMIT)
    )


def test_the_console_and_results_json_say_frames_only(salmonn_run: Run) -> None:
    assert f"odu-bench: pitfall (lmms-eval video_salmonn_2): {FRAMES_ONLY}" in salmonn_run.err
    [said] = salmonn_run.results[lmms.RESULTS_KEY]["pitfalls"]["odu_av"]
    assert said.startswith(FRAMES_ONLY) and "models/simple/video_salmonn_2.py" in said


def test_the_tiny_checkpoint_is_the_layout_the_backend_loads(salmonn_run: Run, tmp_path: Path) -> None:
    """A Qwen2.5-VL base (its vision tokens one token each, as published) and a non-zero LoRA adapter on
    the language model's attention, seeded: the same seed gives the same files byte for byte."""
    import tiny_checkpoints
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    base, adapter = salmonn_run.checkpoint / "base", salmonn_run.checkpoint / "lora"
    config = json.loads((base / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "qwen2_5_vl" and config["architectures"] == ["Qwen2_5_VLForConditionalGeneration"]
    tokenizer = AutoTokenizer.from_pretrained(base)
    ids = tokenizer("<|vision_start|><|video_pad|><|vision_end|>")["input_ids"]
    assert ids == [config["vision_start_token_id"], config["video_token_id"], config["vision_end_token_id"]]
    lora = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    assert lora["peft_type"] == "LORA" and set(lora["target_modules"]) == {"q_proj", "k_proj", "v_proj", "o_proj"}
    weights = load_file(adapter / "adapter_model.safetensors")
    assert weights and all("visual" not in name for name in weights)
    assert all(w.abs().sum() > 0 for name, w in weights.items() if "lora_B" in name)  # the adapter changes answers
    again = tiny_checkpoints.build("video_salmonn_2", tmp_path / "again")
    for name in ("base/model.safetensors", "base/tokenizer.json", "lora/adapter_model.safetensors"):
        assert (again / name).read_bytes() == (salmonn_run.checkpoint / name).read_bytes(), name
