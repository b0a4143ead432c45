"""``tools/tiny_checkpoints.py``: offline, seeded, the published layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tiny_checkpoints


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_published_qwen2_5_omni_layout(checkpoints: dict[str, Path]) -> None:
    """model_type qwen2_5_omni with thinker, talker and token2wav, audio output on, the published
    speakers beside the weights, and a processor the Auto classes load."""
    import torch
    from transformers import AutoConfig, AutoProcessor

    folder = checkpoints["qwen2_5_omni"]
    config = _read(folder / "config.json")
    assert config["model_type"] == "qwen2_5_omni" and config["enable_audio_output"] is True
    assert {"thinker_config", "talker_config", "token2wav_config"} <= config.keys()
    assert config["architectures"] == ["Qwen2_5OmniForConditionalGeneration"]
    assert set(torch.load(folder / "spk_dict.pt", weights_only=True)) == set(tiny_checkpoints.SPEAKERS)
    assert AutoConfig.from_pretrained(folder).model_type == "qwen2_5_omni"
    processor = AutoProcessor.from_pretrained(folder)
    assert type(processor).__name__ == "Qwen2_5OmniProcessor"
    tokens = processor.tokenizer.convert_tokens_to_ids([processor.audio_token, processor.video_token])
    assert tokens == [config["thinker_config"]["audio_token_index"], config["thinker_config"]["video_token_index"]]


@pytest.mark.parametrize(
    ("kind", "model_type"),
    [("qwen2_5_omni_thinker", "qwen2_5_omni_thinker"), ("qwen3_omni_moe_thinker", "qwen3_omni_moe_thinker")],
)
def test_thinker_only_layouts(checkpoints: dict[str, Path], kind: str, model_type: str) -> None:
    config = _read(checkpoints[kind] / "config.json")
    assert config["model_type"] == model_type and not (checkpoints[kind] / "spk_dict.pt").exists()


def test_text_llm_has_a_chat_template(checkpoints: dict[str, Path]) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoints["text"])
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_builds_are_seeded(tmp_path: Path) -> None:
    """The same seed gives the same weights and tokenizer byte for byte; another seed other weights."""
    first = tiny_checkpoints.build("qwen2_5_omni_thinker", tmp_path / "a", seed=3)
    again = tiny_checkpoints.build("qwen2_5_omni_thinker", tmp_path / "b", seed=3)
    other = tiny_checkpoints.build("qwen2_5_omni_thinker", tmp_path / "c", seed=4)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    assert (first / "model.safetensors").read_bytes() != (other / "model.safetensors").read_bytes()
    with pytest.raises(ValueError, match="kind must be one of"):
        tiny_checkpoints.build("qwen9_omni", tmp_path / "d")
