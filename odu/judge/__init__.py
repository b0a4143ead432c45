"""Judges for M2: stored verdicts, the offline lexical judge, and OpenAI-compatible LLM judges.

:func:`make_judge` turns a command-line spec into a judge:

* ``lexical`` — offline, approximate (:mod:`.lexical`);
* ``verdicts:PATH`` — stored verdicts (:mod:`.stored`).
"""

from __future__ import annotations

from typing import Any

from .base import Judge, JudgeRequest, JudgeVerdict, candidate_text
from .lexical import LexicalJudge
from .stored import StoredVerdictJudge


def make_judge(spec: str, **options: Any) -> Judge:
    """A judge from its spec string; ``options`` go to judges that take them."""
    kind, _, arg = spec.partition(":")
    if kind == "lexical" and not arg:
        return LexicalJudge()
    if kind == "verdicts" and arg:
        return StoredVerdictJudge(arg)
    raise ValueError(f"unknown judge spec {spec!r} (expected 'lexical' or 'verdicts:PATH')")


__all__ = ["Judge", "JudgeRequest", "JudgeVerdict", "LexicalJudge", "StoredVerdictJudge", "candidate_text", "make_judge"]
