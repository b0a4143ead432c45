"""``odu-bench export``: the sample's runs as Hub eval results, Every Eval Ever records and Inspect
logs, validated by the formats' own checkers (our transcription of the Hub's specification, Every
Eval Ever's validator, inspect_ai's reader) and read back equal to summary.json; runs with failed
steps refused unless allowed; no credential in any exported file."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from support.cli import argv
from support.eee_validator import eee_validate
from support.export_runs import DATASET, GEMINI, SCORED_ID, UNNAMED, eee_records, export, scene_rows
from support.sample_runs import scored_sample_run

from odu.cli import main
from odu.core.tables import TABLE3_COLUMNS
from odu.export import load_schema
from odu.export.hub import safe_name
from odu.export.tasks import TASKS
from odu.report import build_report, load_systems
from odu.runs.contract import RUN_CARD_NAME, read_run, summarize, write_run


def validator(name: str) -> jsonschema.Draft7Validator:
    schema = load_schema(name)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def test_exports_of_the_sample_runs_validate_against_the_schemas(sample_runs, tmp_path):
    runs = list(sample_runs.values())
    assert export(runs, "hub", tmp_path / "hub", dataset_id=DATASET) == 0
    assert export(runs, "eee", tmp_path / "eee", resamples=200) == 0
    results = validator("hub_eval_results.schema.json")
    files = sorted((tmp_path / "hub").glob("*/.eval_results/odu-bench.yaml"))
    assert [p.parts[-3] for p in files] == ["floor__always-trigger", "floor__never-trigger", "scored"]
    task_ids = set()
    for path in files:
        entries = yaml.safe_load(path.read_text(encoding="utf-8"))
        results.validate(entries)
        task_ids |= {e["dataset"]["task_id"] for e in entries}
    records = eee_records(tmp_path / "eee")
    assert sorted(records) == ["floor: always-trigger", "floor: never-trigger", "scored"]  # eval's names
    for aggregate, instances in records.values():
        assert {line["evaluation_id"] for line in instances} == {aggregate["evaluation_id"]}
        assert aggregate["detailed_evaluation_results"]["total_rows"] == len(instances) == 21
    # the dataset side: every model-side task is one of its tasks; the one rule it breaks is the
    # Hub's list of registered frameworks, which does not (yet) hold odu-bench (docs/export.md)
    eval_yaml = yaml.safe_load((tmp_path / "hub" / "eval.yaml").read_text(encoding="utf-8"))
    ids = [t["id"] for t in eval_yaml["tasks"]]
    assert len(ids) == len(set(ids)) == 14 and task_ids <= set(ids)
    errors = list(validator("hub_eval_yaml.schema.json").iter_errors(eval_yaml))
    assert [(list(e.path), e.validator) for e in errors] == [(["evaluation_framework"], "enum")]
    assert eval_yaml["evaluation_framework"] == "odu-bench"


def test_eee_records_pass_every_eval_evers_own_validator(sample_runs, tmp_path):
    """Every file, aggregate and samples, passes upstream's validator (schema 0.3.0, the datastore
    layout, the companion file, the model's path, the deployment fields) without a warning."""
    assert export(list(sample_runs.values()), "eee", tmp_path / "eee", resamples=100) == 0
    status, reports = eee_validate(tmp_path / "eee")
    problems = [(r["file"], r["errors"], r["warnings"]) for r in reports if r["errors"] or r["warnings"]]
    assert status == 0 and problems == [] and len(reports) == 6
    # what the validator passes is the current version, in the datastore's layout, uuid version 4
    for path in (tmp_path / "eee").rglob("*.json*"):
        text = path.read_text(encoding="utf-8")
        record = json.loads(text.splitlines()[0] if path.suffix == ".jsonl" else text)
        assert record["schema_version"] == "0.3.0"
        assert re.fullmatch(
            r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}(_samples\.jsonl|\.json)", path.name
        )
    folders = sorted(p.relative_to(tmp_path / "eee").parent.as_posix() for p in (tmp_path / "eee").rglob("*.json"))
    assert folders == [
        "data/odu-bench/lab/scored",
        "data/odu-bench/odu-bench/floor-always-trigger",
        "data/odu-bench/odu-bench/floor-never-trigger",
    ]


