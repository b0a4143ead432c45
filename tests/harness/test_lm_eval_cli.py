"""The commands: README command #1 (``odu-bench eval --sample``) in a fresh process, ``odu-bench eval``
with a chosen backend, and ``odu-bench lm-eval`` forwarding to lm-eval's own CLI (``validate``,
``run`` with a run card beside the results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import argv
from support.judge_fakes import rule_verdicts
from support.omni_fakes import FakeOmni, reference_output
from support.openai_server import OpenAIServer
from support.process import fresh_env, run_odu

from odu.cli import main as odu_main
from odu.cli.lm_eval_cmd import forwarded_args
from odu.core.metrics import avg
from odu.core.schema import scene_from_dict
from odu.data.sample import sample_dataset_dir
from odu.judge.base import Judge, JudgeVerdict
from odu.runs.scoring import score_scenes

SECRET = "sk-cli-test-1a2b3c4d5e6f"


class _RuleJudge(Judge):
    """The fake server's judge rule (:func:`support.judge_fakes.rule_verdicts`), in process."""

    def judge(self, requests):
        return [JudgeVerdict(rule_verdicts(r.candidate, list(r.key_points))) for r in requests]


REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_dataset_dir(tmp_path_factory.mktemp("sample-cache"))


def test_readme_command_one_runs_the_sample_end_to_end(tmp_path: Path) -> None:
    proc = run_odu(["eval", "--sample"], fresh_env(tmp_path, HF_HUB_OFFLINE="1"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| System"))
    assert "AV Avg" in header and "AO FTR" in header
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in lines
        if line.startswith("| floor")
    }
    assert set(rows) == {"floor: always-trigger *", "floor: never-trigger *"}  # * the sample is small
    rows = {name.removesuffix(" *"): cells for name, cells in rows.items()}
    assert rows["floor: always-trigger"][6] == "100.0" and rows["floor: never-trigger"][6] == "0.0"  # AV FTR
    assert rows["floor: never-trigger"][2] == "0.0"  # AV M2
    assert any("APPROXIMATE" in line for line in lines)
    assert any(line.startswith("Comparable with Table 3 only as far as these hold") for line in lines)
    assert any(line.startswith("- reference language: each scene's own") for line in lines)
    [run_dir] = (tmp_path / "runs").iterdir()
    for model in ("always", "never"):
        folder = run_dir / model
        for name in (
            "results.json",
            "summary.json",
            "scenes.jsonl",
            "predictions.jsonl",
            "run_card.json",
            "samples_odu_av.jsonl",
            "samples_odu_ao.jsonl",
        ):
            assert (folder / name).is_file(), name
        card = json.loads((folder / "run_card.json").read_text(encoding="utf-8"))
        assert card["model"]["name"] == f"odu-{model}" and card["prompt"]["version"]
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))  # the odu-bench score layout
        assert summary["judge"]["approximate"] is True and summary["audio-visual"]["n_scenes"] > 0
        assert summary["audio-visual"]["m1"] == summary["tasks"]["odu_av"]["m1"]
        assert set(card["dataset"]) == {"av", "ao"} and card["dataset"]["av"]["content_sha256"]
        assert any("approximate lexical judge" in p for p in card["pitfalls"])


