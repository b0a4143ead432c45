"""Tiny random-weight checkpoints for the real CPU lane: built here, offline, in seconds, never committed.

The real lane (docs/real-lane.md) runs the toolkit's requests through real server and model code
(``transformers serve``, the in-process ``qwen-omni`` backend, lm-eval's own API models) on
checkpoints whose weights are random but whose *layout* is the published one, so every request
meets the processor, chat template and model classes a real checkpoint meets:

* ``qwen2_5_omni`` — the published Qwen2.5-Omni layout (``Qwen/Qwen2.5-Omni-7B``): ``model_type
  qwen2_5_omni``, thinker + talker + token2wav configs, ``enable_audio_output`` true and a
  ``spk_dict.pt`` naming the published speakers ``Chelsie`` and ``Ethan`` beside the weights
  (``Qwen2_5OmniForConditionalGeneration.generate`` looks its default speaker up even for text-only
  output; a model without a talker fails there on ``self.talker``, transformers 5.24
  ``modeling_qwen2_5_omni.py``);
* ``qwen2_5_omni_thinker`` — the thinker alone (``model_type qwen2_5_omni_thinker``), as a
  fine-tuning run saves it;
* ``qwen3_omni_moe`` — the published Qwen3-Omni layout (thinker + talker + code2wav), and
  ``qwen3_omni_moe_thinker``;
* ``text`` — a tiny Qwen2 chat LLM for the judge and the text-only routes;
* ``kimi_audio`` — the published Kimi-Audio layout (``moonshotai/Kimi-Audio-7B-Instruct``), for vLLM only
  (:mod:`tiny_kimi_audio`).
* ``minicpmo`` — the published MiniCPM-o 4.5 layout (``openbmb/MiniCPM-o-4_5``), for vLLM only
  (:mod:`tiny_minicpmo`).
* ``nemotron_omni`` — the published Nemotron 3 Nano Omni layout
  (``nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16``), for vLLM only (:mod:`tiny_nemotron_omni`).
* ``video_salmonn_2`` — what lmms-eval 0.7.3's ``video_salmonn_2`` backend loads for video-SALMONN 2+
  (``models/simple/video_salmonn_2.py``: ``Qwen2_5_VLForConditionalGeneration.from_pretrained(base_model)``,
  then ``PeftModel.from_pretrained(base, pretrained)``, with ``Qwen2_5_VLProcessor.from_pretrained(base_model)``):
  a Qwen2.5-VL checkpoint in ``base/`` (the published ``Qwen/Qwen2.5-VL-7B-Instruct`` layout: its
  vision tokens ``<|vision_start|>``, ``<|video_pad|>`` … unnamed in the tokenizer, found by the
  processor by default, and its chat template) and a LoRA adapter over its language model's attention
  in ``lora/`` (``adapter_config.json``, ``adapter_model.safetensors``; random, non-zero).

``--for vllm`` builds the two published layouts (``qwen2_5_omni``, ``qwen3_omni_moe``) so that vLLM's CPU
build serves them (the vLLM lane, docs/real-lane.md "vLLM"), with the sizes of :data:`VLLM_SIZES`: vLLM
registers the published architectures only (not the thinker-only ones), its CPU attention takes heads of
32, 64, 80 ... wide, its CPU MoE kernels hidden sizes that are multiples of 32, and it reads fields of the
published Qwen3-Omni config that transformers does not declare (the vision tower's ``image_size`` and
``apply_vit_abs_pos_embed``, the thinker's ``audio_end_token_id``) and the text model's ``tie_word_embeddings``.
The default (``--for transformers``) keeps the smaller sizes, byte for byte.

Every checkpoint carries a processor assembled from its parts: a byte-level BPE tokenizer trained on
the spot with ``tokenizers`` (the Qwen special tokens ``<|im_start|>``, ``<|AUDIO|>``, ``<|VIDEO|>``,
``<|IMAGE|>``, ``<|audio_bos|>`` … as the tokenizer's named extra special tokens), the Qwen2-VL image and
video processors, Whisper's feature extractor (128 mel bins) and the Qwen-Omni chat template.
``--processor published`` keeps the published checkpoint's preprocessing values (the 300 s audio feature
window, the published image pixel bounds); the default ``tiny`` keeps Whisper's 30 s window and small
images. Video frames are sized by the Omni processor's own per-call default (128 to 768 merged patches
a frame) either way, as on a real checkpoint. Weights come from ``torch.manual_seed(seed)``::

    python tools/tiny_checkpoints.py --kind qwen2_5_omni --out /tmp/tiny-omni
    transformers serve /tmp/tiny-omni --port 8000
    python tools/tiny_checkpoints.py --kind qwen3_omni_moe --for vllm --out /tmp/Qwen3-Omni-vllm-tiny
    python tools/tiny_checkpoints.py --kind video_salmonn_2 --out /tmp/video-salmonn-tiny
    lmms-eval --tasks odu_av --model video_salmonn_2 \
        --model_args pretrained=/tmp/video-salmonn-tiny/lora,base_model=/tmp/video-salmonn-tiny/base
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS: tuple[str, ...] = (
    "qwen2_5_omni",
    "qwen2_5_omni_thinker",
    "qwen3_omni_moe",
    "qwen3_omni_moe_thinker",
    "text",
    "kimi_audio",
    "minicpmo",
    "nemotron_omni",
    "video_salmonn_2",
)
PROCESSORS: tuple[str, ...] = ("tiny", "published")
#: The servers a checkpoint is sized for (``--for``), the kinds vLLM registers (its published architectures,
#: vllm/model_executor/models/registry.py: ``Qwen2_5OmniForConditionalGeneration``,
#: ``Qwen3OmniMoeForConditionalGeneration``, ``MoonshotKimiaForCausalLM``, ``MiniCPMO``,
#: ``NemotronH_Nano_Omni_Reasoning_V3``) and those built for vLLM only: transformers has no Kimi-Audio model
#: (:mod:`tiny_kimi_audio`), and MiniCPM-o 4.5's and Nemotron 3 Nano Omni's published model code is the
#: checkpoint's own (:mod:`tiny_minicpmo`, :mod:`tiny_nemotron_omni`).
TARGETS: tuple[str, ...] = ("transformers", "vllm")
VLLM_KINDS: tuple[str, ...] = ("qwen2_5_omni", "qwen3_omni_moe", "kimi_audio", "minicpmo", "nemotron_omni")
VLLM_ONLY_KINDS: tuple[str, ...] = ("kimi_audio", "minicpmo", "nemotron_omni")
#: Size of the trained BPE vocabulary (special tokens included).
VOCAB_SIZE = 1024
#: Speakers of the published Qwen2.5-Omni ``spk_dict.pt``.
SPEAKERS: tuple[str, ...] = ("Chelsie", "Ethan")

#: The Qwen special tokens; the named ones become tokenizer attributes the Omni processors read.
NAMED_TOKENS: dict[str, str] = {
    "image_token": "<|IMAGE|>",
    "audio_token": "<|AUDIO|>",
    "video_token": "<|VIDEO|>",
    "vision_bos_token": "<|vision_bos|>",
    "vision_eos_token": "<|vision_eos|>",
    "audio_bos_token": "<|audio_bos|>",
    "audio_eos_token": "<|audio_eos|>",
}
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_pad|>",
    *NAMED_TOKENS.values(),
)

#: The published Qwen2.5-VL tokenizer's special tokens that a chat with video uses (none named: the
#: Qwen2.5-VL processor falls back to ``<|image_pad|>`` / ``<|video_pad|>``).
VL_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
#: The folders of a ``video_salmonn_2`` build: lmms-eval's ``base_model`` and ``pretrained`` arguments.
SALMONN_BASE, SALMONN_ADAPTER = "base", "lora"
#: The LoRA adapter: rank, scale and the language model's attention projections it adapts (the vision
#: tower's attention is ``qkv`` / ``proj``, left alone).
LORA: dict[str, Any] = {"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}

#: Qwen2.5-Omni's chat template: media parts become ``<|vision_bos|><|VIDEO|><|vision_eos|>`` /
#: ``<|audio_bos|><|AUDIO|><|audio_eos|>`` placeholders that the processor expands.
OMNI_CHAT_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}{% set image_count = namespace(value=0) %}"
    "{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_bos|><|IMAGE|><|vision_eos|>"
    "{% elif content['type'] == 'audio' or 'audio' in content or 'audio_url' in content %}"
    "{% set audio_count.value = audio_count.value + 1 %}{% if add_audio_id %}Audio {{ audio_count.value }}: {% endif %}"
    "<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_bos|><|VIDEO|><|vision_eos|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: Qwen2.5-VL's chat template (the published one): media parts become
#: ``<|vision_start|><|video_pad|><|vision_end|>`` placeholders that the processor expands.
VL_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: A plain Qwen2 chat template for the text LLM (content as a string, or text parts joined).
TEXT_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{{ part['text'] }}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _corpus() -> Iterator[str]:
    """Text the tokenizer learns from: the App F instructions and the sample's transcripts (so prompt token
    counts are of a realistic order), in a fixed order."""
    from odu.core.constants import AUDIO_ONLY, AUDIO_VISUAL
    from odu.core.prompts import instruction
    from odu.data.sample import sample_dir

    yield instruction(AUDIO_VISUAL)
    yield instruction(AUDIO_ONLY)
    yield from (sample_dir() / "scenes.jsonl").read_text(encoding="utf-8").splitlines()


def build_tokenizer(named: bool = True, special: tuple[str, ...] = SPECIAL_TOKENS) -> Any:
    """A byte-level BPE ``Qwen2Tokenizer`` trained on :func:`_corpus` with the ``special`` tokens
    (deterministic for a given corpus); ``named``: :data:`NAMED_TOKENS` as named extra special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(special),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(_corpus(), trainer)
    merges = [tuple(m) for m in json.loads(bpe.to_str())["model"]["merges"]]
    return Qwen2Tokenizer(
        vocab=bpe.get_vocab(),
        merges=merges,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=dict(NAMED_TOKENS) if named else None,
    )