def test_eee_num_samples_counts_the_scenes_each_metric_is_a_mean_over(sample_runs, tmp_path):
    """App A.3: M1 and Avg over all scenes, M2-M5 over the demand scenes, FTR over the no-demand ones."""
    assert export([sample_runs["always"]], "eee", tmp_path / "eee", resamples=50) == 0
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    summary = read_run(sample_runs["always"]).summary
    population = {"avg": "n_scenes", "m1": "n_scenes", "ftr": "n_negative"}
    seen = set()
    for result in aggregate["evaluation_results"]:
        task = next(t for t in TASKS if t.id == result["evaluation_name"])
        expected = summary[task.modality][population.get(task.metric, "n_positive")]
        assert result["score_details"]["uncertainty"]["num_samples"] == expected, task.id
        seen.add(task.metric)
    assert seen == set(TABLE3_COLUMNS)
    assert summary["audio-visual"]["n_positive"] != summary["audio-visual"]["n_scenes"]  # the test can tell them apart


def test_eee_needs_an_organization_and_model_ids_in_developer_model_form(sample_runs, tmp_path, capsys):
    scored = sample_runs["scored"]
    assert main(argv("export", sample_runs["always"], format="eee", out=tmp_path / "a")) == 2
    assert "--format eee needs --organization NAME" in capsys.readouterr().err
    assert main(argv("export", scored, format="eee", out=tmp_path / "b", organization="Lab")) == 2
    err = capsys.readouterr().err
    assert "run scored: its model id 'scored' is not in the form DEVELOPER/MODEL" in err and "--model-ids" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    given = dict(organization="Lab", model_ids=["Qwen/Qwen3-Omni:30b"], resamples=20)
    assert main(argv("export", scored, format="eee", out=tmp_path / "c", **given)) == 0
    [(aggregate, instances)] = eee_records(tmp_path / "c").values()
    assert aggregate["model_info"]["id"] == "Qwen/Qwen3-Omni:30b" and aggregate["model_info"]["developer"] == "Qwen"
    assert aggregate["source_metadata"]["source_organization_name"] == "Lab"
    assert {i["model_id"] for i in instances} == {"Qwen/Qwen3-Omni:30b"}
    assert next((tmp_path / "c").rglob("*.json")).parent.parts[-2:] == (
        "Qwen",
        "Qwen3-Omni_30b",
    )  # as upstream files it
    assert main(argv("export", scored, format="eee", out=tmp_path / "d", organization="Lab", model_ids=["a", "b"])) == 2
    assert "--model-ids gives 2 id(s) for 1 run(s)" in capsys.readouterr().err


