"""Nesting exactly at ``MAX_RECORD_DEPTH``, as ``odu/io/jsonio.py``, docs/scoring.md and
docs/dataset.md promise: a value or record may nest at most ``MAX_RECORD_DEPTH`` arrays / objects
deep, so one exactly that deep is read and one a level deeper refused, naming the limit, by every
reader that promises it: a JSON file read whole, a JSONL line, an element of a JSON array file (the
record, not the file), and a record handed over as a Python value (``check_tree``). Brackets inside
strings are no nesting; arrays, objects and their mixtures count alike, on any branch."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from odu.core.schema import SchemaError, check_tree
from odu.io.jsonio import MAX_RECORD_DEPTH, JsonFileError, iter_jsonl, iter_records, read_json

DEEPER = f"nested deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}"


def nested(depth: int, shape: str, leaf: Any = 1) -> Any:
    """``leaf`` inside ``depth`` containers: arrays, objects, or the two in turn (``mixed``)."""
    value = leaf
    for level in range(depth):
        as_object = shape == "objects" or (shape == "mixed" and level % 2)
        value = {"k": value} if as_object else [value]
    return value


def wide(depth: int) -> Any:
    """A value ``depth`` deep on its last branch only, beside scalars and shallow containers."""
    return [1, "x", [2], {"a": None}, nested(depth - 1, "mixed")]


SHAPES: dict[str, Callable[[int], Any]] = {
    "arrays": lambda depth: nested(depth, "arrays"),
    "objects": lambda depth: nested(depth, "objects"),
    "mixed": lambda depth: nested(depth, "mixed"),
    "last-branch": wide,
    "brackets-in-strings": lambda depth: nested(depth, "mixed", "[{" * 200),
}


def _read_json(tmp_path: Path, value: Any) -> list[Any]:
    (tmp_path / "v.json").write_text(json.dumps(value), encoding="utf-8")
    return [read_json(tmp_path / "v.json")]


def _jsonl(tmp_path: Path, value: Any) -> list[Any]:
    (tmp_path / "v.jsonl").write_text(f"[]\n{json.dumps(value)}\n", encoding="utf-8")
    return [v for _, v in iter_jsonl(tmp_path / "v.jsonl")]


def _records_jsonl(tmp_path: Path, value: Any) -> list[Any]:
    """JSONL: its first record an object (a file starting with ``[`` is a JSON array)."""
    (tmp_path / "v.jsonl").write_text(f"{{}}\n{json.dumps(value)}\n", encoding="utf-8")
    return [v for _, v in iter_records(tmp_path / "v.jsonl")]


def _records_array(tmp_path: Path, value: Any) -> list[Any]:
    """The record is an element: the file's own array does not count."""
    (tmp_path / "v.json").write_text(f"[[],\n{json.dumps(value)}]", encoding="utf-8")
    return [v for _, v in iter_records(tmp_path / "v.json")]


READERS: dict[str, Callable[[Path, Any], list[Any]]] = {
    "read_json": _read_json,
    "iter_jsonl": _jsonl,
    "iter_records-jsonl": _records_jsonl,
    "iter_records-array": _records_array,
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("reader", list(READERS))
def test_a_value_exactly_at_the_limit_is_read(reader: str, shape: str, tmp_path: Path) -> None:
    value = SHAPES[shape](MAX_RECORD_DEPTH)
    assert READERS[reader](tmp_path, value)[-1] == value


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("reader", list(READERS))
def test_a_value_one_level_past_the_limit_is_refused(reader: str, shape: str, tmp_path: Path) -> None:
    with pytest.raises(JsonFileError, match=DEEPER):
        READERS[reader](tmp_path, SHAPES[shape](MAX_RECORD_DEPTH + 1))


@pytest.mark.parametrize("shape", ["arrays", "objects", "mixed", "last-branch"])
def test_a_python_value_at_the_limit_is_taken_one_past_it_refused_naming_the_field(shape: str) -> None:
    check_tree({"title": SHAPES[shape](MAX_RECORD_DEPTH - 1)}, "scene s")
    with pytest.raises(
        SchemaError, match=f"scene s: field 'title.*' nests deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}"
    ):
        check_tree({"title": SHAPES[shape](MAX_RECORD_DEPTH)}, "scene s")


def test_tuples_nest_like_arrays_in_a_python_value() -> None:
    deep: Any = 1
    for _ in range(MAX_RECORD_DEPTH):
        deep = (deep,)
    check_tree({"title": deep[0]}, "scene s")
    with pytest.raises(SchemaError, match="nests deeper than MAX_RECORD_DEPTH"):
        check_tree({"title": deep}, "scene s")


def test_a_record_at_the_limit_is_not_called_too_deep_when_another_field_is_refused() -> None:
    """The walk that names a field runs whenever the quick check cannot pass a record (here a lone
    surrogate, which a release refuses): a record exactly at the limit is refused for that, not its depth."""
    record = {"note": "ripe \udc00", "title": nested(MAX_RECORD_DEPTH - 1, "mixed")}
    with pytest.raises(SchemaError, match="field 'note' holds a lone surrogate"):
        check_tree(record, "scene s", text=True)