def build_omni_processor(tokenizer: Any, processor_class: str, published: bool, patch_size: int = 14) -> Any:
    """The Omni processor from its parts; ``published``: the published checkpoint's image pixel bounds and
    300 s audio window, else images of at most 4 x 4 merged patches and Whisper's 30 s window (video
    frames follow the processor's per-call default either way); ``patch_size``: the vision tower's
    (Qwen2.5-Omni 14, Qwen3-Omni 16)."""
    import transformers

    merged = 2 * patch_size  # the side of a 2 x 2 merged patch
    most = 28 * 28 * 1280 * 10 if published else (4 * merged) ** 2
    pixels = {"min_pixels": merged * merged, "max_pixels": most, "patch_size": patch_size}
    audio = {"chunk_length": 300} if published else {}
    return getattr(transformers, processor_class)(
        image_processor=transformers.Qwen2VLImageProcessor(**pixels),
        video_processor=transformers.Qwen2VLVideoProcessor(**pixels),
        feature_extractor=transformers.WhisperFeatureExtractor(feature_size=128, return_attention_mask=True, **audio),
        tokenizer=tokenizer,
        chat_template=OMNI_CHAT_TEMPLATE,
    )


def build_vl_processor(tokenizer: Any, published: bool) -> Any:
    """The Qwen2.5-VL processor from its parts; ``published``: the published checkpoint's pixel bounds
    (``Qwen/Qwen2.5-VL-7B-Instruct`` ``preprocessor_config.json``), else images of at most 4 x 4 merged patches."""
    import transformers

    most = 12845056 if published else (4 * 28) ** 2
    pixels = {"min_pixels": 3136, "max_pixels": most, "patch_size": 14}
    return transformers.Qwen2_5_VLProcessor(
        image_processor=transformers.Qwen2VLImageProcessor(**pixels),
        video_processor=transformers.Qwen2VLVideoProcessor(**pixels),
        tokenizer=tokenizer,
        chat_template=VL_CHAT_TEMPLATE,
    )


