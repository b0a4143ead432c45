"""A tiny Nemotron 3 Nano Omni checkpoint in the published ``nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16``
layout, for vLLM's CPU build (``tiny_checkpoints.py --kind nemotron_omni --for vllm``; docs/real-lane.md "vLLM").

What vLLM 0.32.0 reads of it (``vllm/model_executor/models/nano_nemotron_vl.py``, its processor
``vllm/transformers_utils/processors/nano_nemotron_vl.py``, ``radio.py``, ``parakeet.py``):

* ``config.json``: ``architectures: ["NemotronH_Nano_Omni_Reasoning_V3"]`` with the model type of the same name and
  an ``auto_map`` to the checkpoint's own config class (the server needs ``--trust-remote-code``); the published
  field names (as SGLang's ``python/sglang/srt/configs/nano_nemotron_vl.py``, adapted from the published
  ``configuration.py``, declares them): ``llm_config`` (the Nemotron-H hybrid: Mamba-2, attention and MLP or MoE layers by
  ``hybrid_override_pattern``), ``vision_config`` (RADIO: the ViT named in ``args.model``), ``sound_config``
  (Parakeet), ``force_image_size``, ``patch_size``, ``downsample_ratio``, ``ps_version``, ``image_tag_type``,
  ``vit_hidden_size``, ``projector_hidden_size``, ``norm_mean``/``norm_std``, ``use_thumbnail``;
* ``model.safetensors``: ``language_model.backbone.*`` and ``language_model.lm_head`` (as transformers saves
  Nemotron-H), ``vision_model.radio_model.model.{patch_generator,blocks}.*`` (timm names), the projector
  ``mlp1.{0,1,3}`` and the sound encoder ``sound_encoder.encoder.*`` (transformers' Parakeet encoder) with its
  projection ``sound_projection.{norm,linear1,linear2}``;
* a tokenizer with the placeholders vLLM's processor writes (``<image>``, ``<img>``, ``</img>``, ``<video>``,
  ``<so_embedding>``, ``<so_start>``, ``<so_end>``) and a ChatML chat template.

vLLM sizes the vision tower by the ViT name alone (``VIT_TIMM_DIM_BY_NAME``): the smallest, ``vit_small_patch16_224``
(384 wide, 12 layers), on 64-pixel tiles (4 tokens a tile or frame).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: vLLM's placeholders (processors/nano_nemotron_vl.py ``IMG_START`` ...; the model's ``<video>``) and ChatML's.
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<image>",
    "<img>",
    "</img>",
    "<video>",
    "<so_embedding>",
    "<so_start>",
    "<so_end>",
)
#: ChatML, content as the string vLLM renders a message's parts into (placeholders included).
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: The hybrid language model: one Mamba-2, one attention and one MLP layer (``M*-``), 32-wide heads and 64-wide
#: hidden sizes as vLLM's CPU kernels take. No MoE layer (the published ``E``): Nemotron-H's experts are ReLU²,
#: not gated, and vLLM 0.32.0 builds such a fused MoE on CUDA, XPU and ROCm only (fused_moe/config.py: on CPU
#: "NotImplementedError: is_act_and_mul=False is supported only for CUDA, XPU and ROCm for now").
LLM: dict[str, Any] = {
    "hidden_size": 64,
    "hybrid_override_pattern": "M*-",
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 32,
    "intermediate_size": 64,
    "mamba_num_heads": 4,
    "mamba_head_dim": 32,
    "ssm_state_size": 16,
    "n_groups": 1,
    "chunk_size": 128,
    "max_position_embeddings": 8192,
    "tie_word_embeddings": False,
}
#: RADIO: the ViT vLLM builds from ``args.model`` and its position table (``cpe_max_size`` pixels a side).
VIT_MODEL, VIT_WIDTH, VIT_LAYERS, VIT_FFN = "vit_small_patch16_224", 384, 12, 1536
PATCH, TILE, CPE_MAX = 16, 64, 256
#: Parakeet: the encoder's fields as transformers' ``ParakeetEncoderConfig`` reads them, plus what vLLM's
#: extractor and projection read (``sampling_rate``, ``projection_*``).
SOUND: dict[str, Any] = {
    "model_type": "parakeet",
    "hidden_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "subsampling_conv_channels": 32,
    "subsampling_factor": 8,
    "subsampling_conv_kernel_size": 3,
    "subsampling_conv_stride": 2,
    "num_mel_bins": 128,
    "sampling_rate": 16000,
    "projection_hidden_size": 64,
    "projection_bias": False,
}
PROJECTOR_WIDTH = 64
#: The checkpoint's config class (``auto_map``): the published field names, with the sub-configs vLLM reads as
#: attributes (``text_config`` from ``llm_config``, ``vision_config.args``, ``sound_config``).
CONFIG_MODULE = '''"""Nemotron 3 Nano Omni's config: a Nemotron-H language model, a RADIO vision tower, a Parakeet encoder."""

