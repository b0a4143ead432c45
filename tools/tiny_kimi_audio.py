"""A tiny Kimi-Audio checkpoint in the published ``moonshotai/Kimi-Audio-7B-Instruct`` layout, for vLLM's CPU build
(``tiny_checkpoints.py --kind kimi_audio --for vllm``; docs/real-lane.md "vLLM").

What vLLM 0.32.0 reads of it (``vllm/model_executor/models/kimi_audio.py``, ``vllm/tokenizers/kimi_audio.py``):

* ``config.json``: ``architectures: ["MoonshotKimiaForCausalLM"]``, ``model_type: "kimi_audio"`` with an
  ``auto_map`` to ``configuration_moonshot_kimia.KimiAudioConfig`` (transformers has no such model type: the
  server needs ``--trust-remote-code``), the Qwen2 text model's fields and ``kimia_adaptor_input_dim`` (the
  Whisper width times 4: the adaptor takes four 50 Hz frames at a time);
* ``model.safetensors``: the Qwen2 text model (``model.layers.*``, ``model.embed_tokens``, ``model.norm``,
  ``lm_head``) and the VQ adaptor (``model.vq_adaptor.layers.{0,3,4}``: two linear layers and a layer norm);
* ``whisper-large-v3/``: the Whisper encoder's config, weights (``model.encoder.*``) and feature extractor
  (128 mel bins), read from that subfolder;
* ``tiktoken.model`` (Base64 token, rank per line) and ``tokenizer_config.json`` (``added_tokens_decoder``):
  vLLM's own ``KimiAudioTokenizer``, which fixes the special token ids (``<|im_media_begin|>`` 151661,
  ``<|im_kimia_text_blank|>`` 151666, ``<|im_kimia_user_msg_start|>`` 151670 ...), so the vocabulary is the
  published one's base size (151,643 ranks: a BPE trained on the spot, then filler tokens no text reaches)
  plus the 29 special tokens, and every id the random model can sample decodes.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

#: Ranks below the special tokens (the published tokenizer's base vocabulary size) and the special tokens
#: vLLM's tokenizer and processor name (vllm/tokenizers/kimi_audio.py ``_add_kimiaudio_special_tokens``;
#: ``<|im_kimia_text_eos|>`` is the end of an assistant turn in vLLM's template_kimi_audio.jinja).
BASE_RANKS = 151_643
NAMED_SPECIALS: dict[int, str] = {
    151643: "<|im_kimia_bos|>",
    151644: "<|im_end|>",
    151645: "<|im_msg_end|>",
    151661: "<|im_media_begin|>",
    151663: "<|im_media_end|>",
    151666: "<|im_kimia_text_blank|>",
    151667: "<|im_kimia_text_eos|>",
    151670: "<|im_kimia_user_msg_start|>",
    151671: "<|im_kimia_assistant_msg_start|>",
}
VOCAB_SIZE = max(NAMED_SPECIALS) + 1
#: The folder vLLM reads the Whisper encoder from (``KIMIA_WHISPER_SUBFOLDER``).
WHISPER_FOLDER = "whisper-large-v3"
#: The text model (two 32-wide heads, as vLLM's CPU attention takes) and the Whisper encoder (likewise).
TEXT: dict[str, Any] = {
    "hidden_size": 64,
    "intermediate_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1_000_000.0,
    "tie_word_embeddings": False,
}
WHISPER: dict[str, Any] = {
    "d_model": 64,
    "encoder_layers": 1,
    "encoder_attention_heads": 2,
    "encoder_ffn_dim": 64,
    "decoder_layers": 1,
    "decoder_attention_heads": 2,
    "decoder_ffn_dim": 64,
    "num_mel_bins": 128,
}
#: The config class the checkpoint carries (``auto_map``), as the published one declares it: Qwen2's fields
#: plus Kimi-Audio's own.
CONFIG_MODULE = '''"""Kimi-Audio's config: a Qwen2 text model and the Whisper adaptor's fields."""

from transformers import Qwen2Config


class KimiAudioConfig(Qwen2Config):
    model_type = "kimi_audio"

    def __init__(self, kimia_adaptor_input_dim=5120, kimia_media_begin=151661, kimia_media_end=151663,
                 use_whisper_feature=True, **kwargs):
        self.kimia_adaptor_input_dim = kimia_adaptor_input_dim
        self.kimia_media_begin = kimia_media_begin
        self.kimia_media_end = kimia_media_end
        self.use_whisper_feature = use_whisper_feature
        super().__init__(**kwargs)
'''


def byte_symbols() -> dict[str, int]:
    """Byte-level BPE's printable symbol of each byte (GPT-2's table, which ``tokenizers``' ByteLevel uses)."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted = [b for b in range(256) if b not in kept]
    table = {chr(b): b for b in kept}
    table.update({chr(256 + i): b for i, b in enumerate(shifted)})
    return table


