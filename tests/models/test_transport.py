"""The transport limits of the one client (odu.transport.openai_client), held against hostile servers on real
sockets (tests/support/hostile_servers.py): a total deadline per request, a cap on the reply's
size, usage counts that are not numbers, and replicas (several servers in one ``base_url``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.backend_media import FAST_BACKOFF, GREEDY, loader, request
from support.hostile_servers import HostileServer, completion_body
from support.judge_fakes import judge_responder, rule_verdicts
from support.openai_server import Fault, OpenAIServer, Reply, chat_completion

from odu.core.schema import KeyPoint
from odu.io.scrub import scrub_text, url_credentials
from odu.judge import JudgeRequest, OpenAIJudge
from odu.models.base import Generation
from odu.models.openai_omni import OpenAIOmni
from odu.transport.openai_client import (
    MAX_RESPONSE_BYTES,
    REPLICA_COOLDOWN_S,
    OpenAIClient,
    ReplicaPool,
    TransientError,
    split_replicas,
    with_retries,
)

ANSWER = '{"has_demand": false, "segments": []}'
#: The judge and the omni model of these tests, served by every loopback server here.
MODELS = ("judge-m", "omni-m")
POINTS = (KeyPoint("kp01", "The user wants the sound muted", "intent", ("T1",)),)


@pytest.fixture(autouse=True)
def _api_key(openai_key: str) -> None:
    """The key the strict loopback server takes, in ``OPENAI_API_KEY``."""


@pytest.fixture
def openai_server(openai_server: OpenAIServer) -> OpenAIServer:
    openai_server.models = list(MODELS)
    return openai_server


def server(responder: object, **options: object) -> OpenAIServer:
    """A strict loopback server of :data:`MODELS` (not started)."""
    return OpenAIServer(responder, models=MODELS, **options)  # type: ignore[arg-type]


def judge_for(base_url: str, tmp_path: Path, **options: object) -> OpenAIJudge:
    options = {"cache_path": tmp_path / "judge.sqlite", "progress": False, "backoff": FAST_BACKOFF, **options}
    return OpenAIJudge("judge-m", base_url=base_url, **options)


def segments(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(f"s{i}", 0, f"mute the muted sound #{i}", POINTS) for i in range(n)]


def model_for(base_url: str, **options: object) -> OpenAIOmni:
    options = {"progress": False, "backoff": FAST_BACKOFF, **options}
    return OpenAIOmni("omni-m", base_url=base_url, **options)


# --- the total deadline of a request --------------------------------------------------------------


def test_a_trickling_judge_meets_the_deadline_not_the_read_timeout(tmp_path: Path) -> None:
    """One byte every 0.5 s never trips a per-read timeout; the request's total deadline ends it."""
    with HostileServer("trickle") as server:
        judge = judge_for(server.base_url, tmp_path, timeout=1.0, retries=0)
        (verdict,) = judge.judge(segments(1))
    assert verdict.hits is None and "no complete reply within 1 s (the request's deadline)" in verdict.error
    assert server.requests == 1 and 0 < server.bytes_sent < len(completion_body())
    assert judge.accounting()["errors"] == 1


def test_the_deadline_is_retried_like_a_timeout(tmp_path: Path) -> None:
    with HostileServer("trickle") as server:
        (verdict,) = judge_for(server.base_url, tmp_path, timeout=0.6, retries=1).judge(segments(1))
    assert "after 2 attempts" in verdict.error and server.requests == 2


def test_a_trickling_model_server_is_an_inference_error(media) -> None:
    with HostileServer("trickle", text=ANSWER) as server:
        model = model_for(server.base_url, timeout=1.0, retries=0)
        [generation] = model.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    assert generation.text is None and "the request's deadline" in generation.error
    assert model.info()["stats"]["errors"] == 1


def test_waiting_for_a_concurrency_slot_is_not_part_of_the_deadline(openai_server: OpenAIServer, tmp_path) -> None:
    """Eight segments, one call at a time, each 0.3 s: the last waits 2.1 s for its slot, past a
    1.5 s deadline, yet every call gets its own 1.5 s."""
    openai_server.responder = judge_responder()
    openai_server.latency = 0.3
    requests = segments(8)
    verdicts = judge_for(openai_server.base_url, tmp_path, timeout=1.5, retries=0, concurrency=1).judge(requests)
    assert [v.hits for v in verdicts] == [rule_verdicts(r.candidate, list(POINTS)) for r in requests]


# --- the cap on a reply's size --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["endless", "huge"])
def test_an_oversized_judge_reply_is_cut_off_as_a_judge_error(mode: str, tmp_path: Path) -> None:
    """An endless chunked body is read up to the cap, then dropped; an announced 1 GiB is refused
    from its header."""
    with HostileServer(mode) as server:
        judge = judge_for(server.base_url, tmp_path, retries=1)
        (verdict,) = judge.judge(segments(1))
    assert verdict.hits is None and f"reply larger than {MAX_RESPONSE_BYTES:,} bytes" in verdict.error
    assert "after 2 attempts" in verdict.error and server.requests == 2  # retried per the policy
    if mode == "endless":  # read as it came, not buffered without end
        assert MAX_RESPONSE_BYTES < server.bytes_sent