def _token_ids(tokenizer: Any) -> dict[str, int]:
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in NAMED_TOKENS.items()}
    return {
        "audio_token_index": ids["audio_token"],
        "image_token_index": ids["image_token"],
        "video_token_index": ids["video_token"],
        "audio_start_token_id": ids["audio_bos_token"],
        "audio_end_token_id": ids["audio_eos_token"],
        "vision_start_token_id": ids["vision_bos_token"],
        "vision_end_token_id": ids["vision_eos_token"],
    }


#: One tiny transformer layer stack: the sizes every tiny language model here shares.
TINY_LAYERS: dict[str, int] = {
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
}
#: Multimodal rotary positions (M-RoPE) over 8-wide heads: time, height, width sections.
MROPE: dict[str, Any] = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]}
#: The tiny audio (Whisper-style) and vision towers of both Qwen-Omni thinkers.
AUDIO_TOWER: dict[str, int] = {
    "num_mel_bins": 128,
    "encoder_layers": 1,
    "encoder_attention_heads": 2,
    "encoder_ffn_dim": 16,
    "d_model": 8,
    "output_dim": 16,
}
VISION_TOWER: dict[str, int] = {
    "depth": 1,
    "hidden_size": 16,
    "intermediate_size": 16,
    "num_heads": 2,
    "out_hidden_size": 16,
}


