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


@pytest.mark.parametrize(("kind", "target"), [("qwen2_5_omni_thinker", "transformers"), ("qwen3_omni_moe", "vllm")])
def test_builds_are_seeded(tmp_path: Path, kind: str, target: str) -> None:
    """The same seed gives the same weights and tokenizer byte for byte; another seed other weights. The
    published Qwen3-Omni layout too: transformers leaves its talker's experts uninitialised, which the
    builder draws from the seed (they differed on every build before)."""
    first = tiny_checkpoints.build(kind, tmp_path / "a", seed=3, target=target)
    again = tiny_checkpoints.build(kind, tmp_path / "b", seed=3, target=target)
    other = tiny_checkpoints.build(kind, tmp_path / "c", seed=4, target=target)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    assert (first / "model.safetensors").read_bytes() != (other / "model.safetensors").read_bytes()
    with pytest.raises(ValueError, match="kind must be one of"):
        tiny_checkpoints.build("qwen9_omni", tmp_path / "d")


def test_vllm_profile_sizes_the_published_layouts_for_vllms_cpu_build(tmp_path: Path) -> None:
    """``--for vllm``: two 32-wide heads (vLLM's CPU attention refuses 8), a hidden size that is a multiple of
    32 (its MoE kernels), the published Qwen3-Omni fields transformers does not declare, untied Qwen3-Omni
    embeddings; thinker-only layouts, which vLLM does not register, refused."""
    qwen25 = _read(tiny_checkpoints.build("qwen2_5_omni", tmp_path / "q25", target="vllm") / "config.json")
    qwen3 = _read(tiny_checkpoints.build("qwen3_omni_moe", tmp_path / "q3", target="vllm") / "config.json")
    text25, thinker3 = qwen25["thinker_config"]["text_config"], qwen3["thinker_config"]
    assert text25["hidden_size"] // text25["num_attention_heads"] == 32 and text25["hidden_size"] % 32 == 0
    assert sum(text25["rope_parameters"]["mrope_section"]) == 16
    assert qwen25["thinker_config"]["audio_config"]["output_dim"] == text25["hidden_size"]
    text3 = thinker3["text_config"]
    assert text3["head_dim"] == 32 and text3["hidden_size"] % 32 == 0 and text3["moe_intermediate_size"] % 32 == 0
    assert text3["tie_word_embeddings"] is False and sum(text3["rope_parameters"]["mrope_section"]) == 16
    vision = thinker3["vision_config"]
    assert (vision["image_size"] // vision["patch_size"]) ** 2 == vision["num_position_embeddings"]
    assert vision["apply_vit_abs_pos_embed"] is True and thinker3["audio_end_token_id"] != thinker3["audio_token_id"]
    with pytest.raises(ValueError, match="vLLM registers the published layouts only"):
        tiny_checkpoints.build("qwen3_omni_moe_thinker", tmp_path / "t", target="vllm")
    default = _read(tiny_checkpoints.build("qwen3_omni_moe", tmp_path / "default") / "config.json")["thinker_config"]
    assert default["text_config"]["head_dim"] == 8 and "image_size" not in default["vision_config"]


def test_kimi_audio_layout_for_vllm(tmp_path: Path) -> None:
    """The published Kimi-Audio layout as vLLM reads it: the checkpoint's own config class (``auto_map``), the
    Whisper encoder under ``whisper-large-v3/``, the adaptor's weights, a tiktoken vocabulary whose ranks and
    special tokens cover every id the model can sample; seeded; built for vLLM only."""
    import tiny_kimi_audio
    from safetensors import safe_open
    from transformers import AutoConfig

    first = tiny_checkpoints.build("kimi_audio", tmp_path / "a", seed=3, target="vllm")
    again = tiny_checkpoints.build("kimi_audio", tmp_path / "b", seed=3, target="vllm")
    for name in ("model.safetensors", "tiktoken.model", "config.json", "whisper-large-v3/model.safetensors"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    config = AutoConfig.from_pretrained(first, trust_remote_code=True)
    assert (
        config.model_type == "kimi_audio" and config.kimia_adaptor_input_dim == 4 * tiny_kimi_audio.WHISPER["d_model"]
    )
    with safe_open(first / "model.safetensors", "pt") as weights:
        names = set(weights.keys())
    assert {"model.vq_adaptor.layers.0.weight", "model.vq_adaptor.layers.4.bias", "lm_head.weight"} <= names
    ranks = (first / "tiktoken.model").read_text(encoding="utf-8").splitlines()
    specials = _read(first / "tokenizer_config.json")["added_tokens_decoder"]
    assert len(ranks) == tiny_kimi_audio.BASE_RANKS and len(ranks) + len(specials) == config.vocab_size
    assert specials["151666"]["content"] == "<|im_kimia_text_blank|>"
    assert _read(first / "whisper-large-v3" / "preprocessor_config.json")["feature_size"] == 128
    with pytest.raises(ValueError, match="served by vLLM only"):
        tiny_checkpoints.build("kimi_audio", tmp_path / "c")


def test_minicpmo_layout_for_vllm(tmp_path: Path) -> None:
    """The published MiniCPM-o 4.5 layout as vLLM reads it: version 4.5 (``MiniCPMO`` dispatches on it), the
    checkpoint's own config, processor and tokenizer code (``auto_map``), a frame's placeholder as long as the
    resampler's queries, the tokenizer's markers by id, weights under ``llm.``/``vpm.``/``resampler.``/``apm.``
    and the audio projector sized as vLLM builds it; seeded; built for vLLM only."""
    import tiny_minicpmo
    from PIL import Image
    from safetensors import safe_open
    from transformers import AutoConfig, AutoProcessor

    first = tiny_checkpoints.build("minicpmo", tmp_path / "a", seed=3, target="vllm")
    again = tiny_checkpoints.build("minicpmo", tmp_path / "b", seed=3, target="vllm")
    for name in ("model.safetensors", "tokenizer.json", "config.json", "processing_minicpmo.py"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    config = AutoConfig.from_pretrained(first, trust_remote_code=True)
    assert (config.model_type, config.version, config.audio_pool_step) == ("minicpmo", "4.5", 5)
    processor = AutoProcessor.from_pretrained(first, trust_remote_code=True)
    tokenizer, images = processor.tokenizer, processor.image_processor
    assert tokenizer.convert_ids_to_tokens([tokenizer.im_start_id, tokenizer.audio_start_id, tokenizer.unk_id]) == [
        "<image>",
        "<|audio_start|>",
        "<unk>",
    ]
    frame = images.get_slice_image_placeholder((160, 90), 0, 1, True)
    assert frame.count("<unk>") == config.query_num == tiny_minicpmo.QUERY_NUM and frame.startswith("<image_id>0")
    pixels = images(Image.new("RGB", (160, 90)), max_slice_nums=1)
    height, width = (int(n) for n in pixels["tgt_sizes"][0][0])
    assert pixels["pixel_values"][0][0].shape == (3, 14, 14 * height * width)
    with safe_open(first / "model.safetensors", "pt") as weights:
        names = set(weights.keys())
        projector = weights.get_slice("audio_projection_layer.linear1.weight").get_shape()
    assert {"llm.lm_head.weight", "vpm.post_layernorm.weight", "resampler.kv_proj.weight", "apm.conv1.weight"} <= names
    assert projector == [config.hidden_size, config.audio_config.encoder_ffn_dim // 4]
    with pytest.raises(ValueError, match="served by vLLM only"):
        tiny_checkpoints.build("minicpmo", tmp_path / "c")


def test_nemotron_omni_layout_for_vllm(tmp_path: Path) -> None:
    """The published Nemotron 3 Nano Omni layout as vLLM reads it: the checkpoint's own config class
    (``auto_map``) with the published field names and the sub-configs vLLM reads as attributes, the language
    model under Nemotron-H's published names, RADIO's timm names, the projector, the Parakeet encoder and its
    projection; vLLM's placeholders one token each; seeded; built for vLLM only."""
    import tiny_nemotron_omni
    from safetensors import safe_open
    from transformers import AutoConfig, AutoTokenizer

    first = tiny_checkpoints.build("nemotron_omni", tmp_path / "a", seed=3, target="vllm")
    again = tiny_checkpoints.build("nemotron_omni", tmp_path / "b", seed=3, target="vllm")
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    config = AutoConfig.from_pretrained(first, trust_remote_code=True)
    assert config.architectures == ["NemotronH_Nano_Omni_Reasoning_V3"]
    assert (
        config.text_config.hybrid_override_pattern == "M*-"
        and config.vision_config.args["model"] == "vit_small_patch16_224"
    )
    assert config.sound_config.sampling_rate == 16000 and config.vit_hidden_size == tiny_nemotron_omni.VIT_WIDTH
    with safe_open(first / "model.safetensors", "pt") as weights:
        names = set(weights.keys())
    assert {
        "language_model.backbone.layers.0.mixer.A_log",
        "language_model.lm_head.weight",
        "vision_model.radio_model.model.blocks.11.attn.qkv.weight",
        "mlp1.3.weight",
        "sound_projection.linear2.weight",
    } <= names
    assert any(name.startswith("sound_encoder.encoder.layers.0.") for name in names)
    tokenizer = AutoTokenizer.from_pretrained(first)
    for token in tiny_nemotron_omni.SPECIAL_TOKENS:
        assert len(tokenizer.encode(token, add_special_tokens=False)) == 1, token
    assert config.text_config.vocab_size == len(tokenizer)
    with pytest.raises(ValueError, match="served by vLLM only"):
        tiny_checkpoints.build("nemotron_omni", tmp_path / "c")
