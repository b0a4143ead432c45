"""Issue 37 item 3: exports write only the model ids and dates their readers can trust. A model id
(Every Eval Ever's folders and ``model_info.id``, Inspect's ``eval.model``) that holds a control,
bidi or separator character, white space at an end or more than 255 bytes, and a date (the Hub's
``date``, EEE's ``evaluation_timestamp``, Inspect's ``eval.created``) that is no ISO 8601 date and
time of a real moment, are refused: exit 2, one line naming the run folder and the field, nothing
written (docs/export.md, "Model ids and dates")."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from support.eee_validator import eee_validate
from support.export_runs import DATASET, copy_run, eee_records, export

from odu.export.fields import MODEL_ID_MAX_BYTES, ExportRefused
from odu.export.source import ExportRun
from odu.report.runs import System
from odu.runs.contract import RUN_CARD_NAME

#: Model ids no export may carry (the issue's NUL, ESC and U+202E, and their neighbours).
REFUSED_MODEL_IDS = {
    "NUL": "Qwen/Qwen3\x00-Omni",
    "ESC": "Qwen/\x1b[31mQwen3-Omni",
    "right-to-left override": "Qwen/\u202eexe.1-nwQ",
    "newline": "Qwen/Qwen3\nOmni",
    "bidi isolate": "Qwen/\u2066Qwen3\u2069-Omni",
    "zero-width space": "Qwen/Qwen3\u200b-Omni",
    "no-break space": "Qwen/Qwen3\u00a0Omni",
    "trailing space": "Qwen/Qwen3-Omni ",
    "256 bytes": "lab/" + "m" * (MODEL_ID_MAX_BYTES - 3),
    "256 bytes of 88 characters": "lab/" + "模" * 84,
}
#: Dates no export may carry (the issue's impossible date and date with 100,000 characters after
#: it, and their neighbours); the run card holds them as JSON values.
REFUSED_DATES = {
    "impossible": "2026-13-45T99:99:99",
    "100,000 characters after": "2026-12-07T10:00:00" + "x" * 100_000,
    "29 February of 2026": "2026-02-29T10:00:00",
    "hour 24": "2026-12-07T24:00:00",
    "second 60": "2026-12-07T10:00:60",
    "fraction of 4 digits": "2026-12-07T10:00:00.1234",
    "offset of 24 hours": "2026-12-07T10:00:00+24:00",
    "day only": "2026-12-07",
    "space for T": "2026-12-07 10:00:00",
    "newline after": "2026-12-07T10:00:00\n",
    "a number": 1765101600,
    "empty": "",
}
#: Dates every format carries, each as the instant it names.
ACCEPTED_DATES = {
    "with a timezone": "2026-12-07T19:00:00+09:00",
    "Z": "2026-12-07T10:00:00Z",
    "no timezone (UTC)": "2026-12-07T10:00:00",
    "microseconds, half-hour offset": "2026-12-07T04:30:00.123456-05:30",
}


def _model_card(source: Path, model_id: str) -> dict:
    card = json.loads((source / RUN_CARD_NAME).read_text(encoding="utf-8"))
    return {"model": card["model"] | {"model_args": {"model": model_id}}}


def _refused_in_one_line(capsys: pytest.CaptureFixture[str], run: Path, field: str) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"({run})" in err and field in err and len(err) < 600
    return err


@pytest.mark.parametrize("model_id", REFUSED_MODEL_IDS.values(), ids=REFUSED_MODEL_IDS)
def test_a_run_card_model_id_no_reader_shows_as_written_is_refused(sample_runs, tmp_path, capsys, model_id):
    run = copy_run(sample_runs["always"], tmp_path / "run", _model_card(sample_runs["always"], model_id))
    for fmt in ("eee", "inspect"):
        assert export([run], fmt, tmp_path / fmt, resamples=20) == 2
        err = _refused_in_one_line(capsys, run, f"{RUN_CARD_NAME} model.model_args.model")
        assert "not a model id an export may carry; pass --model-ids" in err
        assert not (tmp_path / fmt).exists()
    assert export([run], "hub", tmp_path / "hub", dataset_id=DATASET) == 0  # the Hub's files name no model id


@pytest.mark.parametrize("name", ["NUL", "bidi isolate", "newline"])
def test_a_model_id_given_on_the_command_line_is_checked_alike(sample_runs, tmp_path, capsys, name):
    assert export([sample_runs["scored"]], "eee", tmp_path / "eee", model_ids=[REFUSED_MODEL_IDS[name]]) == 2
    _refused_in_one_line(capsys, sample_runs["scored"], "--model-ids entry")
    assert not (tmp_path / "eee").exists()


def test_the_right_to_left_override_names_the_character(sample_runs, tmp_path, capsys):
    source = sample_runs["always"]
    run = copy_run(source, tmp_path / "run", _model_card(source, REFUSED_MODEL_IDS["right-to-left override"]))
    assert export([run], "inspect", tmp_path / "inspect") == 2
    err = capsys.readouterr().err
    assert "'Qwen/\\u202eexe.1-nwQ' holds U+202E RIGHT-TO-LEFT OVERRIDE (category Cf)" in err
    assert "\u202e" not in err  # the line itself is safe to show


@pytest.mark.parametrize(
    "model_id", ["lab/" + "m" * (MODEL_ID_MAX_BYTES - 4), "lab/模型-7B", "openai/gpt-4o:2024-08-06"]
)
def test_printable_model_ids_up_to_the_bound_are_exported_as_they_are(sample_runs, tmp_path, model_id):
    run = copy_run(sample_runs["always"], tmp_path / "run", _model_card(sample_runs["always"], model_id))
    assert export([run], "eee", tmp_path / "eee", resamples=20) == 0
    assert export([run], "inspect", tmp_path / "inspect") == 0
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    assert aggregate["model_info"]["id"] == model_id
    status, reports = eee_validate(tmp_path / "eee")  # its folder, as the datastore files it
    assert status == 0 and all(r["valid"] and not r["warnings"] for r in reports)
    from inspect_ai.log import read_eval_log

    assert {read_eval_log(str(p)).eval.model for p in (tmp_path / "inspect").rglob("*.json")} == {model_id}


@pytest.mark.parametrize("date", REFUSED_DATES.values(), ids=REFUSED_DATES)
def test_a_run_card_date_that_is_no_real_iso_time_is_refused_by_every_format(sample_runs, tmp_path, capsys, date):
    run = copy_run(sample_runs["never"], tmp_path / "run", {"date": date})
    for fmt in ("hub", "eee", "inspect"):
        assert export([run], fmt, tmp_path / fmt, dataset_id=DATASET, resamples=20) == 2
        err = _refused_in_one_line(capsys, run, f"{RUN_CARD_NAME} date")
        assert "not a date an export may carry" in err
        assert not (tmp_path / fmt).exists()


@pytest.mark.parametrize("date", ACCEPTED_DATES.values(), ids=ACCEPTED_DATES)
def test_an_iso_date_and_time_with_or_without_timezone_goes_into_every_format(sample_runs, tmp_path, date):
    run = copy_run(sample_runs["never"], tmp_path / "run", {"date": date})
    for fmt in ("hub", "eee", "inspect"):
        assert export([run], fmt, tmp_path / fmt, dataset_id=DATASET, resamples=20) == 0
    [entry, *_] = yaml.safe_load(next((tmp_path / "hub").rglob("odu-bench.yaml")).read_text(encoding="utf-8"))
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    assert entry["date"] == aggregate["evaluation_timestamp"] == date
    status, reports = eee_validate(tmp_path / "eee")
    assert status == 0 and all(r["valid"] and not r["warnings"] for r in reports)
    from inspect_ai.log import read_eval_log

    moment = datetime.fromisoformat(date.replace("Z", "+00:00"))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)  # Inspect reads a naive time as UTC
    for path in (tmp_path / "inspect").rglob("*.json"):
        assert datetime.fromisoformat(read_eval_log(str(path)).eval.created) == moment


def _bare_run(tmp_path: Path, run_id: str, stamp: str | None = None) -> ExportRun:
    return ExportRun(System("bare", {"run_id": run_id}, []), None, {}, tmp_path, harness_stamp=stamp)


def test_a_date_from_the_run_id_or_lm_evals_stamp_is_checked_alike(tmp_path):
    """Without a run card's date: the run id's time (UTC), else lm-eval's file stamp."""
    assert _bare_run(tmp_path, "20261207T184832Z-fa5f15e4").date == "2026-12-07T18:48:32+00:00"
    assert _bare_run(tmp_path, "other", "2026-12-07T18-48-32.123456").date == "2026-12-07T18:48:32"
    with pytest.raises(ExportRefused, match=r"^run bare \(.*\): run id 20261345T999999Z-fa5f15e4 '2026-13-45T99"):
        _ = _bare_run(tmp_path, "20261345T999999Z-fa5f15e4").date
    with pytest.raises(ExportRefused, match="lm-eval's file stamp 2026-12-07T25-00-00"):
        _ = _bare_run(tmp_path, "other", "2026-12-07T25-00-00.1").date
