"""Issue 12's run-contract defects, rerun as the issue describes them: a run never mixes with another
(kills, reused folders), never overstates itself (a failed judge), and any model output is written
(lone surrogates, line separators, NaN) — each a clear message and exit code, or a correct result."""

from __future__ import annotations

import errno
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import argv
from support.openai_rules import API_KEY
from support.openai_server import OpenAIServer, Reply, chat_completion
from support.process import REPO

from odu.cli import main
from odu.runs.contract import RUN_ID, SCENES_FILE, SUMMARY_FILE, JsonlFile, read_run

SAMPLE_SCENES = REPO / "odu" / "data" / "sample" / "scenes.jsonl"
JUDGE_MODEL = "loopback"  # the model the loopback server serves


def _records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").split("\n") if line]


def _write_jsonl(path: Path, rows: list[dict], ensure_ascii: bool = False) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=ensure_ascii) + "\n" for r in rows), encoding="utf-8")
    return path


def _references_as_outputs(path: Path, text: str = "") -> Path:
    """Each scene's own reference as its model output (``text`` added to the intents)."""
    rows = []
    for r in _records():
        targets = r["annotations"][r["language"]]["evaluation_targets"]
        segments = [dict(g, structured_intent=g["structured_intent"] + text) for g in targets["segments"]]
        rows.append({"scene_id": r["scene_id"], "output": json.dumps(dict(targets, segments=segments))})
    return _write_jsonl(path, rows)


def _score(out: Path, predictions: Path, *extra: str) -> int:
    return main([*argv("score", scenes=SAMPLE_SCENES, predictions=predictions, out=out, no_progress=True), *extra])


def _strict_json(path: Path) -> object:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in {path}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


# --- item 1: a kill, or two runs' files in one folder ------------------------------------------------


def test_a_killed_score_leaves_the_old_run_whole(openai_server: OpenAIServer, tmp_path: Path) -> None:
    predictions = _references_as_outputs(tmp_path / "predictions.jsonl")
    out = tmp_path / "run"
    assert _score(out, predictions) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    openai_server.latency = 60  # the rerun waits in its judge step, after every scene was scored
    command = [
        *[sys.executable, "-m", "odu"],
        *argv("score", scenes=SAMPLE_SCENES, predictions=predictions, out=out, overwrite=True, no_progress=True),
        *["--judge", f"openai:{JUDGE_MODEL}", "--judge-base-url", openai_server.base_url, "--judge-retries", "0"],
    ]
    env = {**os.environ, "OPENAI_API_KEY": API_KEY, "PYTHONPATH": str(REPO)}
    victim = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while openai_server.count() == 0 and time.monotonic() < deadline and victim.poll() is None:
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait() == -signal.SIGKILL and openai_server.count() > 0

    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the old run, untouched
    read_run(out)
    [leftover] = [p for p in tmp_path.iterdir() if p.name.startswith(".run.partial-")]
    assert _score(out, predictions, "--overwrite") == 0  # the next run into the same place
    assert not leftover.exists()


def test_a_disk_full_mid_write_leaves_the_old_run_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    predictions = _references_as_outputs(tmp_path / "predictions.jsonl")
    out = tmp_path / "run"
    assert _score(out, predictions) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real_write = JsonlFile.write_json

    def write_then_fill_the_disk(self: JsonlFile, text: str) -> None:
        if self.rows == 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, text)

    monkeypatch.setattr(JsonlFile, "write_json", write_then_fill_the_disk)
    assert _score(out, predictions, "--overwrite") == 2
    assert "No space left on device" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predictions.jsonl", "run"]  # no temporary folder


