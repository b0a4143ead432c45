"""Issue 23 items 4 and 5: bounded waits and reads, and no traceback. Each case as the issue met
it: an input without end (``/dev/zero``) or a line past the limit, a FIFO where a clip should be,
a server asking to wait 999999 s, a dataset card pointing outside its folder, a parquet file of
another schema, a link loop in a release, lm-eval broken, and Ctrl-C in ``eval``, ``prepare`` and
``view``: each ends within seconds with one line naming the file or the cause (exit 2; Ctrl-C 130)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.cli import argv
from support.process import fresh_env, run_odu

from odu.cli import main
from odu.data.sample import sample_dir
from odu.io.jsonio import MAX_LINE_BYTES

SAMPLE_SCENES = sample_dir() / "scenes.jsonl"
#: Seconds a case may take: it ends on its own long before (a hang would be killed here).
WITHIN_S = 120


def _no_outputs(path: Path) -> Path:
    rows = [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").splitlines() if line]
    path.write_text("".join(json.dumps({"scene_id": r["scene_id"], "output": None}) + "\n" for r in rows))
    return path


def _odu(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_odu(list(args), fresh_env(tmp_path), cwd=tmp_path, timeout=WITHIN_S)


# --- inputs without end ------------------------------------------------------------------------------------


def test_predictions_from_dev_zero_are_refused_at_once(tmp_path: Path) -> None:
    done = _odu(tmp_path, *argv("score", scenes=SAMPLE_SCENES, predictions="/dev/zero", out="o", no_progress=True))
    assert done.returncode == 2 and "/dev/zero: cannot read (not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


def test_stored_verdicts_from_dev_zero_are_refused_at_once(tmp_path: Path) -> None:
    predictions = _no_outputs(tmp_path / "p.jsonl")
    args = argv("score", scenes=SAMPLE_SCENES, predictions=predictions, judge="verdicts:/dev/zero", out="o")
    done = _odu(tmp_path, *args, "--no-progress")
    assert done.returncode == 2 and "/dev/zero" in done.stderr and "not a regular file" in done.stderr


def test_a_line_past_the_limit_is_refused_naming_the_limit(tmp_path: Path, capsys) -> None:
    endless = tmp_path / "endless.jsonl"
    with endless.open("wb") as fh:  # a sparse file: a line of MAX_LINE_BYTES + 1 bytes without end
        fh.truncate(MAX_LINE_BYTES + 1)
    assert main(argv("score", scenes=SAMPLE_SCENES, predictions=endless, out=tmp_path / "o", no_progress=True)) == 2
    assert f"{endless}:1: a line longer than MAX_LINE_BYTES = {MAX_LINE_BYTES:,} bytes" in capsys.readouterr().err


# --- media and datasets ------------------------------------------------------------------------------------


def _release_copy(demo_release: Path, tmp_path: Path) -> tuple[Path, dict]:
    release = Path(shutil.copytree(demo_release, tmp_path / "release"))
    record = json.loads((release / "scenes.json").read_text(encoding="utf-8"))[0]
    return release, record


def test_view_of_a_release_whose_media_is_a_fifo_ends(demo_release: Path, tmp_path: Path) -> None:
    release, record = _release_copy(demo_release, tmp_path)
    clip = release / record["clips"][-1]["src"]
    clip.unlink()
    os.mkfifo(clip)  # nothing ever writes: reading it would block forever
    scores = tmp_path / "run"
    scenes = release / "scenes.json"
    predictions = tmp_path / "p.jsonl"
    records = json.loads(scenes.read_text(encoding="utf-8"))
    predictions.write_text("".join(json.dumps({"scene_id": r["scene_id"], "output": None}) + "\n" for r in records))
    assert _odu(tmp_path, *argv("score", scenes=scenes, predictions=predictions, out=scores)).returncode == 0
    done = _odu(tmp_path, "view", str(scores), "--dataset", str(release), "--out", "site", "--resamples", "20")
    assert done.returncode == 1, done.stderr  # built, with the clip named as a problem
    assert f"scene {record['scene_id']} clip {record['clips'][-1]['id']}" in done.stderr
    assert "not a regular file" in done.stderr and (tmp_path / "site" / "index.html").is_file()


def test_a_link_loop_in_a_release_is_a_problem_of_its_clip(demo_release: Path, tmp_path: Path, capsys) -> None:
    release, record = _release_copy(demo_release, tmp_path)
    clip = release / record["clips"][0]["src"]
    clip.unlink()
    (clip.parent / "loop-b").symlink_to(clip)
    clip.symlink_to(clip.parent / "loop-b")
    assert main(["prepare", str(release), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"scene {record['scene_id']}, clip {record['clips'][0]['id']}: media path" in err and "Traceback" not in err


def _prepared_copy(demo_dataset: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo_dataset, tmp_path / "dataset"))


def test_a_card_pointing_outside_its_folder_is_refused(demo_dataset: Path, tmp_path: Path, capsys, hf_cache) -> None:
    dataset = _prepared_copy(demo_dataset, tmp_path)
    outside = tmp_path / "elsewhere"
    shutil.copytree(dataset / "data" / "av_en_pos", outside)
    card = (dataset / "README.md").read_text(encoding="utf-8")
    (dataset / "README.md").write_text(card.replace("data/av_en_pos/test-*.parquet", "../elsewhere/test-*.parquet"))
    code = main(argv("eval", dataset=dataset, model="always", tasks="odu_av", out=tmp_path / "o"))
    err = capsys.readouterr().err
    assert code == 2 and "its card's data_files (test) point outside the folder" in err, err
    assert not (tmp_path / "o").exists()
    assert main(argv("view", tmp_path / "none", dataset=dataset, out=tmp_path / "site")) == 2


def test_a_card_with_a_python_tag_is_refused_in_one_line_naming_it(
    demo_dataset: Path, tmp_path: Path, capsys, hf_cache
) -> None:
    """Issue 30 item 11: ``!!python/object/apply`` in the card's YAML (never constructed: a safe loader)."""
    dataset = _prepared_copy(demo_dataset, tmp_path)
    marker = tmp_path / "constructed"
    card = (dataset / "README.md").read_text(encoding="utf-8")
    tag = f'evil: !!python/object/apply:os.system ["touch {marker}"]\n'
    (dataset / "README.md").write_text(card.replace("---\n", "---\n" + tag, 1), encoding="utf-8")
    code = main(argv("eval", dataset=dataset, model="always", tasks="odu_av", out=tmp_path / "o"))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"odu-bench eval: error: {dataset / 'README.md'}: line 2: its YAML"), err
    assert "python/object/apply" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not marker.exists() and not (tmp_path / "o").exists()


