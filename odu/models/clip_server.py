"""The run's clips over HTTP, for model servers that take a video only by URL.

``transformers serve`` refuses a video as a ``data:`` URL and opens no ``file://`` URL; it fetches
``http(s)://`` URLs itself (``transformers/video_utils.py`` ``load_video``, and ``audio_utils.py``
``load_audio`` for the sound track). :class:`ClipServer` is a small threaded HTTP server that lives
as long as the backend that started it (the run): it serves exactly the files registered with it,
each under a path that holds a random per-run token, and only while the file, its links resolved,
is a regular file inside the server's root (the media cache): a link planted there that points
elsewhere, a FIFO or a file registered from outside is answered 404. It answers ``GET`` and ``HEAD``
only, and 404 to anything else, so nothing but the run's clips can be read through it.

Address (:func:`serving_host`): a server on this machine (a loopback ``base_url``) reaches the clips
on ``127.0.0.1``; a server elsewhere gets the address of this machine's interface that routes to it
(the model argument ``media_host=`` names another, e.g. behind NAT). Files are read from the media
cache (:func:`odu.models.clips.spool_clip`), never held in memory.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import shutil
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote, urlsplit

from ..io.files import open_regular

#: Address the clip server binds for a server on this machine.
LOOPBACK = "127.0.0.1"


def serving_host(base_url: str | None) -> str:
    """The address the model server behind ``base_url`` can reach this machine on: loopback for a
    local server, else the local address of the interface that routes to it (no packet is sent).

    >>> serving_host("http://localhost:8000/v1"), serving_host("http://127.0.0.1:8000/v1")
    ('127.0.0.1', '127.0.0.1')
    """
    host = urlsplit(base_url or "").hostname or ""
    if host in ("", "localhost") or host.endswith(".localhost"):
        return LOOPBACK
    try:
        if ipaddress.ip_address(host).is_loopback:
            return LOOPBACK
    except ValueError:
        pass
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((host, 9))  # UDP connect: picks the route, sends nothing
            return str(probe.getsockname()[0])
    except OSError:
        return LOOPBACK


class _Handler(BaseHTTPRequestHandler):
    """Serves the registered files of :attr:`server` (a :class:`_Server`)."""

    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        entry = self.server.files.get(self.path.split("?", 1)[0])
        try:
            if entry is None:
                raise FileNotFoundError(self.path)
            real = Path(os.path.realpath(entry[0]))
            if self.server.root not in real.parents:
                raise FileNotFoundError(real)
            fh = open_regular(real)  # a FIFO or a device is refused before a byte is read
        except OSError:
            self.send_error(404)
            return
        with fh:
            self.send_response(200)
            self.send_header("Content-Type", entry[1])
            self.send_header("Content-Length", str(os.fstat(fh.fileno()).st_size))
            self.end_headers()
            if body:
                shutil.copyfileobj(fh, self.wfile)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        """Quiet: a run's console shows the run, not each fetch."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    #: URL path -> (file, MIME type), filled by :meth:`ClipServer.url`.
    files: dict[str, tuple[Path, str]]
    #: The folder every served file must lie inside, links resolved (the media cache).
    root: Path


class ClipServer:
    """Registered files under ``root`` (the media cache) over HTTP for the life of the run; see the
    module docstring."""

    #: Request paths start with this, then the per-run token.
    PREFIX: ClassVar[str] = "/odu-clips"

    def __init__(self, root: Path, host: str = LOOPBACK, port: int = 0) -> None:
        self._server = _Server((host, port), _Handler)
        self._server.files = {}
        self._server.root = Path(os.path.realpath(root))
        self._token = secrets.token_urlsafe(16)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._server.serve_forever, name="odu-clip-server", daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` the server listens on."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def url(self, path: Path, mime: str) -> str:
        """The URL that serves ``path`` (as ``mime``) until :meth:`close`."""
        route = f"{self.PREFIX}/{self._token}/{quote(path.name)}"
        with self._lock:
            self._server.files[route] = (path, mime)
        host, port = self.address
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}{route}"

    def close(self) -> None:
        """Stop serving (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


__all__ = ["LOOPBACK", "ClipServer", "serving_host"]