def test_a_served_model_gets_the_developer_its_backend_or_provider_knows(served_runs, tmp_path, capsys):
    """docs/export.md's first block, on a Gemini run: the run card's ``gemini-3.1-pro-preview`` of the
    Gemini backend is exported as ``google/gemini-3.1-pro-preview`` (EEE folder, model info, instances,
    the Inspect log's model) without --model-ids; a model a local server names ``my-omni`` has no
    developer anything knows, and is still refused, naming the run."""
    from inspect_ai.log import read_eval_log

    gemini, unnamed = served_runs["gemini"], served_runs["openai"]
    eee = dict(format="eee", organization="My Lab", resamples=20)
    assert main(argv("export", gemini, out=tmp_path / "eee", **eee)) == 0
    [(aggregate, instances)] = eee_records(tmp_path / "eee").values()
    assert aggregate["model_info"]["id"] == f"google/{GEMINI}" and aggregate["model_info"]["developer"] == "google"
    assert {i["model_id"] for i in instances} == {f"google/{GEMINI}"}
    assert next((tmp_path / "eee").rglob("*.json")).parent.parts[-3:] == ("odu-bench", "google", GEMINI)
    assert main(argv("export", gemini, format="inspect", out=tmp_path / "inspect")) == 0
    logs = [read_eval_log(str(path)) for path in (tmp_path / "inspect").rglob("*.json")]
    assert len(logs) == 2 and {log.eval.model for log in logs} == {f"google/{GEMINI}"}
    capsys.readouterr()
    for options in (eee, dict(format="inspect")):
        assert main(argv("export", unnamed, out=tmp_path / "unnamed", **options)) == 2
        err = capsys.readouterr().err
        assert f"its model id {UNNAMED!r} is not in the form DEVELOPER/MODEL" in err and "--model-ids" in err
        assert not (tmp_path / "unnamed").exists()
    assert main(argv("export", unnamed, out=tmp_path / "given", model_ids=[f"lab/{UNNAMED}"], **eee)) == 0


def test_a_served_model_s_eee_export_passes_upstream_s_validator(served_runs, tmp_path):
    """The developer the export adds (``google`` of a Gemini run) is one the datastore files it under."""
    assert export([served_runs["gemini"]], "eee", tmp_path / "eee", resamples=20) == 0
    status, reports = eee_validate(tmp_path / "eee")
    assert status == 0 and [r for r in reports if r["errors"] or r["warnings"]] == [] and len(reports) == 2


def test_inspect_logs_read_back_with_inspect_ais_own_reader(sample_runs, tmp_path):
    from inspect_ai.log import read_eval_log

    runs = list(sample_runs.values())
    assert export(runs, "inspect", tmp_path / "inspect") == 0
    logs = sorted((tmp_path / "inspect").rglob("*.json"))
    assert len(logs) == 6  # per run and modality
    for system, run in zip(load_systems(runs), runs):
        summary = read_run(run).summary
        for modality, config in (("audio-visual", "av"), ("audio-only", "ao")):
            [path] = [p for p in logs if p.parent.name == safe_name(system.name) and f"_odu-{config}_" in p.name]
            log = read_eval_log(str(path))
            assert log.status == "success" and log.eval.task == f"odu_{config}"
            metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
            assert metrics == {m: summary[modality][m] for m in TABLE3_COLUMNS}
            rows = {r["scene_id"]: r for r in system.rows_of(modality)}
            assert [s.id for s in log.samples] == list(rows) and log.results.total_samples == len(rows)
            for sample in log.samples:
                assert sample.scores["odu"].metadata["scene_row"] == json.loads(json.dumps(rows[sample.id]))
                assert sample.scores["odu"].value["demand_correct"] == float(
                    rows[sample.id]["has_demand"] == rows[sample.id]["predicted_has_demand"]
                )
            recorded = {s.metadata["raw_output_recorded"] for s in log.samples}
            assert recorded == ({False} if system.name == "scored" else {True})
            assert log.eval.model == {"scored": SCORED_ID}.get(system.name, log.eval.model)


