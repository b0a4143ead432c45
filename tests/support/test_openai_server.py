"""The loopback OpenAI-compatible server used by the judge and lm-eval tests behaves as documented."""

from __future__ import annotations

import concurrent.futures

import openai
import pytest

from support.openai_server import Fault, OpenAIServer, Reply


def _client(server: OpenAIServer, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, timeout=timeout)


def _ask(client: openai.OpenAI, text: str = "hello") -> str | None:
    reply = client.chat.completions.create(model="judge", messages=[{"role": "user", "content": text}], temperature=0)
    return reply.choices[0].message.content


def test_chat_reply_usage_and_log(openai_server: OpenAIServer) -> None:
    openai_server.responder = lambda body: "echo " + body["messages"][-1]["content"]
    client = _client(openai_server)
    reply = client.chat.completions.create(model="judge", messages=[{"role": "user", "content": "two words"}])
    assert reply.choices[0].message.content == "echo two words"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (2, 3)
    (req,) = openai_server.requests
    assert req.path == "/v1/chat/completions" and req.json["model"] == "judge"
    assert req.headers["authorization"] == "Bearer test-key"


def test_injected_faults_in_order(openai_server: OpenAIServer) -> None:
    client = _client(openai_server, timeout=0.3)
    openai_server.inject(
        Fault.server_error(503), Fault.rate_limit(2.5), Fault.slow(1.0), Fault.not_json(), Fault.dropped()
    )
    with pytest.raises(openai.InternalServerError):
        _ask(client)
    with pytest.raises(openai.RateLimitError) as rate:
        _ask(client)
    assert rate.value.response.headers["retry-after"] == "2.5"
    with pytest.raises(openai.APITimeoutError):
        _ask(client)
    with pytest.raises(ValueError):  # the SDK surfaces an undecodable 200 body as a JSON error
        _ask(client)
    with pytest.raises(openai.APIConnectionError):
        _ask(client)
    assert _ask(client) == "ok"
    assert openai_server.count() == 6


def test_concurrency_is_measured(openai_server: OpenAIServer) -> None:
    openai_server.latency = 0.2
    client = _client(openai_server)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda i: _ask(client), range(4))) == ["ok"] * 4
    assert openai_server.max_in_flight >= 2
    assert openai_server.in_flight == 0


def test_custom_route_and_fault_plan(openai_server: OpenAIServer) -> None:
    openai_server.route("POST", "/v1/audio/transcriptions", lambda req: Reply(body={"text": "hi"}))
    client = _client(openai_server)
    text = client.audio.transcriptions.create(model="asr", file=("a.wav", b"RIFF0000", "audio/wav"))
    assert text.text == "hi"
    assert openai_server.count("/v1/audio/transcriptions") == 1
    openai_server.fault_plan = lambda req: Fault.server_error() if req.index % 2 == 1 else None
    with pytest.raises(openai.InternalServerError):
        _ask(client)  # request index 1
    assert _ask(client) == "ok"  # request index 2
    openai_server.reset()
    assert openai_server.requests == [] and openai_server.max_in_flight == 0
