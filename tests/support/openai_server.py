"""A loopback OpenAI-compatible HTTP server for tests: real sockets, stdlib only, as strict as a real one.

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` out of the box; add any other route
(e.g. ``/v1/audio/transcriptions``) with :meth:`OpenAIServer.route`. Every request is logged
(:attr:`OpenAIServer.requests`), the peak number of requests in flight is tracked
(:attr:`OpenAIServer.max_in_flight`), and faults can be injected: HTTP errors, 429 with
``Retry-After``, replies slower than the client's timeout, non-JSON bodies, dropped connections.

Requests to the OpenAI API's paths are checked as a real server checks them
(``tests/support/openai_rules.py``, each rule cited there), before any route handler runs:
``Authorization: Bearer`` :attr:`~OpenAIServer.api_key` (401; ``None`` turns the check off), the
model among :attr:`~OpenAIServer.models` (404 ``model_not_found``), the chat body (roles, content
types, parts, data URLs, sampling ranges, no field outside the API unless listed in
:attr:`~OpenAIServer.extra_fields`; 400), a transcription upload (multipart with ``file`` and
``model``; 400). ``file:`` media URLs are read only under :attr:`~OpenAIServer.local_media_root`
(vLLM's ``--allowed-local-media-path``).

Typical use (the ``openai_server`` fixture in ``conftest.py`` starts one per test)::

    server = OpenAIServer(responder=lambda body: "hello", latency=0.01, models=["judge"])
    with server:
        client = openai.OpenAI(base_url=server.base_url, api_key=API_KEY)
        server.inject(Fault.rate_limit(retry_after=0.1), Fault.server_error())  # next two requests
        ...
    assert server.count() == 3

A responder gets the decoded request JSON and returns the assistant text (``str``), a
:class:`Fault`, or a full :class:`Reply`. Replies carry ``usage`` (tokens counted as whitespace
words, enough for accounting tests).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .openai_rules import (
    API_KEY,
    DEFAULT_MODEL,
    OPENAI_PATHS,
    Refusal,
    check_auth,
    check_chat,
    check_model,
    check_transcription,
)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it (``json`` is ``None`` when the body is not JSON)."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any
    received: float  # time.monotonic() on arrival
    query: str = ""  # the request line's query string, as sent (without the '?')


@dataclass(frozen=True)
class Reply:
    """A complete HTTP answer: ``body`` is sent as JSON unless it is ``bytes``/``str``."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    delay: float = 0.0  # extra seconds before answering


@dataclass(frozen=True)
class Fault:
    """A misbehaviour to serve instead of the normal answer."""

    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (or dropping)
    drop: bool = False  # close the connection without any answer
    content_type: str = "application/json"

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls(status=status, body={"error": {"message": "injected server error", "type": "server_error"}})

    @classmethod
    def rate_limit(cls, retry_after: float = 0.05, header: str = "Retry-After") -> Fault:
        """429 with ``header`` (``Retry-After`` in seconds, or ``retry-after-ms`` in milliseconds)."""
        value = retry_after * 1000 if header.lower() == "retry-after-ms" else retry_after
        return cls(
            status=429,
            body={"error": {"message": "injected rate limit", "type": "rate_limit_exceeded"}},
            headers={header: f"{value:g}"},
        )

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        """Answer normally, but only after ``seconds`` (beyond the client's timeout in tests)."""
        return cls(status=200, delay=seconds)

    @classmethod
    def not_json(cls, status: int = 200) -> Fault:
        return cls(status=status, body=b"<html>upstream hiccup</html>", content_type="application/json")

    @classmethod
    def dropped(cls) -> Fault:
        return cls(drop=True)


Answer = str | Fault | Reply
Responder = Callable[[Any], Answer]
Handler = Callable[[RecordedRequest], Reply | Fault]


def dead_url(userinfo: str = "") -> str:
    """A loopback URL nothing listens on (a port just freed), ``userinfo`` (``user:pw@``) in it."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://{userinfo}127.0.0.1:{port}/v1"


def _words(text: str) -> int:
    return len(text.split())


def chat_completion(body: Any, text: str) -> dict[str, Any]:
    """A ``chat.completion`` object answering request ``body`` with ``text``."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    prompt_tokens = sum(_words(m.get("content") or "") for m in messages if isinstance(m.get("content"), str))
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "loopback") if isinstance(body, dict) else "loopback",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": _words(text),
            "total_tokens": prompt_tokens + _words(text),
        },
    }


