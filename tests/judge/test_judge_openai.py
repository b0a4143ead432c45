"""The OpenAI-compatible judge against a loopback server (real sockets): shape, concurrency,
failures retried to the clean result, malformed replies re-asked then reported, cache, secrets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.judge_fakes import judge_responder, rule_verdicts
from support.openai_server import Fault, OpenAIServer, Reply

from odu.core.schema import KeyPoint
from odu.judge import JudgeRequest, JudgeUnavailableError, OpenAIJudge, make_judge
from odu.judge.cache import VerdictCache
from odu.judge.prompt import JUDGE_INSTRUCTION, JUDGE_PROMPT_VERSION

SECRET = "sk-test-5f0c1b2e9d8a7c6b"
JUDGE_MODEL = "qwen3-judge"
FAST_BACKOFF = (0.01, 2.0, 0.5)


def make_requests(n: int) -> list[JudgeRequest]:
    """``n`` distinct segments; the fake judge's verdicts differ between them."""
    points = (
        KeyPoint("kp01", "The user wants the sound muted", "intent", ("T1",)),
        KeyPoint("kp02", "The chime comes from the phone", "required_context.audio", ("T1", "T2")),
        KeyPoint("kp03", "The phone is held at the bottom", "required_context.visual", ("T2",)),
    )
    texts = ("mute the muted sound | audio: phone chime", "turn it off | visual: a hand at the bottom", "nothing")
    return [JudgeRequest(f"scene{i:04d}", i % 2, f"{texts[i % 3]} #{i}", points) for i in range(n)]


def expected(requests: list[JudgeRequest]) -> list[dict[str, bool]]:
    return [rule_verdicts(r.candidate, list(r.key_points)) for r in requests]


def judge_for(server: OpenAIServer, tmp_path: Path, **options: object) -> OpenAIJudge:
    options = {"cache_path": tmp_path / "judge.sqlite", "progress": False, "backoff": FAST_BACKOFF, **options}
    return OpenAIJudge(JUDGE_MODEL, base_url=server.base_url, **options)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture
def openai_server(openai_server: OpenAIServer) -> OpenAIServer:
    """The shared strict server, keyed with this module's secret, serving the judge model and
    taking vLLM's ``chat_template_kwargs`` (the judge's ``extra_body`` in these tests)."""
    openai_server.api_key, openai_server.models = SECRET, [JUDGE_MODEL]
    openai_server.extra_fields = {"chat_template_kwargs"}
    return openai_server


