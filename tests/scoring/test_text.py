"""odu/core/text.py: the transcript normalisation and edit counting behind matching (App A.2) and M4
(App A.3 Eq. 4)."""

from __future__ import annotations

import unicodedata

import pytest

from odu.core.constants import CJK_DOMINANT_MIN
from odu.core.text import _SEPARATORS, edit_count, is_cjk_dominant, normalize, units


@pytest.mark.parametrize(
    "raw, normalised",
    [
        ("Hey, agent, MUTE that sound.", "hey agent mute that sound"),
        ("yellow？And", "yellow and"),  # full-width punctuation separates words
        ("yellow?and", "yellow and"),
        ("ＦＵＬＬ－ＷＩＤＴＨ　ｔｅｘｔ", "full width text"),  # NFKC: full-width letters and the ideographic space
        ("don't", "dont"),
        ("don’t I’m", "dont im"),  # typographic apostrophes
        ("'quoted' rock 'n' roll", "quoted rock n roll"),  # quotes at word edges are punctuation
        ("Straße", "strasse"),  # case folding, not lower()
        ("26.5%", "26 5"),
        ("唉，这堆东西看得我头都大了。", "唉 这堆东西看得我头都大了"),
        # ’ between two CJK characters reads as an in-word apostrophe; harmless, CJK is scored without spaces
        ("再把第二段的‘协助’改成‘独立负责’，另外还要加个——", "再把第二段的 协助改成 独立负责 另外还要加个"),
        ("刚播那句“前226年”记一下。", "刚播那句 前226年 记一下"),
        ("我想买iPhone 15可以吗？", "我想买iphone 15可以吗"),
        ("  ...?!  ", ""),
        ("", ""),
        ("🙂 ok ✓", "ok"),
        ("snake_case\ttab\nnewline", "snake case tab newline"),
    ],
)
def test_normalize(raw, normalised):
    assert normalize(raw) == normalised


@pytest.mark.parametrize(
    "text, dominant",
    [
        ("", False),
        ("hello world", False),
        ("你好", True),
        ("我想买iphone 15可以吗", True),  # 6 CJK vs 2 other tokens
        ("帮我打开bluetooth", True),  # a long English word is one token
        ("打开 wifi and bluetooth now", False),  # 2 CJK vs 4 words
        ("你好 ok", True),
        ("你 ok", CJK_DOMINANT_MIN < 0.5),  # exactly half
        ("こんにちは", True),
        ("안녕하세요", True),
        ("26 5", False),
    ],
)
def test_is_cjk_dominant(text, dominant):
    assert is_cjk_dominant(text) is dominant


def test_units():
    assert units("hey agent mute", chars=False) == ["hey", "agent", "mute"]
    assert units("我想买iphone 15", chars=True) == list("我想买iphone15")
    assert units("", chars=True) == [] and units("", chars=False) == []


@pytest.mark.parametrize(
    "reference, hypothesis, expected",
    [
        ("Hey, agent, mute that sound.", "Hey agent mute that sound", (0, 5)),
        ("What's that yellow？And the red one?", "whats that yellow and the red one", (0, 7)),
        ("turn off the light", "turn on the light please", (2, 4)),
        ("turn off the light", "", (4, 4)),  # unmatched: empty hypothesis costs the reference length
        ("把温度调到26度。", "把温度调到二十六度", (3, 8)),  # characters; digits are characters too
        ("我想买iPhone 15可以吗", "我想买iphone15可以吗", (0, 14)),
        ("帮我打开Bluetooth", "帮我打开蓝牙", (9, 13)),
        ("...", "anything", (1, 0)),  # punctuation-only reference: length 0 (s4 then undefined)
        ("", "", (0, 0)),
        ("Mute it", "MUTE IT!!!", (0, 2)),
        ("dont", "don't", (0, 1)),
    ],
)
def test_edit_count(reference, hypothesis, expected):
    assert edit_count(reference, hypothesis) == expected


def test_units_follow_the_reference_not_the_hypothesis():
    # An English reference is scored in words even when the model answered in Chinese.
    assert edit_count("mute the phone", "把手机静音") == (3, 3)
    assert edit_count("把手机静音", "mute the phone") == (12, 5)  # 12 letters against 5 characters


def test_separator_table_follows_unicode_categories_everywhere():
    # The translate table behind normalize() (filled lazily, capped) against the category rule.
    chars = "".join(chr(c) for c in range(0x30000))
    expected = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in chars)
    assert chars.translate(_SEPARATORS) == expected
    assert chars.translate(_SEPARATORS) == expected  # second pass: from the table (and past its cap)
