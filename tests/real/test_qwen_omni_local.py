"""``--model qwen-omni``: the in-process backend on real transformers model and processor code, on the
published layout and on thinker-only checkpoints (docs/real-lane.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import argv
from support.sample_runs import read_json

from odu.cli import main


def local_eval(out: Path, checkpoint: Path, tasks: str, limit: int | None, **model_args: Any) -> list[str]:
    """The ``odu-bench eval --sample --model qwen-omni`` command line, answers held to 8 tokens."""
    args = json.dumps({"pretrained": str(checkpoint), "max_tokens": 8, **model_args})
    return argv("eval", sample=True, model="qwen-omni", tasks=tasks, limit=limit, model_args=args, out=out)


def run_local(out: Path, checkpoint: Path, tasks: str, *, limit: int | None = None, **model_args: Any) -> Path:
    """:func:`local_eval` with ``--allow-truncated`` (random weights run to any limit; exit 0 asserted):
    the model's run folder."""
    assert main([*local_eval(out, checkpoint, tasks, limit, **model_args), "--allow-truncated"]) == 0
    [folder] = out.iterdir()
    return folder


def stats(folder: Path) -> dict[str, int]:
    return read_json(folder / "run_card.json")["model"]["backend"]["stats"]


@pytest.mark.usefixtures("prepared_sample")
@pytest.mark.parametrize("kind", ["qwen2_5_omni", "qwen2_5_omni_thinker"])
def test_every_sample_scene_answered_in_process(checkpoints: dict[str, Path], tmp_path: Path, kind: str) -> None:
    """All 21 sample scenes answered (0 inference errors) on the published layout and on a thinker-only
    checkpoint, the audio of every clip among the prompt tokens."""
    folder = run_local(tmp_path / "run", checkpoints[kind], "odu_av,odu_ao")
    summary = read_json(folder / "summary.json")
    assert summary["inference_errors"] == 0
    assert summary["audio-visual"]["n_scenes"] + summary["audio-only"]["n_scenes"] == 21
    counted = stats(folder)
    assert counted["scenes"] == 21 and counted["errors"] == 0 and counted["audio_tokens"] > 0
    assert counted["truncated"] == 21 and summary["truncated"] == 21
    card = read_json(folder / "run_card.json")["model"]["backend"]
    assert card["generation"] == {"do_sample": False, "max_new_tokens": 8}


@pytest.mark.usefixtures("prepared_sample")
def test_the_audio_of_a_video_reaches_the_local_model(checkpoints: dict[str, Path], tmp_path: Path) -> None:
    """The processor interleaves each video's sound track (~25 audio tokens a second); with
    use_audio_in_video=false the same scenes carry none: a route that dropped it would show 0."""
    heard = stats(run_local(tmp_path / "heard", checkpoints["qwen2_5_omni"], "odu_av", limit=2))
    deaf = stats(run_local(tmp_path / "deaf", checkpoints["qwen2_5_omni"], "odu_av", limit=2, use_audio_in_video=False))
    assert deaf["audio_tokens"] == 0 and heard["audio_tokens"] >= 2 * 25
    assert heard["video_tokens"] == deaf["video_tokens"] > 0


@pytest.mark.usefixtures("prepared_sample")
def test_answers_cut_at_max_tokens_fail_the_run(checkpoints: dict[str, Path], tmp_path: Path) -> None:
    """An answer that reaches max_new_tokens without the end-of-turn token was cut: counted, marked on
    its scene, and the run exits 1 unless --allow-truncated."""
    assert main(local_eval(tmp_path / "run", checkpoints["qwen2_5_omni_thinker"], "odu_ao", 2)) == 1
    [folder] = (tmp_path / "run").iterdir()
    assert stats(folder)["truncated"] == 2 and read_json(folder / "summary.json")["truncated"] == 2


@pytest.mark.usefixtures("prepared_sample")
def test_qwen3_omni_thinker_in_process(checkpoints: dict[str, Path], tmp_path: Path) -> None:
    folder = run_local(tmp_path / "run", checkpoints["qwen3_omni_moe_thinker"], "odu_av,odu_ao", limit=2)
    assert read_json(folder / "summary.json")["inference_errors"] == 0
    counted = stats(folder)
    assert counted["scenes"] == 4 and counted["audio_tokens"] > 0


def test_tmrope_positions_need_use_audio_in_video_in_generate(checkpoints: dict[str, Path]) -> None:
    """Why the backend passes ``use_audio_in_video`` to ``generate`` as well as the processor
    (docs/real-lane.md "What the real server taught us"): with the track interleaved into the video
    block, ``get_rope_index`` without the switch numbers the block's tokens one by one (the last
    position is the prompt's length - 1) instead of by time (Qwen2.5-Omni's TMRoPE). On the sample's
    first clip: 199 with the switch, 921 without."""
    import transformers

    from odu.data.sample import sample_dir

    clip = sorted(sample_dir().rglob("*.mp4"))[0]
    folder = checkpoints["qwen2_5_omni_thinker"]
    processor = transformers.AutoProcessor.from_pretrained(folder)
    model = transformers.Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(folder)
    conversation = [{"role": "user", "content": [{"type": "video", "path": str(clip)}, {"type": "text", "text": "?"}]}]
    inputs = processor.apply_chat_template(
        conversation,
        load_audio_from_video=True,
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        return_tensors="pt",
        processor_kwargs={"fps": 2.0},
    )
    last = {}
    for switch in (True, False):
        positions, _ = model.get_rope_index(
            inputs["input_ids"],
            None,
            inputs["video_grid_thw"],
            inputs["attention_mask"],
            switch,
            inputs["feature_attention_mask"].sum(-1),
            inputs.get("video_second_per_grid"),
        )
        last[switch] = int(positions.max())
    assert last[False] == inputs["input_ids"].shape[1] - 1  # flattened: one position per token
    assert last[True] < last[False] / 2  # by time: the interleaved audio and frames share positions
