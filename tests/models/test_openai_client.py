"""The one OpenAI client (odu.openai_client): one scrubber for every user, the key placeholder of
local servers, the refusal message, the runner inside a running event loop."""

from __future__ import annotations

import asyncio

import pytest
from support.openai_server import OpenAIServer, Reply

from odu.harness.asr import AsrError, TranscriptionEndpoint
from odu.judge import JudgeUnavailableError, OpenAIJudge
from odu.models.openai_omni import OpenAIOmni
from odu.models.remote import ModelUnavailableError
from odu.openai_client import LOCAL_SERVER_KEY, OpenAIClient, ServerUnavailableError, retry_after
from odu.scrub import url_credentials

URL = "https://bob:s3cret-pw@llm.example.com:8443/v1?api-key=abcd1234&v=1"


def test_scrub_hides_the_key_and_the_url_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "k9")  # short keys too: the key is always scrubbed
    client = OpenAIClient("judge", "m", base_url=URL, api_key_env="MY_KEY", timeout=1.0)
    text = f"failed: POST {URL} with Bearer k9 (password s3cret-pw, token abcd1234) HTTP 401"
    scrubbed = client.scrub(text)
    for secret in ("k9", "s3cret-pw", "abcd1234", "bob:"):
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

    async def batch() -> None:
        sdk = client.async_sdk()
        try:
            await client.call(
                lambda: sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            )
        finally:
            await sdk.close()

    with pytest.raises(ServerUnavailableError) as refused:
        client.run(batch)
    message = str(refused.value)
    assert message.startswith(f"model server {openai_server.base_url} refused model 'm' with HTTP 403")
    assert "check OPENAI_API_KEY, the model name and base_url" in message and "sk-refused" not in message


def test_run_works_inside_a_running_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
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
