"""A tiny MiniCPM-o 4.5 checkpoint in the published ``openbmb/MiniCPM-o-4_5`` layout, for vLLM's CPU build
(``tiny_checkpoints.py --kind minicpmo --for vllm``; docs/real-lane.md "vLLM").

The published repository carries its own code beside the weights (``auto_map``): ``configuration_minicpmo.py``
(``MiniCPMOConfig``, a ``Qwen3Config`` with the vision, audio and TTS sub-configs), ``processing_minicpmo.py``
(``MiniCPMOProcessor``, the ``MiniCPMVImageProcessor`` and the ``MiniCPMAAudioProcessor`` Whisper feature
extractor, named in ``preprocessor_config.json``) and ``tokenization_minicpmo_fast.py`` (``MiniCPMOTokenizerFast``,
a Qwen2 fast tokenizer naming the image, slice, audio and speaker markers by id), so the server needs
``--trust-remote-code``. This tiny copy writes those files small, with the published classes' names and the
interface vLLM calls (the published files: OpenBMB's MiniCPM-o-Demo ``MiniCPMO45/configuration_minicpmo.py``
and the ``preprocessor_config.json`` / ``tokenizer_config.json`` of its published checkpoint).

What vLLM 0.32.0 reads of it (``vllm/model_executor/models/minicpmo.py`` and ``minicpmv.py``,
``vllm/transformers_utils/processors/minicpmo.py``):

* ``config.json``: ``architectures: ["MiniCPMO"]`` and ``version: "4.5"`` (``MiniCPMO.__new__`` dispatches on it
  to ``MiniCPMO4_5``: a Qwen3 text model), ``query_num`` (tokens a frame or slice becomes), ``audio_pool_step`` 5
  and ``audio_chunk_length`` 1.0, the SigLIP ``vision_config`` and Whisper ``audio_config``; the resampler has
  ``hidden_size // 128`` heads, the audio projector takes ``encoder_ffn_dim // 4`` features;
* ``preprocessor_config.json``: ``auto_map["AutoImageProcessor"]`` (vLLM loads the checkpoint's own image
  processor class from it), ``image_feature_size`` (= ``query_num``), slicing and normalisation values;
* ``model.safetensors``: ``llm.*`` (Qwen3), ``vpm.*`` (the SigLIP / Idefics2 vision tower), ``resampler.*``,
  ``apm.*`` (the Whisper encoder) and ``audio_projection_layer.*``; vLLM drops ``tts.*``, so none is written.

transformers' own ``minicpmv4_6`` / ``minicpmv4_7`` model types are MiniCPM-V 4.6 / 4.7 (vision only; vLLM's
``MiniCPMV4_6ForConditionalGeneration`` / ``MiniCPMV4_7ForConditionalGeneration``): vLLM does not read them for
``MiniCPMO``, whose config and processors are the checkpoint's code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: The markers the published tokenizer names (its ``extra_special_tokens`` that vLLM's processor looks up).
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<unk>",
    "<image>",
    "</image>",
    "<slice>",
    "</slice>",
    "<image_id>",
    "</image_id>",
    "<|audio_start|>",
    "<|audio_end|>",
    "<|spk_bos|>",
    "<|spk_eos|>",
    "<|tts_bos|>",
    "<|tts_eos|>",
)
#: The Qwen3 text model (32-wide heads, as vLLM's CPU attention takes; the resampler's one 128-wide head).
TEXT: dict[str, Any] = {
    "hidden_size": 128,
    "intermediate_size": 128,
    "num_hidden_layers": 1,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1_000_000.0,
    "tie_word_embeddings": False,
}
#: The SigLIP vision tower (the published 980-pixel position table, 14-pixel patches) and the Whisper encoder
#: (the published 80 mel bins; ``d_model`` = ``encoder_ffn_dim // 4``, as the audio projector assumes).
VISION: dict[str, Any] = {
    "hidden_size": 64,
    "intermediate_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "image_size": 980,
    "patch_size": 14,
    "model_type": "siglip_vision_model",
}
AUDIO: dict[str, Any] = {
    "d_model": 64,
    "encoder_layers": 1,
    "encoder_attention_heads": 2,
    "encoder_ffn_dim": 256,
    "decoder_layers": 1,
    "decoder_attention_heads": 2,
    "decoder_ffn_dim": 64,
    "num_mel_bins": 80,
    "max_source_positions": 1500,
}
#: Tokens a frame or image slice becomes (the published 64, smaller), and the side an image or frame is resized
#: to (the published 448, halved: vLLM's start-up runs 8 videos of the largest frames through the vision tower).
QUERY_NUM = 16
SCALE_RESOLUTION = 224

#: ``configuration_minicpmo.py``: the published classes' fields (the published file takes its
#: ``SiglipVisionConfig`` from its own ``modeling_navit_siglip.py``, which is transformers' one).
CONFIG_MODULE = '''"""MiniCPM-o 4.5's config: a Qwen3 text model with slicing, vision, audio and TTS sub-configs."""

