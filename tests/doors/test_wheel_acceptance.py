"""Issue 10's acceptance, as a new user meets the project: the wheel built from this tree, installed
(not editable) into a fresh virtual environment, used from an empty folder, offline.

* ``lm_eval --tasks odu_av --model odu-never --limit 4 --output_path OUT`` exits 0, results hold M1..Avg;
* ``lm_eval --tasks odu_ao_text --model local-chat-completions ... --apply_chat_template --limit 4``
  against a loopback server (ASR from its ``/v1/audio/transcriptions``) exits 0, and the server
  receives the App D.2 prompt as text;
* ``evaluate.load("odu_metric")`` (after ``odu-bench install-metric``) loads, and rows of
  ``load_dataset("odu-bench", "av", split="test")`` passed in batches as references give exactly
  the numbers of ``odu-bench score``, and ``odu-bench export`` of that run writes Hub eval results
  that the schema shipped in the wheel accepts;
* and: ``--tasks odu`` (the group), ``lm_eval ls tasks`` listing ours next to a user's
  ``--include_path`` task, and a plain interpreter start importing nothing of ours but the bridge.

The wheel is built once (``pip wheel --no-deps``); the venv gets only the wheel (``--no-deps``) and
reaches the dependencies already installed through a path entry to this environment's
site-packages (a ``.pth`` line: the editable install's finder there is never activated; the test
checks that ``odu`` is imported from the wheel). The ``lm_eval`` commands run concurrently.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.openai_server import OpenAIServer, Reply
from support.wheel import SECRET, WheelEnv, finish, start, user_env

from odu.core.prompts import AO_INSTRUCTION

TABLE3 = ("m1", "m2", "m3", "m4", "m5", "avg", "ftr")


@dataclass
class Runs:
    odu_av: tuple[int, str, str]
    odu_av_out: Path
    group: tuple[int, str, str]
    ls: tuple[int, str, str]
    text: tuple[int, str, str]
    server: OpenAIServer
    transcriptions: int
    first_ao_clips: int


def _transcription(req: object) -> Reply:
    return Reply(
        body={
            "text": "could you turn it down",
            "language": "en",
            "duration": 2.0,
            "segments": [{"id": 0, "start": 0.5, "end": 1.75, "text": " could you turn it down"}],
        }
    )


@pytest.fixture(scope="module")
def runs(wheel_env: WheelEnv) -> Iterator[Runs]:
    """The lm_eval commands, started together from their own empty folders, then collected."""
    from datasets import load_dataset

    from odu.data.sample import sample_dataset_dir

    first_ao = load_dataset(str(sample_dataset_dir(wheel_env.home / "sample")), "ao", split="test").select(range(4))
    first_ao_clips = sum(1 for row in first_ao for t in row["turns"] if t["role"] == "user")
    answer = '{"has_demand": false, "segments": []}'
    with OpenAIServer(lambda body: answer, api_key=SECRET, models=["gpt-test", "whisper-test"]) as server:
        server.route("POST", "/v1/audio/transcriptions", _transcription)
        environ, cwd = user_env(wheel_env, "odu_av")
        out = cwd.parent / "out"
        odu_av = start(
            wheel_env,
            ["-m", "lm_eval", "--tasks", "odu_av", "--model", "odu-never", "--limit", "4", "--output_path", str(out)],
            environ,
            cwd,
        )
        environ, cwd = user_env(wheel_env, "group")
        group = start(
            wheel_env, ["-m", "lm_eval", "--tasks", "odu", "--model", "odu-always", "--limit", "2"], environ, cwd
        )
        environ, cwd = user_env(wheel_env, "ls")
        mine = cwd.parent / "my_tasks"
        mine.mkdir()
        (mine / "my_task.yaml").write_text(
            "task: my_odu_neighbour\ndataset_path: json\noutput_type: generate_until\ntest_split: test\n"
            "doc_to_text: q\ndoc_to_target: a\nmetric_list:\n  - metric: exact_match\n",
            encoding="utf-8",
        )
        ls = start(wheel_env, ["-m", "lm_eval", "ls", "tasks", "--include_path", str(mine)], environ, cwd)
        environ, cwd = user_env(
            wheel_env,
            "text",
            OPENAI_API_KEY=SECRET,
            ODU_ASR="openai:whisper-test",
            ODU_ASR_BASE_URL=server.base_url,
        )
        model_args = f"model=gpt-test,base_url={server.base_url}/chat/completions"
        text = start(
            wheel_env,
            [
                "-m",
                "lm_eval",
                "--tasks",
                "odu_ao_text",
                "--model",
                "local-chat-completions",
                "--model_args",
                model_args,
                "--apply_chat_template",
                "--limit",
                "4",
            ],
            environ,
            cwd,
        )
        yield Runs(
            finish(odu_av),
            out,
            finish(group),
            finish(ls),
            finish(text),
            server,
            server.count("/v1/audio/transcriptions"),
            first_ao_clips,
        )


def test_the_wheel_is_what_runs_and_a_plain_start_imports_only_the_bridge(wheel_env: WheelEnv) -> None:
    environ, cwd = user_env(wheel_env, "start")
    probe = "import sys, json; import odu; print(json.dumps([odu.__file__, sorted(sys.modules)]))"
    where, _ = json.loads(
        subprocess.run(
            [str(wheel_env.python), "-c", probe], env=environ, cwd=cwd, capture_output=True, text=True, check=True
        ).stdout
    )
    assert Path(where).is_relative_to(wheel_env.site_packages)
    bare = "import sys, json; print(json.dumps(sorted(sys.modules)))"
    modules = json.loads(
        subprocess.run(
            [str(wheel_env.python), "-c", bare], env=environ, cwd=cwd, capture_output=True, text=True, check=True
        ).stdout
    )
    ours = [m for m in modules if m.startswith(("odu", "lm_eval", "importlib.metadata", "evaluate", "datasets"))]
    assert ours == ["odu_lm_eval_bridge"]
    for name in (
        "odu_lm_eval_bridge.pth",
        "odu/harness/lm_eval_tasks/odu/odu_av.yaml",
        "odu/harness/lmms_eval_tasks/odu/odu_av.yaml",
        "odu/harness/lmms_eval_tasks/odu/_odu_placeholder.jsonl",
        "odu_metric/odu_metric.py",
        "odu/data/sample/scenes.jsonl",
        "odu/data/dataset_card.md",
    ):
        assert (wheel_env.site_packages / name).is_file(), name


def test_lm_eval_runs_odu_av_on_an_odu_model(runs: Runs) -> None:
    code, out, err = runs.odu_av
    assert code == 0, err[-3000:]
    [results_file] = runs.odu_av_out.rglob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))["results"]["odu_av"]
    assert {f"{m},odu" for m in TABLE3} <= set(results)
    assert results["m2,odu"] == 0.0 and results["ftr,odu"] == 0.0  # never-trigger
    assert "site-packages/odu/harness/lm_eval_tasks/odu/odu_av.yaml" in err + out


def test_lm_eval_runs_the_group(runs: Runs) -> None:
    code, out, err = runs.group
    assert code == 0, err[-3000:]
    assert "odu_av" in out and "odu_ao" in out and "ftr" in out


def test_lm_eval_lists_our_tasks_next_to_an_include_path(runs: Runs) -> None:
    code, out, err = runs.ls
    assert code == 0, err[-3000:]
    for name in ("odu", "odu_av", "odu_ao_text", "odu_lang", "my_odu_neighbour"):
        assert f"|{name}|" in out.replace(" ", ""), name


def test_lm_eval_runs_the_text_only_task_on_a_builtin_chat_model(runs: Runs) -> None:
    code, out, err = runs.text
    assert code == 0, err[-3000:]
    chats = [r.json for r in runs.server.requests if r.path == "/v1/chat/completions"]
    assert len(chats) == 4
    for body in chats:
        system, user = body["messages"]
        assert system == {"role": "system", "content": AO_INSTRUCTION + "\n\n"}
        assert user["role"] == "user" and isinstance(user["content"], str)
        assert "[No audio is provided for this clip. Below is the verbatim ASR transcript" in user["content"]
        assert "[500-1750 ms]: could you turn it down" in user["content"] and "sha256" not in user["content"]
    assert runs.transcriptions == runs.first_ao_clips  # --limit 4: only those scenes' clips
    assert SECRET not in out + err


#: In the user's folder: load the metric by name, feed it dataset rows in batches, write the outputs.
METRIC_LOOP = textwrap.dedent(
    """
    import json
    import evaluate
    from datasets import load_dataset

    metric = evaluate.load("odu_metric")
    rows = load_dataset("odu-bench", "av", split="test")
    outputs = []
    for i, row in enumerate(rows):
        ann = row["annotations"][row["language"]]
        segments = [{k: s[k] for k in ("start_ms", "end_ms", "transcript", "structured_intent", "user_gender",
                                        "user_age_group")} | {"required_context": [], "user_in_frame": True}
                    for s in ann["segments"]]
        outputs.append(None if i == 1 else "no idea" if i == 2 else json.dumps({"has_demand": ann["has_demand"],
                                                                             "segments": segments}))
    for start in range(0, len(rows), 4):
        batch = rows.select(range(start, min(start + 4, len(rows))))
        metric.add_batch(predictions=outputs[start:start + 4], references=list(batch))
    with open("predictions.jsonl", "w", encoding="utf-8") as fh:
        for row, output in zip(rows, outputs):
            fh.write(json.dumps({"scene_id": row["scene_id"], "output": output}) + "\\n")
    print(json.dumps(metric.compute()))
    """
)


def test_evaluate_load_by_name_gives_the_numbers_of_odu_bench_score(wheel_env: WheelEnv) -> None:
    environ, cwd = user_env(wheel_env, "metric")

    def odu(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(wheel_env.python), "-m", "odu", *args],
            env=environ,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )

    assert (installed := odu("install-metric")).returncode == 0, installed.stderr[-2000:]
    assert (prepared := odu("prepare", "--sample", "--out", "odu-bench", "--no-progress")).returncode == 0, (
        prepared.stderr[-2000:]
    )
    loop = subprocess.run(
        [str(wheel_env.python), "-c", METRIC_LOOP], env=environ, cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert loop.returncode == 0, loop.stderr[-3000:]
    result = json.loads(loop.stdout.strip().splitlines()[-1])
    scored = odu(
        "score",
        "--scenes",
        "odu-bench/scenes.jsonl",
        "--predictions",
        "predictions.jsonl",
        "--out",
        "run",
        "--no-progress",
    )
    assert scored.returncode == 0, scored.stderr[-2000:]
    summary = json.loads((cwd / "run" / "summary.json").read_text(encoding="utf-8"))
    assert result["audio-visual"] == summary["audio-visual"]
    assert result["audio-visual"]["no_output"] == 1 and result["audio-visual"]["parse_errors"] == 1
    assert result["audio-visual"]["m1"] > 0 and result["judge"]["name"] == summary["judge"]["name"] == "lexical"
    # the run travels: odu-bench export from the wheel, checked against the schemas the wheel ships
    exported = odu("export", "run", "--format", "hub", "--out", "hub", "--dataset-id", "ORG/odu-bench")
    assert exported.returncode == 0, exported.stderr[-2000:]
    [results] = (cwd / "hub").rglob("odu-bench.yaml")
    check = (
        "import sys, yaml, jsonschema; from odu.export import load_schema; jsonschema.validate("
        "yaml.safe_load(open(sys.argv[1])), load_schema('hub_eval_results.schema.json')); print('valid')"
    )
    valid = subprocess.run(
        [str(wheel_env.python), "-c", check, str(results)], env=environ, cwd=cwd, capture_output=True, text=True
    )
    assert valid.stdout.strip() == "valid", valid.stderr[-2000:]