def test_an_endless_stream_is_cut_off_as_an_inference_error(media) -> None:
    with HostileServer("endless") as server:
        model = model_for(server.base_url, stream=True, retries=0)
        [generation] = model.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    assert generation.text is None and "reply larger than" in generation.error


def test_a_compressed_reply_is_refused(tmp_path: Path) -> None:
    """The client asks for ``identity``: a gzip body could inflate past any cap while decoded."""
    with HostileServer("gzip") as server:
        (verdict,) = judge_for(server.base_url, tmp_path, retries=3).judge(segments(1))
    assert "reply compressed (gzip)" in verdict.error and server.requests == 1  # no retry can mend it


def test_the_client_asks_for_an_uncompressed_reply(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = judge_responder()
    judge_for(openai_server.base_url, tmp_path).judge(segments(1))
    assert openai_server.requests[0].headers["accept-encoding"] == "identity"


def test_a_reply_nested_past_the_json_decoder_is_retried_not_a_crash(
    openai_server: OpenAIServer, tmp_path: Path, media
) -> None:
    openai_server.responder = lambda body: Reply(body=b"[" * 200_000)
    (verdict,) = judge_for(openai_server.base_url, tmp_path, retries=1).judge(segments(1))
    assert "RecursionError after 2 attempts: maximum recursion depth exceeded while decoding" in verdict.error
    [generation] = model_for(openai_server.base_url, retries=0).generate(
        [request(media, ["a1"], "audio-only")], loader(media), GREEDY
    )
    assert "model call failed: RecursionError after 1 attempts" in generation.error


# --- usage counts that are not token counts -----------------------------------------------------------


BAD_USAGE = [{"prompt_tokens": "10", "completion_tokens": 3}, {"prompt_tokens": float("nan")}, {"prompt_tokens": -3}]


@pytest.mark.parametrize("usage", BAD_USAGE + [{"prompt_tokens": True, "completion_tokens": None}, "many"])
def test_a_bad_usage_field_neither_crashes_the_judge_nor_spoils_its_json(
    usage: object, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    def reply(body: dict) -> Reply:
        return Reply(body={**chat_completion(body, judge_responder()(body)), "usage": usage})

    openai_server.responder = reply
    judge = judge_for(openai_server.base_url, tmp_path)
    (verdict,) = judge.judge(segments(1))
    assert verdict.error is None
    info = judge.accounting()
    expected = 3 if isinstance(usage, dict) and usage.get("completion_tokens") == 3 else 0
    assert (info["prompt_tokens"], info["completion_tokens"]) == (0, expected)
    json.dumps(info, allow_nan=False)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("usage", BAD_USAGE)
def test_a_bad_usage_field_does_not_crash_the_model_run(
    usage: dict, stream: bool, openai_server: OpenAIServer, media
) -> None:
    def reply(req) -> Reply:
        if not stream:
            return Reply(body={**chat_completion(req.json, ANSWER), "usage": usage})
        chunks = [
            {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": choices, **extra}
            for choices, extra in (
                ([{"index": 0, "delta": {"content": ANSWER}, "finish_reason": "stop"}], {}),
                ([], {"usage": usage}),
            )
        ]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return Reply(body=body, content_type="text/event-stream")

    openai_server.route("POST", "/v1/chat/completions", reply)
    model = model_for(openai_server.base_url, stream=stream)
    assert model.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY) == [Generation(ANSWER)]
    stats = model.info()["stats"]
    assert stats["prompt_tokens"] == 0 and stats["completion_tokens"] == usage.get("completion_tokens", 0)
    json.dumps(model.info(), allow_nan=False)


# --- replicas ---------------------------------------------------------------------------------------


def test_replicas_are_split_and_shown_without_credentials() -> None:
    url = "http://u:pw-secret@a:8000/v1?key=k-secret | http://b:9000/v1"
    assert split_replicas(url) == ["http://u:pw-secret@a:8000/v1?key=k-secret", "http://b:9000/v1"]
    assert scrub_text(url) == "http://a:8000/v1?key=*** | http://b:9000/v1"
    assert {"pw-secret", "k-secret"} <= set(url_credentials(url))
    with pytest.raises(ValueError, match="empty replica"):
        split_replicas("http://a/v1||http://b/v1")


def test_the_pool_picks_the_fewest_in_flight_and_passes_over_a_failed_replica() -> None:
    pool = ReplicaPool(["a", "b", "c"])
    assert [pool.acquire() for _ in range(4)] == [0, 1, 2, 0]  # fewest in flight, least recently chosen
    pool.release(1)
    assert pool.acquire() == 1 and pool.in_flight == [2, 1, 1]
    pool.release(2)
    pool.fail(2)  # c is idle but failed: a and b only, b the less busy
    assert pool.acquire() == 1 and pool.ready_elsewhere()
    pool.fail(0)
    pool.fail(1)
    assert not pool.ready_elsewhere() and pool.acquire() == 2  # all resting: the first to wake
    assert pool.cooldown == REPLICA_COOLDOWN_S and not ReplicaPool(["a"]).ready_elsewhere()
    pool = ReplicaPool(["a", "b"], cooldown=0.0)
    pool.fail(0, rest=float("inf"))  # a Retry-After of "1e400" rests a replica ten cooldowns, not for ever
    assert pool.acquire() == 0 and pool.ready_elsewhere()


def test_judge_calls_spread_over_replicas(tmp_path: Path) -> None:
    with server(judge_responder(), latency=0.2) as one, server(judge_responder(), latency=0.2) as two:
        requests = segments(12)
        judge = judge_for(f"{one.base_url}|{two.base_url}", tmp_path, concurrency=4)
        verdicts = judge.judge(requests)
        assert judge.accounting()["base_url"] == f"{one.base_url}|{two.base_url}"
    assert [v.hits for v in verdicts] == [rule_verdicts(r.candidate, list(POINTS)) for r in requests]
    assert one.count() + two.count() == 12 and one.count() >= 4 and two.count() >= 4


def test_a_failing_replica_is_passed_over_and_its_calls_retried_elsewhere(media) -> None:
    with server(lambda body: Fault.server_error(503)) as bad, server(lambda body: ANSWER) as good:
        model = model_for(f"{bad.base_url}|{good.base_url}", retries=1, concurrency=1, backoff=(60.0, 1.0, 60.0))
        reqs = [request(media, ["a1"], "audio-only", scene=f"s{i}") for i in range(5)]
        out = model.generate(reqs, loader(media), GREEDY)
    assert out == [Generation(ANSWER)] * 5 and model.info()["stats"]["retries"] == 1
    assert bad.count() == 1 and good.count() == 5  # the failed replica rests: nothing more is sent there
    assert model.info()["stats"]["wall_time_s"] < 30  # no 60 s backoff: the retry went to the ready replica


def test_a_dead_replica_is_passed_over(tmp_path: Path) -> None:
    with server(judge_responder()) as dead:
        dead_url = dead.base_url
    with server(judge_responder()) as good:
        judge = judge_for(f"{dead_url}|{good.base_url}", tmp_path, concurrency=1, backoff=(60.0, 1.0, 60.0))
        verdicts = judge.judge(segments(3))
    assert all(v.error is None for v in verdicts) and good.count() == 3
    assert judge.accounting()["retries"] == 1


def test_no_backoff_when_another_replica_is_ready() -> None:
    failures = iter([TransientError("HTTP 503")])

    async def call() -> str:
        if next(failures, None):
            raise TransientError("HTTP 503")
        return "ok"

    async def run() -> str:
        retried = with_retries(
            call, retries=1, backoff=(60.0, 1.0, 60.0), classify=lambda e: None, ready_elsewhere=lambda: True
        )
        return await asyncio.wait_for(retried, 10)

    assert asyncio.run(run()) == "ok"


def test_backends_on_one_socket_refuse_replicas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini's SDK and the Realtime WebSocket do not go through the client's request routing."""
    from odu.models.gemini import GeminiModel

    monkeypatch.setenv("GEMINI_API_KEY", "g-key")
    with pytest.raises(ValueError, match="the gemini backend talks to one server"):
        GeminiModel("gemini-x", base_url="http://a/v1|http://b/v1")
    assert len(OpenAIClient("model", "m", base_url="http://a/v1|http://b/v1", timeout=1.0).replicas) == 2


def test_score_spreads_the_judge_over_replicas_and_names_them(tmp_path: Path, capsys) -> None:
    """``odu-bench score --judge-base-url 'A|B'``: both replicas judge, the summary names both."""
    from support.omni_fakes import reference_output

    from odu.cli import main
    from odu.runs.contract import read_run

    scenes = Path(__file__).resolve().parents[2] / "odu" / "data" / "sample" / "scenes.jsonl"
    records = [json.loads(line) for line in scenes.read_text(encoding="utf-8").splitlines()]
    predictions = tmp_path / "p.jsonl"
    rows = [{"scene_id": r["scene_id"], "output": reference_output(r)} for r in records]
    predictions.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    with server(judge_responder(), latency=0.05) as one, server(judge_responder(), latency=0.05) as two:
        replicas = f"{one.base_url}|{two.base_url}"
        args = ["score", "--scenes", str(scenes), "--predictions", str(predictions), "--out", str(tmp_path / "run")]
        args += ["--judge", "openai:judge-m", "--judge-base-url", replicas, "--no-cache", "--no-progress"]
        assert main(args) == 0, capsys.readouterr().err
    judge = read_run(tmp_path / "run").summary["judge"]
    assert judge["base_url"] == replicas and judge["errors"] == 0
    assert one.count() > 0 and two.count() > 0 and one.count() + two.count() == judge["requests"]
