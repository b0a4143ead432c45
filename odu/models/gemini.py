"""Gemini models (Table 3: Gemini 3.1 Pro, 3.7 Flash, 3.5 Flash Lite) through Google's own
``google-genai`` SDK (optional extra ``odu-bench[gemini]``), not an OpenAI-compatible proxy.

One ``generateContent`` call per scene, laid out as App D.1 asks by
:func:`.messages.chat_messages` (``roles`` layout): the App F.1 / F.2 instruction as the
``systemInstruction``, the user turns (turn labels, the clips where they stand, the closing
instruction) as ``user`` contents and each preceding assistant reply as a ``model`` content between
them — the two roles the API knows.

Media (documented limits; the fake in ``tests/support/gemini_fake.py`` refuses what these refuse):

* a clip goes as ``inlineData`` while the whole request stays within :data:`GEMINI_INLINE_REQUEST_MB`;
  above it the largest clips are uploaded through the Files API (resumable upload), waited for
  until ``ACTIVE`` and sent as ``fileData``; uploads are shared by the scenes of one run and
  deleted at its end (they would expire after 48 h anyway);
* audio-visual clips are sent as the video files they are (Gemini reads a video's audio track
  itself); a container outside :data:`GEMINI_VIDEO_TYPES` is an inference error naming the clip;
* audio-only clips in :data:`GEMINI_AUDIO_TYPES` go as they are, anything else as 16-bit WAV.

Thinking: ``thinking_level`` (Gemini 3) or ``thinking_budget`` (Gemini 2.5), never both; unset,
the model's own default applies (the paper does not state one; ``docs/providers.md``). Decoding is
greedy unless the task samples; ``max_output_tokens`` overrides the task's ``max_gen_toks`` (thinking
tokens count against it). The SDK's own retries are off: every call goes through the toolkit's
retry policy, credential scrubbing and batch runner (:class:`GeminiClient`, an
:class:`odu.transport.openai_client.ApiClient` that knows Google's SDK). 401 / 403 / 404 and a rejected API key
stop the run; the key is read from ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` (the SDK's order) and
scrubbed from every message.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import io
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core.constants import AUDIO_ONLY
from ..core.prompts import ClipRef
from ..data.media import DEFAULT_AUDIO_SAMPLE_RATE, LazyClip, MediaError
from ..transport.openai_client import ApiClient, CallFailedError, ServerRefusedError, TransientError, status_failure
from .base import MODEL_MAX_TOKENS, ClipLoader, Decoding, Generation, SceneBatch, SceneRequest
from .clips import media_type, wav_bytes
from .messages import role_turns
from .remote import ModelStats, ModelUnavailableError, RemoteBackend

T = TypeVar("T")

#: Where the SDK looks for the key, in its order (``google.genai._api_client.get_env_api_key``).
GEMINI_API_KEY_ENVS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
#: The public endpoint (what the run card names when no ``base_url`` is given).
GEMINI_DEFAULT_URL = "https://generativelanguage.googleapis.com"
#: Largest request (base64 media + text) sent inline, in MB of 10^6 bytes. The audio and video
#: guides say "use the Files API when the total request size (including the files, text prompt,
#: system instructions, etc.) is larger than 20 MB" (https://ai.google.dev/gemini-api/docs/audio);
#: Google raised the inline limit to 100 MB in January 2026 "with varying limits based on data
#: types" (https://blog.google/innovation-and-ai/technology/developers-tools/gemini-api-new-file-limits),
#: a per-type table we could not read in full, so the default stays at the limit every model met.
GEMINI_INLINE_REQUEST_MB = 20.0
#: Audio MIME types the API documents (https://ai.google.dev/gemini-api/docs/audio#supported-formats).
GEMINI_AUDIO_TYPES = frozenset({"audio/wav", "audio/mp3", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"})
#: Our container names -> the API's spelling of the same type.
GEMINI_AUDIO_ALIASES = {"audio/mpeg": "audio/mp3"}
#: Video MIME types the API documents (https://ai.google.dev/gemini-api/docs/video-understanding#supported-formats).
GEMINI_VIDEO_TYPES = frozenset(
    {
        "video/mp4",
        "video/mpeg",
        "video/mov",
        "video/avi",
        "video/x-flv",
        "video/mpg",
        "video/webm",
        "video/wmv",
        "video/3gpp",
    }
)
#: ``thinkingLevel`` values (Gemini 3; https://ai.google.dev/gemini-api/docs/thinking#thinking-levels).
GEMINI_THINKING_LEVELS = ("minimal", "low", "medium", "high")
#: The levels of the Gemini families that take fewer (rule ``gemini.thinking-levels``, docs/providers.md): a
#: model name matching the pattern takes only these.
GEMINI_FAMILY_LEVELS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"gemini-3\.1-pro", re.IGNORECASE), ("low", "medium", "high")),
    (re.compile(r"gemini-3-pro", re.IGNORECASE), ("low", "high")),
)


def thinking_levels(model: str) -> tuple[str, ...]:
    """The ``thinkingLevel`` values ``model`` takes.

    >>> thinking_levels("gemini-3.1-pro-preview"), thinking_levels("gemini-3.7-flash")[0]
    (('low', 'medium', 'high'), 'minimal')
    """
    return next((levels for pattern, levels in GEMINI_FAMILY_LEVELS if pattern.search(model)), GEMINI_THINKING_LEVELS)


#: Seconds between ``files.get`` polls while an upload is PROCESSING, and the most to wait in all.
GEMINI_FILE_POLL_S = 1.0
GEMINI_FILE_WAIT_S = 600.0


@dataclass
class GeminiStats(ModelStats):
    """The backend's counters: a remote backend's (``requests``: ``generateContent`` calls), plus
    Files API calls, cut answers, thinking tokens and media sent inline or uploaded."""

    file_requests: int = 0
    thoughts_tokens: int = 0
    inline_bytes: int = 0
    uploaded_files: int = 0
    uploaded_bytes: int = 0

    ORDER = ModelStats.order_with(
        requests="file_requests",
        completion_tokens="thoughts_tokens",
        media_bytes="inline_bytes uploaded_files uploaded_bytes",
    )


@dataclass(frozen=True)
class GeminiMedia:
    """One clip as it will be sent: MIME type and bytes (``sha256`` of those bytes keys uploads)."""

    mime: str
    data: bytes
    sha256: str

    @property
    def inline_size(self) -> int:
        """Bytes it adds to a request inline (base64)."""
        return 4 * ((len(self.data) + 2) // 3)


#: One content of the request: role ("user" / "model") and its items (text or media), in order.
GeminiTurn = tuple[str, list["str | GeminiMedia"]]


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Connection failures of the HTTP clients the SDK may use (aiohttp, httpx2)."""
    errors: list[type[BaseException]] = [OSError, asyncio.TimeoutError]
    try:
        import aiohttp

        errors.append(aiohttp.ClientError)
    except ImportError:
        pass
    try:
        import httpx2

        errors.append(httpx2.TransportError)
    except ImportError:
        pass
    return tuple(errors)