from transformers import NemotronHConfig, PretrainedConfig


class NemotronH_Nano_Omni_Reasoning_V3_Config(PretrainedConfig):
    model_type = "NemotronH_Nano_Omni_Reasoning_V3"
    is_composition = True

    def __init__(self, vision_config=None, llm_config=None, sound_config=None, force_image_size=512, patch_size=16,
                 downsample_ratio=0.5, template=None, ps_version="v2", image_tag_type="internvl",
                 projector_hidden_size=4096, vit_hidden_size=1280, norm_mean=(0.48145466, 0.4578275, 0.40821073),
                 norm_std=(0.26862954, 0.26130258, 0.27577711), use_thumbnail=True, **kwargs):
        super().__init__(**kwargs)
        self.llm_config = NemotronHConfig(**(llm_config or {}))
        self.text_config = self.llm_config
        self.vision_config = PretrainedConfig(**(vision_config or {}))
        self.sound_config = None if sound_config is None else PretrainedConfig(**sound_config)
        self.force_image_size = force_image_size
        self.patch_size = patch_size
        self.downsample_ratio = downsample_ratio
        self.template = template
        self.ps_version = ps_version
        self.image_tag_type = image_tag_type
        self.projector_hidden_size = projector_hidden_size
        self.vit_hidden_size = vit_hidden_size
        self.norm_mean = tuple(norm_mean)
        self.norm_std = tuple(norm_std)
        self.use_thumbnail = use_thumbnail
