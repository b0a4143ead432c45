"""Issue 37 item 4: content hashes are checked as hashes. A row's ``scene_sha256`` /
``reference_sha256`` is a SHA-256 (64 lowercase hex digits) or the row is refused by ``report``,
``view`` and ``export`` alike (exit 2, one line naming the run folder, the field and the scene, no
traceback, nothing written); a row without one (absent or null) is paired by id, modality and label
only, and the report and the viewer say so (docs/reports.md)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from support.export_runs import DATASET, export
from support.sample_runs import scored_sample_run
from support.view_support import read_index

from odu.cli import main
from odu.data.sample import sample_dir
from odu.runs.contract import read_run

#: Values that are no SHA-256, each refused wherever it stands.
NOT_HASHES: dict[str, Any] = {
    "integer": 42,
    "object": {"sha256": "ab" * 32},
    "boolean": True,
    "63 characters": "a" * 63,
    "65 characters": "a" * 65,
    "uppercase hex": "AB" * 32,
    "64 characters not hex": "g" * 64,
    "empty": "",
    "list": ["ab" * 32],
}
#: The caveat of runs paired without content hashes (report.md's notes, the viewer's index notes).
CAVEAT = "runs with scenes without content hashes"


@pytest.fixture(scope="module")
def hashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scored run of the sample, every row with both hashes."""
    return scored_sample_run(tmp_path_factory.mktemp("hashed") / "hashed")


def _rows(run: Path) -> list[dict[str, Any]]:
    return [dict(r) for r in read_run(run).scenes]


def _changed(source: Path, out: Path, field: str, value: Any, rows: slice = slice(None)) -> tuple[Path, str]:
    """``source`` scored again into ``out`` with ``field`` of the rows ``rows`` set to ``value``
    (``...``: removed), its summary recomputed; and the first changed scene's id."""
    changed = _rows(source)
    for row in changed[rows]:
        if value is ...:
            del row[field]
        else:
            row[field] = value
    return scored_sample_run(out, changed), changed[rows][0]["scene_id"]


def _command(command: str, runs: list[Path], out: Path) -> int:
    if command == "export":
        return export(runs, "hub", out, dataset_id=DATASET)
    options = ["--dataset", str(sample_dir()), "--no-progress"] if command == "view" else ["--no-plots"]
    return main([command, *map(str, runs), "--out", str(out), "--resamples", "20", *options])


@pytest.mark.parametrize("value", NOT_HASHES.values(), ids=NOT_HASHES)
@pytest.mark.parametrize("field", ["scene_sha256", "reference_sha256"])
def test_a_hash_that_is_no_sha256_is_refused_by_report_view_and_export(hashed, tmp_path, capsys, field, value):
    run, sid = _changed(hashed, tmp_path / "changed", field, value, slice(3, 4))
    for command in ("report", "view", "export"):
        assert _command(command, [hashed, run], tmp_path / command) == 2, command
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, command
        assert str(run) in err and f"{field!r} of scene {sid} must be a SHA-256" in err, command
        assert not (tmp_path / command).exists(), command


@pytest.mark.parametrize(
    ("field", "value", "rows"),
    [
        ("scene_sha256", ..., slice(None)),  # a run written before the hashes were recorded
        ("scene_sha256", None, slice(None)),
        ("reference_sha256", None, slice(2, 3)),  # one row, one hash
    ],
    ids=["absent", "null", "one reference hash null"],
)
def test_rows_without_hashes_pair_only_with_the_caveat(hashed, tmp_path, field, value, rows):
    run, _ = _changed(hashed, tmp_path / "unhashed", field, value, rows)
    assert _command("report", [hashed, run], tmp_path / "report") == 0
    notes = [
        line for line in (tmp_path / "report" / "report.md").read_text(encoding="utf-8").splitlines() if CAVEAT in line
    ]
    assert len(notes) == 1 and "(unhashed:" in notes[0] and "hashed," not in notes[0]
    assert _command("view", [hashed, run], tmp_path / "view") in (0, 1)
    assert [n for n in read_index(tmp_path / "view")["notes"] if CAVEAT in n] == [notes[0].removeprefix("- ")]


def test_runs_with_every_hash_pair_without_the_caveat(hashed, tmp_path):
    again = scored_sample_run(tmp_path / "again", _rows(hashed))
    assert _command("report", [hashed, again], tmp_path / "report") == 0
    assert CAVEAT not in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert _command("view", [hashed, again], tmp_path / "view") in (0, 1)
    assert not [n for n in read_index(tmp_path / "view")["notes"] if CAVEAT in n]


def test_a_null_hash_beside_a_real_one_does_not_hide_different_content(hashed, tmp_path):
    """What the caveat is for: a scene whose content differs pairs when one run has no hash for it;
    with both hashes it is refused (tests/report/test_scene_pairing.py)."""
    rows = _rows(hashed)
    rows[0]["scene_sha256"] = None
    other = scored_sample_run(tmp_path / "other", rows)
    assert _command("report", [hashed, other], tmp_path / "report") == 0
    assert CAVEAT in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    rows[0]["scene_sha256"] = "0" * 64
    differs = scored_sample_run(tmp_path / "differs", rows)
    assert _command("report", [hashed, differs], tmp_path / "report2") == 2


def test_the_hash_rule_reads_lm_eval_folders_alike(tmp_path, capsys):
    """An lm-eval output folder's logged scene rows are checked by the same rule."""
    harness = ["lm-eval", "run", "--model", "odu-always", "--tasks", "odu_ao", "--log_samples"]
    assert main([*harness, "--output_path", str(tmp_path / "harness")]) == 0
    [samples] = (tmp_path / "harness").rglob("samples_odu_ao_*.jsonl")
    lines = samples.read_text(encoding="utf-8").splitlines()
    sample = json.loads(lines[0])
    scored = sample["filtered_resps"][0]
    scored = ast.literal_eval(scored) if isinstance(scored, str) else scored  # lm-eval logs the dict's repr
    scored["scene"]["reference_sha256"] = "AB" * 32
    sample["filtered_resps"][0] = scored
    samples.write_text("\n".join([json.dumps(sample), *lines[1:]]) + "\n", encoding="utf-8")
    capsys.readouterr()  # lm-eval's own log
    assert _command("report", [tmp_path / "harness"], tmp_path / "report") == 2
    err = capsys.readouterr().err
    assert "'reference_sha256' of scene" in err and str(samples.parent) in err and len(err.strip().splitlines()) == 1
