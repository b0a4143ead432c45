"""lmms-eval 0.7.3 itself, as a user runs it: the wheel built from this tree installed into a fresh
venv, commands run from an empty folder, offline (docs/lmms-eval.md).

* plain ``lmms-eval`` finds the ``odu`` tasks (the bridge indexes them: lmms-eval 0.7.3 reads no task
  entry points, and ``LMMS_EVAL_PLUGINS`` is read after the task index is built); a user's
  ``--include_path`` task of the same name wins;
* ``lmms-eval --tasks odu_av,odu_ao --model qwen2_5_omni`` — lmms-eval's own backend, its chat class —
  on the tiny Qwen2.5-Omni checkpoint in the published layout answers every scene (0 inference
  errors), the model's prompts hold the audio of the videos (sent as separate audio parts: the backend
  hard-codes ``use_audio_in_video=False``), and the task's metrics equal ``odu-bench score`` on the
  logged outputs.

Slow (a model load and ~30 s of generation per scene on CPU: transformers' Qwen2.5-Omni ``generate``
gives the thinker 1,024 new tokens whatever lmms-eval's ``max_new_tokens`` says), so the run takes
``--limit 2`` per task; the whole sample's figure is in docs/performance.md.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.lmms_lane import (
    CPU_RUNNER,
    TRANSFORMERS4,
    require_lmms,
    seed_processor,
    transformers4_checkpoint,
)
from support.wheel import WheelEnv, finish, start, user_env

TABLE3 = ("m1", "m2", "m3", "m4", "m5", "avg", "ftr")
#: Scenes per task of the end-to-end run.
LIMIT = 2


@pytest.fixture(autouse=True, scope="module")
def _lmms_installed() -> None:
    require_lmms()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Qwen2.5-Omni checkpoint (published layout), in transformers 4's spelling."""
    import tiny_checkpoints

    root = tmp_path_factory.mktemp("lmms-tiny")
    built = tiny_checkpoints.build("qwen2_5_omni", root / "built")
    return transformers4_checkpoint(built, root / "Qwen2.5-Omni-tiny")


def lmms_env(env: WheelEnv, name: str, tiny: Path | None = None, **extra: str) -> tuple[dict[str, str], Path]:
    """A user's environment for lmms-eval: the transformers 4 layer first on ``PYTHONPATH`` and, with
    ``tiny``, its processor seeded under lmms-eval's Hub id in the private Hugging Face cache."""
    environ, cwd = user_env(env, f"lmms-{name}", PYTHONPATH=str(TRANSFORMERS4), TOKENIZERS_PARALLELISM="false", **extra)
    if tiny is not None:
        seed_processor(Path(environ["HF_HOME"]) / "hub", tiny)
    return environ, cwd


@dataclass
class Run:
    code: int
    out: str
    err: str
    results: dict
    samples: dict[str, Path]
    prompts: list[list[int]]
    home: Path


@pytest.fixture(scope="module")
def qwen_run(wheel_env: WheelEnv, tiny: Path) -> Run:
    environ, cwd = lmms_env(wheel_env, "qwen2_5_omni", tiny)
    out, prompts = cwd.parent / "out", cwd.parent / "prompts.jsonl"
    environ["ODU_TEST_PROMPTS"] = str(prompts)
    model_args = f"pretrained={tiny},device=cpu,attn_implementation=sdpa"
    args = ["--tasks", "odu_av,odu_ao", "--model", "qwen2_5_omni", "--model_args", model_args]
    proc = start(
        wheel_env,
        ["-c", CPU_RUNNER, *args, "--limit", str(LIMIT), "--log_samples", "--output_path", str(out)],
        environ,
        cwd,
    )
    code, stdout, stderr = finish(proc, timeout=1800)
    results = [json.loads(p.read_text(encoding="utf-8")) for p in out.rglob("*_results.json")]
    samples = {task: p for task in ("odu_av", "odu_ao") for p in out.rglob(f"*_samples_{task}.jsonl")}
    logged = (
        [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()] if prompts.is_file() else []
    )
    return Run(code, stdout, stderr, results[0] if results else {}, samples, logged, cwd.parent)