@dataclass(frozen=True)
class Sizes:
    """The thinker's text model sizes a target server takes (:data:`TRANSFORMERS_SIZES`, :data:`VLLM_SIZES`)."""

    #: The text model's layer stack (:data:`TINY_LAYERS`' keys) and its heads' width.
    layers: dict[str, int]
    head_dim: int
    #: M-RoPE time, height, width sections of Qwen2.5-Omni and Qwen3-Omni (they sum to half a head).
    mrope_section: list[int]
    qwen3_mrope_section: list[int]
    #: Qwen3-Omni's expert width.
    moe_intermediate_size: int
    #: Qwen3-Omni config fields only this target reads (vision ``image_size``, text ``tie_word_embeddings``).
    qwen3_vision: dict[str, Any] = field(default_factory=dict)
    qwen3_text: dict[str, Any] = field(default_factory=dict)
    #: Token ids of the published Qwen3-Omni thinker config that only this target reads (:func:`_token_ids` keys).
    qwen3_token_ids: tuple[str, ...] = ()

    @property
    def hidden(self) -> int:
        return self.layers["hidden_size"]


#: transformers serve and the in-process backend: 16-wide text models of two 8-wide heads.
TRANSFORMERS_SIZES = Sizes(TINY_LAYERS, 8, [1, 1, 2], [1, 1, 2], 8)
#: vLLM's CPU build: two 32-wide heads (vllm/v1/attention/backends/cpu_attn.py ``get_supported_head_sizes``:
#: 32, 64, 80 ...), a hidden size that is a multiple of 32 (its CPU MoE kernels), the published M-RoPE
#: proportions (Qwen2.5-Omni [16, 24, 24], Qwen3-Omni [24, 20, 20] over 128-wide heads, here over 32),
#: Qwen3-Omni's vision ``image_size`` and ``apply_vit_abs_pos_embed``, fields of the published config.json
#: that transformers' config class does not declare (vLLM sizes the position table as (image_size / patch)^2:
#: 8 x 8 = the tower's 64 positions, an ``nn.Embedding`` as transformers' tower has it; qwen3_omni_moe_thinker.py)
#: untied text embeddings (the weights hold lm_head) and the thinker's ``audio_end_token_id`` (read for
#: ``use_audio_in_video``, ``get_updates_use_audio_in_video``).
VLLM_SIZES = Sizes(
    {**TINY_LAYERS, "hidden_size": 64, "intermediate_size": 64},
    32,
    [4, 6, 6],
    [6, 5, 5],
    32,
    qwen3_vision={"image_size": 8 * 16, "apply_vit_abs_pos_embed": True},
    qwen3_text={"tie_word_embeddings": False},
    qwen3_token_ids=("audio_end_token_id",),
)
SIZES: dict[str, Sizes] = {"transformers": TRANSFORMERS_SIZES, "vllm": VLLM_SIZES}


def _text_config(vocab: int, sizes: Sizes = TRANSFORMERS_SIZES) -> dict[str, Any]:
    rope = {**MROPE, "mrope_section": list(sizes.mrope_section)}
    return {**sizes.layers, "vocab_size": vocab, "max_position_embeddings": 32768, "rope_parameters": rope}