def test_a_parquet_file_of_another_schema_is_refused(demo_dataset: Path, tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    dataset = _prepared_copy(demo_dataset, tmp_path)
    [shard] = (dataset / "data" / "av_en_pos").glob("*.parquet")
    pq.write_table(pa.table({"x": [1, 2]}), shard)
    code = main(argv("eval", dataset=dataset, model="always", tasks="odu_av", out=tmp_path / "o"))
    err = capsys.readouterr().err
    assert code == 2 and "its data files are not an ODU-Bench dataset" in err and "prepare it again" in err, err


def test_eval_with_lm_eval_broken_says_the_fix(tmp_path: Path) -> None:
    fake = tmp_path / "shadow" / "lm_eval"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('lm_eval is broken here')\n")
    env = fresh_env(tmp_path)
    env["PYTHONPATH"] = f"{tmp_path / 'shadow'}{os.pathsep}{env['PYTHONPATH']}"
    for command in (["eval", "--sample"], ["lm-eval", "ls", "tasks"]):
        done = run_odu(command, env, cwd=tmp_path, timeout=WITHIN_S)
        assert done.returncode == 2, done.stderr
        assert "lm-eval cannot be imported (ImportError: lm_eval is broken here)" in done.stderr
        assert "pip install 'lm-eval[api]>=0.4.13,<0.5'" in done.stderr and "Traceback" not in done.stderr


# --- Ctrl-C -------------------------------------------------------------------------------------------------

#: A child that runs ``odu-bench ARGS`` with ``TARGET`` (a module function) slowed down: it says
#: so on stderr, then waits, so that Ctrl-C comes while the command is at work.
SLOW = textwrap.dedent(
    """
    import importlib, sys, time
    from odu.cli import main
    module, _, name = sys.argv[1].rpartition(".")
    module = importlib.import_module(module)
    original = getattr(module, name)
    def slow(*args, **kwargs):
        print("AT WORK", file=sys.stderr, flush=True)
        time.sleep(60)
        return original(*args, **kwargs)
    setattr(module, name, slow)
    sys.exit(main(sys.argv[2:]))
    """
)


def _interrupted(tmp_path: Path, target: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``odu-bench args`` with ``target`` slowed, press Ctrl-C once it is at work."""
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW, target, *args],
        env=fresh_env(tmp_path),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    lines = []
    while (line := child.stderr.readline()) and "AT WORK" not in line:
        lines.append(line)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=WITHIN_S)
    return subprocess.CompletedProcess(args, child.returncode, out, "".join(lines) + err)


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("eval", "odu.cli.eval.write_model_outputs"),
        ("prepare", "odu.data.prepare._write"),
        ("view", "odu.report.view.site._write_scenes"),
    ],
)
def test_ctrl_c_is_one_line_and_exit_130(command: str, target: str, demo_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = {
        "eval": ["eval", "--sample", "--model", "always", "--out", str(out)],
        "prepare": ["prepare", str(demo_release), "--out", str(out), "--no-progress"],
        "view": ["view", str(tmp_path / "run"), "--sample", "--out", str(out), "--no-progress", "--resamples", "20"],
    }[command]
    if command == "view":
        score = argv("score", scenes=SAMPLE_SCENES, predictions=_no_outputs(tmp_path / "p.jsonl"), out="run")
        assert _odu(tmp_path, *score).returncode == 0
    done = _interrupted(tmp_path, target, args)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"odu-bench {command}: interrupted"
    assert not out.exists() or not any(out.iterdir())  # eval's folder of runs is made before its first run
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]  # no work folder left behind


# --- issue 30 item 2: linear CPU on every read ---------------------------------------------------------------------

#: A JSONL line cut short (300 KB): more brackets than MAX_RECORD_DEPTH, then 150,000 escaped quotes
#: without the string's end (the nesting pre-scan was quadratic on it: 64 KB took 11.7 s).
CUT_LINE = '{"scene_id": "x", "output": ' + "[" * 100 + '"' + '\\"' * 150_000


def test_a_cut_line_of_escaped_quotes_is_refused_at_once(tmp_path: Path) -> None:
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(CUT_LINE + "\n", encoding="utf-8")
    done = _odu(tmp_path, *argv("score", scenes=SAMPLE_SCENES, predictions=predictions, out="o", no_progress=True))
    assert done.returncode == 2 and f"{predictions}:1: not valid JSON" in done.stderr, done.stderr[-2000:]
    array, whole = tmp_path / "a.json", tmp_path / "w.json"
    array.write_text("[" + CUT_LINE, encoding="utf-8")
    whole.write_text(CUT_LINE, encoding="utf-8")
    reads = (
        "import sys; from odu.io.jsonio import JsonFileError, iter_records, read_json\n"
        "for read in (lambda: list(iter_records(sys.argv[1])), lambda: read_json(sys.argv[2])):\n"
        "    try: read()\n"
        "    except JsonFileError as exc: print(exc)\n"
    )
    read = subprocess.run(
        [sys.executable, "-c", reads, str(array), str(whole)],
        env=fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=WITHIN_S,
    )
    assert (
        read.returncode == 0 and read.stdout.count("not a valid JSON array") + read.stdout.count("not valid JSON") == 2
    )
