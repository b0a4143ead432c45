"""A loopback fake of the OpenAI Realtime API (GA interface) over real WebSockets (``websockets``),
as strict as the real one where its reference or its users' reports say what it refuses.

Reached with ``AsyncOpenAI(base_url=fake.base_url).realtime.connect(model=...)``, which dials
``ws://127.0.0.1:PORT/v1/realtime?model=...``. The event shapes are those of openai-python's
``types/realtime`` (generated from the API's OpenAPI spec; the GA names: ``conversation.item.added``,
``response.output_text.delta``, ``output_modalities``, ``audio.input.format``). Each session is
recorded (:attr:`RealtimeFake.sessions`: its configuration, items and responses).

Refusals — an ``error`` event (``{"type": "error", "error": {"type", "code", "message", "param"}}``)
unless said otherwise:

* no ``Authorization`` header: the handshake is answered HTTP 401 (openai/openai-agents-python#3133);
  a wrong key: the handshake succeeds, then an ``invalid_api_key`` error event and close code 3000
  (twilio-samples/speech-assistant-openai-realtime-api-python#4, openai/openai-realtime-api-beta#2);
  an unknown model: ``model_not_found`` then close (assumed by analogy, not verified);
* ``session.update`` without ``session.type: "realtime"`` or with a field the GA session does not
  have (the beta ``modalities``, ``input_audio_format``, top-level ``turn_detection``, ``voice``,
  ``temperature`` ...; the GA fields are those of ``RealtimeSessionCreateRequestParam``), both
  output modalities at once ("It is not possible to request both `text` and `audio`"), ``audio/pcm``
  at a rate other than 24000 ("Only a 24kHz sample rate is supported"), ``max_output_tokens``
  outside 1..4096 / ``"inf"``;
* ``conversation.item.create`` with a content type its role does not take (user: ``input_text``,
  ``input_audio``, ``input_image``; assistant: ``output_text``, ``output_audio``; system:
  ``input_text`` — the ``Content`` literals of the ``...UserMessageParam`` / ``...AssistantMessageParam``
  / ``...SystemMessageParam`` types), or without its text;
* ``input_audio_buffer.append`` whose audio is not base64 or whose event exceeds 15 MiB ("up to a
  maximum of 15 MiB", ``InputAudioBufferAppendEventParam``);
* ``input_audio_buffer.commit`` of an empty buffer or of less than 100 ms of audio
  (``input_audio_buffer_commit_empty``: the reference says the commit "will produce an error if the
  input audio buffer is empty"; the 100 ms floor is the API's message in betalgo/openai#674 and
  openai/openai-agents-js#748);
* an unknown client event type.

Behaviour that a wrong client would trip on: sessions start with ``output_modalities: ["audio"]``
(audio deltas and a transcript, no ``output_text`` events) and server VAD on, which answers every
committed buffer by itself (``create_response``) — a client that does not turn it off gets more than
one response per session (:attr:`Session.responses`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import json
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from support.omni_fakes import SampleScenes, reference_output

#: Fields of a GA ``realtime`` session (openai-python ``RealtimeSessionCreateRequestParam``).
GA_SESSION_FIELDS = {
    "type",
    "model",
    "output_modalities",
    "instructions",
    "audio",
    "include",
    "max_output_tokens",
    "prompt",
    "reasoning",
    "tool_choice",
    "tools",
    "tracing",
    "truncation",
    "parallel_tool_calls",
}
CONTENT_TYPES = {
    "user": {"input_text", "input_audio", "input_image"},
    "assistant": {"output_text", "output_audio"},
    "system": {"input_text"},
}
CLIENT_EVENTS = {
    "session.update",
    "input_audio_buffer.append",
    "input_audio_buffer.commit",
    "input_audio_buffer.clear",
    "conversation.item.create",
    "conversation.item.retrieve",
    "conversation.item.truncate",
    "conversation.item.delete",
    "response.create",
    "response.cancel",
    "output_audio_buffer.clear",
}
SAMPLE_RATE = 24_000
MAX_EVENT_BYTES = 15 * 1024 * 1024
MIN_COMMIT_BYTES = SAMPLE_RATE * 2 // 10  # 100 ms of 16-bit PCM


class EventError(Exception):
    def __init__(self, code: str, message: str, param: str | None = None, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.body = {"type": kind, "code": code, "message": message, "param": param}


def _pcm(data: bytes) -> bytes:
    """A clip's audio as the backend commits it: 16-bit PCM mono at 24 kHz."""
    from odu.data.media import LazyClip
    from odu.models.realtime import pcm16

    return pcm16(LazyClip(data).audio(SAMPLE_RATE))


