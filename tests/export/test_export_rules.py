"""What an export refuses and what it never carries (issue 30 item 6, issue 31 items 4 and 6,
issue 37 item 5): runs that would write one folder, a run card's dataset source taken for a Hub
id, local paths and the dataset in the command line, model text treated unlike the run's own
files, ``--source-url`` read as a format string, unbounded ``--resamples``; the Hub's framework
notice; lm-eval output folders."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest
import yaml
from support.cli import argv
from support.eee_validator import eee_validate
from support.export_runs import DATASET, copy_run, eee_records, export
from support.process import fresh_env, run_odu

from odu.cli import main
from odu.data.sample import sample_dataset_dir
from odu.export.hub import source_link
from odu.report.bootstrap import MAX_RESAMPLES
from odu.runs.contract import RUN_CARD_NAME, read_run


def exported_text(out: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(out.rglob("*")) if p.is_file())


@pytest.mark.parametrize("names", [["a/b", "a_b"], [".", ".."]], ids=["slash-underscore", "dot-dotdot"])
def test_two_runs_that_reduce_to_one_folder_are_refused_naming_both(sample_runs, tmp_path, capsys, names):
    runs = [sample_runs["always"], sample_runs["never"]]
    assert export(runs, "hub", tmp_path / "hub", dataset_id=DATASET, names=names) == 2
    err = capsys.readouterr().err
    assert f"runs {names[0]!r}" in err and f"and {names[1]!r}" in err and "--names" in err
    assert not (tmp_path / "hub").exists()


def test_two_runs_of_one_model_and_run_id_are_refused_in_eee(sample_runs, tmp_path, capsys):
    runs = [sample_runs["scored"], sample_runs["scored"]]
    assert export(runs, "eee", tmp_path / "eee", names=["x", "y"], model_ids=["lab/m", "lab/m"]) == 2
    assert "runs 'x'" in capsys.readouterr().err and not (tmp_path / "eee").exists()


def test_a_run_cards_dataset_source_is_never_published_as_the_hub_dataset(sample_runs, tmp_path, capsys):
    """``--dataset data/odu`` (a local folder, relative) reads like ORG/NAME: only --dataset-id names the Hub dataset."""
    card = json.loads((sample_runs["never"] / RUN_CARD_NAME).read_text(encoding="utf-8"))
    local = {k: dict(v, source="data/odu", revision=None) for k, v in card["dataset"].items()}
    run = copy_run(sample_runs["never"], tmp_path / "local", {"dataset": local})
    assert export([run], "hub", tmp_path / "hub") == 2
    assert "--format hub needs --dataset-id ORG/NAME" in capsys.readouterr().err and not (tmp_path / "hub").exists()
    assert export([run], "eee", tmp_path / "eee", resamples=20) == 0
    assert export([run], "inspect", tmp_path / "inspect") == 0
    for out in ("eee", "inspect"):
        assert "data/odu" not in exported_text(tmp_path / out).replace("data/odu-bench/", ""), out
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    assert {r["source_data"]["source_type"] for r in aggregate["evaluation_results"]} == {"other"}
    # named, it is published, with the card's revision when the card read that dataset
    hub = {k: dict(v, source="ORG/odu-bench", revision="abc123") for k, v in card["dataset"].items()}
    named = copy_run(sample_runs["never"], tmp_path / "named", {"dataset": hub})
    assert export([named], "hub", tmp_path / "hub2", dataset_id=DATASET) == 0
    entries = yaml.safe_load(next((tmp_path / "hub2").rglob("odu-bench.yaml")).read_text(encoding="utf-8"))
    assert {(e["dataset"]["id"], e["dataset"].get("revision")) for e in entries} == {(DATASET, "abc123")}
    assert export([named], "hub", tmp_path / "hub3", dataset_id="not a repo") == 2


def test_no_absolute_local_path_reaches_an_export(sample_runs, tmp_path):
    command = [
        "odu-bench",
        "eval",
        "--dataset",
        "/home/alice/data/odu",
        "--out=/home/alice/runs",
        "--metadata",
        '{"asr": "~/asr.jsonl"}',
        "--judge-base-url",
        "http://judge.example:8000/v1",
        "--names",
        "runs/rel",
    ]
    backend = {"backend": "replay", "predictions": "/home/alice/preds.jsonl"}
    card = json.loads((sample_runs["always"] / RUN_CARD_NAME).read_text(encoding="utf-8"))
    run = copy_run(
        sample_runs["always"], tmp_path / "run", {"command": command, "model": card["model"] | {"backend": backend}}
    )
    assert export([run], "eee", tmp_path / "eee", resamples=20, model_ids=["lab/replayed"]) == 0
    assert export([run], "inspect", tmp_path / "inspect", model_ids=["lab/replayed"]) == 0
    assert export([run], "hub", tmp_path / "hub", dataset_id=DATASET) == 0
    for out in ("eee", "inspect", "hub"):
        text = exported_text(tmp_path / out)
        assert "alice" not in text and "asr.jsonl" not in text, out
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    executed = aggregate["evaluation_results"][0]["generation_config"]["generation_args"]["execution_command"]
    assert executed == (
        'odu-bench eval --dataset <dataset> --out=<local path> --metadata {"asr": "<local path>"} '
        "--judge-base-url http://judge.example:8000/v1 --names runs/rel"
    )


def test_the_dataset_of_a_command_line_is_never_exported_other_relative_paths_are(tmp_path, hf_cache):
    """``odu-bench eval --dataset data/odu-bench --out ev``, run for real: the dataset's place (a
    local folder here, reading like a Hub id) leaves neither in EEE's ``execution_command`` nor in
    the Inspect log's ``command``; ``--out ev`` stays (docs/export.md)."""
    shutil.copytree(sample_dataset_dir(tmp_path / "cache"), tmp_path / "data" / "odu-bench")
    env = fresh_env(tmp_path, HF_DATASETS_CACHE=hf_cache)
    done = run_odu(["eval", "--dataset", "data/odu-bench", "--model", "always", "--out", "ev"], env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    for fmt, extra in (("eee", ["--organization", "Lab"]), ("inspect", [])):
        done = run_odu(["export", "ev/always", "--format", fmt, "--out", fmt, *extra], env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    commands = {r["generation_config"]["generation_args"]["execution_command"] for r in aggregate["evaluation_results"]}
    assert commands == {"odu-bench eval --dataset <dataset> --model always --out ev"}
    logs = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "inspect").rglob("*.json")]
    assert len(logs) == 2 and {log["eval"]["metadata"]["command"] for log in logs} == commands
    for out in ("eee", "inspect"):
        assert "data/odu-bench" not in exported_text(tmp_path / out).replace('"data/odu-bench/', ""), out