def _towers(sizes: Sizes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The audio and vision towers, their outputs as wide as the text model."""
    return {**AUDIO_TOWER, "output_dim": sizes.hidden}, {**VISION_TOWER, "out_hidden_size": sizes.hidden}


def qwen2_5_omni_thinker_config(tokenizer: Any, sizes: Sizes = TRANSFORMERS_SIZES) -> dict[str, Any]:
    """A tiny Qwen2.5-Omni thinker: one layer per tower, the text model of ``sizes``, the tokenizer's token ids."""
    audio, vision = _towers(sizes)
    return {
        "audio_config": audio,
        "vision_config": {**vision, "fullatt_block_indexes": [0]},
        "text_config": _text_config(len(tokenizer), sizes),
        **_token_ids(tokenizer),
    }


def qwen3_omni_thinker_config(tokenizer: Any, sizes: Sizes = TRANSFORMERS_SIZES) -> dict[str, Any]:
    """A tiny Qwen3-Omni (MoE) thinker: one layer per tower, four experts, the tokenizer's token ids."""
    ids = _token_ids(tokenizer)
    audio, vision = _towers(sizes)
    text = {
        **_text_config(len(tokenizer), sizes),
        "head_dim": sizes.head_dim,
        "moe_intermediate_size": sizes.moe_intermediate_size,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "rope_parameters": {**MROPE, "mrope_section": list(sizes.qwen3_mrope_section), "interleaved": True},
        **sizes.qwen3_text,
    }
    return {
        "audio_config": {**audio, "downsample_hidden_size": 8},
        "vision_config": {
            **vision,
            "num_position_embeddings": 64,
            "deepstack_visual_indexes": [0],
            **sizes.qwen3_vision,
        },
        "text_config": text,
        "audio_token_id": ids["audio_token_index"],
        "image_token_id": ids["image_token_index"],
        "video_token_id": ids["video_token_index"],
        "audio_start_token_id": ids["audio_start_token_id"],
        "vision_start_token_id": ids["vision_start_token_id"],
        **{name: ids[name] for name in sizes.qwen3_token_ids},
    }


def qwen3_omni_config(tokenizer: Any, sizes: Sizes = TRANSFORMERS_SIZES) -> Any:
    """The published Qwen3-Omni layout with tiny towers (talker, code predictor and code2wav included)."""
    from transformers import Qwen3OmniMoeConfig

    thinker = qwen3_omni_thinker_config(tokenizer, sizes)
    small = {**TINY_LAYERS, "head_dim": 8}
    talker = {
        "text_config": {
            **small,
            "vocab_size": 64,
            "moe_intermediate_size": 8,
            "shared_expert_intermediate_size": 8,
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "rope_parameters": {**MROPE, "interleaved": True},  # over the talker's own 8-wide heads
        },
        "code_predictor_config": {**small, "vocab_size": 64, "num_code_groups": 2},
        "num_code_groups": 2,
        "thinker_hidden_size": sizes.hidden,
        "accept_hidden_layer": 0,
        "codec_eos_token_id": 60,
        "codec_nothink_id": 59,
        "codec_think_bos_id": 58,
        "codec_think_eos_id": 57,
        "codec_pad_id": 56,
        "codec_bos_id": 55,
        "audio_token_id": thinker["audio_token_id"],
        "image_token_id": thinker["image_token_id"],
        "video_token_id": thinker["video_token_id"],
        "vision_start_token_id": thinker["vision_start_token_id"],
        "audio_start_token_id": thinker["audio_start_token_id"],
        "speaker_id": {"ethan": 54, "chelsie": 53},
        "spatial_merge_size": 2,
    }
    code2wav = {
        "codebook_size": 64,
        "hidden_size": 16,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "intermediate_size": 32,
        "num_hidden_layers": 1,
        "num_quantizers": 2,
        "upsample_rates": [2],
        "upsampling_ratios": [2],
        "decoder_dim": 16,
        "sliding_window": 8,
    }
    return Qwen3OmniMoeConfig(
        thinker_config=thinker, talker_config=talker, code2wav_config=code2wav, enable_audio_output=True
    )


def qwen2_5_omni_config(tokenizer: Any, sizes: Sizes = TRANSFORMERS_SIZES) -> Any:
    """The published Qwen2.5-Omni layout with tiny towers (talker and token2wav included, audio output on)."""
    from transformers import Qwen2_5OmniConfig

    ids = _token_ids(tokenizer)
    talker = {
        **{k: v for k, v in ids.items()},
        "vocab_size": 64,
        "embedding_size": sizes.hidden,
        **TINY_LAYERS,
        "head_dim": 8,
        "tts_text_start_token_id": 0,
        "tts_text_end_token_id": 0,
        "tts_text_pad_token_id": 0,
        "tts_codec_start_token_id": 1,
        "tts_codec_end_token_id": 2,
        "tts_codec_pad_token_id": 3,
        "tts_codec_mask_token_id": 4,
        "rope_parameters": dict(MROPE),
    }
    token2wav = {
        "dit_config": {
            "hidden_size": 16,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "head_dim": 8,
            "emb_dim": 8,
            "enc_emb_dim": 8,
            "enc_dim": 8,
            "enc_channels": [8, 8, 8],
            "enc_kernel_sizes": [3, 3, 1],
            "enc_dilations": [1, 1, 1],
            "enc_attention_channels": 4,
            "enc_se_channels": 4,
            "num_embeds": 64,
            "look_ahead_layers": [0],
            "look_backward_layers": [0],
        },
        "bigvgan_config": {
            "upsample_initial_channel": 8,
            "resblock_kernel_sizes": [3],
            "resblock_dilation_sizes": [[1, 3, 5]],
            "upsample_rates": [2],
            "upsample_kernel_sizes": [4],
        },
    }
    return Qwen2_5OmniConfig(
        thinker_config=qwen2_5_omni_thinker_config(tokenizer, sizes),
        talker_config=talker,
        token2wav_config=token2wav,
        enable_audio_output=True,
    )


def qwen2_5_vl_config(tokenizer: Any) -> Any:
    """A tiny Qwen2.5-VL: the vision tower of the Omni thinkers, the tiny text model, the tokenizer's vision token ids."""
    from transformers import Qwen2_5_VLConfig

    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in VL_SPECIAL_TOKENS}
    ends = {"bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"]}  # the published config's tokens
    return Qwen2_5_VLConfig(
        text_config={**_text_config(len(tokenizer)), **ends},
        vision_config={**VISION_TOWER, "fullatt_block_indexes": [0]},
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )


