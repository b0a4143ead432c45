"""Issue 21: what a newcomer sees is what is true, tried as one would: the wheel installed in a fresh
venv (``support.wheel``), the docs' commands run from an empty folder, offline.

* item 1: plain ``lm_eval`` in a folder holding a prepared ``odu-bench/`` scores its scenes, says so,
  and every file it writes names that dataset; without one, it says loudly it reads the sample;
* items 2, 4, 5: lm-eval's printed table ends with the caveats (limit, approximate judge, small
  sample), and ``results.json`` stores them with the judge;
* item 7: ``eval --model qwen-omni`` without torch: exit 2, one line naming an install command;
* item 8: ``lm_eval --model openai`` names ``odu-openai``;
* item 9: ``evaluate.load("odu_metric")`` before ``install-metric``; ``report`` and ``view`` of an
  lm-eval output folder; ``--version``; ``pytest`` collecting a checkout beside the wheel;
* item 10: ``load_dataset("odu-bench", ...)`` from a folder without it fails at once, naming the fix;
* item 11: no ``fatal: not a git repository`` outside a checkout; a run of our tasks only does not
  index lm-eval's built-in tasks (the time saved: ``benchmarks/bench_startup.py``).

Issue 31 item 2: the checkout's tests, run where the package is installed from the wheel, read the
checkout's task folder.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.wheel import REPO, WheelEnv, finish, start, user_env, without_packages

from odu.data.sample import sample_dir

#: The distributions of the [torch] extra (and accelerate, which imports torch) as site-packages names them.
TORCH_EXTRA = ("torch", "torchvision", "torchcodec", "torchaudio", "accelerate")

#: Scenes of the small release the newcomer prepares (the first audio-visual scenes of the sample).
N_SCENES = 3


def run(
    env: WheelEnv, args: list[str], environ: dict[str, str], cwd: Path, timeout: float = 600
) -> tuple[int, str, str]:
    return finish(start(env, args, environ, cwd), timeout)


def small_release(folder: Path) -> Path:
    """A release of the sample's first :data:`N_SCENES` scenes (records + their media)."""
    folder.mkdir()
    lines = (sample_dir() / "scenes.jsonl").read_text(encoding="utf-8").splitlines()[:N_SCENES]
    (folder / "scenes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copytree(sample_dir() / "media", folder / "media")
    return folder


@pytest.fixture(scope="module")
def prepared_folder(wheel_env: WheelEnv) -> tuple[dict[str, str], Path]:
    """An empty folder in which the newcomer ran ``odu-bench prepare REL --out odu-bench``."""
    environ, cwd = user_env(wheel_env, "newcomer-prepared")
    release = small_release(cwd.parent / "release")
    code, out, err = run(wheel_env, ["-m", "odu", "prepare", str(release), "--out", "odu-bench"], environ, cwd)
    assert code == 0, err[-3000:]
    return environ, cwd


@pytest.fixture(scope="module")
def plain_lm_eval(wheel_env: WheelEnv, prepared_folder: tuple[dict[str, str], Path]) -> tuple[int, str, str]:
    environ, cwd = prepared_folder
    args = ["-m", "lm_eval", "--tasks", "odu_av", "--model", "odu-never", "--log_samples", "--output_path", "out"]
    return run(wheel_env, args, environ, cwd)


def test_plain_lm_eval_scores_the_prepared_folder_and_every_file_says_so(
    plain_lm_eval: tuple[int, str, str], prepared_folder: tuple[dict[str, str], Path]
) -> None:
    code, out, err = plain_lm_eval
    assert code == 0, err[-3000:]
    _, cwd = prepared_folder
    dataset = str((cwd / "odu-bench").resolve())
    assert f"odu-bench: the tasks read {dataset} (the prepared ./odu-bench in the current folder)" in err
    [results_file] = (cwd / "out").rglob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))
    assert results["n-samples"]["odu_av"]["effective"] == N_SCENES  # its scenes, not the sample's 12
    assert results["configs"]["odu_av"]["dataset_path"] == dataset
    assert results["odu"]["datasets"]["odu_av"]["source"] == dataset
    [samples] = results_file.parent.glob("samples_odu_av_*.jsonl")
    assert all(dataset in line for line in samples.read_text(encoding="utf-8").splitlines())  # each doc's locator
    assert f"odu_av read {dataset} ({N_SCENES} scenes)" in out


def test_plain_lm_eval_prints_and_stores_the_caveats_of_its_numbers(
    plain_lm_eval: tuple[int, str, str], prepared_folder: tuple[dict[str, str], Path]
) -> None:
    code, out, err = plain_lm_eval
    _, cwd = prepared_folder
    table_end = out[out.index("|odu_av") :]
    assert "* odu_av: M2 and Avg from the approximate lexical judge: not comparable with Table 3" in table_end
    assert f"* odu_av: {N_SCENES} scenes: a small sample (< 30)" in table_end
    [results_file] = (cwd / "out").rglob("results_*.json")
    block = json.loads(results_file.read_text(encoding="utf-8"))["odu"]
    assert block["judges"]["odu_av"]["approximate"] is True and block["judges"]["odu_av"]["name"] == "lexical"
    assert {c["kind"] for c in block["caveats"]["odu_av"]} == {"approximate_judge", "small_sample"}
    assert "fatal: not a git repository" not in err  # item 11: git asked quietly