def test_the_dataset_given_under_a_shorter_option_name_is_not_exported_either(sample_runs, tmp_path):
    """argparse takes ``--data`` and ``--datas`` for ``--dataset``; a Hub id goes no more than a folder."""
    command = ["odu-bench", "eval", "--data=ORG/private-set", "--datas", "ORG/private-set", "--dry-run", "--out", "ev"]
    run = copy_run(sample_runs["always"], tmp_path / "run", {"command": command})
    assert export([run], "inspect", tmp_path / "inspect") == 0
    assert export([run], "eee", tmp_path / "eee", resamples=20) == 0
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    executed = aggregate["evaluation_results"][0]["generation_config"]["generation_args"]["execution_command"]
    assert executed == "odu-bench eval --data=<dataset> --datas <dataset> --dry-run --out ev"
    for out in ("eee", "inspect"):
        assert "private-set" not in exported_text(tmp_path / out), out


def test_model_text_keeps_its_urls_in_every_export_and_what_a_run_says_of_itself_does_not(sample_runs, tmp_path):
    """One rule for every format: model text as the run's own files hold it (its URLs are data),
    the run card's URLs scrubbed (docs/export.md)."""
    sid = read_run(sample_runs["always"]).scenes[0]["scene_id"]
    said = 'Try https://example.com/page?id=42&lang=en first. {"has_demand": true}'
    card = json.loads((sample_runs["always"] / RUN_CARD_NAME).read_text(encoding="utf-8"))
    command = ["odu-bench", "eval", "--judge-base-url", "https://judge.example/v1?api_token=T0KEN-secret-value"]
    run = copy_run(sample_runs["always"], tmp_path / "run", {"command": command}, {sid: said})
    assert card["command"] != command
    assert export([run], "eee", tmp_path / "eee", resamples=20) == 0
    assert export([run], "inspect", tmp_path / "inspect") == 0
    [(_, instances)] = eee_records(tmp_path / "eee").values()
    assert next(i for i in instances if i["sample_id"] == sid)["output"]["raw"] == [said]
    from inspect_ai.log import read_eval_log

    av = next(p for p in (tmp_path / "inspect").rglob("*_odu-av_*.json"))
    sample = next(s for s in read_eval_log(str(av)).samples if s.id == sid)
    assert sample.output.completion == said
    for out in ("eee", "inspect"):
        text = exported_text(tmp_path / out)
        assert "T0KEN-secret-value" not in text and "api_token=***" in text, out


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://h/runs/{name}/{run_id}", "https://h/runs/floor__never-trigger/{run_id}"),
        ("https://h/{foo}/{name}", "https://h/{foo}/floor__never-trigger"),
        ("https://h/{name:>50000000}", "https://h/{name:>50000000}"),
        ("https://h/{0}{}{{name}}", "https://h/{0}{}{floor__never-trigger}"),
    ],
    ids=["both", "unknown-field", "format-spec", "braces"],
)
def test_source_url_fills_in_its_two_placeholders_and_nothing_else(sample_runs, tmp_path, url, expected):
    run = sample_runs["never"]
    started = time.monotonic()
    assert export([run], "hub", tmp_path / "hub", dataset_id=DATASET, source_url=url) == 0
    assert time.monotonic() - started < 30
    [entry, *_] = yaml.safe_load(next((tmp_path / "hub").rglob("odu-bench.yaml")).read_text(encoding="utf-8"))
    assert entry["source"]["url"] == expected.replace("{run_id}", read_run(run).summary["run_id"])


