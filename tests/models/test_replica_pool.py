"""Replica choice (``odu.transport.openai_client.ReplicaPool`` and the client around it), as promised: each
attempt to the ready replica with the fewest attempts in flight, the least recently chosen on a
tie; a replica that fails an attempt with a transient failure rests ``REPLICA_COOLDOWN_S`` (longer
when its ``Retry-After`` asks, at most ten cooldowns); when every one rests, the first to wake;
a retry goes at once to another ready replica; every replica of a list is used and scrubbed."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
from support.client_calls import one_chat_call
from support.openai_server import OpenAIServer, Reply

from odu.transport.openai_client import (
    REPLICA_COOLDOWN_S,
    ApiClient,
    CallFailedError,
    OpenAIClient,
    ReplicaPool,
    TransientError,
    split_replicas,
    with_retries,
)


def resting(pool: ReplicaPool) -> list[float]:
    """Seconds each replica still rests (0: ready)."""
    now = time.monotonic()
    return [max(0.0, until - now) for until in pool._rest_until]


def test_the_fewest_in_flight_is_chosen() -> None:
    pool = ReplicaPool(["a", "b", "c"])
    pool.in_flight = [3, 1, 2]
    assert pool.acquire() == 1 and pool.in_flight == [3, 2, 2]


def test_on_a_tie_the_least_recently_chosen() -> None:
    pool = ReplicaPool(["a", "b", "c"])
    assert [pool.acquire() for _ in range(3)] == [0, 1, 2]
    for i in (2, 0, 1):  # all idle again, released in another order
        pool.release(i)
    assert pool.acquire() == 0 and pool.acquire() == 1


def test_release_counts_an_attempt_out() -> None:
    pool = ReplicaPool(["a", "b"])
    index = pool.acquire()
    pool.release(index)
    assert pool.in_flight == [0, 0]


def test_a_failed_replica_rests_its_cooldown_and_is_passed_over() -> None:
    pool = ReplicaPool(["a", "b"], cooldown=30.0)
    pool.fail(0)
    assert 29.0 < resting(pool)[0] <= 30.0
    assert [pool.acquire() for _ in range(3)] == [1, 1, 1]  # even when b gets busier


def test_a_longer_retry_after_rests_longer_up_to_ten_cooldowns() -> None:
    pool = ReplicaPool(["a", "b", "c"], cooldown=2.0)
    pool.fail(0, rest=7.0)
    pool.fail(1, rest=1.0)  # shorter than the cooldown: the cooldown
    pool.fail(2, rest=1e9)
    rests = resting(pool)
    assert 6.5 < rests[0] <= 7.0 and 1.5 < rests[1] <= 2.0 and 19.5 < rests[2] <= 20.0


def test_when_all_rest_the_first_to_wake_is_chosen() -> None:
    pool = ReplicaPool(["a", "b", "c"], cooldown=10.0)
    pool.fail(0, rest=50.0)
    pool.fail(2, rest=20.0)
    pool.fail(1, rest=30.0)
    assert pool.acquire() == 2 and not pool.ready_elsewhere()


def test_ready_elsewhere_needs_another_replica() -> None:
    assert not ReplicaPool(["a"]).ready_elsewhere()
    pool = ReplicaPool(["a", "b"])
    assert pool.ready_elsewhere()
    pool.fail(0)
    pool.fail(1)
    assert not pool.ready_elsewhere()


def test_a_retry_waits_for_nothing_while_another_replica_is_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    failures = iter([TransientError("503", SimpleNamespace(headers={"retry-after": "9"}))] * 2)

    async def call() -> str:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return "ok"

    asyncio.run(
        with_retries(call, retries=2, backoff=(1.0, 2.0, 60.0), classify=lambda e: None, ready_elsewhere=lambda: True)
    )
    assert slept == [0.0, 0.0]


class _Client(ApiClient):
    """A client whose calls fail as the test says (no SDK)."""


def _client(urls: str, monkeypatch: pytest.MonkeyPatch) -> _Client:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-replica-0123456789")
    return _Client("model", "m", base_url=urls, timeout=5.0, retries=0)


def test_only_a_transient_failure_rests_the_replica(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _client("http://a/v1|http://b/v1", monkeypatch)

    async def refused() -> None:
        raise CallFailedError("HTTP 400: bad request")

    with pytest.raises(CallFailedError):
        client.run(lambda: client.call(refused))
    assert resting(client.replicas) == [0.0, 0.0]

    async def busy() -> None:
        raise TransientError("HTTP 503: busy")

    with pytest.raises(CallFailedError):
        client.run(lambda: client.call(busy))
    assert REPLICA_COOLDOWN_S - 1 < max(resting(client.replicas)) <= REPLICA_COOLDOWN_S
    assert client.replicas.in_flight == [0, 0]


def test_every_replica_is_split_checked_and_none_empty() -> None:
    assert split_replicas("http://a/v1|http://b/v1 | http://c/v1") == ["http://a/v1", "http://b/v1", "http://c/v1"]
    for bad in ("http://a/v1|", "|http://a/v1", "http://a/v1||http://b/v1"):
        with pytest.raises(ValueError, match="empty replica"):
            split_replicas(bad)


def test_every_replicas_credentials_are_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _client("http://u:first-pw-1@a/v1|http://u:second-pw-2@b/v1", monkeypatch)
    assert client.scrub("first-pw-1 second-pw-2") == "*** ***"
    assert client.public_base_url == "http://a/v1|http://b/v1"


# --- issue 37: round-robin, counts in flight, each replica its own request and Retry-After --------


def test_idle_replicas_take_their_turns_round_robin() -> None:
    pool = ReplicaPool(["a", "b", "c"])
    chosen = []
    for _ in range(7):
        index = pool.acquire()
        chosen.append(index)
        pool.release(index)
    assert chosen == [0, 1, 2, 0, 1, 2, 0]


def test_every_attempt_in_flight_counts_until_released() -> None:
    pool = ReplicaPool(["a", "b"])
    assert [pool.acquire() for _ in range(3)] == [0, 1, 0] and pool.in_flight == [2, 1]
    pool.release(0)
    assert pool.in_flight == [1, 1]
    assert pool.acquire() == 1  # the tie goes to the one chosen longer ago


def _servers(*replies: Reply | str) -> list[OpenAIServer]:
    """One started loopback server per reply, each answering every chat request with its own."""
    servers = []
    for reply in replies:
        server = OpenAIServer(api_key="sk-replica-0123456789", models=("m",)).start()
        server.responder = lambda _, reply=reply: reply
        servers.append(server)
    return servers


def test_each_replica_rests_as_long_as_its_own_retry_after_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = {"error": {"message": "busy", "type": "server_error"}}
    servers = _servers(
        Reply(status=503, body=busy, headers={"Retry-After": "40"}),
        Reply(status=429, body=busy, headers={"Retry-After": "50"}),
    )
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-replica-0123456789")
        client = OpenAIClient("model", "m", base_url="|".join(s.base_url for s in servers), timeout=5.0, retries=1)
        with pytest.raises(CallFailedError):
            one_chat_call(client)
    finally:
        for server in servers:
            server.close()
    assert [s.count() for s in servers] == [1, 1]  # the retry went to the other replica at once
    first, second = resting(client.replicas)
    assert 39.0 < first <= 40.0 and 49.0 < second <= 50.0  # both longer than REPLICA_COOLDOWN_S


def test_each_call_goes_to_the_next_replica_with_its_own_query(monkeypatch: pytest.MonkeyPatch) -> None:
    servers = _servers("ok", "ok", "ok")
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-replica-0123456789")
        urls = [f"{s.base_url}?replica={i}" for i, s in enumerate(servers)]
        client = OpenAIClient("model", "m", base_url="|".join(urls), timeout=5.0, retries=0)
        for _ in range(6):
            one_chat_call(client)
    finally:
        for server in servers:
            server.close()
    assert [[r.query for r in s.requests] for s in servers] == [[f"replica={i}"] * 2 for i in range(3)]