def test_a_round_trip_reads_the_numbers_back_equal_to_summary_json(sample_runs, tmp_path):
    runs = list(sample_runs.values())
    assert export(runs, "hub", tmp_path / "hub", dataset_id=DATASET) == 0
    assert export(runs, "eee", tmp_path / "eee", resamples=300) == 0
    records = eee_records(tmp_path / "eee")
    systems = load_systems(runs)
    headline = build_report(systems, 300)["headline"]
    for system, run in zip(systems, runs):
        summary = read_run(run).summary
        expected = {t.id: summary[t.modality][t.metric] for t in TASKS if summary[t.modality][t.metric] is not None}
        hub = yaml.safe_load(
            (tmp_path / "hub" / safe_name(system.name) / ".eval_results/odu-bench.yaml").read_text(encoding="utf-8")
        )
        # in percent, rounded to HUB_VALUE_DECIMALS places (docs/export.md): 55.0, never 55.00000000000001
        assert {e["dataset"]["task_id"]: e["value"] for e in hub} == {k: round(100 * v, 2) for k, v in expected.items()}
        assert all(e["value"] == round(e["value"], 2) for e in hub)
        assert {e["dataset"]["id"] for e in hub} == {DATASET}
        aggregate, instances = records[system.name]
        assert {r["evaluation_name"]: r["score_details"]["score"] for r in aggregate["evaluation_results"]} == expected
        # the intervals are the report's headline intervals (same seed, same resamples)
        intervals = {
            f"{'av' if m == 'audio-visual' else 'ao'}_{c}": e["metrics"][c]["ci"]
            for m, entries in headline.items()
            for e in entries
            if e["system"] == system.name
            for c in TABLE3_COLUMNS
        }
        for result in aggregate["evaluation_results"]:
            ci = result["score_details"]["uncertainty"]["confidence_interval"]
            assert [ci["lower"], ci["upper"]] == intervals[result["evaluation_name"]]
        # the instances alone give every number back: each carries its whole scene row
        for modality in ("audio-visual", "audio-only"):
            rows = [r for r in scene_rows(instances) if r["modality"] == modality]
            again = summarize(rows)
            assert {m: again[m] for m in TABLE3_COLUMNS} == {m: summary[modality][m] for m in TABLE3_COLUMNS}
        # raw outputs travel where the run kept them (runs made through lm-eval)
        recorded = {i["metadata"]["raw_output_recorded"] for i in instances}
        assert recorded == ({"false"} if system.name == "scored" else {"true"})


def failed_run(sample_runs: dict[str, Path], out: Path, judge_error: bool = True) -> Path:
    """The scored sample run with one key point undecided (a judge error) or one scene's
    inference failed."""
    run = read_run(sample_runs["scored"])
    rows = copy.deepcopy(run.scenes)
    if judge_error:
        point = next(k for r in rows for k in r["key_points"] if k["matched"])
        point |= {"hit": None, "judge_error": "timeout after 3 attempts"}
    else:
        for r in rows:
            r["inference_error"] = None
        rows[0]["inference_error"] = "HTTP 500 after 3 attempts"
    return scored_sample_run(out, rows)


@pytest.mark.parametrize("judge_error", [True, False], ids=["judge-error", "inference-error"])
def test_a_run_with_failed_steps_is_refused_unless_allowed_and_then_says_so(sample_runs, tmp_path, capsys, judge_error):
    run = failed_run(sample_runs, tmp_path / "failed", judge_error)
    assert export([run], "hub", tmp_path / "hub", dataset_id=DATASET) == 2
    err = capsys.readouterr().err
    reason = "1 judge error(s) remain" if judge_error else "1 inference error(s)"
    assert f"run failed ({run}) is not exported: {reason}" in err and "--allow-failed-steps" in err
    assert export([run], "eee", tmp_path / "eee") == 2
    assert not (tmp_path / "hub").exists() and not (tmp_path / "eee").exists()  # nothing written

    assert export([run], "hub", tmp_path / "hub", dataset_id=DATASET, allow_failed_steps=True) == 0
    assert "exported WITH FAILED STEPS" in capsys.readouterr().err
    entries = yaml.safe_load((tmp_path / "hub/failed/.eval_results/odu-bench.yaml").read_text(encoding="utf-8"))
    assert all(f"FAILED STEPS, exported with --allow-failed-steps: {reason}" in e["notes"] for e in entries)
    has_avg = any(e["dataset"]["task_id"].endswith("_avg") for e in entries)
    assert has_avg is not judge_error  # no Avg rests on a run whose judge errors remain (as in the report)
    assert export([run], "eee", tmp_path / "eee", allow_failed_steps=True, resamples=50) == 0
    [(aggregate, instances)] = eee_records(tmp_path / "eee").values()
    failed = [json.loads(r["score_details"]["details"]["failed_steps"]) for r in aggregate["evaluation_results"]]
    assert all(reason in steps[0] for steps in failed)
    errors = [i["error"] for i in instances if i["error"]]
    assert errors == (["judge error: timeout after 3 attempts"] if judge_error else ["HTTP 500 after 3 attempts"])