def tiktoken_ranks(corpus: list[str], learned: int = 1024) -> dict[bytes, int]:
    """The 256 bytes, a byte-level BPE of ``learned`` tokens trained on ``corpus`` (in merge order, as tiktoken
    needs), then fillers up to :data:`BASE_RANKS` (no text reaches them: a filler is not one pre-token)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=learned, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    bpe.train_from_iterator(corpus, trainer)
    symbols = byte_symbols()
    ranks = {bytes([b]): b for b in range(256)}
    for token, _ in sorted(bpe.get_vocab().items(), key=lambda item: item[1]):
        ranks.setdefault(bytes(symbols[c] for c in token), len(ranks))
    while len(ranks) < BASE_RANKS:
        ranks[f"<|filler_{len(ranks)}|>".encode()] = len(ranks)
    return ranks


def config(tokens: dict[str, Any] | None = None) -> dict[str, Any]:
    """The published config's fields at tiny sizes."""
    return {
        "architectures": ["MoonshotKimiaForCausalLM"],
        "auto_map": {"AutoConfig": "configuration_moonshot_kimia.KimiAudioConfig"},
        "model_type": "kimi_audio",
        "vocab_size": VOCAB_SIZE,
        **TEXT,
        "hidden_act": "silu",
        "bos_token_id": 151643,
        "eos_token_id": 151644,
        "pad_token_id": 151644,
        "torch_dtype": "float32",
        "kimia_adaptor_input_dim": 4 * WHISPER["d_model"],
        "kimia_media_begin": 151661,
        "kimia_media_end": 151663,
        "use_whisper_feature": True,
        **(tokens or {}),
    }


def write(out: Path, corpus: list[str]) -> None:
    """The checkpoint into the empty folder ``out`` (weights from torch's current seed)."""
    import torch
    import transformers
    from safetensors.torch import save_file

    ranks = tiktoken_ranks(corpus)
    lines = (f"{base64.b64encode(token).decode('ascii')} {rank}\n" for token, rank in ranks.items())
    (out / "tiktoken.model").write_text("".join(lines), encoding="utf-8")
    specials = {i: NAMED_SPECIALS.get(i, f"<|reserved_token_{i}|>") for i in range(BASE_RANKS, VOCAB_SIZE)}
    added = {str(i): {"content": text, "special": True} for i, text in specials.items()}
    _json(out / "tokenizer_config.json", {"added_tokens_decoder": added})
    _json(out / "config.json", config())
    (out / "configuration_moonshot_kimia.py").write_text(CONFIG_MODULE, encoding="utf-8")
    _json(out / "generation_config.json", {"bos_token_id": 151643, "eos_token_id": [151644, 151667]})
    text = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(vocab_size=VOCAB_SIZE, **TEXT))
    weights = {name: tensor.contiguous() for name, tensor in text.state_dict().items()}
    hidden, wide = TEXT["hidden_size"], 4 * WHISPER["d_model"]
    adaptor = torch.nn.Sequential(
        torch.nn.Linear(wide, hidden), torch.nn.GELU(), torch.nn.Identity(), torch.nn.Linear(hidden, hidden)
    )
    adaptor.append(torch.nn.LayerNorm(hidden))
    weights |= {f"model.vq_adaptor.layers.{name}": tensor for name, tensor in adaptor.state_dict().items()}
    save_file(weights, out / "model.safetensors", metadata={"format": "pt"})
    whisper = out / WHISPER_FOLDER
    whisper.mkdir()
    whisper_config = transformers.WhisperConfig(vocab_size=64, **WHISPER)
    encoder = transformers.models.whisper.modeling_whisper.WhisperEncoder(whisper_config)
    encoder_weights = {f"model.encoder.{name}": t.contiguous() for name, t in encoder.state_dict().items()}
    save_file(encoder_weights, whisper / "model.safetensors", metadata={"format": "pt"})
    whisper_config.architectures = ["WhisperModel"]
    whisper_config.save_pretrained(whisper)
    transformers.WhisperFeatureExtractor(feature_size=WHISPER["num_mel_bins"]).save_pretrained(whisper)


def _json(path: Path, value: dict[str, Any]) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