def test_source_url_must_be_an_http_link(sample_runs, tmp_path, capsys):
    assert export([sample_runs["never"]], "hub", tmp_path / "hub", dataset_id=DATASET, source_url="/srv/{name}") == 2
    assert "not an http(s) URL" in capsys.readouterr().err and not (tmp_path / "hub").exists()


@pytest.mark.parametrize(
    "url", ["https://h/{name}", "http://h/{run_id}", "HTTPS://h/{name}", "Http://h/x?run={run_id}"]
)
def test_source_url_takes_http_and_https_in_any_case(url):
    """docs/export.md: an ``http(s)`` URL (a scheme is read in any case, RFC 3986 §3.1)."""
    assert source_link(url, "a", "r").lower().startswith(("http://h/", "https://h/"))


@pytest.mark.parametrize(
    "url", ["https:h/{name}", "http:/h/{name}", "httpx://h/{name}", "ftp://h/{name}", "file:///srv/{name}", "h/{name}"]
)
def test_source_url_of_another_scheme_is_refused(url):
    with pytest.raises(ValueError, match="not an http"):
        source_link(url, "a", "r")


def test_source_url_values_are_percent_encoded_whole():
    """``{name}`` and ``{run_id}`` are replaced percent-encoded: a ``/`` in them is no path separator."""
    assert source_link("https://h/{name}/{run_id}", "lab/model x", "2026-12-07T21:00:00Z/ab") == (
        "https://h/lab%2Fmodel%20x/2026-12-07T21%3A00%3A00Z%2Fab"
    )


@pytest.mark.parametrize("command", ["report", "export"])
def test_resamples_above_the_bound_are_refused_by_report_and_export(sample_runs, tmp_path, capsys, command):
    options = {"format": "eee", "organization": "Lab"} if command == "export" else {"no_plots": True}
    started = time.monotonic()
    status = main(argv(command, sample_runs["always"], out=tmp_path / "out", resamples=MAX_RESAMPLES + 1, **options))
    assert status == 2 and time.monotonic() - started < 30
    assert f"--resamples {MAX_RESAMPLES + 1}: at most {MAX_RESAMPLES:,} (MAX_RESAMPLES" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_hub_export_says_that_the_hub_refuses_its_eval_yaml_and_what_to_do(sample_runs, tmp_path, capsys):
    assert export([sample_runs["never"]], "hub", tmp_path / "hub", dataset_id=DATASET) == 0
    err = capsys.readouterr().err
    assert "WARNING: eval.yaml: the Hub refuses this file at push time" in err
    assert "'odu-bench' is not one of the Hub's 30 registered frameworks" in err and "open a pull request" in err
    assert export([sample_runs["never"]], "eee", tmp_path / "eee", resamples=10) == 0
    assert "eval.yaml" not in capsys.readouterr().err


def test_an_lm_eval_output_folder_exports_as_view_and_report_read_it(sample_runs, tmp_path):
    harness = ["lm-eval", "run", "--model", "odu-always", "--tasks", "odu_av,odu_ao", "--log_samples"]
    assert main([*harness, "--output_path", str(tmp_path / "harness")]) == 0
    for folder in (tmp_path / "harness", next(p for p in (tmp_path / "harness").iterdir() if p.is_dir())):
        assert export([folder], "hub", tmp_path / f"hub-{folder.name}", dataset_id=DATASET) == 0
    assert export([tmp_path / "harness"], "eee", tmp_path / "eee", resamples=50, model_ids=["-"]) == 0
    assert export([tmp_path / "harness"], "inspect", tmp_path / "inspect", model_ids=["-"]) == 0
    eval_run = read_run(sample_runs["always"]).summary
    [(aggregate, instances)] = eee_records(tmp_path / "eee").values()
    scores = {r["evaluation_name"]: r["score_details"]["score"] for r in aggregate["evaluation_results"]}
    assert scores["av_m1"] == eval_run["audio-visual"]["m1"] and scores["ao_avg"] == eval_run["audio-only"]["avg"]
    assert {i["metadata"]["raw_output_recorded"] for i in instances} == {"true"}
    assert aggregate["model_info"]["id"] == "odu-bench/floor-always-trigger"
    status, reports = eee_validate(tmp_path / "eee")
    assert status == 0 and all(r["valid"] and not r["warnings"] for r in reports)


def test_inspect_without_inspect_ai_is_one_line_naming_the_extra(sample_runs, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # as if not installed
    assert export([sample_runs["never"]], "inspect", tmp_path / "inspect") == 2
    err = capsys.readouterr().err
    assert "--format inspect needs inspect-ai" in err and '".[inspect]"' in err and not (tmp_path / "inspect").exists()
