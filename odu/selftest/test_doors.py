"""The doors a user meets, from an empty folder: plain ``lm_eval`` finds the ODU-Bench tasks and
models; ``load_dataset("odu-bench", ...)`` and ``evaluate.load("odu_metric")`` resolve by name and
give the numbers of ``odu-bench score``; bad input is one line naming it, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from odu.cli import main

TABLE3 = ("m1", "m2", "m3", "m4", "m5", "avg", "ftr")


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``cwd``, output captured."""
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_plain_lm_eval_runs_an_odu_task_on_an_odu_model(
    sample: Path, tmp_path: Path, child_env: dict[str, str]
) -> None:
    """The start-up bridge: lm-eval's own command line finds ``odu_av`` and ``odu-never``, reads the
    bundled sample (no dataset named), and its table ends with the caveats of the numbers."""
    # (the sample's 12 audio-visual scenes: none answered, so M2-M5 are 0 and no false trigger)
    proc = run(
        ["-m", "lm_eval", "--tasks", "odu_av", "--model", "odu-never", "--output_path", "out"],
        child_env,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [results_file] = (tmp_path / "out").rglob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))
    metrics = results["results"]["odu_av"]
    assert {f"{m},odu" for m in TABLE3} <= set(metrics)
    assert (metrics["m2,odu"], metrics["ftr,odu"]) == (0.0, 0.0)  # never triggers
    assert results["n-samples"]["odu_av"]["effective"] == 12  # the sample's audio-visual scenes
    assert results["odu"]["datasets"]["odu_av"]["source"] == str(sample)
    assert "Caveats of these numbers" in proc.stdout and "* odu_av: 12 scenes: a small sample" in proc.stdout


#: In the user's folder: the dataset and the metric by name, dataset rows as references in batches.
METRIC_LOOP = textwrap.dedent(
    """
    import json
    import evaluate
    from datasets import load_dataset
    from odu.data.dataset import row_to_scene
    from odu.selftest import perfect_output

    metric = evaluate.load("odu_metric")
    rows = load_dataset("odu-bench", "av", split="test")
    outputs = [perfect_output(row_to_scene(row)) for row in rows]
    outputs[1], outputs[2] = None, "no idea"  # one scene unanswered, one answer unreadable
    for start in range(0, len(rows), 4):
        metric.add_batch(predictions=outputs[start:start + 4], references=list(rows.select(range(start, min(start + 4, len(rows))))))
    with open("predictions.jsonl", "w", encoding="utf-8") as fh:
        for row, output in zip(rows, outputs):
            fh.write(json.dumps({"scene_id": row["scene_id"], "output": output}) + "\\n")
    print(json.dumps(metric.compute()))
    """
)


def test_the_dataset_and_the_metric_load_by_name_and_agree_with_score(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    prepared = run(["-m", "odu", "prepare", "--sample", "--out", "odu-bench", "--no-progress"], child_env, tmp_path)
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    loop = run(["-c", METRIC_LOOP], child_env, tmp_path)
    assert loop.returncode == 0, loop.stderr[-3000:]
    result = json.loads(loop.stdout.strip().splitlines()[-1])
    args = ["score", "--scenes", "odu-bench/scenes.jsonl", "--predictions", "predictions.jsonl", "--out", "run"]
    scored = run(["-m", "odu", *args, "--no-progress"], child_env, tmp_path)
    assert scored.returncode == 0, scored.stderr[-3000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert result["audio-visual"] == summary["audio-visual"]
    assert (result["audio-visual"]["no_output"], result["audio-visual"]["parse_errors"]) == (1, 1)
    assert result["audio-visual"]["m3"] > 0.5 and result["judge"]["name"] == summary["judge"]["name"] == "lexical"


def test_bad_input_is_one_line_naming_it_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A prediction for a scene the records lack stops ``odu-bench score`` before anything is written."""
    from odu.data.sample import sample_dir

    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"scene_id": "no_such_scene", "output": "{}"}) + "\n", encoding="utf-8")
    scenes = sample_dir() / "scenes.jsonl"
    out = tmp_path / "run"
    args = ["score", "--scenes", str(scenes), "--predictions", str(predictions), "--out", str(out), "--no-progress"]
    assert main(args) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("odu-bench score: error: ") and "no_such_scene" in line
    assert not out.exists()
