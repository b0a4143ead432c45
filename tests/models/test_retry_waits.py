"""How long the retry policy waits (odu.transport.openai_client.with_retries): the server's wait
(``retry-after-ms``, then ``Retry-After``) when it gives one, else exponential backoff jittered
down by up to half; every wait capped, a call's waits capped in all, and the long ones said. The headers are the ones the ``openai`` SDK's own retry
logic reads, milliseconds first (``openai/_base_client.py``, ``_parse_retry_after_header``: "Prefer
milliseconds, then seconds")."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
from support.openai_rules import API_KEY, DEFAULT_MODEL
from support.openai_server import Fault, OpenAIServer

from odu.transport.openai_client import (
    BACKOFF,
    MAX_RETRY_AFTER_ENV,
    MAX_RETRY_AFTER_S,
    MAX_WAITING_ENV,
    MAX_WAITING_S,
    WAIT_NOTICE_S,
    CallFailedError,
    OpenAIClient,
    ReplicaPool,
    TransientError,
    Waits,
    retry_after,
    with_retries,
)


def waits(monkeypatch: pytest.MonkeyPatch, headers: dict[str, str] | None, failures: int, backoff=(1.0, 2.0, 60.0)):
    """The sleeps of a call failing ``failures`` times with ``headers`` and then succeeding."""
    slept, failed = said_waits(monkeypatch, Waits(), headers, failures, backoff)
    assert failed is None
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


# --- issue 37 item 5: every wait bounded, long ones said ------------------------------------------------------


def said_waits(
    monkeypatch: pytest.MonkeyPatch, waits: Waits, headers: dict[str, str] | None, failures: int, backoff=BACKOFF
) -> tuple[list[float], Exception | None]:
    """The sleeps of a call of ``waits``' client failing ``failures`` times (then succeeding), and
    what it raised (None: it succeeded)."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    attempts = 0

    async def call() -> str:
        nonlocal attempts
        attempts += 1
        if attempts <= failures:
            raise TransientError("HTTP 429: slow down", SimpleNamespace(headers=headers) if headers else None)
        return "ok"

    try:
        asyncio.run(with_retries(call, retries=20, backoff=backoff, classify=lambda exc: None, waits=waits))
    except CallFailedError as exc:
        return slept, exc
    return slept, None


def test_a_call_waits_at_most_max_waiting_s_in_all_then_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Retry-After: 999999`` with 20 retries left: two waits of ``MAX_RETRY_AFTER_S``, then the
    call fails for good, saying why; a server's wait longer than what is left is cut to it."""
    slept, failed = said_waits(monkeypatch, Waits(), {"retry-after": "999999"}, 100)
    assert slept == [MAX_RETRY_AFTER_S] * 2 and MAX_WAITING_S == 2 * MAX_RETRY_AFTER_S
    assert failed is not None and str(failed).endswith("(given up after 120 s of waits, MAX_WAITING_S)")
    assert "after 3 attempts: HTTP 429: slow down" in str(failed)
    slept, failed = said_waits(monkeypatch, Waits(in_all=100.0), {"retry-after": "45"}, 100)
    assert slept == [45.0, 45.0, 10.0] and failed is not None


def test_a_client_that_gave_up_retries_again_once_a_call_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = Waits(in_all=1.0)
    slept, failed = said_waits(monkeypatch, waits, {"retry-after": "0.5"}, 100)
    assert slept == [0.5, 0.5] and failed is not None and waits.given_up
    slept, failed = said_waits(monkeypatch, waits, {"retry-after": "0.5"}, 100)
    assert slept == [] and "after 1 attempts" in str(failed)  # given up: not retried, not waited for
    assert said_waits(monkeypatch, waits, None, 0) == ([], None) and not waits.given_up
    slept, failed = said_waits(monkeypatch, waits, {"retry-after": "0.5"}, 1)
    assert slept == [0.5] and failed is None


