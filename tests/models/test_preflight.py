"""The server preflight (``odu/transport/server_check.py``) as it promises: each replica answers ``GET
/models`` and lists the model (no list at all: 404/405/501 skip the step), one minimal request in
the run's own shape is accepted, no retries, within ``PREFLIGHT_TIMEOUT_S``, the client's
statistics untouched, the judge before the model, and every failure a ``PreflightError`` naming the
server (scrubbed), the model and the cause."""

from __future__ import annotations

import pytest
from support.openai_server import Fault, OpenAIServer, Reply, dead_url

from odu.judge import OpenAIJudge
from odu.models.openai_omni import OpenAIOmni
from odu.transport.server_check import (
    PREFLIGHT_TIMEOUT_S,
    PROBE_MAX_TOKENS,
    PROBE_TEXT,
    PreflightError,
    check_judge,
    check_model,
)

JUDGE, MODEL = "judge-m", "omni-m"


@pytest.fixture
def server(openai_key: str) -> OpenAIServer:
    with OpenAIServer(models=(JUDGE, MODEL)) as live:
        yield live


def judge(base_url: str, **options) -> OpenAIJudge:
    return OpenAIJudge(JUDGE, base_url=base_url, no_cache=True, progress=False, **options)


def test_a_sound_server_passes_with_one_listing_and_one_minimal_request(server: OpenAIServer) -> None:
    j = judge(server.base_url, retries=4, timeout=7.0)
    assert check_judge(j) is True
    [listing, probe] = server.requests
    assert (listing.method, listing.path) == ("GET", "/v1/models")
    assert probe.json["messages"] == [{"role": "user", "content": PROBE_TEXT}]
    assert probe.json["max_tokens"] == PROBE_MAX_TOKENS and probe.json["temperature"] == 0
    assert j.client.stats.requests == 0 and (j.client.retries, j.client.timeout) == (4, 7.0)  # as before


def test_a_model_not_listed_is_named_with_what_is_served(server: OpenAIServer) -> None:
    server.models = ["other-a", "other-b"]
    with pytest.raises(PreflightError, match=r"model 'judge-m' is not among the models it serves: other-a, other-b"):
        check_judge(judge(server.base_url))
    server.models = [f"x{JUDGE}", f"{JUDGE}-large"]  # a name containing it is not it
    with pytest.raises(PreflightError, match="is not among the models"):
        check_judge(judge(server.base_url))


def test_a_listed_id_with_googles_models_prefix_counts(server: OpenAIServer) -> None:
    server.route("GET", "/v1/models", lambda req: Reply(body={"object": "list", "data": [{"id": f"models/{JUDGE}"}]}))
    assert check_judge(judge(server.base_url)) is True


@pytest.mark.parametrize("status", [404, 405, 501])
def test_a_server_without_a_model_list_is_probed_anyway(server: OpenAIServer, status: int) -> None:
    server.route("GET", "/v1/models", lambda req: Reply(status=status, body={"error": {"message": "no"}}))
    assert check_judge(judge(server.base_url)) is True
    assert server.count() == 1


@pytest.mark.parametrize("status", [401, 403, 500])
def test_another_answer_to_the_listing_stops_the_run(server: OpenAIServer, status: int) -> None:
    server.route("GET", "/v1/models", lambda req: Reply(status=status, body={"error": {"message": "go away"}}))
    with pytest.raises(PreflightError, match=f"GET /models answered HTTP {status}: .*go away"):
        check_judge(judge(server.base_url))
    assert server.count() == 0


def test_nothing_listening_is_named_with_its_cause(openai_key: str) -> None:
    url = dead_url()
    with pytest.raises(PreflightError) as failed:
        check_judge(judge(url))
    message = str(failed.value)
    assert f"judge server {url} (model 'judge-m')" in message and "cannot reach the server" in message
    assert "Connect" in message and "--no-preflight" in message


