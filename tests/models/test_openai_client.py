"""The one OpenAI client (odu.transport.openai_client): one scrubber for every user, the key placeholder of
local servers, a dry run's clients without a key, the refusal message, the runner inside a running event loop."""

from __future__ import annotations

import asyncio

import pytest
from support.client_calls import one_chat_call
from support.openai_server import OpenAIServer, Reply

from odu.harness.asr import AsrError, TranscriptionEndpoint
from odu.io.scrub import url_credentials
from odu.judge import JudgeUnavailableError, OpenAIJudge
from odu.models.openai_omni import OpenAIOmni
from odu.models.remote import ModelUnavailableError
from odu.transport.openai_client import (
    LOCAL_SERVER_KEY,
    CallFailedError,
    OpenAIClient,
    ServerUnavailableError,
    retry_after,
    sending_nothing,
)

URL = "https://bob:s3cret-pw@llm.example.com:8443/v1?api-key=abcd1234&v=1"


def test_scrub_hides_the_key_and_the_url_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "MY_KEY", "k9-client-KEY"
    )  # a credential-shaped key (a placeholder: tests/scoring/test_scrub.py)
    client = OpenAIClient("judge", "m", base_url=URL, api_key_env="MY_KEY", timeout=1.0)
    text = f"failed: POST {URL} with Bearer k9-client-KEY (password s3cret-pw, token abcd1234) HTTP 401"
    scrubbed = client.scrub(text)
    for secret in ("k9-client-KEY", "s3cret-pw", "abcd1234", "bob:"):
        assert secret not in scrubbed
    assert "HTTP 401" in scrubbed and "v=1" not in scrubbed  # the whole query goes, short values stay readable
    assert client.public_base_url == "https://llm.example.com:8443/v1?api-key=***&v=***"
    assert url_credentials("http://localhost:8000/v1") == []


def test_local_servers_get_the_placeholder_key_which_is_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = OpenAIClient("model", "m", base_url="http://localhost:8000/v1", timeout=1.0)
    assert client.scrub(f"sent {LOCAL_SERVER_KEY}") == f"sent {LOCAL_SERVER_KEY}"
    with pytest.raises(ValueError, match="model API key: environment variable OPENAI_API_KEY is not set"):
        OpenAIClient("model", "m", timeout=1.0)


def test_a_dry_run_s_client_needs_no_key_and_says_why_a_real_run_would_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with sending_nothing():
        keyless = OpenAIClient("model", "m", timeout=1.0)
        local = OpenAIClient("model", "m", base_url="http://localhost:8000/v1", timeout=1.0)
    assert keyless.missing_key == "model API key: environment variable OPENAI_API_KEY is not set"
    assert local.missing_key is None  # a local server takes the placeholder key
    with pytest.raises(ValueError, match="model API key: environment variable OPENAI_API_KEY is not set"):
        OpenAIClient("model", "m", timeout=1.0)  # outside the dry run, the refusal stands
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dry-run-0123456789")
    with sending_nothing():
        assert OpenAIClient("model", "m", timeout=1.0).missing_key is None


