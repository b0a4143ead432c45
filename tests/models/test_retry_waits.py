"""How long the retry policy waits (odu.transport.openai_client.with_retries): the server's wait
(``retry-after-ms``, then ``Retry-After``) when it gives one, else exponential backoff jittered
down by up to half; every wait capped. The headers are the ones the ``openai`` SDK's own retry
logic reads, milliseconds first (``openai/_base_client.py``, ``_parse_retry_after_header``: "Prefer
milliseconds, then seconds")."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest

from odu.transport.openai_client import (
    MAX_RETRY_AFTER_S,
    CallFailedError,
    ReplicaPool,
    TransientError,
    retry_after,
    with_retries,
)


def waits(monkeypatch: pytest.MonkeyPatch, headers: dict[str, str] | None, failures: int, backoff=(1.0, 2.0, 60.0)):
    """The sleeps of a call failing ``failures`` times with ``headers`` and then succeeding."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    attempts = 0

    async def call() -> str:
        nonlocal attempts
        attempts += 1
        if attempts <= failures:
            response = SimpleNamespace(headers=headers) if headers is not None else None
            raise TransientError("HTTP 429: slow down", response)
        return "ok"

    result: Any = asyncio.run(with_retries(call, retries=failures, backoff=backoff, classify=lambda exc: None))
    assert result == "ok" and attempts == failures + 1
    return slept


def test_retry_after_ms_is_honoured_before_retry_after(monkeypatch: pytest.MonkeyPatch) -> None:
    assert waits(monkeypatch, {"retry-after-ms": "1500", "retry-after": "9"}, 2) == [1.5, 1.5]
    assert waits(monkeypatch, {"retry-after": "7"}, 1) == [7.0]


def test_the_servers_wait_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    assert waits(monkeypatch, {"retry-after": "3600"}, 2, backoff=(1.0, 2.0, 30.0)) == [30.0, 30.0]


def test_backoff_grows_exponentially_jittered_down_by_up_to_half(monkeypatch: pytest.MonkeyPatch) -> None:
    slept = waits(monkeypatch, None, 6, backoff=(1.0, 2.0, 20.0))
    for attempt, wait in enumerate(slept):
        full = min(20.0, 2.0**attempt)
        assert full / 2 <= wait <= full, (attempt, wait)
    assert slept[4] >= 8.0 and slept[5] <= 20.0  # 16 s halved at most; 32 s capped at 20


def test_giving_up_after_the_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(asyncio, "sleep", no_sleep)

    async def call() -> None:
        raise TransientError("HTTP 503: busy")

    with pytest.raises(CallFailedError, match="after 3 attempts"):
        asyncio.run(with_retries(call, retries=2, backoff=(1.0, 2.0, 60.0), classify=lambda exc: None))


def test_retry_after_999999_is_cut_to_the_documented_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: ``Retry-After: 999999`` was obeyed; whatever the backoff, a server's wait is at most
    ``MAX_RETRY_AFTER_S``, and a replica rests at most ten cooldowns."""
    assert waits(monkeypatch, {"retry-after": "999999"}, 1, backoff=(1.0, 2.0, 1e9)) == [MAX_RETRY_AFTER_S]
    for header in (
        {"retry-after": "inf"},
        {"retry-after-ms": "1e12"},
        {"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"},
    ):
        assert retry_after(TransientError("429", SimpleNamespace(headers=header))) == MAX_RETRY_AFTER_S
    assert retry_after(TransientError("429", SimpleNamespace(headers={"retry-after": "nan"}))) is None
    assert retry_after(TransientError("429", SimpleNamespace(headers={"retry-after": "-5"}))) == 0.0
    pool = ReplicaPool(["http://a/v1", "http://b/v1"], cooldown=1.0)
    pool.fail(0, retry_after(TransientError("429", SimpleNamespace(headers={"retry-after": "999999"}))))
    assert pool._rest_until[0] - time.monotonic() <= 10.0