def test_no_credential_reaches_an_exported_file(sample_runs, tmp_path):
    secret = "sk-SECRET-0123456789"
    source = read_run(sample_runs["always"])
    card = json.loads((sample_runs["always"] / RUN_CARD_NAME).read_text(encoding="utf-8"))
    card["model"]["model_args"] = {"model": "Qwen/Qwen3-Omni", "base_url": f"http://user:{secret}@10.0.0.1:8000/v1"}
    card["command"] = ["odu-bench", "eval", "--judge-base-url", f"https://judge.example/v1?api-key={secret}"]
    summary = dict(source.summary, judge=dict(source.summary["judge"], base_url=f"http://u:{secret}@judge/v1"))
    run = write_run(type(source)(summary, source.scenes), tmp_path / "leaky", json_files={RUN_CARD_NAME: card})
    assert export([run], "hub", tmp_path / "hub", dataset_id=DATASET) == 0
    assert export([run], "eee", tmp_path / "eee", resamples=20) == 0
    assert export([run], "inspect", tmp_path / "inspect") == 0
    files = [p for p in tmp_path.glob("*/**/*") if p.is_file() and "leaky" not in p.parts]
    assert len(files) == 6
    for path in files:
        assert secret not in path.read_text(encoding="utf-8"), path
    [(aggregate, _)] = eee_records(tmp_path / "eee").values()
    assert aggregate["model_info"]["id"] == "Qwen/Qwen3-Omni" and aggregate["model_info"]["developer"] == "Qwen"
    assert next((tmp_path / "eee").rglob("*.json")).parent.parts[-2:] == ("Qwen", "Qwen3-Omni")


def test_hub_export_needs_the_dataset_and_fills_in_the_source_link(sample_runs, tmp_path, capsys):
    run = sample_runs["never"]
    assert export([run], "hub", tmp_path / "none") == 2
    assert "--format hub needs --dataset-id ORG/NAME" in capsys.readouterr().err
    url = "https://huggingface.co/datasets/me/odu-runs/tree/main/{name}"
    assert export([run], "hub", tmp_path / "hub", dataset_id=DATASET, source_url=url) == 0
    [entry, *_] = yaml.safe_load(
        (tmp_path / "hub/floor__never-trigger/.eval_results/odu-bench.yaml").read_text(encoding="utf-8")
    )
    run_id = read_run(run).summary["run_id"]
    assert entry["source"] == {
        "url": "https://huggingface.co/datasets/me/odu-runs/tree/main/floor__never-trigger",
        "name": f"ODU-Bench run {run_id} (floor: never-trigger)",
    }
    assert entry["date"] == json.loads((run / RUN_CARD_NAME).read_text(encoding="utf-8"))["date"]
    # the judge and every caveat travel with the number
    assert "judge: lexical (lexical-overlap, APPROXIMATE)" in entry["notes"]
    assert "matching thresholds: the paper's are unpublished (App A.2)" in entry["notes"]
    assert f"run {run_id}" in entry["notes"]


def test_exporting_again_replaces_the_same_files(sample_runs, tmp_path):
    run = sample_runs["scored"]
    assert export([run], "eee", tmp_path / "eee", resamples=20) == 0
    first = sorted(p.relative_to(tmp_path) for p in (tmp_path / "eee").rglob("*.*"))
    assert export([run], "eee", tmp_path / "eee", resamples=20) == 0
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "eee").rglob("*.*")) == first
    assert [p.parts[-3:-1] for p in first] == [("lab", "scored")] * 2