def test_without_a_prepared_folder_plain_lm_eval_says_loudly_it_reads_the_sample(wheel_env: WheelEnv) -> None:
    environ, cwd = user_env(wheel_env, "newcomer-sample")
    args = ["-m", "lm_eval", "--tasks", "odu_ao", "--model", "odu-never", "--limit", "2"]
    code, out, err = run(wheel_env, args, environ, cwd)
    assert code == 0, err[-3000:]
    assert "odu-bench: WARNING: the tasks read the bundled SAMPLE" in err and "ODU_DATASET=PATH" in err
    assert "* odu_ao: --limit 2: the first 2 scenes of each task (2 of 9 scenes), not the benchmark" in out
    assert "fatal: not a git repository" not in err


def test_report_and_view_read_the_lm_eval_output_folder(
    wheel_env: WheelEnv, plain_lm_eval: tuple[int, str, str], prepared_folder: tuple[dict[str, str], Path]
) -> None:
    environ, cwd = prepared_folder
    report = ["-m", "odu", "report", "out", "--out", "rep", "--no-plots", "--resamples", "50"]
    code, out, err = run(wheel_env, report, environ, cwd)
    assert code == 0, err[-3000:]
    assert "| floor: never-trigger †" in out  # the name eval gives the same system
    assert f"floor: never-trigger: {N_SCENES} audio-visual scenes: a small sample" in out
    markdown = (cwd / "rep" / "report.md").read_text(encoding="utf-8")
    assert re.search(rf"\| {N_SCENES}\* +\|", markdown) and "* fewer than 30 scenes" in markdown
    view = ["-m", "odu", "view", "out", "--dataset", "odu-bench", "--out", "site", "--no-progress"]
    code, out, err = run(wheel_env, view, environ, cwd)
    assert code == 0, err[-3000:]


def test_lm_eval_with_eval_s_model_name_names_lm_eval_s(wheel_env: WheelEnv) -> None:
    environ, cwd = user_env(wheel_env, "newcomer-names")
    code, out, err = run(wheel_env, ["-m", "lm_eval", "--tasks", "odu_av", "--model", "openai"], environ, cwd)
    assert code != 0
    assert "the ODU-Bench backend 'openai' is --model odu-openai in lm_eval" in err


def test_a_missing_extra_is_one_line_naming_a_command_that_works(wheel_env: WheelEnv) -> None:
    # a machine without the [torch] extra, though this one may have it (CI installs it)
    bare = without_packages(wheel_env, TORCH_EXTRA, "newcomer-no-torch")
    environ, cwd = user_env(bare, "newcomer-extra")
    args = ["-m", "odu", "eval", "--sample", "--model", "qwen-omni", "--model-args", "pretrained=Qwen/Qwen3-Omni"]
    code, out, err = run(bare, args, environ, cwd)
    assert code == 2 and "Traceback" not in err
    assert 'pip install -e ".[torch]" in an odu-bench checkout (installed from a wheel: pip install torch' in err


def test_evaluate_load_by_name_needs_no_install_step(wheel_env: WheelEnv) -> None:
    environ, cwd = user_env(wheel_env, "newcomer-metric")
    probe = "import evaluate; m = evaluate.load('odu_metric'); print(type(m).__name__)"
    proc = subprocess.run(
        [str(wheel_env.python), "-c", probe], env=environ, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("OduMetric")


def test_load_dataset_of_a_folder_that_is_not_here_fails_at_once_naming_the_fix(wheel_env: WheelEnv) -> None:
    environ, cwd = user_env(wheel_env, "newcomer-load")
    probe = "from datasets import load_dataset; load_dataset('odu-bench', 'av_en', split='test')"
    proc = subprocess.run(
        [str(wheel_env.python), "-c", probe], env=environ, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1
    assert f"load_dataset('odu-bench'): no folder ./odu-bench in {cwd}" in proc.stderr
    assert "load_dataset('/path/to/odu-bench', 'av_en', split='test')" in proc.stderr


def test_version(wheel_env: WheelEnv) -> None:
    environ, cwd = user_env(wheel_env, "newcomer-version")
    code, out, err = run(wheel_env, ["-m", "odu", "--version"], environ, cwd)
    assert code == 0 and out.startswith("odu-bench 0.") and str(wheel_env.site_packages) in out


def test_pytest_collects_a_checkout_whose_package_is_installed_from_the_wheel(wheel_env: WheelEnv) -> None:
    """``pytest`` in the checkout (``-P``: the folder not on the path, as the ``pytest`` script runs)
    collects the checkout's ``odu`` doctests, not the wheel's (no "import file mismatch")."""
    environ, _ = user_env(wheel_env, "newcomer-pytest")
    args = [
        "-P",
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "odu/core/text.py",
        "odu/core/caveats.py",
        "tests/scoring/test_text.py",
    ]
    code, out, err = run(wheel_env, args, environ, REPO)
    assert code == 0, (out + err)[-3000:]
    assert "error" not in out.lower() and "odu/core/caveats.py::odu.core.caveats.small_sample" in out


def test_a_checkout_tested_beside_the_wheel_reads_its_own_task_folder(wheel_env: WheelEnv) -> None:
    """Issue 31 item 2: where the package is installed from a wheel, the checkout's ``odu`` found its
    tasks through the bridge the interpreter imported at start-up (the wheel's), so its tests read
    the wheel's copy of the task folder."""
    environ, _ = user_env(wheel_env, "newcomer-checkout-tasks")
    test = "tests/harness/test_bridge.py::test_the_task_folder_of_a_checkout_is_the_top_level_door"
    code, out, err = run(wheel_env, ["-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", test], environ, REPO)
    assert code == 0 and "1 passed" in out, (out + err)[-3000:]
