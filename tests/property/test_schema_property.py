"""Property: reading release records either gives scenes or raises SchemaError (the documented
error type, its message naming scene or file and field), never anything else; a valid record
survives the write -> read round trip unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support.json_strategies import FIELD_VALUES, TEXT, json_values

from odu.core.schema import Scene, SchemaError, load_scenes, read_predictions, scene_from_dict, scene_to_dict
from odu.data.sample import sample_dir
from odu.io.jsonio import dump_line

RECORDS: list[dict[str, Any]] = [
    json.loads(line) for line in (sample_dir() / "scenes.jsonl").read_text(encoding="utf-8").splitlines()
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys / indices) to a value inside ``value``."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*prefix, i))
    return found


PATHS = [(n, path) for n, record in enumerate(RECORDS) for path in _paths(record)]


@st.composite
def mutated_records(draw: st.DrawFn) -> dict[str, Any]:
    """A sample record with one to three fields replaced by any value, deleted, or given a new key."""
    record = json.loads(json.dumps(RECORDS[draw(st.integers(0, len(RECORDS) - 1))]))
    for _ in range(draw(st.integers(1, 3))):
        n, path = PATHS[draw(st.integers(0, len(PATHS) - 1))]  # (sampled_from is slow on long lists)
        target = record
        try:
            for step in path[:-1]:
                target = target[step]
            key = path[-1]
            action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
            if action == "replace":
                target[key] = draw(FIELD_VALUES)
            elif action == "delete" and isinstance(target, dict):
                del target[key]
            elif isinstance(target, dict):
                target[draw(TEXT)] = draw(FIELD_VALUES)
        except (KeyError, IndexError, TypeError):  # an earlier edit removed or replaced this path
            continue
    return record


@settings(max_examples=600, deadline=None)
@given(mutated_records())
def test_records_are_accepted_or_refused_with_schema_error(record: dict[str, Any]) -> None:
    try:
        scene = scene_from_dict(record, 0)
    except SchemaError as exc:
        message = str(exc)
        assert message.startswith(("scene ", "record 0")), message
        message.encode("utf-8")  # printable: no lone surrogate in an error message
        return
    assert isinstance(scene, Scene)
    written = json.dumps(scene_to_dict(scene))  # compared as JSON text: a NaN display field is not == itself
    assert json.dumps(scene_to_dict(scene_from_dict(json.loads(written)))) == written


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(mutated_records(), json_values()), max_size=3), st.sampled_from(["jsonl", "array"]))
def test_record_files_load_or_raise_schema_error(tmp_path_factory_dir: Path, values: list[Any], layout: str) -> None:
    path = tmp_path_factory_dir / f"scenes.{layout}"
    if layout == "jsonl":
        path.write_bytes(b"".join(dump_line(v) for v in values))
    else:
        path.write_bytes(json.dumps(values, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    try:
        scenes = load_scenes(path)
    except SchemaError as exc:
        str(exc).encode("utf-8")
        return
    if layout == "jsonl" and values and isinstance(values[0], list):
        values = values[0]  # a file starting with "[" is a JSON array (odu.io.jsonio.iter_records)
    assert len(scenes) == len(values)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_bytes_load_or_raise_schema_error(tmp_path_factory_dir: Path, data: bytes) -> None:
    path = tmp_path_factory_dir / "anything.jsonl"
    path.write_bytes(data)
    for read in (load_scenes, read_predictions):
        try:
            read(path)
        except SchemaError as exc:
            str(exc).encode("utf-8")
