"""Property: every JSON value the toolkit writes reads back as written, whatever its Unicode
(odu.io.jsonio: lines split on "\\n" only; SURROGATE_RULE; NON_FINITE_RULE)."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.json_strategies import FINITE, TEXT, json_values

from odu.io.jsonio import JsonFileError, clean_text, dump_line, dumps, encode, iter_lines, iter_records, too_deep
from odu.io.scrub import body_named, stored_body

NAME = Path("round-trip.jsonl")


def as_read(value: Any) -> Any:
    """``value`` as the documented rules make it: strings (keys too) by SURROGATE_RULE, NaN and
    ±Infinity by NON_FINITE_RULE, a value named like a request body (``extra_body``) by its
    storage rule (odu.io.scrub.stored_body)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [as_read(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(k): as_read(stored_body(v) if body_named(k) else v) for k, v in value.items()}
    return value


def read_lines(data: bytes) -> list[Any]:
    return [value for _, value in iter_lines(io.BytesIO(data), NAME)]


@settings(max_examples=300, deadline=None)
@given(st.lists(json_values(), min_size=1, max_size=3))
def test_jsonl_round_trip(values: list[Any]) -> None:
    data = b"".join(dump_line(v) for v in values)
    assert data.count(b"\n") == len(values)  # one record, one line: U+2028 & co. never split it
    assert read_lines(data) == [as_read(v) for v in values]


def test_a_body_named_value_is_stored_by_its_rule_in_a_line() -> None:
    """The case the round trip found: an empty string under ``extra_body`` is a free string, stored as ``***``."""
    assert read_lines(dump_line({"extra_body": "", "n": {"extra_body": {"effort": "low", "k": "a b"}}})) == [
        {"extra_body": "***", "n": {"extra_body": {"effort": "low", "k": "***"}}}
    ]


@settings(max_examples=150, deadline=None)
@given(json_values(st.one_of(FINITE, st.sampled_from([math.nan, math.inf, -math.inf]), TEXT)))
def test_non_finite_numbers_are_written_as_null(value: Any) -> None:
    assert read_lines(dump_line(value)) == [as_read(value)]


@settings(max_examples=700, deadline=None)
@given(st.text(st.characters(codec=None, categories=None), max_size=30))
def test_any_string_is_one_line_and_reads_back(text: str) -> None:
    line = dump_line({"output": text})
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    assert read_lines(b"\xef\xbb\xbf" + line.replace(b"\n", b"\r\n")) == [{"output": clean_text(text)}]


@settings(max_examples=150, deadline=None)
@given(st.lists(json_values(), max_size=3), st.sampled_from(["", " ", "\n", "\r\n", "\t"]))
def test_json_array_file_round_trip(tmp_path_factory_dir: Path, values: list[Any], space: str) -> None:
    path = tmp_path_factory_dir / "array.json"
    path.write_bytes(encode("[" + space + ("," + space).join(dumps(v) for v in values) + space + "]" + space))
    assert [v for _, v in iter_records(path)] == [as_read(v) for v in values]


# --- issue 30 item 2: the nesting check walks the decoded value (linear; docs/performance.md) -----------------------


@settings(max_examples=300)
@given(json_values(max_leaves=30), st.integers(min_value=0, max_value=6))
def test_too_deep_agrees_with_the_depth_of_the_value(value: Any, limit: int) -> None:
    def depth(v: Any) -> int:
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        return 0 if children is None else 1 + max((depth(c) for c in children), default=0)

    assert too_deep(value, limit) == (depth(value) > limit)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=8), st.integers(min_value=0, max_value=3), st.booleans())
def test_a_line_nested_past_the_limit_is_refused_and_one_at_it_is_read(limit: int, extra: int, as_object: bool) -> None:
    """Read through the reader itself (decoded first, then checked), arrays and objects alike."""
    opening, closing = ('{"k": ', "}") if as_object else ("[", "]")
    line = (opening * (limit + extra) + "1" + closing * (limit + extra) + "\n").encode()
    with mock.patch("odu.io.jsonio.MAX_RECORD_DEPTH", limit):
        if extra:
            with pytest.raises(JsonFileError, match="nested deeper than MAX_RECORD_DEPTH"):
                read_lines(line)
        else:
            assert read_lines(line) == [json.loads(line)]
