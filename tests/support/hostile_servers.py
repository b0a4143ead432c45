"""Hostile HTTP servers on loopback (real sockets, stdlib only) for the transport limits of the
toolkit's one client (:mod:`odu.transport.openai_client`): the total deadline of a request and the cap on a
reply's size.

Each server reads one whole HTTP/1.1 request (headers, then ``Content-Length`` bytes), then
misbehaves in one :data:`MODES` way:

* ``trickle``: a valid ``chat.completion`` body whose ``Content-Length`` is announced at once, then
  sent one byte every ``interval`` seconds (0.5 s by default): every read succeeds well inside any
  per-read timeout, yet the whole reply takes minutes;
* ``endless``: ``Transfer-Encoding: chunked`` with 64 KiB chunks for ever (until the client hangs up);
* ``huge``: ``Content-Length`` of 1 GiB announced, bytes sent until the client hangs up;
* ``gzip``: a small valid reply, gzip-compressed (``Content-Encoding: gzip``) although the client
  asked for ``identity``: its decoded size cannot be bounded while reading.

Typical use::

    with HostileServer("trickle") as server:
        OpenAIJudge("j", base_url=server.base_url, timeout=1.0, retries=0, ...).judge(requests)
    server.requests  # requests received
"""

from __future__ import annotations

import gzip
import json
import socketserver
import threading
import time
from typing import Any

MODES = ("trickle", "endless", "huge", "gzip")
#: Seconds between two bytes of a trickled reply.
TRICKLE_INTERVAL_S = 0.5
_CHUNK = b"x" * 65536


def completion_body(text: str = "[]") -> bytes:
    """A valid ``chat.completion`` JSON body answering with ``text``."""
    reply = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "created": 0,
        "model": "hostile",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return json.dumps(reply).encode()


class HostileServer:
    """A threaded loopback server misbehaving in ``mode``; a context manager."""

    def __init__(self, mode: str, *, interval: float = TRICKLE_INTERVAL_S, text: str = "[]") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode, self.interval, self.text = mode, interval, text
        self.requests = 0
        self.bytes_sent = 0
        self._lock = threading.Lock()
        self._server: socketserver.ThreadingTCPServer | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> HostileServer:
        app = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                app._handle(self)

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        server.daemon_threads = True
        server.allow_reuse_address = True
        server.server_bind()
        server.server_activate()
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # --- one connection -----------------------------------------------------------------------------

    def _handle(self, conn: socketserver.StreamRequestHandler) -> None:
        while self._read_request(conn):
            with self._lock:
                self.requests += 1
            try:
                getattr(self, f"_{self.mode}")(conn.wfile)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up: what these servers are for
            if self.mode != "gzip":
                return

    @staticmethod
    def _read_request(conn: socketserver.StreamRequestHandler) -> bool:
        length = None
        line = conn.rfile.readline()
        if not line:
            return False
        while (line := conn.rfile.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        conn.rfile.read(length or 0)
        return True

    def _send(self, out: Any, data: bytes) -> None:
        out.write(data)
        out.flush()
        with self._lock:
            self.bytes_sent += len(data)

    def _head(self, out: Any, *headers: str) -> None:
        lines = ["HTTP/1.1 200 OK", "Content-Type: application/json", *headers, "", ""]
        self._send(out, "\r\n".join(lines).encode())

    def _trickle(self, out: Any) -> None:
        body = completion_body(self.text)
        self._head(out, f"Content-Length: {len(body)}")
        for i in range(len(body)):
            self._send(out, body[i : i + 1])
            time.sleep(self.interval)

    def _endless(self, out: Any) -> None:
        self._head(out, "Transfer-Encoding: chunked")
        chunk = b"%x\r\n" % len(_CHUNK) + _CHUNK + b"\r\n"
        while True:
            self._send(out, chunk)

    def _huge(self, out: Any) -> None:
        self._head(out, f"Content-Length: {2**30}")
        while True:
            self._send(out, _CHUNK)

    def _gzip(self, out: Any) -> None:
        body = gzip.compress(completion_body(self.text))
        self._head(out, f"Content-Length: {len(body)}", "Content-Encoding: gzip")
        self._send(out, body)