def test_request_shape(openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", "another-key-123")
    openai_server.api_key = "another-key-123"
    openai_server.responder = judge_responder()
    judge = make_judge(
        "openai:qwen3-judge",
        base_url=openai_server.base_url,
        api_key_env="MY_JUDGE_KEY",
        max_tokens=512,
        extra_body={"chat_template_kwargs": {"enable_thinking": True}},
        cache_path=tmp_path / "c.sqlite",
        progress=False,
    )
    (request,) = make_requests(1)
    (verdict,) = judge.judge([request])
    assert verdict.hits == expected([request])[0] and verdict.error is None
    (seen,) = openai_server.requests
    body = seen.json
    assert body["model"] == "qwen3-judge" and body["temperature"] == 0 and body["max_tokens"] == 512
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == JUDGE_INSTRUCTION
    assert request.candidate in body["messages"][1]["content"]
    assert seen.headers["authorization"] == "Bearer another-key-123"
    info = judge.info()
    assert info["prompt_version"] == JUDGE_PROMPT_VERSION and info["approximate"] is False
    assert (info["requests"], info["segments"], info["cache_hits"], info["errors"]) == (1, 1, 0, 0)
    assert info["prompt_tokens"] > 0 and info["completion_tokens"] > 0


def test_calls_overlap_up_to_the_concurrency_bound(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = judge_responder()
    openai_server.latency = 0.15
    requests = make_requests(24)
    verdicts = judge_for(openai_server, tmp_path, concurrency=6).judge(requests)
    assert [v.hits for v in verdicts] == expected(requests)
    assert openai_server.max_in_flight == 6


def test_transient_failures_give_the_clean_verdicts(openai_server: OpenAIServer, tmp_path: Path) -> None:
    requests = make_requests(30)
    openai_server.responder = judge_responder(lambda text: f"<think>checking</think>\n```json\n{text}\n```")
    clean = judge_for(openai_server, tmp_path, no_cache=True).judge(requests)
    assert [v.hits for v in clean] == expected(requests)

    openai_server.reset()
    faults = [
        Fault.server_error(500),
        Fault.server_error(502),
        Fault.rate_limit(0.05),
        Fault.rate_limit(0.05, "retry-after-ms"),
        Fault.slow(2.0),
        Fault.not_json(),
        Fault.dropped(),
        Fault.server_error(503),
        Fault(200, {"object": "error", "message": "overloaded"}),  # JSON, but no chat completion
    ]
    openai_server.inject(*faults)
    malformed = {"left": 2}

    def flaky(body: dict) -> str:  # after the faults, two replies that are not verdict arrays
        if malformed["left"] and openai_server.count() > len(faults):
            malformed["left"] -= 1
            return "Sure! kp01 is a hit."
        return judge_responder()(body)

    openai_server.responder = flaky
    judge = judge_for(openai_server, tmp_path, no_cache=True, concurrency=4, timeout=0.5)
    noisy = judge.judge(requests)
    assert [v.hits for v in noisy] == [v.hits for v in clean]
    assert all(v.error is None for v in noisy)
    acct = judge.accounting()
    assert (acct["retries"], acct["reasks"], acct["errors"]) == (len(faults), 2, 0)
    assert acct["requests"] == openai_server.count() == len(requests) + len(faults) + 2


@pytest.mark.parametrize("header", ["Retry-After", "retry-after-ms"])
def test_retry_after_is_honoured(header: str, openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = judge_responder()
    openai_server.inject(Fault.rate_limit(1.0, header))
    judge = judge_for(openai_server, tmp_path, backoff=(0.0, 2.0, 30.0))
    (verdict,) = judge.judge(make_requests(1))
    assert verdict.error is None
    first, second = openai_server.requests
    assert second.received - first.received >= 0.95  # waited as told, not the 0 s backoff


def test_persistent_malformed_replies_are_judge_errors(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = lambda body: '[{"qid": "kp01", "hit": true, "reason": "only one"}]'
    judge = judge_for(openai_server, tmp_path, reasks=2)
    verdicts = judge.judge(make_requests(3))
    assert all(v.hits is None and "no verdict for kp02, kp03" in v.error for v in verdicts)
    assert openai_server.count() == 3 * 3
    reasked = openai_server.requests[-1].json["messages"]
    assert [m["role"] for m in reasked] == ["system", "user", "assistant", "user"]
    assert judge.accounting()["errors"] == 3
    judge.close()
    # Errors are not cached (not even as an empty verdict): a healthy server later answers them.
    assert len(VerdictCache(tmp_path / "judge.sqlite")) == 0
    openai_server.reset()
    openai_server.responder = judge_responder()
    again = judge_for(openai_server, tmp_path).judge(make_requests(3))
    assert [v.hits for v in again] == expected(make_requests(3)) and openai_server.count() == 3


def test_exhausted_retries_are_judge_errors_not_exceptions(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.fault_plan = lambda req: Fault.server_error(500)
    (verdict,) = judge_for(openai_server, tmp_path, retries=3).judge(make_requests(1))
    assert verdict.hits is None and "InternalServerError after 4 attempts" in verdict.error
    assert openai_server.count() == 4


@pytest.mark.parametrize("status", [401, 403, 404])
def test_wrong_key_or_model_stops_the_run(status: int, openai_server: OpenAIServer, tmp_path: Path) -> None:
    """401/403 (key) and 404 (an unknown model, as OpenAI answers it): no retry can mend them."""
    message = f"bad key {SECRET}" if status != 404 else "The model `qwen3-judge` does not exist"
    openai_server.fault_plan = lambda req: Fault(status, {"error": {"message": message, "code": "model_not_found"}})
    judge = judge_for(openai_server, tmp_path, concurrency=2)
    with pytest.raises(JudgeUnavailableError, match=f"HTTP {status}") as failure:
        judge.judge(make_requests(20))
    assert SECRET not in str(failure.value) and "check OPENAI_API_KEY, the model name" in str(failure.value)
    assert openai_server.count() <= 4 and judge.accounting()["retries"] == 0  # stopped: not 20 segments asked


def test_warm_cache_sends_nothing(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = judge_responder()
    requests = make_requests(40) + make_requests(5)  # repeated segments are judged once
    first = judge_for(openai_server, tmp_path).judge(requests)
    assert openai_server.count() == 40
    openai_server.reset()
    again = judge_for(openai_server, tmp_path)
    assert [v.hits for v in again.judge(requests)] == [v.hits for v in first] == expected(requests)
    assert openai_server.count() == 0
    assert (again.accounting()["cache_hits"], again.accounting()["requests"]) == (45, 0)
    # Another model, or another extra body (e.g. thinking on), is another judge: not served from cache.
    judge_for(openai_server, tmp_path, extra_body={"chat_template_kwargs": {"enable_thinking": True}}).judge(
        requests[:2]
    )
    assert openai_server.count() == 2


def test_judge_called_inside_a_running_event_loop(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = judge_responder()
    judge = judge_for(openai_server, tmp_path)
    requests = make_requests(4)

    async def harness() -> list:
        return judge.judge(requests)  # synchronous call from inside a coroutine

    assert [v.hits for v in asyncio.run(harness())] == expected(requests)


def test_secret_never_leaves_the_request_header(openai_server: OpenAIServer, tmp_path: Path) -> None:
    def echo_auth(req) -> Reply:  # a server that quotes the credentials back in its error
        return Reply(400, {"error": {"message": f"rejected {req.headers.get('authorization')}"}})

    openai_server.route("POST", "/v1/chat/completions", echo_auth)
    judge = judge_for(openai_server, tmp_path)
    (verdict,) = judge.judge(make_requests(1))
    assert "HTTP 400" in verdict.error and "***" in verdict.error and SECRET not in verdict.error
    assert SECRET not in json.dumps(judge.info()) and SECRET not in repr(judge)
    assert all(SECRET.encode() not in p.read_bytes() for p in tmp_path.iterdir())


def test_missing_key_without_base_url_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ValueError, match="OPENAI_API_KEY is not set"):
        OpenAIJudge("gpt-x")
