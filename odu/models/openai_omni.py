"""Omni models behind any OpenAI-compatible chat server (vLLM, SGLang, DashScope, Gemini's
OpenAI endpoint, OpenAI, ...), through the toolkit's one OpenAI client (:mod:`odu.openai_client`).

One chat call per scene, built from :func:`odu.prompts.build_chat` (App F.1 / F.2 instruction,
App D.1 turn layout; App D.2 ASR text for the text-only baseline) by :func:`.messages.chat_messages`:

* video as ``video_url`` (a ``data:`` URL, or ``file://`` with ``media_url="file"`` for servers that
  read local paths, e.g. vLLM with ``--allowed-local-media-path``), audio as ``input_audio``
  (WAV/MP3 base64; other codecs are decoded and sent as 16-bit WAV);
* servers that drop the audio track of a video: ``audio_in_video="separate"`` adds the track as an
  ``input_audio`` part right after the video (extracted with :mod:`odu.data.media`);
* servers that take images only: ``video_mode="frames"`` sends JPEG frames sampled at ``fps``
  (at most ``max_frames`` per clip), with the audio as a separate part;
* greedy decoding (temperature 0, no stop sequence unless the task sets one), ``max_tokens`` from
  the task's ``max_gen_toks``; ``extra_body`` passes server-specific fields (e.g. vLLM's
  ``{"mm_processor_kwargs": {"use_audio_in_video": true}}``); ``stream=True`` for servers that
  only stream (DashScope's Qwen-Omni).

Media is read only when a scene is actually sent, inside the concurrency gate, so memory holds at
most ``concurrency`` scenes' media. 429, 5xx, timeouts and connection errors are retried with
exponential backoff (``Retry-After`` honoured; the client's retry policy); a scene whose call still
fails, or whose media cannot be read, gets an inference error (:class:`.base.Generation`), never an
empty answer. 401 / 403 / 404 (wrong key, model or URL) stop the run at once. The API key is read
from an environment variable, sent only in the request header and scrubbed from every message.
"""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..constants import AUDIO_ONLY, AUDIO_VISUAL
from ..data.media import DEFAULT_AUDIO_SAMPLE_RATE, LazyClip, MediaError
from ..openai_client import (
    API_KEY_ENV,
    BACKOFF,
    RETRIES,
    CallFailedError,
    CallStats,
    OpenAIClient,
    ServerUnavailableError,
)
from ..prompts import ClipRef, Part
from .base import (
    MODEL_FRAMES_FPS,
    MODEL_MAX_TOKENS,
    MODEL_MIN_SAFE_MAX_TOKENS,
    Backend,
    ClipLoader,
    Generation,
    OnDone,
    SceneRequest,
)
from .batch import gather_scenes
from .clips import media_type, spool_clip
from .messages import HISTORY_LAYOUTS, chat_messages

MEDIA_URLS = ("data", "file")
VIDEO_MODES = ("video", "frames")
AUDIO_IN_VIDEO = ("native", "separate", "none")

#: Model calls in flight at once (``concurrency=`` model argument).
MODEL_CONCURRENCY = 4
#: Seconds before one model HTTP request is abandoned and retried; omni prefill of long video is slow.
MODEL_TIMEOUT_S = 600.0
#: Frames mode (servers that take images only): at most this many frames per clip (spread evenly).
MODEL_MAX_FRAMES = 64
#: JPEG quality (2 = best .. 31) of frames sent as images (FFmpeg ``qscale``).
MODEL_FRAME_JPEG_QSCALE = 3


class ModelUnavailableError(ServerUnavailableError):
    """The model server refuses every call (wrong key, model or URL); the message says which."""


