"""Omni models behind any OpenAI-compatible chat server (vLLM, SGLang, DashScope, Gemini's
OpenAI endpoint, OpenAI, ...), through the toolkit's one OpenAI client (:mod:`odu.openai_client`).

One chat call per scene, built from :func:`odu.prompts.build_chat` (App F.1 / F.2 instruction,
App D.1 turn layout; App D.2 ASR text for the text-only baseline) by :func:`.messages.scene_messages`:

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

Media is read only when a scene is actually sent (:class:`.remote.RemoteBackend`: concurrency,
inference errors). 429, 5xx, timeouts and connection errors are retried with exponential backoff
(``Retry-After`` honoured; the client's retry policy); 401 / 403 / 404 (wrong key, model or URL)
stop the run at once. The API key is read from an environment variable, sent only in the request
header and scrubbed from every message.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import AsyncIterator, Mapping
from fractions import Fraction
from typing import Any

from ..constants import AUDIO_ONLY, AUDIO_VISUAL
from ..data.media import DEFAULT_AUDIO_SAMPLE_RATE, LazyClip, MediaError
from ..openai_client import OpenAIClient
from ..prompts import ClipRef
from .base import MODEL_FRAMES_FPS, MODEL_MAX_TOKENS, ClipLoader, Decoding, Generation, SceneBatch, SceneRequest
from .clips import media_type, spool_clip, wav_bytes
from .messages import HISTORY_LAYOUTS, scene_messages
from .remote import ModelStats, RemoteBackend

MEDIA_URLS = ("data", "file")
VIDEO_MODES = ("video", "frames")
AUDIO_IN_VIDEO = ("native", "separate", "none")

#: Frames mode (servers that take images only): at most this many frames per clip (spread evenly).
MODEL_MAX_FRAMES = 64
#: JPEG quality (2 = best .. 31) of frames sent as images (FFmpeg ``qscale``).
MODEL_FRAME_JPEG_QSCALE = 3


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


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


class OpenAIOmni(RemoteBackend):
    """An omni model on an OpenAI-compatible chat server; see the module docstring."""

    name = "openai"
    client: OpenAIClient

    def __init__(
        self,
        model: str,
        *,
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
        **server: Any,
    ) -> None:
        super().__init__(model, ModelStats(), **server)
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
        if max_tokens < 1 or fps <= 0 or max_frames < 1:
            raise ValueError("max_tokens, max_frames >= 1; fps > 0")
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
        self._decoding = Decoding.of({}, max_tokens)
        self._asked = False
        self._modalities: set[str] = set()

    # --- public interface -------------------------------------------------------------------------

    def prepare(self, batch: SceneBatch) -> None:
        self._decoding = Decoding.of(batch.gen_kwargs, self.max_tokens)
        self._asked = True
        self._modalities.update(r.modality for r in batch.requests)

    def info(self) -> dict[str, Any]:
        generation = self._decoding.fields("max_tokens", "stop") if self._asked else None
        return {
            **self.server_info(),
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
            "generation": generation or {"temperature": 0.0, "max_tokens": self.max_tokens},
            "stats": self._stats.as_dict(ModelStats.ORDER),
        }

    def pitfalls(self) -> list[str]:
        out = self._decoding.pitfalls(self.limit_name) + super().pitfalls()
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

    def messages(self, request: SceneRequest, load_clip: ClipLoader | None) -> list[dict[str, Any]]:
        """The chat ``messages`` of ``request``, media loaded and encoded (raises :class:`MediaError`)."""
        return scene_messages(request, load_clip, lambda ref, clip: self._media_parts(request, ref, clip), self.history)

    def output_limit(self) -> int:
        return self._decoding.max_tokens

    # --- one scene ------------------------------------------------------------------------------

    def encode(self, request: SceneRequest, load_clip: ClipLoader | None) -> list[dict[str, Any]]:
        return self.messages(request, load_clip)

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[Any]:
        sdk = self.client.async_sdk()
        try:
            yield sdk
        finally:
            await sdk.close()

    async def probe(self, sdk: Any, text: str, max_tokens: int) -> Generation:
        """One text-only call in this backend's request shape, answering at most ``max_tokens``
        (:mod:`odu.server_check`, before the first scene); the batch's settings are kept."""
        saved, self._decoding = self._decoding, Decoding.of({}, max_tokens)
        try:
            return await self.send(sdk, [{"role": "user", "content": text}])
        finally:
            self._decoding = saved

    async def send(self, sdk: Any, encoded: Any) -> Generation:
        options: dict[str, Any] = {"model": self.model, **self._decoding.fields("max_tokens", "stop")}
        if self.extra_body:
            options["extra_body"] = self.extra_body
        return Generation(await self._complete(sdk, {**options, "messages": encoded}))

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
                    data = self.count_media(jpeg_bytes(frame))
                    parts.append({"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + _b64(data)}})
            if self.audio_in_video == "separate":
                parts.append(self._audio_part(clip, ref, extract=True))
            return parts
        except MediaError as exc:
            raise MediaError(f"{where}: {exc}") from None

    def _url(self, clip: LazyClip, ref: ClipRef) -> str:
        if self.media_url == "file":
            return spool_clip(clip, ref.sha256).resolve().as_uri()
        return f"data:{media_type(clip)[0]};base64,{_b64(self.count_media(clip.bytes))}"

    def _audio_part(self, clip: LazyClip, ref: ClipRef, extract: bool) -> dict[str, Any]:
        """``input_audio`` (WAV/MP3 as they are; anything else, or a video's track, as 16-bit WAV)."""
        if self.media_url == "file" and not extract:
            return {"type": "audio_url", "audio_url": {"url": spool_clip(clip, ref.sha256).resolve().as_uri()}}
        mime = media_type(clip)[0]
        if not extract and mime in ("audio/wav", "audio/mpeg"):
            data, fmt = clip.bytes, "wav" if mime == "audio/wav" else "mp3"
        else:
            data, fmt = wav_bytes(clip, self.audio_sample_rate), "wav"
        return {"type": "input_audio", "input_audio": {"data": _b64(self.count_media(data)), "format": fmt}}

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
        self._count_finish(choices[0] if choices else None)
        return (choices[0].message.content or "") if choices else ""

    async def _streamed(self, client: Any, options: dict[str, Any]) -> str:
        stream = await client.chat.completions.create(**options, stream=True, stream_options={"include_usage": True})
        pieces = []
        async for chunk in stream:
            self._stats.count_usage(getattr(chunk, "usage", None))
            for choice in getattr(chunk, "choices", None) or []:
                self._count_finish(choice)
                if choice.delta is not None and choice.delta.content:
                    pieces.append(choice.delta.content)
        return "".join(pieces)

    def _count_finish(self, choice: Any) -> None:
        """An answer the server cut at ``max_tokens`` (``finish_reason: "length"``) is counted."""
        if getattr(choice, "finish_reason", None) == "length":
            self._stats.truncated += 1


__all__ = [
    "AUDIO_IN_VIDEO",
    "MEDIA_URLS",
    "VIDEO_MODES",
    "OpenAIOmni",
    "jpeg_bytes",
]
