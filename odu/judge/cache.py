"""Persistent verdict cache for LLM judges: SQLite in WAL mode, shared safely between processes.

A verdict is stored under the SHA-256 of (judge model, judge settings that change answers, prompt
version, candidate text, key points with qid, tiers and text); see :func:`cache_key`. Only
successful verdicts are stored, one commit per verdict, so a process killed with SIGKILL loses only
the calls that were in flight, and a judge error is asked again on the next run. Nothing secret is
stored: no API key, no headers, no base URL.

Several processes (lm-eval ranks, parallel scoring runs) may share one file: WAL lets readers and
the single writer proceed together and the busy timeout serialises writers. Switching a new file to
WAL upgrades a read lock to a write lock, which SQLite refuses at once (``database is locked``)
instead of waiting while another connection writes, so the switch is retried. Every wait lasts at
most :data:`JUDGE_CACHE_BUSY_TIMEOUT_S`; a file still held after such a wait is left alone for the
rest of the run (said once on stderr): the run goes on, what it judges from then on is not cached.

A file SQLite cannot read (truncated, overwritten, not a database) is a :class:`JudgeCacheError`
naming the file and the way out (delete it, or choose another with ``--judge-cache``), raised when
the judge is built (:meth:`VerdictCache.check`), before any call is made.

Location: ``--judge-cache PATH``, else ``judge.sqlite`` in the cache directory
(:mod:`odu.io.cache`: ``$ODU_CACHE_DIR``, else ``$XDG_CACHE_HOME/odu-bench``, else ``~/.cache/odu-bench``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..core.schema import KeyPoint
from ..io.cache import cache_dir

#: Seconds one access to the verdict cache waits while another connection holds it (writing, or
#: switching a new file to WAL) before the run goes on without the cache.
JUDGE_CACHE_BUSY_TIMEOUT_S = 60.0

#: Seconds between two attempts to switch a new file to WAL while another connection holds it.
_WAL_SWITCH_PAUSE_S = 0.01

#: SQLite's primary result codes for a file held by another connection: SQLITE_BUSY, SQLITE_LOCKED.
_BUSY_CODES = (5, 6)

T = TypeVar("T")

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


def _busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says that another connection holds the file (SQLITE_BUSY or SQLITE_LOCKED)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11; before, only the message says it
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    return isinstance(exc, sqlite3.OperationalError) and "is locked" in str(exc)


class VerdictCache:
    """A verdict store at ``path`` (created with its parent directory on first use); a file that
    cannot be used comes out as a :class:`JudgeCacheError`, one held by another connection past
    :data:`JUDGE_CACHE_BUSY_TIMEOUT_S` sets :attr:`left_alone` (the cache then reads nothing and
    stores nothing)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.left_alone = False  # the file stayed busy past the bound: not used again by this object
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _use(self, work: Callable[[sqlite3.Connection], T], otherwise: T) -> T:
        """``work(connection)`` under the lock; ``otherwise`` once the file stayed busy past the bound
        (said once on stderr). Any other SQLite failure is a :class:`JudgeCacheError` with the remedy
        (a damaged file, or one that cannot be opened or written)."""
        with self._lock:
            if self.left_alone:
                return otherwise
            try:
                return work(self._connection())
            except sqlite3.DatabaseError as exc:
                if _busy(exc):
                    self._leave_alone(exc)
                    return otherwise
                remedy = (
                    "check that it can be opened and written"
                    if isinstance(exc, sqlite3.OperationalError)
                    else "it is damaged (e.g. truncated): delete it (its verdicts are asked again)"
                )
                raise JudgeCacheError(
                    f"verdict cache {self.path} cannot be used ({exc}): {remedy}, "
                    "or choose another file with --judge-cache (--no-cache: none)"
                ) from None

    def _leave_alone(self, exc: sqlite3.Error) -> None:
        self.left_alone = True
        print(
            f"odu-bench: verdict cache {self.path} stayed locked by another connection for "
            f"{JUDGE_CACHE_BUSY_TIMEOUT_S:g} s ({exc}): the run goes on without it, "
            "what it judges from now on is not cached",
            file=sys.stderr,
        )

    def check(self) -> None:
        """Open the file and check its structure (``PRAGMA quick_check``); :class:`JudgeCacheError` if unusable."""

        def verify(conn: sqlite3.Connection) -> None:
            problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError("; ".join(map(str, problems)))

        self._use(verify, otherwise=None)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=JUDGE_CACHE_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(JUDGE_CACHE_BUSY_TIMEOUT_S * 1000)}")
                _switch_to_wal(conn)
                conn.execute("PRAGMA synchronous = NORMAL")  # durable across process crashes in WAL mode
                conn.execute(_SCHEMA)
            except sqlite3.DatabaseError:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def get_many(self, keys: Iterable[str]) -> dict[str, tuple[dict[str, bool], dict[str, str]]]:
        """Stored (hits, reasons) for those of ``keys`` that are present (none once :attr:`left_alone`)."""
        wanted = list(dict.fromkeys(keys))

        def read(conn: sqlite3.Connection) -> dict[str, tuple[dict[str, bool], dict[str, str]]]:
            found = {}
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                rows = conn.execute(
                    f"SELECT key, hits, reasons FROM verdicts WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
                for key, hits, reasons in rows:
                    found[key] = (json.loads(hits), json.loads(reasons))
            return found

        return self._use(read, otherwise={})

    def put(
        self, key: str, model: str, prompt_version: str, hits: Mapping[str, bool], reasons: Mapping[str, str]
    ) -> None:
        """Store one verdict and commit at once (the first stored verdict for a key wins; nothing once
        :attr:`left_alone`)."""
        row = (
            key,
            model,
            prompt_version,
            json.dumps(dict(hits), ensure_ascii=False),
            json.dumps(dict(reasons), ensure_ascii=False),
            time.time(),
        )
        self._use(
            lambda conn: conn.execute(
                "INSERT OR IGNORE INTO verdicts (key, model, prompt_version, hits, reasons, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                row,
            ),
            otherwise=None,
        )

    def __len__(self) -> int:
        """The number of stored verdicts (0 once :attr:`left_alone`)."""
        return self._use(lambda conn: conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0], otherwise=0)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode, waiting up to :data:`JUDGE_CACHE_BUSY_TIMEOUT_S` for other connections.

    On a file not yet in WAL mode the switch upgrades a read lock to a write lock, and SQLite answers
    ``database is locked`` at once, without its busy timeout, while another connection holds a write
    lock (two processes opening a new cache together); so it is tried again until the bound is spent.
    """
    deadline = time.monotonic() + JUDGE_CACHE_BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(_WAL_SWITCH_PAUSE_S)