def test_eval_with_an_openai_backend_and_judge(
    tmp_path: Path, sample_dataset: Path, hf_cache: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake = FakeOmni(sample_dataset)
    with OpenAIServer(fake, api_key=SECRET, models=["omni-test", "judge-test"]) as server:
        model_args = {"model": "omni-test", "base_url": server.base_url, "audio_in_video": "separate"}
        code = odu_main(
            argv(
                "eval",
                dataset=sample_dataset,
                model="openai",
                tasks="odu_ao",
                model_args=json.dumps(model_args),
                judge="openai:judge-test",
                judge_base_url=server.base_url,
                judge_cache=tmp_path / "judge.sqlite",
                out=tmp_path / "out",
            )
        )
    out = capsys.readouterr().out
    assert code == 0
    assert "| omni-test" in out and "APPROXIMATE" not in out
    [folder] = (tmp_path / "out").iterdir()
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    # the model answers every scene with its reference: detection, localisation, transcripts and
    # profiles are perfect, no false trigger, and M2 / Avg are what the fake judge's rule gives
    ao = summary["audio-only"]
    assert [ao[m] for m in ("m1", "m3", "m4", "m5", "ftr")] == [1.0, 1.0, 1.0, 1.0, 0.0]
    assert ao["n_negative"] > 0 and ao["parse_errors"] == 0 and summary["judge_errors"] == 0
    scenes = [scene_from_dict(r) for r in fake.records.values() if r["modality"] == "audio-only"]
    expected = score_scenes(
        scenes, {s.scene_id: reference_output(fake.records[s.scene_id]) for s in scenes}, _RuleJudge()
    )
    for metric in ("m1", "m2", "m3", "m4", "m5", "avg", "ftr"):
        assert ao[metric] == pytest.approx(expected.summary["audio-only"][metric]), metric
        assert summary["tasks"]["odu_ao"][metric] == pytest.approx(ao[metric]), metric
    assert 0.0 < ao["m2"] < 1.0 and ao["avg"] == pytest.approx(avg(ao))  # the rule misses some points
    assert summary["judge"]["model"] == "judge-test" and summary["judge"]["requests"] > 0
    card_text = (folder / "run_card.json").read_text(encoding="utf-8")
    card = json.loads(card_text)
    assert card["model"]["backend"]["model"] == "omni-test"
    assert card["model"]["backend"]["media"]["audio_in_video"] == "separate"
    assert card["judge"]["audio-only"]["model"] == "judge-test" and card["pitfalls"] == []
    assert SECRET not in card_text and SECRET not in out
    assert all(SECRET not in p.read_text(encoding="utf-8") for p in folder.iterdir())
    # preflight: one probe each to the judge, then the model, before any scene
    assert [b["model"] for b in fake.probes] == ["judge-test", "omni-test"]


def test_eval_loads_each_tasks_data_once_whatever_the_number_of_models(
    tmp_path: Path, sample_dataset: Path, hf_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    import odu.data.hub

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    loads: list[str] = []
    load_split = odu.data.hub.load_split

    def counted(source, config, revision=None):
        loads.append(config)
        return load_split(source, config, revision)

    monkeypatch.setattr(odu.data.hub, "load_split", counted)
    code = odu_main(["eval", "--dataset", str(sample_dataset), "--model", "always,never", "--out", str(tmp_path)])
    assert code == 0 and sorted(loads) == ["ao", "av"]
    summaries = {
        m: json.loads((tmp_path / m / "summary.json").read_text(encoding="utf-8")) for m in ("always", "never")
    }
    assert summaries["always"]["audio-visual"]["ftr"] == 1.0 and summaries["never"]["audio-visual"]["ftr"] == 0.0
    cards = {m: json.loads((tmp_path / m / "run_card.json").read_text(encoding="utf-8")) for m in ("always", "never")}
    assert cards["always"]["dataset"] == cards["never"]["dataset"] and set(cards["never"]["dataset"]) == {"av", "ao"}


def test_eval_rejects_unknown_models_and_tasks(capsys: pytest.CaptureFixture) -> None:
    assert odu_main(["eval", "--model", "gpt-9"]) == 2
    assert "unknown model" in capsys.readouterr().err
    assert odu_main(["eval", "--tasks", "mmlu", "--dataset", "unused"]) == 2
    assert "unknown task" in capsys.readouterr().err


def test_lm_eval_forwarding_adds_the_task_path() -> None:
    assert forwarded_args(["validate", "--tasks", "odu"], "/t") == [
        "validate",
        "--include_path",
        "/t",
        "--tasks",
        "odu",
    ]
    assert forwarded_args(["--model", "odu-never"], "/t") == ["--model", "odu-never", "--include_path", "/t"]
    assert forwarded_args(["run", "--include_path", "/mine"], "/t") == ["run", "--include_path", "/mine"]


def test_lm_eval_cli_validates_and_runs_with_a_run_card(tmp_path: Path) -> None:
    """lm-eval's own ``validate`` (indexing lm-eval's ~14,700 built-in task names: ~20 s) and ``run`` (of our
    tasks only: no such index)."""
    env = fresh_env(tmp_path, HF_HUB_OFFLINE="1")
    tasks = "odu,odu_av,odu_ao,odu_av_en,odu_av_zh,odu_ao_en,odu_ao_zh,odu_av_text,odu_ao_text"
    validate = run_odu(["lm-eval", "validate", "--tasks", tasks], env)
    assert validate.returncode == 0 and "All tasks found and valid" in validate.stdout, validate.stderr[-2000:]
    out = tmp_path / "lm-eval-out"
    run = run_odu(
        [
            "lm-eval",
            "run",
            "--model",
            "odu-never",
            "--tasks",
            "odu_ao",
            "--limit",
            "3",
            "--log_samples",
            "--output_path",
            str(out),
        ],
        env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    [results] = out.rglob("results_*.json")
    [card_path] = out.rglob("run_card_*.json")
    assert card_path.name == results.name.replace("results_", "run_card_") and card_path.parent == results.parent
    card = json.loads(card_path.read_text(encoding="utf-8"))
    assert card["model"]["name"] == "odu-never" and card["dataset"]["ao"]["n_scenes"] > 3
    assert any("--limit 3" in p for p in card["pitfalls"])
    assert next(out.rglob("samples_odu_ao_*.jsonl")).is_file()
    assert "m1" in run.stdout and "odu_ao" in run.stdout
    # issue 21: the table ends with the caveats, results.json stores them, the card names the system
    assert "* odu_ao: --limit 3: the first 3 scenes of each task (3 of 9 scenes)" in run.stdout
    assert "* odu_ao: M2 and Avg from the approximate lexical judge" in run.stdout
    assert json.loads(results.read_text(encoding="utf-8"))["odu"]["judges"]["odu_ao"]["approximate"] is True
    assert card["system"] == "floor: never-trigger"


def test_run_card_keeps_no_credentials_and_flags_foreign_models() -> None:
    from odu.harness.runcard import RunRecorder, build_run_card

    recorder = RunRecorder()
    recorder.record("judges", "audio-visual", {"name": "openai", "model": "j", "approximate": False, "errors": 2})
    card = build_run_card(
        {
            "config": {
                "model": "odu-openai",
                "limit": None,
                "model_args": {"model": "m", "base_url": "https://user:pw@host:8443/v1?key=abc"},
                "odu_backend": {"backend": "openai"},
                "odu_pitfalls": ["sampling on"],
            },
            "date": 0,
        },
        recorder,
    )
    assert card["model"]["model_args"] == {"model": "m", "base_url": "https://host:8443/v1?key=***"}
    assert card["date"] == "1970-01-01T00:00:00+00:00"
    assert card["pitfalls"][0] == "sampling on" and "2 judge error(s)" in card["pitfalls"][1]
    foreign = build_run_card({"config": {"model": "hf", "model_args": "pretrained=gpt2"}}, RunRecorder())
    assert "not an ODU-Bench backend" in foreign["pitfalls"][0]