def _write_video_salmonn_2(out: Path, seed: int, published: bool) -> None:
    """The Qwen2.5-VL base (``out/base``) and its LoRA adapter (``out/lora``) of :func:`build`."""
    import torch
    import transformers
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    tokenizer = build_tokenizer(named=False, special=VL_SPECIAL_TOKENS)
    tokenizer.add_special_tokens({"additional_special_tokens": list(VL_SPECIAL_TOKENS)})  # each one token, as published
    model = transformers.Qwen2_5_VLForConditionalGeneration(qwen2_5_vl_config(tokenizer))
    _finish(model, tokenizer).save_pretrained(out / SALMONN_BASE)
    build_vl_processor(tokenizer, published).save_pretrained(out / SALMONN_BASE)
    adapted = get_peft_model(
        model, LoraConfig(**LORA, init_lora_weights=False)
    )  # non-zero: the adapter changes answers
    adapted.save_pretrained(out / SALMONN_ADAPTER)


def _finish(model: Any, tokenizer: Any) -> Any:
    """``model`` in eval mode, its architecture, pad and end-of-turn tokens recorded as a published checkpoint has them."""
    model.config.architectures = [type(model).__name__]
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    return model.eval()


def _speakers(path: Path) -> None:
    """``spk_dict.pt`` with the published speaker names (tiny conditioning tensors)."""
    import torch

    speakers = {
        name: {"cond": torch.zeros(1, 8), "ref_mel": torch.zeros(1, 30, 80), "bos_token": i}
        for i, name in enumerate(SPEAKERS)
    }
    torch.save(speakers, path)


#: Weights of the Qwen3-Omni talker's experts, which transformers leaves uninitialised (``torch.empty``:
#: other bytes on every build, transformers 5.25), and the normal init's spread the builder gives them.
TALKER_EXPERTS = re.compile(r"^talker\.model\.layers\.\d+\.mlp\.experts\.")
INIT_STD = 0.02