@dataclass
class ModelStats(CallStats):
    """The backend's counters: the client's, plus scenes asked and media bytes sent."""

    scenes: int = 0
    media_bytes: int = 0

    #: Order of the counters in the run card's ``stats``.
    ORDER = (
        "scenes",
        "requests",
        "retries",
        "errors",
        "prompt_tokens",
        "completion_tokens",
        "media_bytes",
        "wall_time_s",
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def wav_bytes(samples: Any, sample_rate: int) -> bytes:
    """Mono float32 samples as a 16-bit PCM WAV file."""
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, samples, sample_rate, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def jpeg_bytes(frame: Any, qscale: int = MODEL_FRAME_JPEG_QSCALE) -> bytes:
    """One RGB uint8 frame (H, W, 3) as JPEG, encoded with PyAV's MJPEG encoder."""
    import av

    height, width = frame.shape[:2]
    codec = av.CodecContext.create("mjpeg", "w")
    codec.width, codec.height = width - width % 2, height - height % 2
    codec.pix_fmt = "yuvj420p"
    codec.time_base = Fraction(1, 1)
    codec.options = {"qscale": str(qscale)}
    codec.flags |= av.codec.context.Flags.qscale
    picture = av.VideoFrame.from_ndarray(frame[: codec.height, : codec.width], format="rgb24")
    packets = codec.encode(picture.reformat(format="yuvj420p")) + codec.encode(None)
    return b"".join(bytes(p) for p in packets)


class OpenAIOmni(Backend):
    """An omni model on an OpenAI-compatible chat server; see the module docstring."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = API_KEY_ENV,
        concurrency: int = MODEL_CONCURRENCY,
        timeout: float = MODEL_TIMEOUT_S,
        retries: int = RETRIES,
        max_tokens: int = MODEL_MAX_TOKENS,
        media_url: str = "data",
        video_mode: str = "video",
        audio_in_video: str | None = None,
        fps: float = MODEL_FRAMES_FPS,
        max_frames: int = MODEL_MAX_FRAMES,
        audio_sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE,
        history: str = "inline",
        stream: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        progress: bool = True,
        backoff: tuple[float, float, float] = BACKOFF,
    ) -> None:
        if not model:
            raise ValueError("the OpenAI-compatible backend needs a model name (model=...)")
        audio_in_video = audio_in_video or ("native" if video_mode == "video" else "separate")
        for value, allowed, what in (
            (media_url, MEDIA_URLS, "media_url"),
            (video_mode, VIDEO_MODES, "video_mode"),
            (audio_in_video, AUDIO_IN_VIDEO, "audio_in_video"),
            (history, HISTORY_LAYOUTS, "history"),
        ):
            if value not in allowed:
                raise ValueError(f"{what} must be one of {allowed}, got {value!r}")
        if video_mode == "frames" and audio_in_video == "native":
            raise ValueError(
                "video_mode=frames sends images, which carry no audio: use audio_in_video=separate or none"
            )
        if concurrency < 1 or retries < 0 or timeout <= 0 or max_tokens < 1 or fps <= 0 or max_frames < 1:
            raise ValueError("concurrency, max_tokens, max_frames >= 1; retries >= 0; timeout, fps > 0")
        self._stats = ModelStats()
        self.client = OpenAIClient(
            "model",
            model,
            base_url=base_url,
            api_key_env=api_key_env,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            stats=self._stats,
            unavailable=ModelUnavailableError,
        )
        self.model = model
        self.concurrency = concurrency
        self.max_tokens = max_tokens
        self.media_url = media_url
        self.video_mode = video_mode
        self.audio_in_video = audio_in_video
        self.fps = fps
        self.max_frames = max_frames
        self.audio_sample_rate = audio_sample_rate
        self.history = history
        self.stream = stream
        self.extra_body = dict(extra_body or {})
        self.progress = progress
        self._generation: dict[str, Any] = {}
        self._modalities: set[str] = set()

    # --- public interface -------------------------------------------------------------------------

    def generate(
        self,
        requests: Sequence[SceneRequest],
        load_clip: ClipLoader | None = None,
        gen_kwargs: Mapping[str, Any] | None = None,
        on_done: OnDone | None = None,
    ) -> list[Generation]:
        requests = list(requests)
        if not requests:
            return []
        options = self._options(gen_kwargs or {})
        self._generation = {k: v for k, v in options.items() if k not in ("model", "extra_body")}
        self._modalities.update(r.modality for r in requests)
        return self.client.run(lambda: self._generate_all(requests, load_clip, options, on_done))

    def info(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.model,
            "base_url": self.client.public_base_url,
            "api_key_env": self.client.api_key_env,
            "concurrency": self.concurrency,
            "timeout_s": self.client.timeout,
            "retries": self.client.retries,
            "media": {
                "media_url": self.media_url,
                "video_mode": self.video_mode,
                "audio_in_video": self.audio_in_video,
                "fps": self.fps if self.video_mode == "frames" else None,
                "max_frames": self.max_frames if self.video_mode == "frames" else None,
                "audio_sample_rate": self.audio_sample_rate,
            },
            "history": self.history,
            "stream": self.stream,
            "extra_body": self.extra_body,
            "generation": self._generation or {"temperature": 0.0, "max_tokens": self.max_tokens},
            "stats": self._stats.as_dict(ModelStats.ORDER),
        }

    def pitfalls(self) -> list[str]:
        out = []
        gen = self._generation
        if gen.get("temperature", 0.0) > 0 or gen.get("top_p", 1.0) < 1:
            out.append(
                f"sampling on (temperature={gen.get('temperature')}, top_p={gen.get('top_p', 1.0)}): "
                "outputs are not greedy, reruns differ"
            )
        if gen.get("stop"):
            out.append(f"stop sequences {gen['stop']!r} may cut the JSON answer")
        if gen.get("max_tokens", self.max_tokens) < MODEL_MIN_SAFE_MAX_TOKENS:
            out.append(f"max_tokens={gen.get('max_tokens')} may cut the JSON answer")
        if AUDIO_VISUAL in self._modalities or not self._modalities:
            if self.audio_in_video == "none":
                out.append("audio of audio-visual clips not sent (audio_in_video=none): the model sees video only")
            elif self.audio_in_video == "native" and "use_audio_in_video" not in repr(self.extra_body):
                out.append(
                    "audio inside the video is left to the server, and servers may drop it silently "
                    "(vLLM/SGLang Qwen-Omni need mm_processor_kwargs.use_audio_in_video=true in "
                    "extra_body); use audio_in_video=separate when unsure"
                )
        return out

    # --- internals --------------------------------------------------------------------------------

    def _options(self, gen_kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Chat-call options from lm-eval generation kwargs: greedy unless ``do_sample``."""
        sampling = bool(gen_kwargs.get("do_sample", False))
        temperature = float(gen_kwargs.get("temperature", 0.0)) if sampling else 0.0
        options: dict[str, Any] = {
            "model": self.model,
            "temperature": temperature,
            "max_tokens": int(gen_kwargs.get("max_gen_toks", gen_kwargs.get("max_tokens", self.max_tokens))),
        }
        if sampling and "top_p" in gen_kwargs:
            options["top_p"] = float(gen_kwargs["top_p"])
        until = gen_kwargs.get("until") or []
        stops = [until] if isinstance(until, str) else [s for s in until if s]
        if stops:
            options["stop"] = stops
        if self.extra_body:
            options["extra_body"] = self.extra_body
        return options

    async def _generate_all(
        self,
        requests: list[SceneRequest],
        load_clip: ClipLoader | None,
        options: dict[str, Any],
        on_done: OnDone | None,
    ) -> list[Generation]:
        client = self.client.async_sdk()
        try:
            return await gather_scenes(
                self.client,
                requests,
                lambda request: self._generate_one(client, request, load_clip, options),
                concurrency=self.concurrency,
                progress=self.progress,
                on_done=on_done,
            )
        finally:
            await client.close()

    async def _generate_one(
        self, client: Any, request: SceneRequest, load_clip: ClipLoader | None, options: dict[str, Any]
    ) -> Generation:
        self._stats.scenes += 1
        try:
            messages = await asyncio.to_thread(self.messages, request, load_clip)
        except MediaError as exc:
            self._stats.errors += 1
            return Generation.failed(f"media: {exc}")
        try:
            return Generation(await self._complete(client, {**options, "messages": messages}))
        except CallFailedError as exc:
            self._stats.errors += 1
            return Generation.failed(self.client.scrub(f"model call failed: {exc}"))

    def messages(self, request: SceneRequest, load_clip: ClipLoader | None) -> list[dict[str, Any]]:
        """The chat ``messages`` of ``request``, media loaded and encoded (raises :class:`MediaError`)."""

        def media(part: Part) -> list[dict[str, Any]]:
            assert part.clip is not None
            if load_clip is None:
                raise MediaError(f"scene {request.scene_id} clip {part.clip.id}: no media source given")
            return self._media_parts(request, part.clip, load_clip(request, part.clip))

        return chat_messages(request.chat(), media, self.history)

    def _media_parts(self, request: SceneRequest, ref: ClipRef, clip: LazyClip) -> list[dict[str, Any]]:
        where = f"scene {request.scene_id} clip {ref.id}"
        try:
            if request.modality == AUDIO_ONLY:
                return [self._audio_part(clip, ref, extract=False)]
            parts: list[dict[str, Any]] = []
            if self.video_mode == "video":
                parts.append({"type": "video_url", "video_url": {"url": self._url(clip, ref)}})
            else:
                for frame in clip.frames(fps=self.fps, max_frames=self.max_frames).frames:
                    data = jpeg_bytes(frame)
                    self._stats.media_bytes += len(data)
                    parts.append({"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + _b64(data)}})
            if self.audio_in_video == "separate":
                parts.append(self._audio_part(clip, ref, extract=True))
            return parts
        except MediaError as exc:
            raise MediaError(f"{where}: {exc}") from None

    def _url(self, clip: LazyClip, ref: ClipRef) -> str:
        if self.media_url == "file":
            return spool_clip(clip, ref.sha256).resolve().as_uri()
        data = clip.bytes
        self._stats.media_bytes += len(data)
        return f"data:{media_type(clip)[0]};base64,{_b64(data)}"

    def _audio_part(self, clip: LazyClip, ref: ClipRef, extract: bool) -> dict[str, Any]:
        """``input_audio`` (WAV/MP3 as they are; anything else, or a video's track, as 16-bit WAV)."""
        if self.media_url == "file" and not extract:
            return {"type": "audio_url", "audio_url": {"url": spool_clip(clip, ref.sha256).resolve().as_uri()}}
        mime = media_type(clip)[0]
        if not extract and mime in ("audio/wav", "audio/mpeg"):
            data, fmt = clip.bytes, "wav" if mime == "audio/wav" else "mp3"
        else:
            data, fmt = wav_bytes(clip.audio(self.audio_sample_rate), self.audio_sample_rate), "wav"
        self._stats.media_bytes += len(data)
        return {"type": "input_audio", "input_audio": {"data": _b64(data), "format": fmt}}

    async def _complete(self, client: Any, options: dict[str, Any]) -> str:
        """The reply text of one chat call, retrying transient failures; :class:`CallFailedError` else."""

        async def send() -> str:
            self._stats.requests += 1
            return await (self._streamed(client, options) if self.stream else self._single(client, options))

        return await self.client.call(send)

    async def _single(self, client: Any, options: dict[str, Any]) -> str:
        response = await client.chat.completions.create(**options)
        self._stats.count_usage(getattr(response, "usage", None))
        choices = getattr(response, "choices", None) or []
        return (choices[0].message.content or "") if choices else ""

    async def _streamed(self, client: Any, options: dict[str, Any]) -> str:
        stream = await client.chat.completions.create(**options, stream=True, stream_options={"include_usage": True})
        pieces = []
        async for chunk in stream:
            self._stats.count_usage(getattr(chunk, "usage", None))
            for choice in getattr(chunk, "choices", None) or []:
                if choice.delta is not None and choice.delta.content:
                    pieces.append(choice.delta.content)
        return "".join(pieces)


__all__ = [
    "AUDIO_IN_VIDEO",
    "MEDIA_URLS",
    "VIDEO_MODES",
    "ModelStats",
    "ModelUnavailableError",
    "OpenAIOmni",
    "jpeg_bytes",
    "wav_bytes",
]