from transformers import PretrainedConfig, Qwen3Config, SiglipVisionConfig, WhisperConfig


class MiniCPMVSliceConfig(PretrainedConfig):
    model_type = "minicpmv"

    def __init__(self, patch_size=14, max_slice_nums=9, scale_resolution=448, **kwargs):
        super().__init__(**kwargs)
        self.patch_size = patch_size
        self.max_slice_nums = max_slice_nums
        self.scale_resolution = scale_resolution


class MiniCPMTTSConfig(PretrainedConfig):
    model_type = "minicpmtts"


class MiniCPMOConfig(Qwen3Config):
    model_type = "minicpmo"
    keys_to_ignore_at_inference = ["past_key_values"]

    def __init__(self, use_cache=True, query_num=64, image_size=448, drop_vision_last_layer=True,
                 batch_vision_input=True, slice_config=None, vision_config=None, audio_config=None,
                 tts_config=None, use_image_id=True, vision_batch_size=16, audio_pool_step=5,
                 audio_chunk_length=1.0, stream_input=False, listen_speak_type="asr", init_vision=True,
                 init_audio=True, init_tts=True, **kwargs):
        self.use_cache = use_cache
        self.query_num = query_num
        self.image_size = image_size
        self.drop_vision_last_layer = drop_vision_last_layer
        self.batch_vision_input = batch_vision_input
        self.use_image_id = use_image_id
        self.vision_batch_size = vision_batch_size
        self.audio_pool_step = audio_pool_step
        self.audio_chunk_length = audio_chunk_length
        self.stream_input = stream_input
        self.listen_speak_type = listen_speak_type
        self.init_vision = init_vision
        self.init_audio = init_audio
        self.init_tts = init_tts
        self.slice_config = MiniCPMVSliceConfig(**(slice_config or {"max_slice_nums": 1}))
        self.slice_mode = True
        self.vision_config = SiglipVisionConfig(**(vision_config or {}))
        self.audio_config = WhisperConfig(**(audio_config or {}))
        self.tts_config = MiniCPMTTSConfig(**(tts_config or {}))
        self.patch_size = self.vision_config.patch_size
        super().__init__(**kwargs)
'''

#: ``tokenization_minicpmo_fast.py``: the published tokenizer class, a Qwen2 fast tokenizer whose markers
#: vLLM's MiniCPM-o processor reads by id (``im_start_id``, ``slice_start_id``, ``audio_start_id`` ...).
TOKENIZER_MODULE = '''"""MiniCPM-o's tokenizer: Qwen2's, with its image, slice, audio and speaker markers named by id."""

from transformers import Qwen2TokenizerFast


