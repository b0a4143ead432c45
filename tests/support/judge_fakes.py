"""A deterministic stand-in for an LLM judge, answering App F.4 requests on the loopback server.

:func:`rule_verdicts` decides a hit when the key point's last word occurs in the candidate text, so
expected verdicts can be computed without a server; :func:`judge_responder` reads the candidate
and key points back out of a chat request built by :mod:`odu.judge.prompt` and answers with them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from odu.core.schema import KeyPoint
from odu.judge.prompt import neutralize

_CANDIDATE = re.compile(r"\n<model_output>\n(.*)\n</model_output>\n", re.DOTALL)


def read_request(body: dict[str, Any]) -> tuple[str, list[dict[str, str]]]:
    """(candidate text as sent, key points) from a judge chat request."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    candidate = _CANDIDATE.search(user).group(1)
    points_block = user.split("point text:\n", 1)[1].split("\n\n", 1)[0]
    return candidate, [json.loads(line) for line in points_block.splitlines()]


def rule_hit(candidate: str, point: str) -> bool:
    """The fake judge's rule: the point's last word appears in the candidate (case-insensitive)."""
    return point.split()[-1].strip(".").lower() in candidate.lower()


def rule_verdicts(candidate: str, key_points: list[KeyPoint]) -> dict[str, bool]:
    """What the fake judge answers for ``candidate`` (as the scorer builds it) and ``key_points``."""
    return {k.qid: rule_hit(neutralize(candidate), k.point) for k in key_points}


def verdict_json(candidate: str, points: list[dict[str, str]]) -> str:
    return json.dumps([{"qid": p["qid"], "hit": rule_hit(candidate, p["point"]), "reason": "rule"} for p in points])


def judge_responder(wrap: Callable[[str], str] = lambda text: text) -> Callable[[dict[str, Any]], str]:
    """A responder answering every judge request by :func:`rule_hit`; ``wrap`` dresses the JSON."""

    def respond(body: dict[str, Any]) -> str:
        candidate, points = read_request(body)
        return wrap(verdict_json(candidate, points))

    return respond
