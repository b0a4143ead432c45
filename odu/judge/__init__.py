"""Judges for M2: stored verdicts, the offline lexical judge, and OpenAI-compatible LLM judges.

:func:`make_judge` turns a command-line spec into a judge:

* ``lexical`` — offline, approximate (:mod:`.lexical`);
* ``verdicts:PATH`` — stored verdicts (:mod:`.stored`);
* ``openai:MODEL`` — an LLM judge given App F.4's English rendering of the paper's instruction
  (App D.3 / F.4) on any OpenAI-compatible server (:mod:`.openai_judge`); options: ``base_url``,
  ``api_key_env``, ``concurrency``, ``max_tokens``, ``timeout``, ``extra_body``, ``retries``,
  ``cache_path``, ``no_cache``, ``progress``.
"""

from __future__ import annotations

from typing import Any

from .base import Judge, JudgeRequest, JudgeVerdict, candidate_text
from .cache import JudgeCacheError
from .lexical import LexicalJudge
from .openai_judge import JudgeUnavailableError, OpenAIJudge
from .stored import StoredVerdictJudge


def make_judge(spec: str, **options: Any) -> Judge:
    """A judge from its spec string; ``options`` go to judges that take them."""
    kind, _, arg = spec.partition(":")
    if kind == "lexical" and not arg:
        return LexicalJudge()
    if kind == "verdicts" and arg:
        return StoredVerdictJudge(arg)
    if kind == "openai" and arg:
        return OpenAIJudge(arg, **{k: v for k, v in options.items() if v is not None})
    raise ValueError(f"unknown judge spec {spec!r} (expected 'lexical', 'verdicts:PATH' or 'openai:MODEL')")


__all__ = [
    "Judge",
    "JudgeCacheError",
    "JudgeRequest",
    "JudgeUnavailableError",
    "JudgeVerdict",
    "LexicalJudge",
    "OpenAIJudge",
    "StoredVerdictJudge",
    "candidate_text",
    "make_judge",
]