class GeminiClient(ApiClient):
    """The toolkit's client (key, scrubbing, retry policy, batch runner) over the ``google-genai`` SDK."""

    default_server = GEMINI_DEFAULT_URL

    def classify(self, exc: Exception) -> Exception | None:
        """The SDK's failures: API errors by status (a rejected key too), connection failures and
        undecodable bodies (``ValueError``) retried."""
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            message = f"{exc.status or ''} {exc.message or ''}".strip()
            if "API_KEY_INVALID" in str(exc.details):
                # A wrong key is HTTP 400 INVALID_ARGUMENT with reason API_KEY_INVALID, not 401
                # (reports: google-gemini/gemini-cli#25198, cequence-io/openai-scala-client#109).
                return ServerRefusedError(exc.code, message)
            return status_failure(exc.code, message)
        if isinstance(exc, (*_transport_errors(), ValueError)):
            return TransientError(f"{type(exc).__name__}: {exc}")
        return None

    def aio_sdk(self) -> Any:
        """A fresh async SDK client for one batch (its own retries off; close it with ``aclose()``)."""
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            base_url=self.base_url,
            timeout=int(self.timeout * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),  # retries are the client's
        )
        return genai.Client(api_key=self._api_key, http_options=options).aio


class GeminiModel(RemoteBackend):
    """A Gemini model through the ``google-genai`` SDK; see the module docstring."""

    name = "gemini"
    client_type = GeminiClient
    role = "Gemini"
    key_envs = GEMINI_API_KEY_ENVS
    default_url = GEMINI_DEFAULT_URL
    limit_name = "max_output_tokens"
    replicable = False  # the google-genai SDK sends its own requests: one server
    truncation_advice = " (thinking tokens count against it): raise max_output_tokens or lower the thinking setting"
    client: GeminiClient
    _stats: GeminiStats

    def __init__(
        self,
        model: str,
        *,
        max_output_tokens: int | None = None,
        thinking_level: str | None = None,
        thinking_budget: int | None = None,
        inline_limit_mb: float = GEMINI_INLINE_REQUEST_MB,
        audio_sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE,
        **server: Any,
    ) -> None:
        try:
            import google.genai  # noqa: F401
        except ImportError:
            from ..io.extras import install_hint

            raise ValueError(f"the gemini backend needs the google-genai SDK: {install_hint('gemini')}") from None
        super().__init__(model, GeminiStats(), **server)
        if thinking_level is not None and thinking_budget is not None:
            # "You cannot use both thinking_level and thinking_budget in the same request; doing so
            # returns a 400 error" (https://ai.google.dev/gemini-api/docs/gemini-3).
            raise ValueError("give thinking_level (Gemini 3) or thinking_budget (Gemini 2.5), not both")
        if thinking_level is not None:
            thinking_level = str(thinking_level).lower()
            if thinking_level not in GEMINI_THINKING_LEVELS:
                raise ValueError(f"thinking_level must be one of {GEMINI_THINKING_LEVELS}, got {thinking_level!r}")
            if thinking_level not in thinking_levels(model):
                raise ValueError(
                    f"{model}: thinking_level={thinking_level} is refused by this model, which takes "
                    f"{', '.join(thinking_levels(model))} (rule gemini.thinking-levels, docs/providers.md)"
                )
            if model.startswith("gemini-2"):
                raise ValueError(
                    f"{model}: Gemini 2.5 models take thinking_budget, not thinking_level "
                    "(https://ai.google.dev/gemini-api/docs/thinking)"
                )
        if inline_limit_mb <= 0 or (max_output_tokens is not None and max_output_tokens < 1):
            raise ValueError("max_output_tokens >= 1; inline_limit_mb > 0")
        self.max_output_tokens = max_output_tokens
        self.thinking_level = thinking_level
        self.thinking_budget = None if thinking_budget is None else int(thinking_budget)
        self.inline_limit = int(inline_limit_mb * 1_000_000)
        self.audio_sample_rate = audio_sample_rate
        self._decoding = Decoding.of({}, MODEL_MAX_TOKENS).with_max_tokens(max_output_tokens)
        self._uploads: dict[str, asyncio.Task[Any]] = {}

    # --- public interface -------------------------------------------------------------------------

    def prepare(self, batch: SceneBatch) -> None:
        self._decoding = Decoding.of(batch.gen_kwargs, MODEL_MAX_TOKENS).with_max_tokens(self.max_output_tokens)

    def info(self) -> dict[str, Any]:
        return {
            **self.server_info(),
            "media": {
                "inline_limit_mb": self.inline_limit / 1_000_000,
                "audio_sample_rate": self.audio_sample_rate,
                "layout": "roles (assistant replies as model contents)",
            },
            "thinking": self._thinking() or "model default",
            "generation": self._generation_config(),
            "stats": self._stats.as_dict(GeminiStats.ORDER),
        }

    def pitfalls(self) -> list[str]:
        return self._decoding.pitfalls(self.limit_name) + super().pitfalls()

    def output_limit(self) -> int:
        return self._decoding.max_tokens

    # --- request layout (no network) ----------------------------------------------------------------

    def layout(self, request: SceneRequest, load_clip: ClipLoader | None) -> tuple[str, list[GeminiTurn]]:
        """``(system instruction, contents)`` of ``request`` with its media loaded (raises :class:`MediaError`)."""
        system, turns = role_turns(request, load_clip, lambda ref, clip: self._media(request, ref, clip))
        return system, [("model" if role == "assistant" else "user", items) for role, items in turns]

    def encode(self, request: SceneRequest, load_clip: ClipLoader | None) -> tuple[str, list[GeminiTurn]]:
        return self.layout(request, load_clip)

    def _media(self, request: SceneRequest, ref: ClipRef, clip: LazyClip) -> GeminiMedia:
        mime = media_type(clip)[0]
        if request.modality == AUDIO_ONLY:
            mime = GEMINI_AUDIO_ALIASES.get(mime, mime)
            if mime in GEMINI_AUDIO_TYPES:
                data = clip.bytes
            else:
                data, mime = wav_bytes(clip, self.audio_sample_rate), "audio/wav"
        elif mime in GEMINI_VIDEO_TYPES:
            data = clip.bytes
        else:
            raise MediaError(
                f"scene {request.scene_id} clip {ref.id}: {mime} is not a video type Gemini documents "
                f"({', '.join(sorted(GEMINI_VIDEO_TYPES))})"
            )
        return GeminiMedia(mime, data, hashlib.sha256(data).hexdigest())

    def _generation_config(self) -> dict[str, Any]:
        """``generationConfig`` fields of the task's generation settings."""
        return {**self._decoding.fields("max_output_tokens", "stop_sequences"), "candidate_count": 1}

    def _thinking(self) -> dict[str, Any]:
        if self.thinking_level is not None:
            return {"thinking_level": self.thinking_level}
        if self.thinking_budget is not None:
            return {"thinking_budget": self.thinking_budget}
        return {}

    # --- calls ---------------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[Any]:
        """The batch's SDK client and request config; the batch's uploads are deleted at its end."""
        from google.genai import types

        client = self.client.aio_sdk()
        thinking = types.ThinkingConfig(**self._thinking()) if self._thinking() else None
        config = types.GenerateContentConfig(**self._generation_config(), thinking_config=thinking)
        self._uploads = {}
        try:
            yield client, config
        finally:
            await self._delete_uploads(client)
            await client.aclose()

    async def send(self, sdk: Any, encoded: Any) -> Generation:
        (client, config), (system, turns) = sdk, encoded
        contents = await self._contents(client, system, turns)
        call_config = config.model_copy(update={"system_instruction": system})
        response = await self._call(
            lambda: client.models.generate_content(model=self.model, contents=contents, config=call_config),
            counter="requests",
        )
        return self._read(response)

    async def _contents(self, client: Any, system: str, turns: list[GeminiTurn]) -> list[Any]:
        """SDK contents of ``turns``: media inline while the request stays within the inline limit,
        the largest clips uploaded through the Files API beyond it."""
        from google.genai import types

        media = [x for _, items in turns for x in items if isinstance(x, GeminiMedia)]
        size = len(system.encode()) + sum(len(x.encode()) for _, items in turns for x in items if isinstance(x, str))
        size += sum(m.inline_size for m in media)
        upload: set[str] = set()
        for m in sorted(media, key=lambda m: -len(m.data)):
            if size <= self.inline_limit:
                break
            upload.add(m.sha256)
            size -= m.inline_size
        files = {sha: await self._uploaded(client, next(m for m in media if m.sha256 == sha)) for sha in upload}

        def part(item: str | GeminiMedia) -> Any:
            if isinstance(item, str):
                return types.Part.from_text(text=item)
            self.count_media(item.data)
            if item.sha256 in files:
                return types.Part.from_uri(file_uri=files[item.sha256].uri, mime_type=item.mime)
            self._stats.inline_bytes += len(item.data)
            return types.Part.from_bytes(data=item.data, mime_type=item.mime)

        return [types.Content(role=role, parts=[part(x) for x in items]) for role, items in turns]

    async def _uploaded(self, client: Any, media: GeminiMedia) -> Any:
        """The ACTIVE uploaded file holding ``media`` (uploaded once per run, shared by scenes)."""
        task = self._uploads.get(media.sha256)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = asyncio.ensure_future(self._upload(client, media))
            self._uploads[media.sha256] = task
        return await asyncio.shield(task)

    async def _upload(self, client: Any, media: GeminiMedia) -> Any:
        from google.genai import types

        config = types.UploadFileConfig(mime_type=media.mime, display_name=f"odu-{media.sha256[:16]}")
        file = await self._call(
            lambda: client.files.upload(file=io.BytesIO(media.data), config=config), counter="file_requests"
        )
        self._stats.uploaded_files += 1
        self._stats.uploaded_bytes += len(media.data)
        # "Verify the file is ACTIVE before using it" (https://ai.google.dev/gemini-api/docs/video-understanding).
        deadline = time.monotonic() + GEMINI_FILE_WAIT_S
        while str(getattr(file.state, "value", file.state)) == "PROCESSING" and time.monotonic() < deadline:
            await asyncio.sleep(GEMINI_FILE_POLL_S)
            file = await self._call(functools.partial(client.files.get, name=file.name), counter="file_requests")
        state = str(getattr(file.state, "value", file.state))
        if state != "ACTIVE":
            raise CallFailedError(
                f"uploaded file {file.name} is {state}, not ACTIVE"
                + (f": {file.error.message}" if getattr(file, "error", None) else "")
            )
        return file

    async def _delete_uploads(self, client: Any) -> None:
        for task in self._uploads.values():
            if task.done() and not task.cancelled() and task.exception() is None:
                delete = functools.partial(client.files.delete, name=task.result().name)
                try:
                    await self._call(delete, counter="file_requests")
                except (CallFailedError, ModelUnavailableError):
                    pass  # expires after 48 h anyway (https://ai.google.dev/gemini-api/docs/files)
        self._uploads = {}

    async def _call(self, call: Callable[[], Awaitable[T]], counter: str) -> T:
        """One SDK call under the client's retry policy, each attempt counted in ``counter``;
        :class:`ModelUnavailableError` on a refused key, model or URL."""

        async def attempt() -> T:
            setattr(self._stats, counter, getattr(self._stats, counter) + 1)
            return await call()

        return await self.client.call(attempt)

    def _read(self, response: Any) -> Generation:
        """The answer text of a ``generateContent`` response, or why there is none."""
        usage = getattr(response, "usage_metadata", None)
        if usage is not None:
            self._stats.prompt_tokens += usage.prompt_token_count or 0
            self._stats.completion_tokens += usage.candidates_token_count or 0
            self._stats.thoughts_tokens += usage.thoughts_token_count or 0
        candidates = response.candidates or []
        if not candidates:
            feedback = getattr(response, "prompt_feedback", None)
            reason = getattr(getattr(feedback, "block_reason", None), "value", None) or "no reason given"
            return Generation.failed(f"no answer candidate (prompt blocked: {reason})")
        candidate = candidates[0]
        finish = str(getattr(candidate.finish_reason, "value", candidate.finish_reason) or "")
        parts = (candidate.content.parts or []) if candidate.content is not None else []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if finish == "MAX_TOKENS":
            self.count_truncated()
            if not text:
                return Generation.failed(
                    f"no answer text before max_output_tokens={self._decoding.max_tokens} "
                    "(thinking tokens count against it)"
                )
        elif finish not in ("STOP", "") and not text:
            return Generation.failed(f"no answer text (finish reason {finish})")
        return Generation(text)


__all__ = [
    "GEMINI_API_KEY_ENVS",
    "GEMINI_AUDIO_TYPES",
    "GEMINI_FAMILY_LEVELS",
    "GEMINI_INLINE_REQUEST_MB",
    "GEMINI_VIDEO_TYPES",
    "GeminiMedia",
    "GeminiModel",
    "thinking_levels",
]