def test_report_refuses_a_summary_beside_another_runs_scenes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Run B's summary (the never-trigger floor, Avg 4.4) with run A's scenes (Avg 88.6)."""
    good = _references_as_outputs(tmp_path / "good.jsonl")
    never = _write_jsonl(tmp_path / "never.jsonl", [{"scene_id": r["scene_id"], "output": None} for r in _records()])
    assert _score(tmp_path / "a", good) == 0 and _score(tmp_path / "b", never) == 0
    (tmp_path / "b" / SCENES_FILE).write_bytes((tmp_path / "a" / SCENES_FILE).read_bytes())
    capsys.readouterr()
    assert main(["report", str(tmp_path / "b"), "--out", str(tmp_path / "report"), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert (
        f"{tmp_path / 'b'}: " in err and "are not of run" in err and "summary.json disagrees with scenes.jsonl" in err
    )
    assert not (tmp_path / "report").exists()


# --- item 2: stale files of another run ----------------------------------------------------------------


def test_scoring_into_an_eval_folder_is_refused_then_replaced_whole(
    prepared_sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(argv("eval", sample=True, model="never", tasks="odu_ao", out=tmp_path / "E")) == 0
    folder = tmp_path / "E" / "never"
    held = sorted(p.name for p in folder.iterdir())
    assert "run_card.json" in held and "predictions.jsonl" in held
    capsys.readouterr()

    assert _score(folder, folder / "predictions.jsonl") == 2
    assert f"--out {folder} contains the input {folder / 'predictions.jsonl'}" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == held  # refused: nothing touched

    predictions = _references_as_outputs(tmp_path / "good.jsonl")
    assert _score(folder, predictions, "--overwrite") == 0
    assert sorted(p.name for p in folder.iterdir()) == [SCENES_FILE, SUMMARY_FILE]  # no stale run card
    capsys.readouterr()
    assert main(["report", str(folder), "--out", str(tmp_path / "report"), "--no-plots", "--resamples", "20"]) == 0
    printed = capsys.readouterr().out
    assert "| never †" in printed and "odu-never" not in printed

    assert main(argv("eval", sample=True, model="never", tasks="odu_ao", out=tmp_path / "E")) == 2
    assert (
        f"--out {tmp_path / 'E'}: holds the runs of odu-bench eval (never); pass --overwrite" in capsys.readouterr().err
    )


# --- item 3: a failed judge -----------------------------------------------------------------------------


def test_a_failed_judge_never_inflates_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture, openai_key: str
) -> None:
    predictions = _references_as_outputs(tmp_path / "predictions.jsonl")
    unreachable = ["--judge", f"openai:{JUDGE_MODEL}", "--judge-base-url", "http://127.0.0.1:9/v1"]
    assert _score(tmp_path / "unjudged", predictions, *unreachable, "--judge-retries", "0") == 1
    assert read_run(tmp_path / "unjudged").summary["judge_errors"] > 0
    assert _score(tmp_path / "judged", predictions) == 0
    runs = [str(tmp_path / "unjudged"), str(tmp_path / "judged")]
    options = ["--out", str(tmp_path / "report"), "--no-plots", "--resamples", "20"]
    capsys.readouterr()

    assert main(["report", *runs, *options]) == 2
    err = capsys.readouterr().err
    assert "run unjudged" in err and "judge error(s) remain" in err and "M2 missing" in err

    assert main(["report", *runs, *options, "--allow-incomplete"]) == 0
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("| unjudged"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[0] == "unjudged ‡" and cells[1] == "-" and cells[3] == "-"  # marked; no Avg, no M2
    assert "‡ unjudged: incomplete" in printed
    table = (tmp_path / "report" / "table3.csv").read_text(encoding="utf-8").splitlines()
    unjudged = next(line for line in table if line.startswith("unjudged"))
    assert unjudged.split(",")[1] == "" and unjudged.split(",")[3] == ""  # av_avg, av_m2 empty
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["systems"][0]["incomplete"] and not report["systems"][1]["incomplete"]
    entry = next(e for e in report["headline"]["audio-visual"] if e["system"] == "unjudged")
    assert entry["metrics"]["avg"] == {"value": None, "ci": [None, None]}


# --- items 7 and 8, and NaN: any model output is written ----------------------------------------------------


def _replay_file(path: Path, text: str, ensure_ascii: bool) -> Path:
    """Every sample scene answered with its reference, ``text`` in its transcripts and intents."""
    rows = []
    for r in _records():
        targets = r["annotations"][r["language"]]["evaluation_targets"]
        segments = [dict(g, transcript=g["transcript"] + text, structured_intent=text) for g in targets["segments"]]
        output = text + json.dumps(dict(targets, segments=segments), ensure_ascii=ensure_ascii)
        rows.append({"scene_id": r["scene_id"], "output": output})
    return _write_jsonl(path, rows, ensure_ascii=ensure_ascii)


def test_a_lone_surrogate_in_model_output_is_written_not_fatal(prepared_sample: Path, tmp_path: Path) -> None:
    """Item 7: ``"today \\ud83d"`` from a replay file (or a server)."""
    replay = _replay_file(tmp_path / "replay.jsonl", "today \ud83d", ensure_ascii=True)
    assert "\\ud83d" in replay.read_text(encoding="utf-8")
    model_args = f"predictions={replay}"
    assert main(argv("eval", sample=True, model="replay", model_args=model_args, out=tmp_path / "E")) == 0
    [folder] = (tmp_path / "E").iterdir()
    run = read_run(folder)
    assert run.summary["parse_errors"] == 0 and run.summary["audio-visual"]["m1"] == 1.0
    outputs = [json.loads(line)["output"] for line in (folder / "predictions.jsonl").read_text().split("\n") if line]
    assert all(o.startswith("today \ufffd") for o in outputs)  # docs/scoring.md, "Files of a run"
    assert any("unpaired surrogate replaced by U+FFFD" in i for r in run.scenes for i in r["issues"])
    # its raw outputs, replayed, score the same
    assert _score(tmp_path / "again", folder / "predictions.jsonl") == 0
    again = read_run(tmp_path / "again").summary
    assert again["audio-visual"]["m3"] == run.summary["audio-visual"]["m3"]


def test_line_separators_in_model_output_survive_eval_then_score(prepared_sample: Path, tmp_path: Path) -> None:
    """Item 8: an output holding U+2028 is written raw by eval, and score reads that file."""
    replay = _replay_file(tmp_path / "replay.jsonl", "a\u2028b\u2029c\u0085d", ensure_ascii=False)
    model_args = f"predictions={replay}"
    assert main(argv("eval", sample=True, model="replay", model_args=model_args, out=tmp_path / "E")) == 0
    [folder] = (tmp_path / "E").iterdir()
    assert "\u2028" in (folder / "predictions.jsonl").read_text(encoding="utf-8")
    assert _score(tmp_path / "scored", folder / "predictions.jsonl") == 0
    rows = read_run(tmp_path / "scored").scenes
    by_id = {r["scene_id"]: r for r in read_run(folder).scenes}  # the rows eval scored
    assert len(rows) == len(by_id)
    for row in rows:
        assert {k: v for k, v in by_id[row["scene_id"]].items() if k not in ("inference_error", "truncated")} == row
    assert any("a\u2028b\u2029c\u0085d" in c["text"] for r in rows for c in r["candidates"])


def test_nan_in_the_judge_usage_never_reaches_summary_json(
    openai_server: OpenAIServer, tmp_path: Path, openai_key: str
) -> None:
    """Item 6: a server reporting ``"prompt_tokens": NaN``."""

    def nan_usage(body: dict) -> Reply:
        points = body["messages"][-1]["content"].split("point text:\n", 1)[1].split("\n\n", 1)[0]
        verdicts = [{"qid": json.loads(p)["qid"], "hit": True, "reason": "r"} for p in points.splitlines()]
        reply = chat_completion(body, json.dumps(verdicts))
        reply["usage"] = {"prompt_tokens": math.nan, "completion_tokens": math.inf, "total_tokens": math.nan}
        return Reply(body=reply)

    openai_server.responder = nan_usage
    predictions = _references_as_outputs(tmp_path / "predictions.jsonl")
    judge = ["--judge", f"openai:{JUDGE_MODEL}", "--judge-base-url", openai_server.base_url, "--no-cache"]
    code = _score(tmp_path / "run", predictions, *judge)
    assert code == 0  # counts that are not token counts are left out, the verdicts stand
    summary = _strict_json(tmp_path / "run" / SUMMARY_FILE)
    assert isinstance(summary, dict) and summary[RUN_ID]
    assert summary["judge_errors"] == 0
    read_run(tmp_path / "run")


def test_report_writes_any_system_name(tmp_path: Path) -> None:
    """A name from the command line may hold a lone surrogate (undecodable bytes in argv)."""
    assert _score(tmp_path / "run", _references_as_outputs(tmp_path / "predictions.jsonl")) == 0
    out = tmp_path / "report"
    args = ["report", str(tmp_path / "run"), "--names", "sys \udc80", "--out", str(out), "--no-plots"]
    assert main([*args, "--resamples", "20"]) == 0
    assert _strict_json(out / "report.json")["systems"][0]["name"] == "sys \ufffd"  # type: ignore[index]
    assert "sys \ufffd" in (out / "report.md").read_text(encoding="utf-8")
    assert "sys \ufffd" in (out / "table3.csv").read_text(encoding="utf-8")
