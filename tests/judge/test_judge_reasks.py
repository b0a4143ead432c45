"""The judge's re-asks and cache, as docs/judges.md promises them: a reply that is no valid verdict
array is asked again exactly ``reasks`` times, quoting the reply, naming the problem and the qids,
each re-ask counted, then the segment is a judge error; a failed call is not re-asked; a verdict
that finally comes is kept and cached; ``--no-cache`` reads and writes nothing; a verdict naming a
key twice is never taken."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.judge_fakes import judge_responder
from support.openai_server import Fault, OpenAIServer

from odu.core.schema import KeyPoint
from odu.judge import JudgeRequest, OpenAIJudge
from odu.judge.cache import VerdictCache
from odu.judge.prompt import JUDGE_INSTRUCTION

POINTS = (
    KeyPoint("kp01", "The user wants the sound muted", "intent", ("T1",)),
    KeyPoint("kp02", "The chime comes from the phone", "required_context.audio", ("T2",)),
)
GOOD = '[{"qid": "kp01", "hit": true, "reason": "a"}, {"qid": "kp02", "hit": false, "reason": "b"}]'
BAD = '[{"qid": "kp01", "hit": true, "reason": "only one"}]'


def request(i: int = 0) -> JudgeRequest:
    return JudgeRequest(f"s{i}", 0, f"mute the sound #{i}", POINTS)


def judge(server: OpenAIServer, tmp_path: Path, **options: object) -> OpenAIJudge:
    defaults = {"cache_path": tmp_path / "judge.sqlite", "progress": False, "backoff": (0.01, 2.0, 0.05)}
    return OpenAIJudge("loopback", base_url=server.base_url, **{**defaults, **options})


def replies(server: OpenAIServer, *texts: str) -> None:
    """The server answers ``texts`` in turn, the last one from then on."""
    queue = list(texts)
    server.responder = lambda body: queue.pop(0) if len(queue) > 1 else queue[0]


@pytest.mark.parametrize("reasks", [0, 1, 3])
def test_a_bad_reply_is_asked_again_exactly_reasks_times(
    reasks: int, openai_server: OpenAIServer, openai_key: str, tmp_path: Path
) -> None:
    replies(openai_server, BAD)
    j = judge(openai_server, tmp_path, reasks=reasks)
    [verdict] = j.judge([request()])
    assert (
        verdict.hits is None and f"no valid verdicts after {reasks + 1} replies: no verdict for kp02" in verdict.error
    )
    assert openai_server.count() == reasks + 1
    info = j.accounting()
    assert (info["reasks"], info["errors"], info["requests"]) == (reasks, 1, reasks + 1)


def test_a_re_ask_quotes_the_reply_and_names_the_problem_and_the_qids(
    openai_server: OpenAIServer, openai_key: str, tmp_path: Path
) -> None:
    replies(openai_server, BAD, GOOD)
    [verdict] = judge(openai_server, tmp_path, reasks=2).judge([request()])
    assert verdict.hits == {"kp01": True, "kp02": False}
    first, second = (r.json["messages"] for r in openai_server.requests)
    assert second[:2] == first and first[0]["content"] == JUDGE_INSTRUCTION
    assert second[2] == {"role": "assistant", "content": BAD}
    assert second[3]["role"] == "user" and "no verdict for kp02" in second[3]["content"]
    assert "kp01, kp02" in second[3]["content"]


def test_a_verdict_that_finally_comes_is_kept_and_cached(
    openai_server: OpenAIServer, openai_key: str, tmp_path: Path
) -> None:
    replies(openai_server, "no json at all", GOOD)
    j = judge(openai_server, tmp_path, reasks=1)
    [verdict] = j.judge([request()])
    j.close()
    assert verdict.error is None and j.accounting()["reasks"] == 1
    assert len(VerdictCache(tmp_path / "judge.sqlite")) == 1


def test_a_failed_call_is_not_re_asked(openai_server: OpenAIServer, openai_key: str, tmp_path: Path) -> None:
    openai_server.responder = lambda body: Fault(status=400, body={"error": {"message": "bad request"}})
    j = judge(openai_server, tmp_path, reasks=3, retries=2)
    [verdict] = j.judge([request()])
    assert verdict.hits is None and "judge call failed" in verdict.error
    assert openai_server.count() == 1 and j.accounting()["reasks"] == 0


def test_a_verdict_naming_a_key_twice_is_re_asked_then_an_error(
    openai_server: OpenAIServer, openai_key: str, tmp_path: Path
) -> None:
    twice = '[{"qid": "kp01", "hit": true, "hit": false, "reason": "a"}, {"qid": "kp02", "hit": false, "reason": "b"}]'
    replies(openai_server, twice)
    [verdict] = judge(openai_server, tmp_path, reasks=1).judge([request()])
    assert verdict.hits is None and "names 'hit' twice" in verdict.error and openai_server.count() == 2


def test_the_cache_answers_a_second_run_and_counts_its_hits(
    openai_server: OpenAIServer, openai_key: str, tmp_path: Path
) -> None:
    openai_server.responder = judge_responder()
    first = judge(openai_server, tmp_path)
    asked = first.judge([request(0), request(1), request(0)])  # a repeated segment is asked once
    first.close()
    assert openai_server.count() == 2 and asked[0] == asked[2]
    again = judge(openai_server, tmp_path)
    assert again.judge([request(1), request(0)]) == [asked[1], asked[0]]
    assert openai_server.count() == 2 and again.accounting()["cache_hits"] == 2
    again.close()


def test_no_cache_reads_and_writes_nothing(openai_server: OpenAIServer, openai_key: str, tmp_path: Path) -> None:
    openai_server.responder = judge_responder()
    warm = judge(openai_server, tmp_path)
    warm.judge([request()])
    warm.close()
    cold = judge(openai_server, tmp_path, no_cache=True, cache_path=tmp_path / "other.sqlite")
    cold.judge([request()])
    assert openai_server.count() == 2 and not (tmp_path / "other.sqlite").exists()
    assert cold.accounting()["cache"] is None and cold.accounting()["cache_hits"] == 0
