"""Persistent verdict cache for LLM judges: SQLite in WAL mode, shared safely between processes.

A verdict is stored under the SHA-256 of (judge model, judge settings that change answers, prompt
version, candidate text, key points with qid, tiers and text); see :func:`cache_key`. Only
successful verdicts are stored, one commit per verdict, so a process killed with SIGKILL loses only
the calls that were in flight, and a judge error is asked again on the next run. Several processes
(lm-eval ranks, parallel scoring runs) may share one file: WAL lets readers and the single writer
proceed together and the busy timeout serialises writers. Nothing secret is stored: no API key,
no headers, no base URL.

A file SQLite cannot read (truncated, overwritten, not a database) is a :class:`JudgeCacheError`
naming the file and the way out (delete it, or choose another with ``--judge-cache``), raised when
the judge is built (:meth:`VerdictCache.check`), before any call is made.

Location: ``--judge-cache PATH``, else ``judge.sqlite`` in the cache directory
(:mod:`odu.io.cache`: ``$ODU_CACHE_DIR``, else ``$XDG_CACHE_HOME/odu-bench``, else ``~/.cache/odu-bench``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.schema import KeyPoint
from ..io.cache import cache_dir

#: Seconds a process waits for another one writing to the shared verdict cache.
JUDGE_CACHE_BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    hits TEXT NOT NULL,
    reasons TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """``judge.sqlite`` in the toolkit's cache directory (:func:`odu.io.cache.cache_dir`)."""
    return cache_dir() / "judge.sqlite"


def cache_key(
    model: str,
    prompt_version: str,
    candidate: str,
    key_points: Sequence[KeyPoint],
    settings: Mapping[str, Any] | None = None,
) -> str:
    """Hex SHA-256 identifying one judge decision.

    ``settings`` holds the request options that change the judge's answers (e.g. the extra request
    body enabling thinking, App D.3); temperature is always 0 and is not part of it.
    """
    material = {
        "model": model,
        "prompt_version": prompt_version,
        "settings": dict(settings or {}),
        "candidate": candidate,
        "key_points": [[k.qid, list(k.tiers), k.point] for k in key_points],
    }
    blob = json.dumps(material, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgeCacheError(ValueError):
    """The verdict cache file cannot be used; the message names it and what to do."""


class VerdictCache:
    """A verdict store at ``path`` (created with its parent directory on first use); any SQLite
    failure comes out as a :class:`JudgeCacheError`."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    @contextlib.contextmanager
    def _failures(self) -> Iterator[None]:
        """SQLite's errors as :class:`JudgeCacheError`, with the remedy (a damaged file, or one that
        cannot be opened or written)."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            remedy = (
                "check that it can be opened and written"
                if isinstance(exc, sqlite3.OperationalError)
                else "it is damaged (e.g. truncated): delete it (its verdicts are asked again)"
            )
            raise JudgeCacheError(
                f"verdict cache {self.path} cannot be used ({exc}): {remedy}, "
                "or choose another file with --judge-cache (--no-cache: none)"
            ) from None

    def check(self) -> None:
        """Open the file and check its structure (``PRAGMA quick_check``); :class:`JudgeCacheError` if unusable."""
        with self._lock, self._failures():
            problems = [row[0] for row in self._connection().execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError("; ".join(map(str, problems)))

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=JUDGE_CACHE_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(JUDGE_CACHE_BUSY_TIMEOUT_S * 1000)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")  # durable across process crashes in WAL mode
                conn.execute(_SCHEMA)
            except sqlite3.DatabaseError:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def get_many(self, keys: Iterable[str]) -> dict[str, tuple[dict[str, bool], dict[str, str]]]:
        """Stored (hits, reasons) for those of ``keys`` that are present."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, tuple[dict[str, bool], dict[str, str]]] = {}
        with self._lock, self._failures():
            conn = self._connection()
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                rows = conn.execute(
                    f"SELECT key, hits, reasons FROM verdicts WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
                for key, hits, reasons in rows:
                    found[key] = (json.loads(hits), json.loads(reasons))
        return found

    def put(
        self, key: str, model: str, prompt_version: str, hits: Mapping[str, bool], reasons: Mapping[str, str]
    ) -> None:
        """Store one verdict and commit at once (the first stored verdict for a key wins)."""
        row = (
            key,
            model,
            prompt_version,
            json.dumps(dict(hits), ensure_ascii=False),
            json.dumps(dict(reasons), ensure_ascii=False),
            time.time(),
        )
        with self._lock, self._failures():
            self._connection().execute(
                "INSERT OR IGNORE INTO verdicts (key, model, prompt_version, hits, reasons, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                row,
            )

    def __len__(self) -> int:
        with self._lock, self._failures():
            return self._connection().execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