def _seed_talker_experts(model: Any, seed: int) -> None:
    """Draw :data:`TALKER_EXPERTS` from ``seed`` (a generator of their own: the other weights keep their bytes)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if TALKER_EXPERTS.match(name):
                param.normal_(0.0, INIT_STD, generator=generator)


def build(kind: str, out: Path, seed: int = 0, processor: str = "tiny", target: str = "transformers") -> Path:
    """Write a ``kind`` checkpoint (:data:`KINDS`) sized for ``target`` (:data:`TARGETS`) to ``out`` (replaced
    if it exists) and return ``out``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if processor not in PROCESSORS:
        raise ValueError(f"processor must be one of {PROCESSORS}, got {processor!r}")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if target == "vllm" and kind not in VLLM_KINDS:
        raise ValueError(f"vLLM registers the published layouts only: --for vllm builds {VLLM_KINDS}, not {kind!r}")
    if target != "vllm" and kind in VLLM_ONLY_KINDS:
        raise ValueError(f"{kind!r} is served by vLLM only: build it --for vllm")
    import transformers

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # the Omni configs warn about their default sub-configs' token ids
    try:
        if kind == "video_salmonn_2":
            _write_video_salmonn_2(out, seed, processor == "published")
        else:
            _write(kind, out, seed, processor == "published", SIZES[target])
    finally:
        transformers.logging.set_verbosity(verbosity)
    return out


def _write(kind: str, out: Path, seed: int, published: bool, sizes: Sizes) -> None:
    """The checkpoint of :func:`build` into the empty folder ``out``."""
    import torch
    import transformers

    torch.manual_seed(seed)
    if kind == "kimi_audio":
        import tiny_kimi_audio

        tiny_kimi_audio.write(out, list(_corpus()))
        return
    if kind == "minicpmo":
        import tiny_minicpmo

        tiny_minicpmo.write(out, build_tokenizer(named=False, special=tiny_minicpmo.SPECIAL_TOKENS))
        return
    if kind == "nemotron_omni":
        import tiny_nemotron_omni

        tiny_nemotron_omni.write(out, build_tokenizer(named=False, special=tiny_nemotron_omni.SPECIAL_TOKENS))
        return
    if kind == "text":
        tokenizer = build_tokenizer(named=False)
        tokenizer.chat_template = TEXT_CHAT_TEMPLATE
        config = transformers.Qwen2Config(
            **{k: v for k, v in _text_config(len(tokenizer)).items() if k != "rope_parameters"}
        )
        model = transformers.Qwen2ForCausalLM(config)
        parts = [tokenizer]
    elif kind.startswith("qwen2_5_omni"):
        tokenizer = build_tokenizer()
        parts = [build_omni_processor(tokenizer, "Qwen2_5OmniProcessor", published)]
        if kind == "qwen2_5_omni":
            model = transformers.Qwen2_5OmniForConditionalGeneration(qwen2_5_omni_config(tokenizer, sizes))
            _speakers(out / "spk_dict.pt")
        else:
            thinker = transformers.Qwen2_5OmniThinkerConfig(**qwen2_5_omni_thinker_config(tokenizer))
            model = transformers.Qwen2_5OmniThinkerForConditionalGeneration(thinker)
    else:
        tokenizer = build_tokenizer()
        parts = [build_omni_processor(tokenizer, "Qwen3OmniMoeProcessor", published, patch_size=16)]
        if kind == "qwen3_omni_moe":
            model = transformers.Qwen3OmniMoeForConditionalGeneration(qwen3_omni_config(tokenizer, sizes))
            _seed_talker_experts(model, seed)
        else:
            thinker = transformers.Qwen3OmniMoeThinkerConfig(**qwen3_omni_thinker_config(tokenizer))
            model = transformers.Qwen3OmniMoeThinkerForConditionalGeneration(thinker)
    _finish(model, tokenizer).save_pretrained(out)
    for part in parts:
        part.save_pretrained(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, default="qwen2_5_omni")
    parser.add_argument("--out", type=Path, required=True, help="folder to write (replaced if it exists)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processor", choices=PROCESSORS, default="tiny")
    parser.add_argument(
        "--for", dest="target", choices=TARGETS, default="transformers", help="the server to size it for"
    )
    args = parser.parse_args(argv)
    path = build(args.kind, args.out, args.seed, args.processor, args.target)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
