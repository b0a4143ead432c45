"""Hostile release records (issue 12 item 11): a clear error naming scene and field, exit 2, never a
traceback, from the schema reader, ``odu-bench prepare`` and ``odu-bench score``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import argv

from odu.cli import main
from odu.core.constants import MAX_TIME_MS
from odu.core.schema import SchemaError, load_scenes, scene_from_dict
from odu.data.sample import sample_dir
from odu.io.jsonio import MAX_RECORD_DEPTH

SCENE = "avp_gen_900001"
SEGMENT = "annotations.en.evaluation_targets.segments[0]"


def base() -> dict[str, Any]:
    """The sample's first record (audio-visual positive, media in the bundled sample)."""
    with (sample_dir() / "scenes.jsonl").open(encoding="utf-8") as fh:
        record = json.loads(fh.readline())
    assert record["scene_id"] == SCENE
    return record


def segment(record: dict[str, Any]) -> dict[str, Any]:
    return record["annotations"]["en"]["evaluation_targets"]["segments"][0]


def _set(path: str, value: Any):
    def edit(record: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        target: Any = segment(record)
        for part in parents:
            target = target[int(part) if part.isdigit() else part]
        target[int(last) if last.isdigit() else last] = value

    return edit


#: (case, edit, fragment the message must hold after "scene avp_gen_900001: ").
CASES = [
    ("key point a string", _set("key_points", ["kp01"]), f"{SEGMENT}.key_points[0]: must be an object, got str"),
    ("key point null", _set("key_points", [None]), f"{SEGMENT}.key_points[0]: must be an object, got NoneType"),
    ("context a string", _set("required_context", ["type"]), f"{SEGMENT}.required_context[0]: must be an object"),
    ("end_ms infinite", _set("end_ms", float("inf")), f"{SEGMENT}: field 'end_ms' is inf ms, not under MAX_TIME_MS"),
    ("end_ms huge", _set("end_ms", 1e300), f"{SEGMENT}: field 'end_ms' is 1e+300 ms, not under MAX_TIME_MS"),
    ("end_ms at limit", _set("end_ms", MAX_TIME_MS), f"field 'end_ms' is {MAX_TIME_MS} ms, not under MAX_TIME_MS"),
    ("start_ms NaN", _set("start_ms", float("nan")), f"{SEGMENT}: field 'start_ms' must be milliseconds, got nan"),
    ("tiers objects", _set("key_points/0/tiers", [{"x": 1}]), "key_points[0]: field 'tiers' must be a list of strings"),
]


@pytest.mark.parametrize(("case", "edit", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_schema_names_scene_and_field(case: str, edit: Any, fragment: str) -> None:
    record = base()
    edit(record)
    with pytest.raises(SchemaError) as info:
        scene_from_dict(record, 0)
    assert str(info.value).startswith(f"scene {SCENE}: ")
    assert fragment in str(info.value)


def test_clip_duration_is_bounded() -> None:
    record = base()
    record["clips"][0]["duration"] = float("inf")
    with pytest.raises(SchemaError, match=r"clips\[0\]: 'duration' must be positive seconds under MAX_TIME_MS"):
        scene_from_dict(record, 0)


def test_deep_python_value_is_refused_without_recursion() -> None:
    record = base()
    deep: Any = "bottom"
    for _ in range(100_000):
        deep = [deep]
    record["title"] = deep
    with pytest.raises(SchemaError, match=f"field 'title.*' nests deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}"):
        scene_from_dict(record, 0)


def test_a_python_value_one_past_the_depth_limit_is_refused() -> None:
    """A record given as a Python value (the metric, dataset rows) just past the limit: no decoder
    guard fires and ``json.dumps`` takes it, so only the walk refuses it, naming the field."""
    record = base()
    record["title"] = json.loads("[" * MAX_RECORD_DEPTH + "]" * MAX_RECORD_DEPTH)
    with pytest.raises(SchemaError, match=f"field 'title.*' nests deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}"):
        scene_from_dict(record, 0)


def test_decoded_records_given_to_load_scenes_are_checked_as_files_are() -> None:
    """Records read from a file skip the second tree check (the reader checked them); records handed
    over as Python values (the metric, dataset rows) do not: one past the limit is refused either way."""
    record = base()
    record["title"] = json.loads("[" * MAX_RECORD_DEPTH + "]" * MAX_RECORD_DEPTH)
    with pytest.raises(SchemaError, match="nests deeper than MAX_RECORD_DEPTH"):
        load_scenes([base(), record])


def _release(tmp_path: Path, text: str, name: str = "scenes.jsonl") -> Path:
    root = tmp_path / "release"
    root.mkdir()
    (root / name).write_text(text, encoding="utf-8")
    return root


def _prepare(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    out = tmp_path / "odu-bench"
    code = main(argv("prepare", root, out=out, media_root=sample_dir(), no_progress=True))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and not out.exists()
    return err


#: ... and what a release refuses besides (scoring takes it: odu.io.jsonio.SURROGATE_RULE).
RELEASE_CASES = [
    *CASES,
    (
        "lone surrogate",
        _set("key_points/0/point", "ripe \udc00"),
        f"field '{SEGMENT}.key_points[0].point' holds a lone surrogate",
    ),
]


@pytest.mark.parametrize(("case", "edit", "fragment"), RELEASE_CASES, ids=[c[0] for c in RELEASE_CASES])
def test_prepare_refuses_with_scene_and_field(
    case: str, edit: Any, fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = base()
    edit(record)
    line = json.dumps(record, ensure_ascii=True)  # a lone surrogate as the JSON escape "\udc00"
    err = _prepare(_release(tmp_path, line + "\n"), tmp_path, capsys)
    problem = next(line.strip() for line in err.splitlines() if f"scene {SCENE}:" in line)
    assert problem.startswith(f"scene {SCENE}: ") and fragment in problem


@pytest.mark.parametrize(
    ("literal", "fragment"),
    [
        ('"end_ms": 1e400', f"field 'end_ms' is inf ms, not under MAX_TIME_MS = {MAX_TIME_MS}"),
        ('"end_ms": NaN', "field 'end_ms' must be milliseconds, got nan"),
    ],
)
def test_prepare_reads_number_literals_as_written(
    literal: str, fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = json.dumps(base()).replace('"end_ms": 3414', literal)
    assert literal in line
    err = _prepare(_release(tmp_path, line + "\n"), tmp_path, capsys)
    assert f"scene {SCENE}: {SEGMENT}: {fragment}" in err


@pytest.mark.parametrize("layout", ["jsonl", "array"])
def test_deep_nesting_in_a_file_is_refused(layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = json.dumps(base())
    deep = line[:-1] + ', "title": ' + "[" * 100_000 + "]" * 100_000 + "}"
    if layout == "jsonl":
        root = _release(tmp_path, f"{line}\n{deep}\n")
        where = "scenes.jsonl:2: nested deeper than MAX_RECORD_DEPTH"
    else:
        root = _release(tmp_path, f"[{line},\n{deep}]", "scenes.json")
        where = "scenes.json:2: not a valid JSON array (nested deeper than MAX_RECORD_DEPTH"
    err = _prepare(root, tmp_path, capsys)
    assert where in err
    with pytest.raises(SchemaError, match="nested deeper than MAX_RECORD_DEPTH"):
        load_scenes(next(root.iterdir()))


@pytest.mark.parametrize("layout", ["jsonl", "array"])
def test_a_record_one_past_the_depth_limit_is_refused_in_either_layout(layout: str, tmp_path: Path) -> None:
    """Just past the limit the decoder's own guard does not fire: the walk after decoding refuses it,
    also for an array file's element (whose text is a slice of the buffer, not the whole line)."""
    ok, record = base(), base()
    record["title"] = json.loads("[" * MAX_RECORD_DEPTH + "]" * MAX_RECORD_DEPTH)
    if layout == "jsonl":
        (tmp_path / "s.jsonl").write_text(f"{json.dumps(ok)}\n{json.dumps(record)}\n", encoding="utf-8")
    else:
        (tmp_path / "s.json").write_text(f"[{json.dumps(ok)},\n{json.dumps(record)}]", encoding="utf-8")
    with pytest.raises(SchemaError, match=r"s\.jsonl?:2: .*nested deeper than MAX_RECORD_DEPTH"):
        load_scenes(next(tmp_path.iterdir()))


def test_record_at_the_depth_limit_is_read(tmp_path: Path) -> None:
    record = base()
    record["title"] = json.loads("[" * (MAX_RECORD_DEPTH - 1) + "]" * (MAX_RECORD_DEPTH - 1))
    (tmp_path / "s.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert [s.scene_id for s in load_scenes(tmp_path / "s.jsonl")] == [SCENE]


def test_score_takes_a_lone_surrogate_and_writes_valid_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Scoring reads such a reference (the release refuses it, above) and writes it by the
    surrogate rule: no UnicodeEncodeError after summary.json (issue 12 item 11)."""
    record = base()
    segment(record)["key_points"][0]["point"] = "ripe \udc00"
    scenes = tmp_path / "scenes.jsonl"
    scenes.write_text(json.dumps(record) + "\n", encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    output = {"has_demand": True, "segments": [copy.deepcopy(segment(base()))]}
    predictions.write_text(json.dumps({"scene_id": SCENE, "output": json.dumps(output)}) + "\n", encoding="utf-8")
    run = tmp_path / "run"
    code = main(argv("score", scenes=scenes, predictions=predictions, judge="lexical", out=run, no_progress=True))
    err = capsys.readouterr().err
    assert code == 0, err
    assert json.loads((run / "summary.json").read_bytes().decode("utf-8"))["audio-visual"]["n_scenes"] == 1
    assert [
        json.loads(line)["scene_id"] for line in (run / "scenes.jsonl").read_bytes().decode("utf-8").splitlines()
    ] == [SCENE]