class OpenAIServer:
    """A threaded loopback server; use as a context manager or call :meth:`start` / :meth:`close`."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        models: Iterable[str] = (DEFAULT_MODEL,),
        api_key: str | None = API_KEY,
        extra_fields: Collection[str] = (),
        local_media_root: Path | None = None,
    ) -> None:
        self.responder: Responder = responder or (lambda body: "ok")
        self.latency = latency  # seconds added to every request
        self.models: list[str] = list(models)  # served model ids (GET /v1/models); others get 404
        self.api_key = api_key  # the Bearer key required on OpenAI paths; None: no check
        self.extra_fields: set[str] = set(extra_fields)  # top-level chat fields accepted beyond the API's
        self.local_media_root = local_media_root  # file: media URLs allowed under it (vLLM), else refused
        self.fault_plan: Callable[[RecordedRequest], Fault | None] | None = None
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._log: list[RecordedRequest] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self._routes: dict[tuple[str, str], Handler] = {
            ("POST", "/v1/chat/completions"): self._chat,
            ("GET", "/v1/models"): lambda req: Reply(
                body={"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}
            ),
        }
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- configuration --------------------------------------------------------------------------

    def route(self, method: str, path: str, handler: Handler) -> None:
        """Serve ``method path`` with ``handler(request) -> Reply | Fault`` (replaces any existing)."""
        self._routes[(method.upper(), path)] = handler

    def inject(self, *faults: Fault) -> None:
        """Serve these faults, in order, to the next requests (any route), before normal answers."""
        with self._lock:
            self._faults.extend(faults)

    # --- inspection -----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the value for ``base_url`` of an OpenAI client."""
        return f"{self.origin}/v1"

    @property
    def origin(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    def count(self, path: str | None = "/v1/chat/completions") -> int:
        """Requests received for ``path`` (all paths when ``None``)."""
        with self._lock:
            return sum(1 for r in self._log if path is None or r.path == path)

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    def reset(self) -> None:
        """Forget the log, the in-flight peak and pending faults."""
        with self._lock:
            self._log.clear()
            self._faults.clear()
            self.max_in_flight = 0

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        handler = type("_BoundHandler", (_Handler,), {"app": self})
        self._httpd = _LoopbackHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- request handling -----------------------------------------------------------------------

    def _chat(self, req: RecordedRequest) -> Reply | Fault:
        answer = self.responder(req.json)
        if isinstance(answer, (Fault, Reply)):
            return answer
        return Reply(body=chat_completion(req.json, answer))

    def _answer(self, req: RecordedRequest) -> Reply | Fault:
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
        if fault is None and self.fault_plan is not None:
            fault = self.fault_plan(req)
        if fault is not None and not (fault.status == 200 and fault.body is None and not fault.drop):
            return fault
        handler = self._routes.get((req.method, req.path))
        if handler is None:
            return Reply(status=404, body={"error": {"message": f"no route {req.method} {req.path}"}})
        refused = self._refusal(req)
        reply = Reply(status=refused[0], body=refused[1]) if refused else handler(req)
        if fault is not None:  # a "slow" fault: the normal answer, late
            reply = Reply(reply.status, reply.body, reply.headers, reply.content_type, reply.delay + fault.delay)
        return reply

    def _refusal(self, req: RecordedRequest) -> Refusal | None:
        """What a real server refuses of ``req`` (only on the OpenAI API's paths)."""
        if req.path not in OPENAI_PATHS:
            return None
        if refused := check_auth(req.headers.get("authorization"), self.api_key):
            return refused
        if (req.method, req.path) == ("POST", "/v1/chat/completions"):
            return check_chat(req.json, self.extra_fields, self.local_media_root) or check_model(
                req.json.get("model"), self.models
            )
        if (req.method, req.path) == ("POST", "/v1/audio/transcriptions"):
            refused, form = check_transcription(req.headers.get("content-type"), req.body)
            return refused or check_model(form.get("model"), self.models)
        return None

    def _enter(self, method: str, path: str, headers: dict[str, str], body: bytes, query: str = "") -> RecordedRequest:
        try:
            decoded = json.loads(body) if body else None
        except ValueError:
            decoded = None
        with self._lock:
            req = RecordedRequest(len(self._log), method, path, headers, body, decoded, time.monotonic(), query)
            self._log.append(req)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        return req

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


class _LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256  # the default backlog (5) resets connections under concurrent clients


class _Handler(BaseHTTPRequestHandler):
    app: OpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        req = self.app._enter(method, path, {k.lower(): v for k, v in self.headers.items()}, body, query)
        try:
            answer = self.app._answer(req)
            delay = self.app.latency + answer.delay
            if delay > 0:
                time.sleep(delay)
            if isinstance(answer, Fault) and answer.drop:
                self.close_connection = True
                return
            payload = answer.body
            if isinstance(payload, str):
                payload = payload.encode()
            elif not isinstance(payload, bytes):
                payload = json.dumps(payload).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            self.close_connection = True
        finally:
            self.app._leave()

    def do_POST(self) -> None:
        self._serve("POST")

    def do_GET(self) -> None:
        self._serve("GET")

    def do_DELETE(self) -> None:
        self._serve("DELETE")