class MiniCPMOTokenizerFast(Qwen2TokenizerFast):
    im_start = "<image>"
    im_end = "</image>"
    slice_start = "<slice>"
    slice_end = "</slice>"
    im_id_start = "<image_id>"
    im_id_end = "</image_id>"
    audio_start = "<|audio_start|>"
    audio_end = "<|audio_end|>"
    spk_start = "<|spk_bos|>"
    spk_end = "<|spk_eos|>"
    tts_start = "<|tts_bos|>"
    tts_end = "<|tts_eos|>"

    def _id(self, token):
        return self.convert_tokens_to_ids(token)

    @property
    def eos_id(self):
        return self.eos_token_id

    @property
    def bos_id(self):
        return self.bos_token_id

    @property
    def unk_id(self):
        return self._id("<unk>")

    @property
    def im_start_id(self):
        return self._id(self.im_start)

    @property
    def im_end_id(self):
        return self._id(self.im_end)

    @property
    def slice_start_id(self):
        return self._id(self.slice_start)

    @property
    def slice_end_id(self):
        return self._id(self.slice_end)

    @property
    def im_id_start_id(self):
        return self._id(self.im_id_start)

    @property
    def im_id_end_id(self):
        return self._id(self.im_id_end)

    @property
    def audio_start_id(self):
        return self._id(self.audio_start)

    @property
    def audio_end_id(self):
        return self._id(self.audio_end)

    @property
    def spk_start_id(self):
        return self._id(self.spk_start)

    @property
    def spk_end_id(self):
        return self._id(self.spk_end)

    @property
    def tts_start_id(self):
        return self._id(self.tts_start)

    @property
    def tts_end_id(self):
        return self._id(self.tts_end)

    @property
    def newline_id(self):
        return self._id("\\n")
'''

#: ``processing_minicpmo.py``: the processor (the checkpoint's ``AutoProcessor``; vLLM keeps its tokenizer and
#: feature extractor), the Whisper feature extractor and the image processor: an image becomes its source
#: image resized to about ``scale_resolution`` squared (sides a multiple of ``patch_size``) and, when larger,
#: up to ``max_slice_nums`` slices on a grid; each is cut into patches and stands for ``image_feature_size``
#: ``<unk>`` tokens between ``<image>``/``<slice>`` markers, after an ``<image_id>`` when ``use_image_id``.
PROCESSING_MODULE = '''"""MiniCPM-o's processor, its Whisper feature extractor and its slicing image processor."""

import math

import numpy as np
import torch
from PIL import Image
from transformers import WhisperFeatureExtractor
from transformers.image_processing_utils import BaseImageProcessor, BatchFeature
from transformers.image_utils import to_numpy_array
from transformers.processing_utils import ProcessorMixin


class MiniCPMAAudioProcessor(WhisperFeatureExtractor):
    pass