@dataclass
class Session:
    """One WebSocket session as the fake saw it."""

    path: str
    headers: dict[str, str]
    config: dict[str, Any] = field(
        default_factory=lambda: {
            "type": "realtime",
            "output_modalities": ["audio"],
            "instructions": "",
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": SAMPLE_RATE},
                    "turn_detection": {"type": "server_vad", "create_response": True},
                }
            },
            "max_output_tokens": "inf",
        }
    )
    items: list[dict[str, Any]] = field(default_factory=list)
    audio: list[bytes] = field(default_factory=list)  # committed buffers, in order
    buffer: bytes = b""
    events: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    responses: int = 0


class RealtimeFake(SampleScenes):
    """The Realtime API for ``model`` with ``key``, answering audio-only scenes of ``dataset_dir``.

    ``script`` maps a scene id to ``"garbage"`` (prose, no JSON) or ``"error"`` (every response fails
    with a ``server_error``); :meth:`inject` queues one-off faults for the next responses:
    ``"server_error"`` (a failed response), ``"drop"`` (the connection closes without an answer) or
    ``"huge"`` (one 17 MiB event, past the client's cap on a message).
    """

    def __init__(
        self,
        dataset_dir: Path | None,
        *,
        key: str,
        model: str = "gpt-realtime-2",
        script: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(dataset_dir, ["ao"], sent=_pcm)  # final clips as the committed 24 kHz PCM
        self.key = key
        self.model = model
        self.script = dict(script or {})
        self.sessions: list[Session] = []
        self._faults: deque[str] = deque()
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Future[None] | None = None
        self._port = 0

    # --- lifecycle --------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the ``base_url`` of an OpenAI client (the SDK dials ``ws://.../v1/realtime``)."""
        return f"http://127.0.0.1:{self._port}/v1"

    def inject(self, *faults: str) -> None:
        self._faults.extend(faults)

    def __enter__(self) -> RealtimeFake:
        ready = threading.Event()

        async def main() -> None:
            from websockets.asyncio.server import serve

            self._stop = asyncio.get_running_loop().create_future()
            async with serve(self._handle, "127.0.0.1", 0, process_request=self._handshake, max_size=None) as server:
                self._port = server.sockets[0].getsockname()[1]
                ready.set()
                await self._stop

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(main())
            self._loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("realtime fake did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(lambda: self._stop.done() or self._stop.set_result(None))
        if self._thread is not None:
            self._thread.join(10)

    # --- connection -------------------------------------------------------------------------------------

    def _handshake(self, connection: Any, request: Any) -> Any:
        if urlsplit(request.path).path != "/v1/realtime":
            return connection.respond(404, "Not found\n")
        if "Authorization" not in request.headers:
            return connection.respond(401, "Missing bearer or basic authentication in header\n")
        return None

    async def _send(self, ws: Any, event: dict[str, Any]) -> None:
        await ws.send(json.dumps({"event_id": f"event_{next(self._ids)}", **event}))

    async def _handle(self, ws: Any) -> None:
        request = ws.request
        session = Session(request.path, {k.lower(): v for k, v in request.headers.raw_items()})
        self.sessions.append(session)
        query = parse_qs(urlsplit(request.path).query)
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            await self._send(
                ws,
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                        "param": None,
                        "message": "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
                    },
                },
            )
            await ws.close(3000, "invalid_request_error.invalid_api_key")
            return
        if query.get("model") != [self.model]:
            await self._send(
                ws,
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "code": "model_not_found",
                        "param": None,
                        "message": f"The model '{(query.get('model') or [''])[0]}' does not exist or you do not have access to it.",
                    },
                },
            )
            await ws.close(3000, "invalid_request_error.model_not_found")
            return
        await self._send(ws, {"type": "session.created", "session": {**session.config, "model": self.model}})
        from websockets.exceptions import ConnectionClosed

        try:
            async for message in ws:
                try:
                    if len(message) > MAX_EVENT_BYTES:
                        raise EventError("invalid_value", f"Event too large: {len(message)} bytes (maximum 15 MiB).")
                    event = json.loads(message)
                    if not isinstance(event, dict) or event.get("type") not in CLIENT_EVENTS:
                        raise EventError(
                            "invalid_value",
                            f"Invalid value: {event.get('type')!r}. Supported values are: "
                            + ", ".join(sorted(CLIENT_EVENTS)),
                            "type",
                        )
                    session.events.append(event["type"])
                    if await self._event(ws, session, event) == "drop":
                        ws.transport.abort()  # no close frame: the client sees the connection drop
                        return
                except EventError as exc:
                    session.errors.append(exc.body)
                    await self._send(ws, {"type": "error", "error": {**exc.body, "event_id": None}})
        except ConnectionClosed:
            pass

    # --- client events ----------------------------------------------------------------------------------

    async def _event(self, ws: Any, session: Session, event: dict[str, Any]) -> str | None:
        kind = event["type"]
        if kind == "session.update":
            session.config = {**session.config, **self._checked_session(event.get("session"))}
            await self._send(ws, {"type": "session.updated", "session": session.config})
        elif kind == "conversation.item.create":
            await self._add_item(ws, session, self._checked_item(event.get("item")))
        elif kind == "input_audio_buffer.append":
            try:
                session.buffer += base64.b64decode(event.get("audio") or "", validate=True)
            except (binascii.Error, ValueError):
                raise EventError(
                    "invalid_value", "Invalid 'audio'. Expected base64-encoded audio bytes.", "audio"
                ) from None
        elif kind == "input_audio_buffer.commit":
            if len(session.buffer) < MIN_COMMIT_BYTES:
                ms = len(session.buffer) / 2 / SAMPLE_RATE * 1000
                raise EventError(
                    "input_audio_buffer_commit_empty",
                    "Error committing input audio buffer: buffer too "
                    f"small. Expected at least 100ms of audio, but buffer only has {ms:.2f}ms of audio.",
                )
            session.audio.append(session.buffer)
            session.buffer = b""
            item = {"type": "message", "role": "user", "content": [{"type": "input_audio", "transcript": None}]}
            item_id = f"item_{next(self._ids)}"
            await self._send(
                ws,
                {
                    "type": "input_audio_buffer.committed",
                    "item_id": item_id,
                    "previous_item_id": session.items[-1]["id"] if session.items else None,
                },
            )
            await self._add_item(ws, session, item, item_id)
            turn_detection = session.config["audio"]["input"].get("turn_detection")
            if turn_detection and turn_detection.get("create_response", True):
                return await self._respond(ws, session)  # server VAD answers the committed turn by itself
        elif kind == "response.create":
            return await self._respond(ws, session)
        return None

    def _checked_session(self, config: Any) -> dict[str, Any]:
        if not isinstance(config, dict):
            raise EventError("missing_required_parameter", "Missing required parameter: 'session'.", "session")
        if config.get("type") != "realtime":
            raise EventError(
                "missing_required_parameter", "Missing required parameter: 'session.type'.", "session.type"
            )
        for name in config:
            if name not in GA_SESSION_FIELDS:
                raise EventError("unknown_parameter", f"Unknown parameter: 'session.{name}'.", f"session.{name}")
        modalities = config.get("output_modalities", ["audio"])
        if not isinstance(modalities, list) or len(modalities) != 1 or modalities[0] not in ("text", "audio"):
            raise EventError(
                "invalid_value",
                "Invalid modalities: output_modalities must be ['text'] or ['audio'].",
                "session.output_modalities",
            )
        audio_input = (config.get("audio") or {}).get("input") or {}
        fmt = audio_input.get("format")
        if fmt is not None:
            if fmt.get("type") not in ("audio/pcm", "audio/pcmu", "audio/pcma"):
                raise EventError(
                    "invalid_value", f"Invalid value: {fmt.get('type')!r}.", "session.audio.input.format.type"
                )
            if fmt.get("type") == "audio/pcm" and fmt.get("rate", SAMPLE_RATE) != SAMPLE_RATE:
                raise EventError(
                    "invalid_value", "Invalid value: rate must be 24000.", "session.audio.input.format.rate"
                )
        limit = config.get("max_output_tokens", "inf")
        if limit != "inf" and not (isinstance(limit, int) and 1 <= limit <= 4096):
            raise EventError(
                "integer_above_max_value",
                f"Invalid 'session.max_output_tokens': {limit!r}.",
                "session.max_output_tokens",
            )
        merged = dict(config)
        if "audio" in config:  # nested objects merge like the API's partial updates
            merged["audio"] = {
                "input": {
                    "format": {"type": "audio/pcm", "rate": SAMPLE_RATE},
                    "turn_detection": {"type": "server_vad", "create_response": True},
                    **audio_input,
                }
            }
        return merged

    def _checked_item(self, item: Any) -> dict[str, Any]:
        if not isinstance(item, dict) or item.get("type") != "message":
            raise EventError("invalid_value", "Invalid 'item.type'.", "item.type")
        role = item.get("role")
        if role not in CONTENT_TYPES:
            raise EventError(
                "invalid_value",
                f"Invalid value: {role!r}. Supported values are: 'user', 'assistant', and 'system'.",
                "item.role",
            )
        content = item.get("content")
        if not isinstance(content, list) or not content:
            raise EventError(
                "missing_required_parameter", "Missing required parameter: 'item.content'.", "item.content"
            )
        for i, part in enumerate(content):
            kind = part.get("type")
            if kind not in CONTENT_TYPES[role]:
                allowed = " and ".join(f"'{t}'" for t in sorted(CONTENT_TYPES[role]))
                raise EventError(
                    "invalid_value",
                    f"Invalid value: {kind!r}. Supported values are: {allowed}.",
                    f"item.content[{i}].type",
                )
            if kind in ("input_text", "output_text") and not isinstance(part.get("text"), str):
                raise EventError(
                    "missing_required_parameter",
                    f"Missing required parameter: 'item.content[{i}].text'.",
                    f"item.content[{i}].text",
                )
        return item

    async def _add_item(self, ws: Any, session: Session, item: dict[str, Any], item_id: str | None = None) -> None:
        stored = {**item, "id": item_id or f"item_{next(self._ids)}", "object": "realtime.item", "status": "completed"}
        previous = session.items[-1]["id"] if session.items else None
        session.items.append(stored)
        await self._send(ws, {"type": "conversation.item.added", "previous_item_id": previous, "item": stored})
        await self._send(ws, {"type": "conversation.item.done", "previous_item_id": previous, "item": stored})

    # --- responses --------------------------------------------------------------------------------------

    def _answer_text(self, session: Session) -> tuple[str, str | None]:
        sid = self.scene_sent(session.audio[-1]) if session.audio else None
        mode = self.script.get(sid or "", "reference")
        if mode == "error":
            return "", "server_error"
        if sid is None:
            return '{"has_demand": false, "segments": []}', None
        if mode == "garbage":
            return "Sorry, I am not sure what the user wants here.", None
        return reference_output(self.records[sid]), None

    async def _respond(self, ws: Any, session: Session) -> str | None:
        session.responses += 1
        fault = self._faults.popleft() if self._faults else None
        if fault == "drop":
            return "drop"
        if fault == "huge":  # one event of 17 MiB (no limit the API documents; a hostile server's)
            await self._send(ws, {"type": "response.output_text.delta", "delta": "x" * (17 * 2**20)})
            return None
        response_id = f"resp_{next(self._ids)}"
        modalities = session.config["output_modalities"]
        base = {"id": response_id, "object": "realtime.response", "output_modalities": modalities}
        await self._send(ws, {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}})
        text, failure = self._answer_text(session)
        usage = {
            "total_tokens": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "input_token_details": {"audio_tokens": 0, "text_tokens": 0, "cached_tokens": 0},
            "output_token_details": {"text_tokens": 0, "audio_tokens": 0},
        }
        if fault == "server_error" or failure:
            await self._send(
                ws,
                {
                    "type": "response.done",
                    "response": {
                        **base,
                        "status": "failed",
                        "output": [],
                        "usage": usage,
                        "status_details": {"type": "failed", "error": {"type": "server_error", "code": None}},
                    },
                },
            )
            return None
        audio_tokens = sum(len(a) for a in session.audio) // 2 // 2400  # 10 tokens per second of audio
        usage.update(input_tokens=100 + audio_tokens, output_tokens=len(text.split()))
        usage["input_token_details"].update(audio_tokens=audio_tokens, text_tokens=100)
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        item_id = f"item_{next(self._ids)}"
        common = {"response_id": response_id, "item_id": item_id, "output_index": 0, "content_index": 0}
        if modalities == ["text"]:
            for start in range(0, len(text), 40):
                await self._send(
                    ws, {"type": "response.output_text.delta", **common, "delta": text[start : start + 40]}
                )
            await self._send(ws, {"type": "response.output_text.done", **common, "text": text})
            content = {"type": "output_text", "text": text}
        else:  # audio out: a transcript and audio, no output_text events
            await self._send(ws, {"type": "response.output_audio_transcript.delta", **common, "delta": text})
            await self._send(
                ws, {"type": "response.output_audio.delta", **common, "delta": base64.b64encode(b"\0" * 4800).decode()}
            )
            content = {"type": "output_audio", "transcript": text}
        item = {"id": item_id, "type": "message", "role": "assistant", "status": "completed", "content": [content]}
        session.items.append(item)
        await self._send(
            ws, {"type": "response.done", "response": {**base, "status": "completed", "output": [item], "usage": usage}}
        )
        return None
