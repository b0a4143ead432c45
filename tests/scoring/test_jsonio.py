"""The toolkit's JSON and JSONL files (``odu.io.jsonio``): lines split on ``"\\n"`` only, any Unicode
written and read back, lone surrogates and NaN by their documented rules, JSON arrays streamed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odu.core.schema import SchemaError, read_json_records, read_predictions
from odu.io import jsonio
from odu.io.jsonio import JsonFileError, clean_text, dump_line, dumps, iter_jsonl, iter_records, read_json, write_json

#: Characters ``str.splitlines`` breaks at besides "\n" (issue 12 item 8), and other hard text.
LINE_BREAKERS = "\u2028\u2029\u0085\x1c\x1d\x1e\x0b\x0c\r"
HARD_TEXT = [
    "today 🙂 fine",
    "中文，全角？标点！",
    f"a{LINE_BREAKERS}b",
    "\x00 nul and \t tab",
    "\ufeff byte-order mark inside",
    '"quoted" \\ back\\slash',
    "\U0010ffff last code point",
]


def test_hard_text_round_trips_through_a_jsonl_file(tmp_path: Path) -> None:
    rows = [{"scene_id": f"s{i}", "output": text} for i, text in enumerate(HARD_TEXT)]
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(b"".join(dump_line(r) for r in rows))
    assert [row for _, row in iter_jsonl(path)] == rows
    assert read_predictions(path) == {r["scene_id"]: r["output"] for r in rows}
    # one record per line, whatever the text holds
    assert path.read_bytes().count(b"\n") == len(rows)


def test_line_separators_inside_strings_do_not_split_records(tmp_path: Path) -> None:
    """Issue 12 item 8: U+2028 written raw by ``ensure_ascii=False`` is part of the string."""
    text = f"before{LINE_BREAKERS}after"
    path = tmp_path / "scenes.jsonl"
    path.write_text(json.dumps({"x": text}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert "\u2028" in path.read_text(encoding="utf-8") and len(path.read_text(encoding="utf-8").splitlines()) > 1
    assert read_json_records(path) == [{"x": text}]


@pytest.mark.parametrize(
    "text, written",
    [
        ("today \ud83d", "today \ufffd"),  # a pair cut in half: lone high surrogate
        ("\udc00 low", "\ufffd low"),
        ("\ud83d\ude00", "😀"),  # two halves of one pair, as two code units
        ("\ude00\ud83d", "\ufffd\ufffd"),  # halves in the wrong order
        ("plain", "plain"),
    ],
)
def test_lone_surrogates_are_written_by_the_documented_rule(tmp_path: Path, text: str, written: str) -> None:
    assert clean_text(text) == written
    path = tmp_path / "x.jsonl"
    path.write_bytes(dump_line({"output": text}))
    assert [row for _, row in iter_jsonl(path)] == [{"output": written}]
    write_json(tmp_path / "y.json", {"t": text})
    assert read_json(tmp_path / "y.json") == {"t": written}


def test_nan_and_infinity_are_written_as_null(tmp_path: Path) -> None:
    value = {"prompt_tokens": float("nan"), "rates": [float("inf"), -float("inf"), 0.5], "ok": 1}
    assert dumps(value) == '{"prompt_tokens": null, "rates": [null, null, 0.5], "ok": 1}'
    write_json(tmp_path / "summary.json", value)

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in a JSON file")

    json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"), parse_constant=refuse)


def test_crlf_blank_lines_and_a_byte_order_mark_are_read(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n  \n{"a": 2}')
    assert [(n, row) for n, row in iter_records(path)] == [(1, {"a": 1}), (4, {"a": 2})]


def test_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": \n')
    with pytest.raises(JsonFileError, match=r"x\.jsonl:2: not valid JSON"):
        list(iter_records(path))
    path.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(SchemaError, match=r"x\.jsonl:2: not UTF-8"):
        read_json_records(path)
    with pytest.raises(SchemaError, match="cannot read"):
        read_json_records(tmp_path / "missing.jsonl")


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_a_json_array_is_streamed_whatever_the_chunk_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(jsonio, "_CHUNK", chunk)
    records = [{"scene_id": f"s{i}", "t": HARD_TEXT[i % len(HARD_TEXT)], "n": 10**i} for i in range(12)]
    records += [12345678901234567890, 1.5e300, "s", None, [1, [2]], {}]
    path = tmp_path / "scenes.json"
    path.write_text(json.dumps(records, indent=2, ensure_ascii=False), encoding="utf-8")
    got = list(iter_records(path))
    assert [value for _, value in got] == records
    lines = path.read_text(encoding="utf-8").split("\n")
    assert all(lines[n - 1].lstrip().startswith(json.dumps(v, ensure_ascii=False)[:1]) for n, v in got)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[1, 2", "the array is not closed"),
        ("[1,]", "trailing comma"),
        ("[1 2]", "expected ',' or ']'"),
        ('[{"a"]', "Expecting ':' delimiter"),
        ("[1] x", "extra data after the array"),
        ("[", "Expecting value"),
    ],
)
def test_a_broken_json_array_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str) -> None:
    monkeypatch.setattr(jsonio, "_CHUNK", 2)
    path = tmp_path / "scenes.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(JsonFileError, match=rf"scenes\.json:1: not a valid JSON array \({message}"):
        list(iter_records(path))


def test_an_empty_array_and_an_empty_file_hold_no_records(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(" [ ] \n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text("", encoding="utf-8")
    assert list(iter_records(tmp_path / "a.json")) == list(iter_records(tmp_path / "b.jsonl")) == []