class MiniCPMVImageProcessor(BaseImageProcessor):
    model_input_names = ["pixel_values"]

    def __init__(self, max_slice_nums=9, scale_resolution=448, patch_size=14, **kwargs):
        self.use_image_id = kwargs.pop("use_image_id", False)
        self.image_feature_size = kwargs.pop("image_feature_size", 64)
        self.im_start_token = kwargs.pop("im_start", "<image>")
        self.im_end_token = kwargs.pop("im_end", "</image>")
        self.slice_start_token = kwargs.pop("slice_start", "<slice>")
        self.slice_end_token = kwargs.pop("slice_end", "</slice>")
        self.unk_token = kwargs.pop("unk", "<unk>")
        self.im_id_start = kwargs.pop("im_id_start", "<image_id>")
        self.im_id_end = kwargs.pop("im_id_end", "</image_id>")
        self.slice_mode = kwargs.pop("slice_mode", True)
        self.mean = np.array(kwargs.pop("norm_mean", [0.5, 0.5, 0.5]))
        self.std = np.array(kwargs.pop("norm_std", [0.5, 0.5, 0.5]))
        self.version = kwargs.pop("version", 2.0)
        super().__init__(**kwargs)
        self.max_slice_nums = max_slice_nums
        self.scale_resolution = scale_resolution
        self.patch_size = patch_size

    @staticmethod
    def ensure_divide(length, patch_size):
        return max(round(length / patch_size) * patch_size, patch_size)

    def find_best_resize(self, original_size, allow_upscale=False):
        width, height = original_size
        if width * height > self.scale_resolution**2 or allow_upscale:
            ratio = width / height
            height = int(self.scale_resolution / math.sqrt(ratio))
            width = int(height * ratio)
        return self.ensure_divide(width, self.patch_size), self.ensure_divide(height, self.patch_size)

    def get_sliced_grid(self, image_size, max_slice_nums, never_split=False):
        width, height = image_size
        multiple = min(math.ceil(width * height / self.scale_resolution**2), max_slice_nums)
        if multiple <= 1 or never_split:
            return None
        grids = [
            [m, n // m]
            for n in (multiple - 1, multiple, multiple + 1)
            if 1 < n <= max_slice_nums
            for m in range(1, n + 1)
            if n % m == 0
        ]
        log_ratio = math.log(width / height)
        return min(grids, key=lambda grid: abs(log_ratio - math.log(grid[0] / grid[1])))

    def slice_image(self, image, max_slice_nums):
        grid = self.get_sliced_grid(image.size, max_slice_nums)
        if grid is None:
            return [image.resize(self.find_best_resize(image.size, allow_upscale=True), Image.Resampling.BICUBIC)]
        source = image.resize(self.find_best_resize(image.size), Image.Resampling.BICUBIC)
        cols, rows = grid
        cell = self.find_best_resize((image.width / cols, image.height / rows), allow_upscale=True)
        refined = image.resize((cell[0] * cols, cell[1] * rows), Image.Resampling.BICUBIC)
        slices = [
            refined.crop((c * cell[0], r * cell[1], (c + 1) * cell[0], (r + 1) * cell[1]))
            for r in range(rows)
            for c in range(cols)
        ]
        return [source, *slices]

    def get_grid_placeholder(self, grid):
        if grid is None:
            return ""
        cell = self.slice_start_token + self.unk_token * self.image_feature_size + self.slice_end_token
        return "\\n".join(cell * grid[0] for _ in range(grid[1]))

    def get_image_id_placeholder(self, idx=0):
        return f"{self.im_id_start}{idx}{self.im_id_end}"

    def get_slice_image_placeholder(self, image_size, image_idx=0, max_slice_nums=None, use_image_id=None):
        max_slice_nums = self.max_slice_nums if max_slice_nums is None else int(max_slice_nums)
        grid = self.get_sliced_grid(image_size, max_slice_nums)
        placeholder = self.im_start_token + self.unk_token * self.image_feature_size + self.im_end_token
        if self.use_image_id if use_image_id is None else use_image_id:
            placeholder = self.get_image_id_placeholder(image_idx) + placeholder
        if self.slice_mode:
            placeholder += self.get_grid_placeholder(grid)
        return placeholder

    def reshape_by_patch(self, image):
        """A (C, H, W) image as (C, patch, H * W / patch): its patches side by side."""
        patch = self.patch_size
        patches = torch.nn.functional.unfold(torch.from_numpy(image), (patch, patch), stride=(patch, patch))
        patches = patches.reshape(image.shape[0], patch, patch, -1)
        return patches.permute(0, 1, 3, 2).reshape(image.shape[0], patch, -1).numpy()

    def preprocess(self, images, do_pad=True, max_slice_nums=None, return_tensors=None, **kwargs):
        if isinstance(images, Image.Image):
            images = [[images]]
        elif isinstance(images[0], Image.Image):
            images = [images]
        max_slice_nums = self.max_slice_nums if max_slice_nums is None else int(max_slice_nums)
        pixel_values, image_sizes, tgt_sizes = [], [], []
        for batch in images:
            values, sizes, targets = [], [], []
            for image in batch:
                image = image.convert("RGB") if isinstance(image, Image.Image) else Image.fromarray(image)
                sizes.append(image.size)
                for piece in self.slice_image(image, max_slice_nums):
                    array = (to_numpy_array(piece).astype(np.float32) / 255.0 - self.mean) / self.std
                    array = array.transpose(2, 0, 1).astype(np.float32)
                    values.append(self.reshape_by_patch(array))
                    targets.append((array.shape[1] // self.patch_size, array.shape[2] // self.patch_size))
            pixel_values.append([torch.from_numpy(v) for v in values])
            image_sizes.append(sizes)
            tgt_sizes.append(torch.tensor(targets, dtype=torch.int32) if targets else [])
        return BatchFeature(data={"pixel_values": pixel_values, "image_sizes": image_sizes, "tgt_sizes": tgt_sizes})


class MiniCPMOProcessor(ProcessorMixin):
    attributes = ["image_processor", "feature_extractor", "tokenizer"]
    image_processor_class = "AutoImageProcessor"
    feature_extractor_class = "AutoFeatureExtractor"
    tokenizer_class = "AutoTokenizer"

    def __init__(self, image_processor=None, feature_extractor=None, tokenizer=None, chat_template=None):
        super().__init__(image_processor, feature_extractor, tokenizer, chat_template=chat_template)
'''

#: The Qwen chat template the published tokenizer carries: each message's content as one string, into which
#: vLLM (detecting the "string" content format) writes each media part's placeholder, ``(<image>./</image>)``,
#: ``(<video>./</video>)`` or ``(<audio>./</audio>)``, a line before the text.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def config(vocab_size: int, tokens: dict[str, int]) -> dict[str, Any]:
    """The published config's fields at tiny sizes."""
    return {
        "architectures": ["MiniCPMO"],
        "auto_map": {
            "AutoConfig": "configuration_minicpmo.MiniCPMOConfig",
            "AutoModel": "modeling_minicpmo.MiniCPMO",
            "AutoModelForCausalLM": "modeling_minicpmo.MiniCPMO",
        },
        "model_type": "minicpmo",
        "version": "4.5",
        "vocab_size": vocab_size,
        **TEXT,
        "hidden_act": "silu",
        "attention_bias": False,
        "torch_dtype": "float32",
        **tokens,
        "query_num": QUERY_NUM,
        "image_size": SCALE_RESOLUTION,
        "drop_vision_last_layer": False,
        "batch_vision_input": True,
        "use_image_id": True,
        "vision_batch_size": 16,
        "slice_mode": True,
        "slice_config": {
            "model_type": "minicpmv",
            "patch_size": 14,
            "max_slice_nums": 9,
            "scale_resolution": SCALE_RESOLUTION,
        },
        "vision_config": VISION,
        "audio_pool_step": 5,
        "audio_chunk_length": 1.0,
        "stream_input": False,
        "listen_speak_type": "asr",
        "audio_config": {"model_type": "whisper", "architectures": ["MiniCPMWhisperEncoder"], **AUDIO},
        "init_vision": True,
        "init_audio": True,
        "init_tts": False,
    }


def preprocessor_config() -> dict[str, Any]:
    """The published ``preprocessor_config.json``'s values (``image_feature_size`` = :data:`QUERY_NUM`)."""
    return {
        "image_processor_type": "MiniCPMVImageProcessor",
        "feature_extractor_type": "MiniCPMAAudioProcessor",
        "auto_map": {
            "AutoProcessor": "processing_minicpmo.MiniCPMOProcessor",
            "AutoImageProcessor": "processing_minicpmo.MiniCPMVImageProcessor",
            "AutoFeatureExtractor": "processing_minicpmo.MiniCPMAAudioProcessor",
        },
        "processor_class": "MiniCPMOProcessor",
        "max_slice_nums": 9,
        "scale_resolution": SCALE_RESOLUTION,
        "patch_size": 14,
        "use_image_id": True,
        "image_feature_size": QUERY_NUM,
        "im_start": "<image>",
        "im_end": "</image>",
        "slice_start": "<slice>",
        "slice_end": "</slice>",
        "unk": "<unk>",
        "im_id_start": "<image_id>",
        "im_id_end": "</image_id>",
        "slice_mode": True,
        "norm_mean": [0.5, 0.5, 0.5],
        "norm_std": [0.5, 0.5, 0.5],
        "version": 4.5,
        "feature_size": AUDIO["num_mel_bins"],
        "sampling_rate": 16000,
        "hop_length": 160,
        "chunk_length": 30,
        "n_fft": 400,
        "padding_value": 0.0,
        "return_attention_mask": True,
    }


def write(out: Path, tokenizer: Any) -> None:
    """The checkpoint into the empty folder ``out`` (weights from torch's current seed); ``tokenizer``: a
    Qwen2 byte-level BPE tokenizer with :data:`SPECIAL_TOKENS`."""
    import torch
    import transformers
    from safetensors.torch import save_file

    tokenizer.save_pretrained(out)
    tokenizer_config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer_config |= {
        "auto_map": {"AutoTokenizer": [None, "tokenization_minicpmo_fast.MiniCPMOTokenizerFast"]},
        "tokenizer_class": "MiniCPMOTokenizerFast",
        "bos_token": "<|im_start|>",
        "unk_token": "<unk>",
        "chat_template": CHAT_TEMPLATE,
    }
    _json(out / "tokenizer_config.json", tokenizer_config)
    ids = {
        "bos_token_id": tokenizer.convert_tokens_to_ids("<|im_start|>"),
        "eos_token_id": tokenizer.convert_tokens_to_ids("<|im_end|>"),
        "pad_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    }
    _json(out / "config.json", config(len(tokenizer), ids))
    _json(out / "preprocessor_config.json", preprocessor_config())
    _json(out / "generation_config.json", {"bos_token_id": ids["bos_token_id"], "eos_token_id": ids["eos_token_id"]})
    for name, text in (
        ("configuration_minicpmo.py", CONFIG_MODULE),
        ("processing_minicpmo.py", PROCESSING_MODULE),
        ("tokenization_minicpmo_fast.py", TOKENIZER_MODULE),
    ):
        (out / name).write_text(text, encoding="utf-8")
    text = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(vocab_size=len(tokenizer), **TEXT))
    weights = {f"llm.{name}": tensor for name, tensor in text.state_dict().items()}
    vision_config = transformers.Idefics2VisionConfig(**{k: v for k, v in VISION.items() if k != "model_type"})
    vision = transformers.models.idefics2.modeling_idefics2.Idefics2VisionTransformer(vision_config)
    weights |= {f"vpm.{name}": tensor for name, tensor in vision.state_dict().items()}
    weights |= {f"resampler.{name}": tensor for name, tensor in resampler().items()}
    audio = transformers.models.whisper.modeling_whisper.WhisperEncoder(transformers.WhisperConfig(**AUDIO))
    weights |= {f"apm.{name}": tensor for name, tensor in audio.state_dict().items()}
    projector = torch.nn.Sequential(
        torch.nn.Linear(AUDIO["encoder_ffn_dim"] // 4, TEXT["hidden_size"]),
        torch.nn.Linear(TEXT["hidden_size"], TEXT["hidden_size"]),
    )
    weights |= {
        f"audio_projection_layer.linear{int(name[0]) + 1}{name[1:]}": t for name, t in projector.state_dict().items()
    }
    weights = {name: tensor.contiguous() for name, tensor in weights.items()}
    save_file(weights, out / "model.safetensors", metadata={"format": "pt"})


def resampler() -> dict[str, Any]:
    """The resampler's weights (vllm/model_executor/layers/resampler.py ``BaseResampler``): learned queries, the
    vision-to-text ``kv_proj``, one attention of ``hidden_size // 128`` heads, three layer norms and ``proj``."""
    import torch

    hidden, vision = TEXT["hidden_size"], VISION["hidden_size"]
    attention = torch.nn.MultiheadAttention(hidden, hidden // 128)
    weights = {f"attn.{name}": tensor for name, tensor in attention.state_dict().items()}
    for norm in ("ln_q", "ln_kv", "ln_post"):
        weights |= {f"{norm}.weight": torch.ones(hidden), f"{norm}.bias": torch.zeros(hidden)}
    return weights | {
        "query": torch.randn(QUERY_NUM, hidden) * 0.02,
        "kv_proj.weight": torch.randn(hidden, vision) * 0.02,
        "proj": torch.randn(hidden, hidden) * hidden**-0.5,
    }


def _json(path: Path, value: dict[str, Any]) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
