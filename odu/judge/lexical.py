"""Offline lexical judge: an APPROXIMATE stand-in for the paper's LLM judge.

It needs no server, so the bundled sample can be scored anywhere, but it only counts shared
content units; its M2 is not comparable with Table 3 and is labelled approximate wherever shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.constants import LEXICAL_HIT_MIN
from ..core.text import is_cjk_dominant, normalize
from .base import Judge, JudgeRequest, JudgeVerdict

_STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being it its
    this that these those there here they them their he she his her him i me my we our you your user
    users wants want wanted to do does did not no so than then into onto about over under up down out
    which who whom what when where why how can could would should will shall may might must has have
    had""".split()
)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_units(text: str) -> set[str]:
    """Stemmed English content words plus CJK character bigrams of ``text``."""
    norm = normalize(text)
    if is_cjk_dominant(norm):
        chars = [c for c in norm if not c.isspace()]
        return {a + b for a, b in zip(chars, chars[1:])} or set(chars)
    return {_stem(w) for w in norm.split() if w not in _STOPWORDS}


class LexicalJudge(Judge):
    name = "lexical"
    model = "lexical-overlap"
    approximate = True
    prompt_version = None
    streams = True

    def judge(self, requests: Sequence[JudgeRequest]) -> list[JudgeVerdict]:
        out = []
        for r in requests:
            candidate = content_units(r.candidate)
            hits, reasons = {}, {}
            for k in r.key_points:
                point = content_units(k.point)
                share = len(point & candidate) / len(point) if point else 0.0
                hits[k.qid] = share >= LEXICAL_HIT_MIN
                reasons[k.qid] = f"overlap {share:.2f}"
            out.append(JudgeVerdict(hits, reasons))
        return out