def test_lmms_eval_finds_the_tasks_from_any_folder(wheel_env: WheelEnv) -> None:
    """Plain lmms-eval indexes our tasks (from the wheel); a user's --include_path task of the same name
    wins; with the bridge off there are none."""
    mine = wheel_env.home / "lmms-my-tasks"
    mine.mkdir()
    (mine / "mine.yaml").write_text("task: odu_av\ndataset_path: json\noutput_type: generate_until\n", encoding="utf-8")
    probe = (
        "import json, sys; from lmms_eval.tasks import TaskManager; names = ('odu_av', 'odu_ao_text', 'odu'); "
        "indexes = [TaskManager('ERROR', include_path=p).task_index for p in (None, *sys.argv[1:])]; "
        "print(json.dumps([{n: i[n]['yaml_path'] for n in names if n in i} for i in indexes]))"
    )
    environ, cwd = lmms_env(wheel_env, "index")
    both = start(wheel_env, ["-c", probe, str(mine)], environ, cwd)
    environ, cwd = lmms_env(wheel_env, "index-off", ODU_LM_EVAL_BRIDGE="0")
    off = start(wheel_env, ["-c", probe], environ, cwd)  # concurrently
    found = {}
    for names, proc in ((("plain", "mine"), both), (("off",), off)):
        code, out, err = finish(proc, timeout=900)
        assert code == 0, err[-3000:]
        found.update(zip(names, json.loads(out.strip().splitlines()[-1])))
    ours = wheel_env.site_packages / "odu" / "harness" / "lmms_eval_tasks" / "odu"
    assert found["plain"]["odu_av"] == str(ours / "odu_av.yaml")
    assert found["plain"]["odu_ao_text"] == str(ours / "odu_ao_text.yaml")
    assert found["plain"]["odu"] == str(ours / "odu.yaml")  # the group
    assert found["mine"]["odu_av"] == str(mine / "mine.yaml") and found["mine"]["odu_ao_text"].startswith(str(ours))
    assert found["off"] == {}


def test_qwen2_5_omni_answers_every_scene(qwen_run: Run) -> None:
    assert qwen_run.code == 0, qwen_run.err[-3000:]
    assert "Error in generating" not in qwen_run.out + qwen_run.err  # lmms-eval's ChatMixin: an exception
    for task in ("odu_av", "odu_ao"):
        metrics = qwen_run.results["results"][task]
        assert metrics["inference_errors,none"] == 0 and metrics["no_output,none"] == 0, metrics
        assert {f"{m},none" for m in TABLE3} <= set(metrics)
        assert qwen_run.results["n-samples"][task]["effective"] == LIMIT


def test_the_audio_of_each_video_reaches_the_model(qwen_run: Run, tiny: Path) -> None:
    """Every prompt holds audio placeholders: the audio-visual ones through the separate audio part
    (lmms-eval's backend hard-codes use_audio_in_video=False, so the track is the task's to send)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny)
    audio, video = (tokenizer.convert_tokens_to_ids(t) for t in ("<|AUDIO|>", "<|VIDEO|>"))
    assert len(qwen_run.prompts) == 2 * LIMIT
    with_video = [ids for ids in qwen_run.prompts if video in ids]
    assert len(with_video) == LIMIT
    assert all(ids.count(audio) > 0 for ids in qwen_run.prompts)


def test_metrics_equal_odu_bench_score_on_the_logged_outputs(qwen_run: Run, wheel_env: WheelEnv) -> None:
    """The logged samples -> predictions (``odu.harness.lmms.write_predictions``) -> ``odu-bench score``
    against the same scene records: the same numbers as lmms-eval's results."""
    environ, cwd = lmms_env(wheel_env, "score")
    where = "from odu.data.sample import sample_dataset_dir; print(sample_dataset_dir())"
    sample = subprocess.run(
        [str(wheel_env.python), "-c", where],
        env=environ,
        cwd=cwd,
        check=True,
        timeout=600,
        capture_output=True,
        text=True,
    )
    scenes = Path(sample.stdout.strip().splitlines()[-1]) / "scenes.jsonl"
    write = "import sys; from odu.harness.lmms import write_predictions; write_predictions(sys.argv[1], sys.argv[2])"
    for task, modality in (("odu_av", "audio-visual"), ("odu_ao", "audio-only")):
        predictions, scored = cwd / f"{task}.jsonl", cwd / f"{task}-scored"
        subprocess.run(
            [str(wheel_env.python), "-c", write, str(qwen_run.samples[task]), str(predictions)],
            env=environ, cwd=cwd, check=True, timeout=300,
        )  # fmt: skip
        logged = {json.loads(line)["scene_id"] for line in predictions.read_text(encoding="utf-8").splitlines()}
        assert len(logged) == LIMIT
        subset = cwd / f"{task}-scenes.jsonl"  # the scenes of the run (--limit), as the task scored them
        subset.write_text(
            "".join(
                line + "\n"
                for line in scenes.read_text(encoding="utf-8").splitlines()
                if json.loads(line)["scene_id"] in logged
            ),
            encoding="utf-8",
        )
        score = subprocess.run(
            [str(wheel_env.python), "-m", "odu", "score", "--scenes", str(subset), "--predictions", str(predictions),
             "--out", str(scored), "--no-progress"],
            env=environ, cwd=cwd, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert score.returncode == 0, score.stderr[-3000:]
        summary = json.loads((scored / "summary.json").read_text(encoding="utf-8"))[modality]
        metrics = qwen_run.results["results"][task]
        for name in (*TABLE3, "parse_errors", "no_output", "m2_errors_as_misses"):
            assert metrics[f"{name},none"] == pytest.approx(summary[name]), (task, name)
