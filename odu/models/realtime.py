"""GPT-Realtime (Table 3: GPT-Realtime-2, audio-only scenes) over the OpenAI Realtime API's WebSocket,
through the ``openai`` SDK's realtime client (optional extra ``odu-bench[realtime]``: ``websockets``).

One WebSocket session per scene, one response per session, text out:

1. ``session.update``: a ``realtime`` session answering in text (``output_modalities: ["text"]``),
   the App F.2 instruction as ``instructions``, input audio as ``audio/pcm`` at 24 kHz (the only
   PCM rate the API takes) and turn detection off, so nothing is committed or answered before we
   ask;
2. the App D.1 layout in order (:func:`.messages.chat_messages`, ``roles``): the turn labels and the
   closing instruction as ``user`` items of ``input_text``, each clip's audio decoded to 16-bit PCM
   mono at 24 kHz, sent by ``input_audio_buffer.append`` and committed into its own user item, and
   each preceding assistant reply as an ``assistant`` item of ``output_text``;
3. ``response.create``, then the ``response.output_text.delta`` events up to ``response.done``.

Each step waits for the server's acknowledgement (``session.updated``; ``conversation.item.added``
for each item, after ``input_audio_buffer.committed`` for a clip), so a refused event fails its
scene at once with the server's message. A session that fails (connection, ``server_error``, a failed
response) is retried whole under the retry policy of the toolkit's OpenAI client; a refused key or
model stops the run; anything else is the scene's inference error. The GA Realtime API has no
temperature: decoding is the model's own (``info()`` says so). The key is read from
``OPENAI_API_KEY`` and scrubbed from every message.

The WebSocket session itself comes from the client (:meth:`odu.transport.openai_client.OpenAIClient.realtime`),
the one module that touches the ``openai`` SDK.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.constants import AUDIO_ONLY
from ..core.prompts import ClipRef
from ..data.media import LazyClip, MediaError
from ..transport.openai_client import CallFailedError, OpenAIClient, RealtimeSocket, ServerRefusedError, TransientError
from .base import ClipLoader, Generation, SceneBatch, SceneRequest
from .messages import role_turns
from .remote import ModelStats, RemoteBackend

#: PCM input rate: "The PCM audio format. Only a 24kHz sample rate is supported" (openai-python
#: ``types/realtime/realtime_audio_formats_param.py``, from the API's OpenAPI spec).
REALTIME_SAMPLE_RATE = 24_000
#: Raw PCM bytes per ``input_audio_buffer.append`` (10 s). The API takes "up to a maximum of 15 MiB"
#: per event (``input_audio_buffer_append_event_param.py``); 10 s is 640 KB of base64, far below.
REALTIME_APPEND_BYTES = REALTIME_SAMPLE_RATE * 2 * 10
#: A commit of less audio is refused ("buffer too small. Expected at least 100ms of audio",
#: betalgo/openai#674); shorter clips are padded with silence to this length (counted in the stats).
REALTIME_MIN_COMMIT_S = 0.1
#: ``max_output_tokens`` takes "an integer between 1 and 4096 ... or ``inf``" (``realtime_session_create_request_param.py``).
REALTIME_MAX_OUTPUT_TOKENS = 4096
#: Error codes that no retry can fix: stop the run (invalid key, reported as an ``error`` event then
#: close code 3000: twilio-samples/speech-assistant-openai-realtime-api-python#4). The model code is
#: our assumption, by analogy; we could not verify which event the API sends for an unknown model.
REALTIME_FATAL_CODES = {"invalid_api_key": 401, "model_not_found": 404}


def pcm16(samples: np.ndarray) -> bytes:
    """Mono float samples in [-1, 1] as little-endian 16-bit PCM.

    >>> pcm16(np.array([0.0, 1.0, -1.0, 2.0], dtype=np.float32)).hex()
    '0000ff7f0180ff7f'
    """
    return (np.clip(samples, -1.0, 1.0) * 32767).round().astype("<i2").tobytes()


@dataclass
class RealtimeStats(ModelStats):
    """The backend's counters: a remote backend's (``requests``: sessions opened; ``prompt_tokens`` /
    ``completion_tokens``: the API's input / output tokens; ``media_bytes``: PCM sent), plus cut
    answers, input audio tokens and seconds, append events and padded clips."""

    input_audio_tokens: int = 0
    audio_seconds: float = 0.0
    append_events: int = 0
    padded_clips: int = 0

    ORDER = ModelStats.order_with(
        prompt_tokens="input_audio_tokens", completion_tokens="audio_seconds", media_bytes="append_events padded_clips"
    )


#: One conversation step: ("user", [texts]), ("assistant", text) or ("audio", PCM bytes).
Step = tuple[str, Any]


class RealtimeModel(RemoteBackend):
    """A GPT-Realtime model over the Realtime WebSocket, audio-only scenes; see the module docstring."""

    name = "realtime"
    role = "Realtime"
    default_url = "https://api.openai.com/v1"
    limit_name = "max_output_tokens"
    replicable = False  # one WebSocket session per scene, opened on one server
    client: OpenAIClient
    _stats: RealtimeStats

    def __init__(
        self,
        model: str,
        *,
        max_output_tokens: int | None = None,
        reasoning_effort: str | None = None,
        **server: Any,
    ) -> None:
        try:
            import websockets  # noqa: F401
        except ImportError:
            from ..io.extras import install_hint

            raise ValueError(f"the realtime backend needs websockets: {install_hint('realtime')}") from None
        super().__init__(model, RealtimeStats(), **server)
        if max_output_tokens is not None and not 1 <= max_output_tokens <= REALTIME_MAX_OUTPUT_TOKENS:
            raise ValueError(f"max_output_tokens in 1..{REALTIME_MAX_OUTPUT_TOKENS}")
        self.max_output_tokens = max_output_tokens
        self.reasoning_effort = reasoning_effort
        self._asked: Mapping[str, Any] = {}

    # --- public interface -------------------------------------------------------------------------

    def prepare(self, batch: SceneBatch) -> None:
        other = sorted({r.modality for r in batch.requests if r.modality != AUDIO_ONLY})
        if other:
            raise ValueError(
                f"the realtime backend answers audio-only scenes (GPT-Realtime takes no video; Table 3 has "
                f"no audio-visual row for it), got {', '.join(other)}: run the odu_ao tasks"
            )
        self._asked = batch.gen_kwargs

    def info(self) -> dict[str, Any]:
        return {
            **self.server_info(),
            "media": {
                "input_format": {"type": "audio/pcm", "rate": REALTIME_SAMPLE_RATE},
                "turn_detection": None,
                "layout": "roles (assistant replies as output_text items)",
            },
            "generation": {
                "output_modalities": ["text"],
                "max_output_tokens": self.output_limit(),
                "reasoning_effort": self.reasoning_effort,
                "decoding": "model default (the GA Realtime API has no temperature)",
            },
            "stats": self._stats.as_dict(RealtimeStats.ORDER),
        }

    def pitfalls(self) -> list[str]:
        out = []
        if self._asked.get("do_sample") or float(self._asked.get("temperature", 0.0) or 0.0) > 0:
            out.append("the task asked for sampling settings; the Realtime API takes none, so they were not applied")
        out += super().pitfalls()
        if self._stats.padded_clips:
            out.append(
                f"{self._stats.padded_clips} clip(s) shorter than {REALTIME_MIN_COMMIT_S * 1000:.0f} ms were "
                "padded with silence (the API refuses shorter commits)"
            )
        return out

    # --- the conversation (no network) -----------------------------------------------------------------

    def steps(self, request: SceneRequest, load_clip: ClipLoader | None) -> tuple[str, list[Step]]:
        """``(instructions, steps)`` of ``request``, its clips decoded to 24 kHz PCM (raises :class:`MediaError`)."""
        instructions, turns = role_turns(request, load_clip, lambda ref, clip: self._pcm(request, ref, clip))
        steps: list[Step] = []
        for role, items in turns:
            if role == "assistant":
                steps += [("assistant", text) for text in items]
                continue
            texts: list[str] = []
            for item in items:
                if isinstance(item, str):
                    texts.append(item)
                    continue
                if texts:
                    steps.append(("user", texts))
                    texts = []
                steps.append(("audio", item))
            if texts:
                steps.append(("user", texts))
        return instructions, steps

    def encode(self, request: SceneRequest, load_clip: ClipLoader | None) -> tuple[str, list[Step]]:
        return self.steps(request, load_clip)

    def _pcm(self, request: SceneRequest, ref: ClipRef, clip: LazyClip) -> bytes:
        try:
            samples = clip.audio(REALTIME_SAMPLE_RATE)
        except MediaError as exc:
            raise MediaError(f"scene {request.scene_id} clip {ref.id}: {exc}") from None
        minimum = round(REALTIME_MIN_COMMIT_S * REALTIME_SAMPLE_RATE)
        if len(samples) < minimum:
            samples = np.concatenate([samples, np.zeros(minimum - len(samples), dtype=np.float32)])
            self._stats.padded_clips += 1
        return pcm16(samples)

    def output_limit(self) -> int | str:
        asked = self.max_output_tokens or int(self._asked.get("max_gen_toks", REALTIME_MAX_OUTPUT_TOKENS))
        return asked if asked <= REALTIME_MAX_OUTPUT_TOKENS else "inf"

    def _session(self, instructions: str) -> dict[str, Any]:
        session: dict[str, Any] = {
            "type": "realtime",
            "output_modalities": ["text"],
            "instructions": instructions,
            "audio": {"input": {"format": {"type": "audio/pcm", "rate": REALTIME_SAMPLE_RATE}, "turn_detection": None}},
            "max_output_tokens": self.output_limit(),
        }
        if self.reasoning_effort:
            session["reasoning"] = {"effort": self.reasoning_effort}
        return session

    # --- the session ------------------------------------------------------------------------------------

    async def send(self, sdk: Any, encoded: Any) -> Generation:
        instructions, steps = encoded
        return Generation(await self.client.call(lambda: self._converse(instructions, steps)))

    async def _converse(self, instructions: str, steps: list[Step]) -> str:
        """One whole session for one scene: the answer text (raises the retry policy's exceptions)."""
        self._stats.requests += 1
        timeout = self.client.timeout
        try:
            return await asyncio.wait_for(self._talk(instructions, steps), timeout=timeout)
        except asyncio.TimeoutError:
            raise TransientError(f"no answer within {timeout:g} s") from None

    async def _talk(self, instructions: str, steps: list[Step]) -> str:
        async with self.client.realtime() as ws:
            await self._until(ws, "session.created")
            await ws.send({"type": "session.update", "session": self._session(instructions)})
            await self._until(ws, "session.updated")
            for kind, payload in steps:
                if kind == "audio":
                    await self._append_audio(ws, payload)
                    continue
                if kind == "assistant":
                    item = {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": payload}],
                    }
                else:
                    item = {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": t} for t in payload],
                    }
                await ws.send({"type": "conversation.item.create", "item": item})
                await self._until(ws, "conversation.item.added")
            await ws.send({"type": "response.create"})
            return await self._response(ws)

    async def _append_audio(self, ws: RealtimeSocket, pcm: bytes) -> None:
        for start in range(0, len(pcm), REALTIME_APPEND_BYTES):
            await ws.send(
                {
                    "type": "input_audio_buffer.append",
                    "audio": base64.b64encode(pcm[start : start + REALTIME_APPEND_BYTES]).decode("ascii"),
                }
            )
            self._stats.append_events += 1
        await ws.send({"type": "input_audio_buffer.commit"})
        await self._until(ws, "input_audio_buffer.committed")
        await self._until(ws, "conversation.item.added")  # the committed user item: acks stay in step
        self.count_media(pcm)
        self._stats.audio_seconds += len(pcm) / 2 / REALTIME_SAMPLE_RATE

    async def _until(self, ws: RealtimeSocket, wanted: str) -> dict[str, Any]:
        """The next ``wanted`` event, skipping others; an ``error`` event raises."""
        while True:
            event = await ws.recv()
            kind = event.get("type")
            if kind == "error":
                raise _event_failure(event.get("error") or {})
            if kind == wanted:
                return event

    async def _response(self, ws: RealtimeSocket) -> str:
        pieces: list[str] = []
        done_text: str | None = None
        while True:
            event = await ws.recv()
            kind = event.get("type")
            if kind == "error":
                raise _event_failure(event.get("error") or {})
            if kind == "response.output_text.delta":
                pieces.append(event.get("delta") or "")
            elif kind == "response.output_text.done":
                done_text = event.get("text")
            elif kind == "response.done":
                return self._finish(
                    event.get("response") or {}, done_text if done_text is not None else "".join(pieces)
                )

    def _finish(self, response: Mapping[str, Any], text: str) -> str:
        usage = response.get("usage") or {}
        self._stats.prompt_tokens += usage.get("input_tokens") or 0
        self._stats.completion_tokens += usage.get("output_tokens") or 0
        self._stats.input_audio_tokens += (usage.get("input_token_details") or {}).get("audio_tokens") or 0
        status = response.get("status")
        details = response.get("status_details") or {}
        if status == "completed":
            return text
        if status == "incomplete":
            self.count_truncated()
            return text
        error = details.get("error") or {}
        message = (
            f"response {status}: {error.get('type') or details.get('reason') or ''} {error.get('code') or ''}".strip()
        )
        if status == "cancelled" or error.get("type") == "server_error":
            raise TransientError(message)
        raise CallFailedError(message)


def _event_failure(error: Mapping[str, Any]) -> Exception:
    """The retry policy's exception for a Realtime ``error`` event."""
    code, kind = error.get("code") or "", error.get("type") or ""
    message = f"{kind} {code}: {error.get('message') or ''}".strip()
    if code in REALTIME_FATAL_CODES:
        return ServerRefusedError(REALTIME_FATAL_CODES[code], message)
    if kind == "server_error" or code == "rate_limit_exceeded":
        return TransientError(message)
    return CallFailedError(message)


__all__ = ["REALTIME_SAMPLE_RATE", "RealtimeModel", "RealtimeStats", "pcm16"]
