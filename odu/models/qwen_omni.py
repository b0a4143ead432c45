"""Qwen2.5-Omni / Qwen3-Omni run locally with ``transformers`` (``pip install -e ".[torch]"``).

Follows the Hugging Face model docs ("Text-only generation"): the *Thinker* class only
(``Qwen2_5OmniThinkerForConditionalGeneration`` / ``Qwen3OmniMoeThinkerForConditionalGeneration``:
no talker, no audio output), loaded from the published layout (thinker + talker + token2wav) or a
thinker-only checkpoint alike; the processor's own ``apply_chat_template`` with
``load_audio_from_video=True`` so the audio track of every video is interleaved with its frames, and
``use_audio_in_video=True`` given to ``generate`` so the thinker's TMRoPE positions follow that
interleaving (the settings whose omission silently drops, or misplaces, audio in peers' results);
processor settings in ``processor_kwargs`` (frames sampled at ``fps``); greedy decoding
(``do_sample=False``) with ``max_new_tokens`` from the task, or ``max_tokens=`` when given. One
scene at a time (the docs' omni batch size), clips given as files (written once to the media
cache, :func:`.clips.spool_clip`). Prompt tokens are counted per run, and among them the audio and
video placeholder tokens the processor put in (the run card's ``stats``), so a run whose audio never
reached the model shows ``audio_tokens: 0``.

torch and transformers are imported when the backend is built, never at module import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tqdm.auto import tqdm

from ..core.constants import AUDIO_ONLY
from ..data.media import MediaError
from .base import (
    MODEL_FRAMES_FPS,
    MODEL_MAX_TOKENS,
    MODEL_MIN_SAFE_MAX_TOKENS,
    Backend,
    ClipLoader,
    Decoding,
    Generation,
    SceneBatch,
    SceneRequest,
)
from .clips import spool_clip
from .messages import parts_only, scene_messages

#: model_type (config.json) -> (thinker class, processor class) in ``transformers``: the published
#: layouts (thinker + talker + token2wav / code2wav, of which the thinker is loaded) and thinker-only
#: checkpoints (what a fine-tuning run of the thinker saves).
THINKERS: dict[str, tuple[str, str]] = {
    "qwen2_5_omni": ("Qwen2_5OmniThinkerForConditionalGeneration", "Qwen2_5OmniProcessor"),
    "qwen2_5_omni_thinker": ("Qwen2_5OmniThinkerForConditionalGeneration", "Qwen2_5OmniProcessor"),
    "qwen3_omni_moe": ("Qwen3OmniMoeThinkerForConditionalGeneration", "Qwen3OmniMoeProcessor"),
    "qwen3_omni_moe_thinker": ("Qwen3OmniMoeThinkerForConditionalGeneration", "Qwen3OmniMoeProcessor"),
}


class QwenOmniLocal(Backend):
    """A Qwen-Omni thinker on local hardware; see the module docstring."""

    name = "qwen-omni"

    def __init__(
        self,
        pretrained: str,
        *,
        revision: str | None = None,
        dtype: str = "auto",
        device_map: str = "auto",
        attn_implementation: str | None = None,
        fps: float = MODEL_FRAMES_FPS,
        use_audio_in_video: bool = True,
        max_tokens: int | None = None,
        history: str = "inline",
        progress: bool = True,
    ) -> None:
        try:
            import torch  # noqa: F401
            import transformers
        except ImportError as exc:
            from ..io.extras import install_hint

            raise ImportError(
                f"the local Qwen-Omni backend needs torch and transformers: {install_hint('torch')}"
            ) from exc
        config = transformers.AutoConfig.from_pretrained(pretrained, revision=revision)
        if config.model_type not in THINKERS:
            raise ValueError(
                f"{pretrained}: model_type {config.model_type!r} is not a Qwen-Omni model ({', '.join(THINKERS)})"
            )
        model_cls, processor_cls = (getattr(transformers, n) for n in THINKERS[config.model_type])
        load: dict[str, Any] = {"revision": revision, "dtype": dtype, "device_map": device_map}
        if attn_implementation:
            load["attn_implementation"] = attn_implementation
        self.model = model_cls.from_pretrained(pretrained, **load).eval()
        self.processor = processor_cls.from_pretrained(pretrained, revision=revision)
        self.pretrained, self.revision, self.model_type = pretrained, revision, config.model_type
        self.dtype, self.fps, self.use_audio_in_video = dtype, fps, use_audio_in_video
        self.max_tokens, self.history, self.progress = max_tokens, history, progress
        self._generation: dict[str, Any] = {}
        self.stats = {
            "scenes": 0,
            "errors": 0,
            "truncated": 0,
            "prompt_tokens": 0,
            "audio_tokens": 0,
            "video_tokens": 0,
        }
        eos = self.model.generation_config.eos_token_id
        #: Tokens that end an answer; one that reaches max_new_tokens on another was cut.
        self._end_tokens = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        tokenizer = self.processor.tokenizer
        self._token_ids = {
            kind: tokenizer.convert_tokens_to_ids(getattr(self.processor, f"{kind}_token"))
            for kind in ("audio", "video")
        }

    def generate_batch(self, batch: SceneBatch) -> list[Generation]:
        max_new = Decoding.of(batch.gen_kwargs, MODEL_MAX_TOKENS).with_max_tokens(self.max_tokens).max_tokens
        self._generation = {"do_sample": False, "max_new_tokens": max_new}
        out = []
        bar = tqdm(batch.requests, desc=f"model {self.pretrained}", unit="scene", disable=not self.progress)
        for i, request in enumerate(bar):
            out.append(self._generate_one(request, batch.load_clip, max_new))
            if batch.on_done is not None:
                batch.on_done(i, out[-1])
        return out

    def _generate_one(self, request: SceneRequest, load_clip: ClipLoader | None, max_new: int) -> Generation:
        import torch

        self.stats["scenes"] += 1
        try:
            conversation = self.conversation(request, load_clip)
            inputs = self.processor.apply_chat_template(
                conversation,
                load_audio_from_video=self.use_audio_in_video,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=True,
                return_tensors="pt",
                processor_kwargs={"fps": self.fps, "padding": True},
            ).to(self.model.device)
            self._count(inputs["input_ids"])
            with torch.inference_mode():
                ids = self.model.generate(
                    **inputs, use_audio_in_video=self.use_audio_in_video, do_sample=False, max_new_tokens=max_new
                )
            new = ids[:, inputs["input_ids"].shape[1] :]
            text = self.processor.batch_decode(new, skip_special_tokens=True, clean_up_tokenization_spaces=False)[0]
            truncated = new.shape[1] >= max_new and int(new[0, -1]) not in self._end_tokens
            self.stats["truncated"] += truncated
            return Generation(text, truncated=truncated)
        except MediaError as exc:
            self.stats["errors"] += 1
            return Generation.failed(f"media: {exc}")
        except RuntimeError as exc:  # CUDA out of memory and other per-scene failures
            self.stats["errors"] += 1
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            return Generation.failed(f"scene {request.scene_id}: {type(exc).__name__}: {exc}")

    def _count(self, input_ids: Any) -> None:
        """Prompt tokens of one scene, and the audio / video placeholders among them."""
        self.stats["prompt_tokens"] += int(input_ids.numel())
        for kind, token_id in self._token_ids.items():
            self.stats[f"{kind}_tokens"] += int((input_ids == token_id).sum())

    def conversation(self, request: SceneRequest, load_clip: ClipLoader | None) -> list[dict[str, Any]]:
        """The processor conversation: clips as file paths, every content as a list of parts."""
        kind = "audio" if request.modality == AUDIO_ONLY else "video"
        encode = lambda ref, clip: [{"type": kind, "path": str(spool_clip(clip, ref.sha256))}]  # noqa: E731
        return parts_only(scene_messages(request, load_clip, encode, self.history))

    def info(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.pretrained,
            "revision": self.revision,
            "model_type": self.model_type,
            "thinker_only": True,
            "dtype": self.dtype,
            "media": {
                "fps": self.fps,
                "use_audio_in_video": self.use_audio_in_video,
                "audio_sample_rate": getattr(getattr(self.processor, "feature_extractor", None), "sampling_rate", None),
            },
            "history": self.history,
            "generation": self._generation
            or {"do_sample": False, "max_new_tokens": self.max_tokens or MODEL_MAX_TOKENS},
            "stats": dict(self.stats),
        }

    def pitfalls(self) -> list[str]:
        out = []
        if self.stats["truncated"]:
            out.append(
                f"{self.stats['truncated']} answer(s) stopped at max_new_tokens="
                f"{self._generation.get('max_new_tokens')}: raise it (--model-args max_tokens=N)"
            )
        if not self.use_audio_in_video:
            out.append("use_audio_in_video=False: the audio track of audio-visual clips is dropped")
        if self._generation.get("max_new_tokens", self.max_tokens or MODEL_MAX_TOKENS) < MODEL_MIN_SAFE_MAX_TOKENS:
            out.append(f"max_new_tokens={self._generation.get('max_new_tokens')} may cut the JSON answer")
        return out

    def add_counts(self, counts: Mapping[str, Any]) -> None:
        for name, value in counts.items():
            self.stats[name] += value

    def close(self) -> None:
        del self.model


__all__ = ["THINKERS", "QwenOmniLocal"]