'''


def config(vocab_size: int, tokens: dict[str, int]) -> dict[str, Any]:
    """The published config's fields at tiny sizes."""
    return {
        "architectures": ["NemotronH_Nano_Omni_Reasoning_V3"],
        "auto_map": {"AutoConfig": "configuration_nemotron_h_omni.NemotronH_Nano_Omni_Reasoning_V3_Config"},
        "model_type": "NemotronH_Nano_Omni_Reasoning_V3",
        "llm_config": {
            **LLM,
            "vocab_size": vocab_size,
            "eos_token_id": tokens["<|im_end|>"],
            "pad_token_id": tokens["<|endoftext|>"],
            "torch_dtype": "bfloat16",  # vLLM asserts the language model's own dtype (nano_nemotron_vl.py)
        },
        "vision_config": {
            "args": {"model": VIT_MODEL, "cpe_max_size": CPE_MAX},
            "patch_size": PATCH,
            "preferred_resolution": [TILE, TILE],
        },
        "sound_config": SOUND,
        "force_image_size": TILE,
        "patch_size": PATCH,
        "downsample_ratio": 0.5,
        "template": "nemotron_h",
        "ps_version": "v2",
        "image_tag_type": "internvl",
        "projector_hidden_size": PROJECTOR_WIDTH,
        "vit_hidden_size": VIT_WIDTH,
        "use_thumbnail": True,
        "img_context_token_id": tokens["<image>"],
        "video_context_token_id": tokens["<video>"],
        "sound_context_token_id": tokens["<so_embedding>"],
        "torch_dtype": "bfloat16",
    }


def vision_weights() -> dict[str, Any]:
    """RADIO's weights in the published (timm) names: the patch embedder, the position table, the class token and
    the ViT blocks (layer norms, fused ``qkv``, ``proj``, the MLP)."""
    import torch

    width, prefix = VIT_WIDTH, "vision_model.radio_model.model."

    def rand(*shape: int) -> Any:
        return torch.randn(*shape) * 0.02

    weights = {
        f"{prefix}patch_generator.embedder.weight": rand(width, 3 * PATCH * PATCH),
        f"{prefix}patch_generator.pos_embed": rand(1, (CPE_MAX // PATCH) ** 2, width),
        f"{prefix}patch_generator.cls_token.token": rand(1, width),
    }
    for i in range(VIT_LAYERS):
        block = f"{prefix}blocks.{i}."
        for norm in ("norm1", "norm2"):
            weights |= {f"{block}{norm}.weight": torch.ones(width), f"{block}{norm}.bias": torch.zeros(width)}
        shapes = {"attn.qkv": (3 * width, width), "attn.proj": (width, width)}
        shapes |= {"mlp.fc1": (VIT_FFN, width), "mlp.fc2": (width, VIT_FFN)}
        for name, (rows, cols) in shapes.items():
            weights |= {f"{block}{name}.weight": rand(rows, cols), f"{block}{name}.bias": torch.zeros(rows)}
    return weights


def write(out: Path, tokenizer: Any) -> None:
    """The checkpoint into the empty folder ``out`` (weights from torch's current seed); ``tokenizer`` a byte-level
    BPE tokenizer with :data:`SPECIAL_TOKENS`."""
    import tempfile

    import torch
    import transformers
    from safetensors.torch import load_file, save_file

    tokenizer.add_tokens(list(SPECIAL_TOKENS), special_tokens=True)  # one token each, never split by the BPE
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out)
    tokens = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    vocab_size = len(tokenizer)
    _json(out / "config.json", config(vocab_size, tokens))
    (out / "configuration_nemotron_h_omni.py").write_text(CONFIG_MODULE, encoding="utf-8")
    _json(out / "generation_config.json", {"eos_token_id": tokens["<|im_end|>"]})
    llm = transformers.NemotronHForCausalLM(transformers.NemotronHConfig(vocab_size=vocab_size, **LLM))
    with tempfile.TemporaryDirectory() as saved:
        llm.save_pretrained(saved)  # transformers saves Nemotron-H under its published names (``backbone.*``)
        saved_weights = load_file(Path(saved) / "model.safetensors")
    weights = {f"language_model.{name}": tensor for name, tensor in saved_weights.items()}
    weights |= vision_weights()
    wide = VIT_WIDTH * 4  # the pixel shuffle of downsample_ratio 0.5 stacks four patches
    weights |= {
        "mlp1.0.weight": torch.ones(wide),
        "mlp1.1.weight": torch.randn(PROJECTOR_WIDTH, wide) * 0.02,
        "mlp1.3.weight": torch.randn(LLM["hidden_size"], PROJECTOR_WIDTH) * 0.02,
    }
    encoder_config = {k: v for k, v in SOUND.items() if k not in ("model_type", "sampling_rate")}
    encoder_config = {k: v for k, v in encoder_config.items() if not k.startswith("projection_")}
    # no biases, no input scaling: what vLLM builds the encoder with (configs/parakeet.py ``from_hf_config``)
    encoder_config |= {"attention_bias": False, "scale_input": False}
    encoder = transformers.ParakeetEncoder(transformers.ParakeetEncoderConfig(**encoder_config))
    weights |= {f"sound_encoder.encoder.{name}": t for name, t in encoder.state_dict().items()}
    sound, projection = SOUND["hidden_size"], SOUND["projection_hidden_size"]
    weights |= {
        "sound_projection.norm.weight": torch.ones(sound),
        "sound_projection.linear1.weight": torch.randn(projection, sound) * 0.02,
        "sound_projection.linear2.weight": torch.randn(LLM["hidden_size"], projection) * 0.02,
    }
    tensors = {name: tensor.to(torch.bfloat16).contiguous() for name, tensor in weights.items()}
    save_file(tensors, out / "model.safetensors", metadata={"format": "pt"})


def _json(path: Path, value: dict[str, Any]) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
