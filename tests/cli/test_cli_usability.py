"""Bad input and failures met while following the README: each gives a short message naming the
file, scene, clip, field or argument at fault and an exit code, never a traceback or a silent
wrong result."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.cli import argv
from support.process import fresh_env, run_odu

from odu.cli import main
from odu.core.schema import SchemaError, read_predictions
from odu.data.release import ReleaseError, read_release
from odu.data.sample import sample_dataset_dir
from odu.models import make_backend
from odu.report import System, comparability_notes

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "odu" / "data" / "sample"
SAMPLE_SCENES = SAMPLE / "scenes.jsonl"


def _sample_records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_dataset_dir(tmp_path_factory.mktemp("sample-cache"))


# --- odu-bench score ---------------------------------------------------------------------------------


def test_score_out_that_is_a_file_fails_before_scoring(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    preds = _write_jsonl(tmp_path / "preds.jsonl", [{"scene_id": "avp_gen_900001", "output": None}])
    out = tmp_path / "taken"
    out.write_text("not a directory")
    assert main(argv("score", scenes=SAMPLE_SCENES, predictions=preds, out=out, no_progress=True)) == 2
    assert f"--out {out}: exists and is not a directory" in capsys.readouterr().err


def test_score_names_scenes_without_a_prediction_row(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    records = _sample_records()
    preds = _write_jsonl(tmp_path / "preds.jsonl", [{"scene_id": r["scene_id"], "output": None} for r in records[1:]])
    assert main(argv("score", scenes=SAMPLE_SCENES, predictions=preds, out=tmp_path / "run", no_progress=True)) == 0
    err = capsys.readouterr().err
    assert f"1 of {len(records)} scene(s) have no row in {preds} (scored as no output): {records[0]['scene_id']}" in err


def test_prediction_row_without_output_is_refused(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "preds.jsonl", [{"scene_id": "a", "output": None}, {"scene_id": "b", "prediction": "{}"}]
    )
    with pytest.raises(SchemaError, match=r"row 2 \(scene b\): missing 'output'"):
        read_predictions(path)


def test_missing_stored_verdicts_say_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    record = _sample_records()[0]
    segment = record["annotations"][record["language"]]["evaluation_targets"]["segments"][0]
    output = {
        "has_demand": True,
        "segments": [{k: segment[k] for k in ("start_ms", "end_ms", "transcript", "structured_intent")}],
    }
    scenes = _write_jsonl(tmp_path / "scenes.jsonl", [record])
    preds = _write_jsonl(tmp_path / "preds.jsonl", [{"scene_id": record["scene_id"], "output": json.dumps(output)}])
    first = segment["key_points"][0]["qid"]
    verdicts = _write_jsonl(
        tmp_path / "verdicts.jsonl", [{"scene_id": record["scene_id"], "segment": 0, "qid": first, "hit": True}]
    )
    args = argv(
        "score", scenes=scenes, predictions=preds, out=tmp_path / "run", judge=f"verdicts:{verdicts}", no_progress=True
    )
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "add their rows to the verdicts file" in err and "Rerun" not in err
    assert main([*args, "--allow-judge-errors", "--overwrite"]) == 0


# --- odu-bench eval / models ---------------------------------------------------------------------------


def test_model_arguments_a_backend_does_not_take_are_named() -> None:
    with pytest.raises(ValueError, match=r"model 'replay': .*'foo'.*its arguments: predictions"):
        make_backend("replay", predictions="p.jsonl", foo=1)
    with pytest.raises(ValueError, match=r"model 'replay': missing a required argument: 'predictions'"):
        make_backend("replay")


def test_eval_names_a_dataset_that_is_not_one(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["eval", "--dataset", str(tmp_path / "nope")]) == 2
    assert f"dataset {tmp_path / 'nope'}: no such directory (looked in {Path.cwd()}), and not a Hub repo id" in (
        err := capsys.readouterr().err
    )
    assert f"odu-bench prepare RELEASE --out {tmp_path / 'nope'}" in err  # the fix, named
    assert main(["eval", "--dataset", "./nope"]) == 2  # a relative path is no Hub repo id either
    assert "dataset ./nope: no such directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["eval", "--dataset", str(tmp_path / "empty")]) == 2
    assert "not a prepared ODU-Bench dataset directory" in capsys.readouterr().err


def test_eval_reports_inference_errors_and_exits_1(
    tmp_path: Path, sample_dataset: Path, hf_cache: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    args = argv(
        "eval",
        dataset=sample_dataset,
        model="openai",
        tasks="odu_ao",
        limit=1,
        model_args="model=omni,base_url=http://127.0.0.1:9/v1,retries=0",
        out=tmp_path / "out",
        no_preflight=True,  # the run itself meets the dead server (preflight: tests/harness/test_run_control.py)
    )
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "inference error (1 scene(s)): model call failed: APIConnectionError" in err
    assert "--allow-inference-errors" in err
    assert main([*args, "--allow-inference-errors", "--overwrite"]) == 0


def test_eval_default_verbosity_keeps_lm_eval_quiet(tmp_path: Path) -> None:
    proc = run_odu(
        argv("eval", sample=True, model="never", tasks="odu_ao"), fresh_env(tmp_path, HF_HUB_OFFLINE="1"), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "floor: never-trigger" in proc.stdout
    assert "Custom kwargs" not in proc.stderr and "WARNING" not in proc.stderr


# --- odu-bench download / upload --------------------------------------------------------------------


def test_hub_transfer_failures_are_messages(tmp_path: Path, demo_dataset: Path) -> None:
    env = fresh_env(tmp_path, HF_ENDPOINT="http://127.0.0.1:9", HF_TOKEN="hf_test_token")
    for command in (
        argv("download", "ORG/odu-bench", out=tmp_path / "dl"),
        argv("upload", demo_dataset, "ORG/odu-bench"),
    ):
        proc = run_odu(command, env, timeout=300)
        assert proc.returncode == 2, proc.stderr[-3000:]
        assert proc.stderr.startswith(f"odu-bench {command[0]}: error: ORG/odu-bench: {command[0]} failed:")
        assert "Traceback" not in proc.stderr and "hf_test_token" not in proc.stderr


# --- odu-bench prepare -------------------------------------------------------------------------------


def test_release_problems_name_the_file_once_and_missing_key_points(tmp_path: Path) -> None:
    release = Path(shutil.copytree(SAMPLE, tmp_path / "release"))
    records = _sample_records()
    broken = records[0]["clips"][-1]["src"]
    (release / broken).write_bytes(b"\x00not media at all" * 8)
    records[1]["annotations"]["en"]["evaluation_targets"]["segments"][0].pop("key_points")
    _write_jsonl(release / "scenes.jsonl", records)
    with pytest.raises(ReleaseError) as caught:
        read_release(release)
    problems = {p.scene_id: p for p in caught.value.problems}
    assert set(problems) == {records[0]["scene_id"], records[1]["scene_id"]}
    media = problems[records[0]["scene_id"]]
    assert media.clip_id == records[0]["clips"][-1]["id"] and str(media).count(Path(broken).name) == 1
    assert problems[records[1]["scene_id"]].message.startswith("annotations.en.segments[0] has no key_points")


# --- odu-bench report --------------------------------------------------------------------------------


def test_report_notes_runs_with_judge_or_inference_errors() -> None:
    judge = {"name": "verdicts", "model": "v.jsonl", "approximate": False}
    systems = [
        System("clean", {"judge": judge, "judge_errors": 0}, []),
        System("partial", {"judge": judge, "judge_errors": 3, "inference_errors": 2}, []),
    ]
    notes = comparability_notes(systems)
    assert any(n.startswith("judge errors remain") and n.endswith("partial: 3") for n in notes)
    assert any(n.startswith("inference errors") and n.endswith("partial: 2") for n in notes)
    assert not any("clean" in n for n in notes)