def test_long_and_cut_waits_are_said_once_short_ones_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two calls of one client told to wait 999999 s: each wait is cut (0.2 s, then what is left of
    0.5 s) and said once, not again for the other call waiting meanwhile; giving up is said once."""
    lines: list[str] = []
    waits = Waits("judge server http://h/v1 (model 'j')", longest=0.2, in_all=0.5, say=lines.append)

    async def call() -> None:
        raise TransientError("HTTP 429: slow down", SimpleNamespace(headers={"retry-after": "999999"}))

    async def both() -> list[object]:
        calls = [with_retries(call, retries=20, backoff=(1.0, 2.0, 60.0), classify=lambda e: None, waits=waits)]
        calls.append(with_retries(call, retries=20, backoff=(1.0, 2.0, 60.0), classify=lambda e: None, waits=waits))
        return await asyncio.gather(*calls, return_exceptions=True)

    assert [type(e) for e in asyncio.run(both())] == [CallFailedError] * 2
    head = "judge server http://h/v1 (model 'j'): HTTP 429: slow down; "
    assert lines == [
        head + "retrying in 0.2 s (asked for 999999 s), giving up after 0.5 s of waits",
        head + "retrying in 0.2 s (asked for 999999 s), giving up after 0.5 s of waits",
        head + "retrying in 0.1 s (asked for 999999 s), giving up after 0.5 s of waits",
        head + "giving up after 0.5 s of waits (MAX_WAITING_S): its failing calls are not retried until one succeeds",
    ]
    lines.clear()
    said_waits(monkeypatch, Waits(say=lines.append), {"retry-after": "0.5"}, 3)
    said_waits(monkeypatch, Waits(say=lines.append), None, 1, backoff=(2.0, 2.0, 60.0))
    assert lines == []  # shorter than WAIT_NOTICE_S, and as asked: silent
    said_waits(monkeypatch, Waits(say=lines.append), None, 1, backoff=(2 * WAIT_NOTICE_S, 2.0, 60.0))
    assert len(lines) == 1 and "; retrying in " in lines[0] and "asked for" not in lines[0]


def test_the_caps_are_set_by_environment_variables_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_RETRY_AFTER_ENV, "0.5")
    monkeypatch.setenv(MAX_WAITING_ENV, "0")
    client = OpenAIClient("judge", "j", base_url="http://127.0.0.1:9/v1", timeout=1.0)
    assert (client.waits.longest, client.waits.in_all) == (0.5, 0.0)
    for value in ("x", "-1", "inf", "nan"):
        monkeypatch.setenv(MAX_WAITING_ENV, value)
        with pytest.raises(ValueError, match=f"{MAX_WAITING_ENV}={value!r}: not a number of seconds"):
            OpenAIClient("judge", "j", base_url="http://127.0.0.1:9/v1", timeout=1.0)


def test_a_client_scrubs_the_lines_it_says(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """Outside ``odu-bench`` (a notebook, the metric door) no scrubbed console stands in between: a
    server saying the key back in its 429 is said with ``***``."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv(MAX_RETRY_AFTER_ENV, "0.1")
    monkeypatch.setenv(MAX_WAITING_ENV, "0.1")
    body = {"model": DEFAULT_MODEL, "messages": [{"role": "user", "content": "hi"}]}
    with OpenAIServer() as server:
        server.fault_plan = lambda req: Fault(429, {"error": {"message": f"slow, {API_KEY}"}}, {"Retry-After": "9999"})
        client = OpenAIClient("judge", DEFAULT_MODEL, base_url=server.base_url, timeout=5.0)

        async def one_call() -> object:
            sdk = client.async_sdk()
            try:
                return await client.call(lambda: sdk.post("/chat/completions", body=body, cast_to=object))
            finally:
                await sdk.close()

        with pytest.raises(CallFailedError):
            client.run(one_call)
    err = capsys.readouterr().err
    assert API_KEY not in err and err.count("slow, ***; ") == 2  # the wait and the giving up