def test_a_refused_minimal_request_is_named(server: OpenAIServer) -> None:
    server.responder = lambda body: Fault(status=400, body={"error": {"message": "bad field"}})
    with pytest.raises(PreflightError, match="a minimal request was refused .*bad field"):
        check_judge(judge(server.base_url))


def test_a_401_on_the_probe_is_a_preflight_error_too(server: OpenAIServer) -> None:
    server.responder = lambda body: Fault(status=401, body={"error": {"message": "bad key"}})
    with pytest.raises(PreflightError, match="a minimal request was refused"):
        check_judge(judge(server.base_url))


def test_no_retries_in_the_preflight(server: OpenAIServer) -> None:
    server.responder = lambda body: Fault.server_error(503)
    with pytest.raises(PreflightError):
        check_judge(judge(server.base_url, retries=5))
    assert server.count() == 1


def test_a_silent_host_stops_the_check_at_its_deadline(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import odu.transport.server_check as server_check

    monkeypatch.setattr(server_check, "PREFLIGHT_TIMEOUT_S", 0.5)
    server.latency = 5
    with pytest.raises(PreflightError, match="within 0.5 s"):
        check_judge(judge(server.base_url))
    assert PREFLIGHT_TIMEOUT_S == 20.0


def test_every_replica_is_listed_and_the_dead_one_named(server: OpenAIServer) -> None:
    dead = dead_url()
    with pytest.raises(PreflightError, match=f"replica {dead}: cannot reach the server"):
        check_judge(judge(f"{server.base_url}|{dead}"))
    assert server.count("/v1/models") == 1 and server.count() == 0


def test_the_message_shows_no_credentials(server: OpenAIServer) -> None:
    url = server.base_url.replace("http://", "http://u:pw-secret-77@") + "?token=tok-secret-77"
    server.models = ["other"]
    server.api_key = None
    with pytest.raises(PreflightError) as failed:
        check_judge(judge(url))
    assert "secret-77" not in str(failed.value) and "token=***" in str(failed.value)


def test_the_model_backend_is_probed_in_its_own_request_shape(server: OpenAIServer) -> None:
    backend = OpenAIOmni(MODEL, base_url=server.base_url, provider="vllm", progress=False)
    assert check_model(backend) is True
    probe = server.requests[-1].json
    assert probe["model"] == MODEL and probe["messages"] == [{"role": "user", "content": PROBE_TEXT}]
    assert probe["max_tokens"] == PROBE_MAX_TOKENS
    stats = backend.client.stats
    assert (stats.requests, stats.retries, stats.errors, stats.wall_time_s) == (0, 0, 0, 0.0)  # not the run's work


def test_an_answer_that_is_an_error_fails_the_check(server: OpenAIServer) -> None:
    """A backend whose probe comes back as an inference error (say, refused by a filter) is not ready."""
    from odu.models.base import Generation
    from odu.transport.openai_client import OpenAIClient

    class Refusing:
        client = OpenAIClient("model", MODEL, base_url=server.base_url, timeout=5.0)

        async def probe(self, sdk, text: str, max_tokens: int) -> Generation:
            return Generation.failed("blocked by the content filter")

    with pytest.raises(PreflightError, match=r"a minimal request failed \(blocked by the content filter\)"):
        check_model(Refusing())


def test_judges_and_models_without_a_server_are_not_checked() -> None:
    from odu.judge import make_judge
    from odu.models import make_backend

    assert check_judge(make_judge("lexical")) is False
    assert check_model(make_backend("never")) is False


def test_the_judge_is_checked_before_the_model(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("lm_eval")
    from odu.harness.models import check_servers

    monkeypatch.setenv("ODU_JUDGE", f"openai:{JUDGE} --judge-base-url {dead_url()} --no-cache")
    backend = OpenAIOmni(MODEL, base_url=server.base_url, provider="vllm", progress=False)
    with pytest.raises(PreflightError, match="judge server"):
        check_servers(backend)
    assert server.count(None) == 0  # the model's server was never asked
