"""Transcript normalisation and edit counting for matching (App A.2) and M4 (App A.3 Eq. 4).

Small composable transforms in the style of jiwer: :func:`normalize` (NFKC, case folding,
punctuation to spaces, whitespace collapsed), :func:`is_cjk_dominant`, :func:`units` (characters
for CJK-dominant references, words otherwise) and :func:`edit_count` (Levenshtein over units).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

from .constants import CJK_DOMINANT_MIN

#: Apostrophes inside words are dropped ("don't" -> "dont") rather than split.
_APOSTROPHES = re.compile(r"(?<=\w)['\u2019\u02bc](?=\w)")
_SPACES = re.compile(r"\s+")
_CJK_RANGES = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_OTHER_RUN = re.compile(f"[^\\s{_CJK_RANGES}]+")


class _Separators(dict):
    """``str.translate`` table: Unicode punctuation (P*) and symbols (S*) become spaces, full-width
    forms included (NFKC has already mapped "？" to "?"), so "yellow？And" is two words. Filled on
    first sight of each character (up to 65,536 of them), so translation runs in C."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        value = " " if unicodedata.category(ch)[0] in "PS" else ch
        if len(self) < 65_536:
            self[code] = value
        return value


_SEPARATORS = _Separators()


#: Normalised transcripts kept (:func:`normalize`): enough for a scene's to be normalised once for
#: matching and M4, and bounded, so a streamed run's memory does not grow with its scenes.
NORMALIZE_CACHE = 8192


@lru_cache(maxsize=NORMALIZE_CACHE)
def normalize(text: str) -> str:
    """NFKC, casefold, in-word apostrophes removed, punctuation/symbols to spaces, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _APOSTROPHES.sub("", text)
    text = text.translate(_SEPARATORS)
    return _SPACES.sub(" ", text).strip()


def is_cjk_dominant(text: str) -> bool:
    """True when CJK characters are more than ``CJK_DOMINANT_MIN`` of the text's tokens, counting
    each CJK character as a token and each run of other non-space characters (an embedded English
    word, a number) as one: "我想买iPhone 15可以吗" is 6 CJK of 8 tokens, so CJK-dominant."""
    cjk = len(_CJK.findall(text))
    other = len(_OTHER_RUN.findall(text))
    return cjk > 0 and cjk / (cjk + other) > CJK_DOMINANT_MIN


def units(normalized: str, chars: bool) -> list[str]:
    """Scoring units of a normalised string: non-space characters, or whitespace-split words."""
    return [c for c in normalized if not c.isspace()] if chars else normalized.split()


def edit_count(reference: str, hypothesis: str) -> tuple[int, int]:
    """(Levenshtein edits, reference length) in units chosen by the *reference* (App A.3 Eq. 4).

    Both strings are normalised first; an empty hypothesis costs the whole reference length.
    """
    ref_norm, hyp_norm = normalize(reference), normalize(hypothesis)
    chars = is_cjk_dominant(ref_norm)
    ref_units, hyp_units = units(ref_norm, chars), units(hyp_norm, chars)
    return Levenshtein.distance(ref_units, hyp_units), len(ref_units)