def test_judge_model_and_asr_share_the_client(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-shared-0123456789")
    users = [
        OpenAIJudge("j", base_url=URL, no_cache=True),
        OpenAIOmni("m", base_url=URL),
        TranscriptionEndpoint("a", base_url=URL, cache_dir=tmp_path),
    ]
    for user in users:
        assert isinstance(user.client, OpenAIClient)
        assert (
            user.client.scrub(f"{URL} sk-shared-0123456789") == "https://llm.example.com:8443/v1?api-key=***&v=*** ***"
        )
    assert [u.client.unavailable for u in users][:2] == [JudgeUnavailableError, ModelUnavailableError]
    assert issubclass(users[2].client.unavailable, AsrError)
    assert all(issubclass(u.client.unavailable, ServerUnavailableError) for u in users)


def test_refusal_names_server_model_and_what_to_check(openai_server: OpenAIServer, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-refused-0123456789")
    openai_server.api_key, openai_server.models = "sk-refused-0123456789", ["m"]
    openai_server.responder = lambda body: Reply(status=403, body={"error": {"message": "no sk-refused-0123456789"}})
    client = OpenAIClient("model", "m", base_url=openai_server.base_url, timeout=5.0, retries=0)

    with pytest.raises(ServerUnavailableError) as refused:
        one_chat_call(client)
    message = str(refused.value)
    assert message.startswith(f"model server {openai_server.base_url} refused model 'm' with HTTP 403")
    assert "check OPENAI_API_KEY, the model name and base_url" in message and "sk-refused" not in message


@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        # transformers serve >= 5.25 (cli/serving/server.py `_bad_request_handler`): FastAPI's {"detail": ...}
        (
            {"detail": "`num_frames`, `fps` are mutually exclusive"},
            "application/json",
            "`num_frames`, `fps` are mutually exclusive",
        ),
        ({"error": {"message": "bad field"}}, "application/json", "bad field"),
        ("upstream said no", "text/plain", "upstream said no"),
        ({"detail": "x" * 2000}, "application/json", "x" * 500 + " ..."),
    ],
)
def test_a_refused_call_carries_the_servers_reason(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, body: object, content_type: str, reason: str
) -> None:
    """The SDK's message keeps only ``error.message``: the server's reason in any other body reaches the
    inference error too (``sdk_status_message``), cut at ``MAX_REASON_CHARS``."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-reason-0123456789")
    openai_server.api_key, openai_server.models = "sk-reason-0123456789", ["m"]
    openai_server.responder = lambda _: Reply(status=400, body=body, content_type=content_type)
    client = OpenAIClient("model", "m", base_url=openai_server.base_url, timeout=5.0, retries=0)

    with pytest.raises(CallFailedError) as failed:
        one_chat_call(client)
    assert str(failed.value) == f"HTTP 400: Error code: 400 - {reason}"


def test_a_call_given_up_on_carries_the_servers_reason(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retried status (5xx) given up on names the server's reason too (a FastAPI server's plain
    ``Internal Server Error``, a ``detail``), not the SDK's bare ``Error code: 503``."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-reason-0123456789")
    openai_server.api_key, openai_server.models = "sk-reason-0123456789", ["m"]
    openai_server.responder = lambda _: Reply(status=503, body={"detail": "engine overloaded"})
    client = OpenAIClient("model", "m", base_url=openai_server.base_url, timeout=5.0, retries=0)

    with pytest.raises(CallFailedError) as failed:
        one_chat_call(client)
    assert str(failed.value) == "InternalServerError after 1 attempts: HTTP 503: Error code: 503 - engine overloaded"


def test_run_works_inside_a_running_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loop-0123456789")
    client = OpenAIClient("judge", "m", timeout=1.0)

    async def inner() -> int:
        await asyncio.sleep(0)
        return 7

    async def outer() -> int:  # e.g. a notebook or a harness calling metrics from a coroutine
        return client.run(inner)

    assert asyncio.run(outer()) == 7 and client.stats.wall_time_s > 0


def test_retry_after_reads_milliseconds_first_then_seconds_or_a_date() -> None:
    """``retry-after-ms`` (OpenAI's, finer) wins over ``Retry-After`` (RFC 9110 §10.2.3: seconds or an HTTP date)."""

    def failure(**headers: str) -> Exception:
        exc = Exception("429")
        exc.response = type("Response", (), {"headers": headers})()  # type: ignore[attr-defined]
        return exc

    assert retry_after(failure(**{"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    assert retry_after(failure(**{"retry-after": "9"})) == 9.0
    assert retry_after(failure(**{"retry-after": "Thu, 01 Jan 1970 00:00:00 GMT"})) == 0.0
    assert retry_after(failure()) is None and retry_after(Exception("no response")) is None


# --- issue 30 item 5: the query of a base URL reaches the server as it was written ---------------


def test_a_base_url_query_is_sent_with_every_request_and_the_path_gets_the_route(
    openai_server: OpenAIServer, openai_key: str, tmp_path
) -> None:
    """Azure-style ``api-version`` (and any other query value): the SDK's ``default_query``, never
    glued to the path (``/v1?route=blue&api-version=...chat/completions`` before)."""
    from support.judge_fakes import judge_responder

    from odu.core.schema import KeyPoint
    from odu.judge import JudgeRequest

    openai_server.responder = judge_responder()
    second = OpenAIServer(judge_responder()).start()
    try:
        first_url = f"{openai_server.base_url}?route=blue&api-version=2024-06-01"
        second_url = f"{second.base_url}/?api-version=2025-01-01&route=a%7Cb"
        judge = OpenAIJudge("loopback", base_url=f"{first_url}|{second_url}", no_cache=True, progress=False)
        point = (KeyPoint("kp01", "the sound muted"),)
        verdicts = judge.judge([JudgeRequest(f"s{i}", 0, f"mute the sound {i}", point) for i in range(6)])
    finally:
        second.close()
    assert all(v.error is None for v in verdicts)
    sent = [(r.path, r.query) for s in (openai_server, second) for r in s.requests]
    assert {path for path, _ in sent} == {"/v1/chat/completions"} and len(sent) == 6
    assert {q for _, q in sent[: openai_server.count()]} == {"route=blue&api-version=2024-06-01"}
    assert {q for _, q in sent[openai_server.count() :]} == {"api-version=2025-01-01&route=a%7Cb"}
    assert second.count() > 0  # both replicas took calls, each with its own query


def test_a_base_url_naming_a_query_parameter_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="query parameter 'k' given twice"):
        OpenAIClient("judge", "m", base_url="http://h/v1?k=1&k=2", timeout=1.0)
