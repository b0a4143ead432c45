"""What every OpenAI-compatible client here shares: which failures to retry, how long to wait,
and how to show a server address without its credentials.

Used by the key-point judge (:mod:`odu.judge.openai_judge`), the omni model backend
(:mod:`odu.models.openai_omni`) and the ASR client (:mod:`odu.asr`). The ``openai`` SDK's own
retries are turned off by its callers, so that every retry is counted here.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

T = TypeVar("T")

#: Statuses that cannot succeed on any call of the run (wrong key, model or URL): stop at once.
FATAL_STATUSES = frozenset({401, 403, 404})
#: Statuses worth retrying besides 5xx.
RETRY_STATUSES = frozenset({408, 409, 429})


class ServerRefusedError(RuntimeError):
    """The server answered with a status in :data:`FATAL_STATUSES`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class CallFailedError(Exception):
    """A call that failed for good: retries used up, or a non-retryable answer."""


def public_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment (they may carry credentials).

    >>> public_url("https://user:secret@api.example.com:8443/v1?key=abc")
    'https://api.example.com:8443/v1'
    """
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    retries: int,
    backoff: tuple[float, float, float],
    on_retry: Callable[[], None] = lambda: None,
) -> T:
    """Await ``call()`` until it succeeds, retrying 429, 5xx, 408/409, timeouts, connection errors
    and undecodable bodies (``ValueError``) up to ``retries`` times.

    The wait is the server's ``Retry-After`` if given, else ``first * factor**attempt`` jittered
    down by up to half; both capped at ``cap`` (``backoff = (first, factor, cap)``). Raises
    :class:`ServerRefusedError` on 401/403/404 and :class:`CallFailedError` when giving up.
    """
    import openai

    first, factor, cap = backoff
    for attempt in range(retries + 1):
        try:
            return await call()
        except openai.APIStatusError as exc:
            if exc.status_code in FATAL_STATUSES:
                raise ServerRefusedError(exc.status_code, exc.message) from None
            if exc.status_code < 500 and exc.status_code not in RETRY_STATUSES:
                raise CallFailedError(f"HTTP {exc.status_code}: {exc.message}") from None
            failure: Exception = exc
        except (openai.APIConnectionError, openai.APIResponseValidationError, ValueError) as exc:
            failure = exc
        if attempt == retries:
            raise CallFailedError(f"{type(failure).__name__} after {attempt + 1} attempts: {failure}")
        on_retry()
        wait = retry_after(failure)
        if wait is None:
            wait = min(cap, first * factor**attempt) * random.uniform(0.5, 1.0)
        await asyncio.sleep(min(wait, cap))
    raise AssertionError("unreachable")
