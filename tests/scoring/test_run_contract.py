"""The run contract (``odu.runs.contract``) and the streaming scorer (``odu.runs.scoring``): a run directory is
written as one unit and read back only when its files are one run; the streamed summary and rows
are those of the whole list of rows, to the last digit."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from odu.core.metrics import avg, false_trigger_rate, macro_f1, mean_defined
from odu.core.schema import SchemaError, iter_scenes, load_scenes, scene_from_dict
from odu.judge import LexicalJudge, StoredVerdictJudge
from odu.judge.base import Judge, JudgeRequest, JudgeVerdict
from odu.runs.contract import (
    RUN_ID,
    SCENES_FILE,
    SUMMARY_FILE,
    RunError,
    RunWriter,
    ScoredRun,
    check_out_dir,
    incomplete,
    read_run,
    summarize,
    write_run,
)
from odu.runs.scoring import score_into, score_scenes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DEMO = FIXTURES / "demo_scenes.json"


def _demo_run() -> ScoredRun:
    records = json.loads(DEMO.read_text(encoding="utf-8"))
    outputs = {
        r["scene_id"]: json.dumps(r["annotations"][r["language"]]["evaluation_targets"], ensure_ascii=False)
        for r in records[::2]
    }
    return score_scenes(load_scenes(records), outputs, LexicalJudge())


# --- summarising one scene at a time ---------------------------------------------------------------


def _reference_summary(rows: list[dict]) -> dict:
    """The summary as the scorer computed it before it streamed: lists of the whole run, then the
    metric functions (odu.core.metrics)."""
    y_true = [r["has_demand"] for r in rows]
    y_pred = [r["predicted_has_demand"] for r in rows]
    metrics = {"m1": macro_f1(y_true, y_pred)} | {f"m{k}": mean_defined(r[f"s{k}"] for r in rows) for k in (2, 3, 4, 5)}
    lower = dict(metrics, m2=mean_defined(r["s2_errors_as_misses"] for r in rows))
    return {
        **metrics,
        "avg": avg(metrics),
        "ftr": false_trigger_rate(y_true, y_pred),
        "m2_errors_as_misses": lower["m2"],
        "avg_errors_as_misses": avg(lower),
    }


@pytest.mark.parametrize("seed", range(20))
def test_the_tally_gives_the_numbers_of_the_whole_list_to_the_last_digit(seed: int) -> None:
    rng = random.Random(seed)

    def score() -> float | None:
        return None if rng.random() < 0.2 else rng.choice([0.0, 1.0, 1 / 3, 2 / 3, rng.random()])

    rows = [
        {
            "has_demand": rng.random() < 0.7,
            "predicted_has_demand": rng.random() < 0.6,
            "s2": score(),
            "s2_errors_as_misses": score(),
            "s3": score(),
            "s4": score(),
            "s5": score(),
            "key_points": [{"judge_error": None if rng.random() < 0.9 else "x"} for _ in range(rng.randint(0, 3))],
            "parse_error": rng.random() < 0.1,
            "no_output": rng.random() < 0.1,
        }
        for _ in range(rng.randint(0, 300))
    ]
    got = summarize(rows)
    for key, value in _reference_summary(rows).items():
        assert got[key] == value, key  # equality, not closeness


# --- the run directory as one unit -------------------------------------------------------------------


def test_every_file_of_a_run_carries_its_id_and_the_summary_their_hashes(tmp_path: Path) -> None:
    run = _demo_run()
    out = write_run(run, tmp_path / "run", json_files={"run_card.json": {"system": "demo"}})
    summary = json.loads((out / SUMMARY_FILE).read_text(encoding="utf-8"))
    run_id = summary[RUN_ID]
    assert list(summary)[0] == RUN_ID and list(summary)[-1] == "files"
    lines = (out / SCENES_FILE).read_bytes().split(b"\n")[:-1]
    assert all(json.loads(line)[RUN_ID] == run_id for line in lines)
    assert json.loads((out / "run_card.json").read_text(encoding="utf-8"))[RUN_ID] == run_id
    assert set(summary["files"]) == {SCENES_FILE, "run_card.json"}
    assert summary["files"][SCENES_FILE]["rows"] == len(run.scenes)
    back = read_run(out)
    assert back.scenes == run.scenes and back.problems == []
    assert {k: v for k, v in back.summary.items() if k not in (RUN_ID, "files")} == run.summary
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no temporary folder left beside it


def test_a_failed_write_leaves_the_old_run_untouched(tmp_path: Path) -> None:
    old = write_run(_demo_run(), tmp_path / "run")
    before = {p.name: p.read_bytes() for p in old.iterdir()}
    with pytest.raises(RuntimeError, match="disk on fire"):
        with RunWriter(old, overwrite=True) as writer:
            with writer.jsonl(SCENES_FILE) as rows:
                rows.write({"scene_id": "half"})
                raise RuntimeError("disk on fire")
    assert {p.name: p.read_bytes() for p in old.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
    read_run(old)


def test_overwrite_replaces_the_whole_folder(tmp_path: Path) -> None:
    out = write_run(_demo_run(), tmp_path / "run", json_files={"run_card.json": {"system": "old"}})
    with pytest.raises(RunError, match=r"holds a run \(.*\); pass --overwrite"):
        write_run(_demo_run(), out)
    write_run(_demo_run(), out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == [SCENES_FILE, SUMMARY_FILE]  # the old run card is gone
    read_run(out)


def test_overwrite_never_clears_files_that_are_not_a_runs(tmp_path: Path) -> None:
    out = write_run(_demo_run(), tmp_path / "run")
    (out / "notes.txt").write_text("mine")
    for overwrite in (False, True):
        with pytest.raises(RunError, match=r"not part of a run \(notes\.txt\)"):
            write_run(_demo_run(), out, overwrite=overwrite)
    assert (out / "notes.txt").read_text() == "mine"
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunError, match="exists and is not a directory"):
        check_out_dir(tmp_path / "file", overwrite=True)
    assert check_out_dir(tmp_path / "new") is False and not (tmp_path / "new").exists()


def test_a_killed_runs_leftover_is_removed_by_the_next_run(tmp_path: Path) -> None:
    dead = tmp_path / ".run.partial-999999999-abc"  # no such process
    dead.mkdir()
    (dead / SCENES_FILE).write_text("{}\n")
    alive = tmp_path / ".run.partial-1-abc"  # pid 1 is always alive
    alive.mkdir()
    write_run(_demo_run(), tmp_path / "run")
    assert not dead.exists() and alive.exists()


# --- reading back: files that disagree are named ------------------------------------------------------


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    return write_run(_demo_run(), tmp_path / "a"), write_run(_demo_run(), tmp_path / "b")


def test_scenes_of_another_run_are_named(two_runs: tuple[Path, Path]) -> None:
    """Issue 12 item 1: run B's summary beside run A's scenes."""
    a, b = two_runs
    shutil.copyfile(a / SCENES_FILE, b / SCENES_FILE)
    with pytest.raises(RunError, match=rf"{b}: \d+ row\(s\) of scenes\.jsonl are not of run .*sha256 differs"):
        read_run(b)
    assert read_run(b, strict=False).problems


def test_a_cut_scenes_file_is_named(two_runs: tuple[Path, Path]) -> None:
    _, b = two_runs
    lines = (b / SCENES_FILE).read_bytes().split(b"\n")
    (b / SCENES_FILE).write_bytes(b"\n".join(lines[:3]) + b"\n")
    with pytest.raises(RunError, match=r"scenes\.jsonl is not the one run .* wrote \(3 rows, \d+ written"):
        read_run(b)


def test_stale_and_missing_files_are_named(tmp_path: Path) -> None:
    out = write_run(_demo_run(), tmp_path / "run", json_files={"run_card.json": {"system": "x"}})
    (out / "predictions.jsonl").write_text('{"scene_id": "a", "output": null}\n')
    with pytest.raises(RunError, match=r"predictions\.jsonl not written by run .* \(left from another run\?\)"):
        read_run(out)
    (out / "predictions.jsonl").unlink()
    (out / "run_card.json").write_text('{"system": "edited"}')
    with pytest.raises(RunError, match=r"run_card\.json is not the one run .* wrote"):
        read_run(out)
    (out / "run_card.json").unlink()
    with pytest.raises(RunError, match=r"run_card\.json of run .* is missing"):
        read_run(out)


def test_a_run_without_an_id_cannot_be_checked(tmp_path: Path) -> None:
    out = tmp_path / "old"
    out.mkdir()
    (out / SUMMARY_FILE).write_text('{"judge": {}}')
    (out / SCENES_FILE).write_text("")
    with pytest.raises(RunError, match="no run id"):
        read_run(out)


def test_incomplete_names_judge_errors_and_a_missing_m2() -> None:
    assert incomplete({"judge_errors": 0, "audio-visual": {"n_positive": 3, "m2": 0.5}}) == []
    assert incomplete({"judge_errors": 2, "audio-only": {"n_positive": 3, "m2": None}}) == [
        "2 judge error(s) remain",
        "M2 missing for audio-only",
    ]
    assert incomplete({"audio-only": {"n_positive": 0, "m2": None}}) == []  # no positive: nothing to judge


# --- the streaming scorer ----------------------------------------------------------------------------------


class _Failing(Judge):
    """Fails every other request, and gives no verdict for some points of the rest."""

    name = "failing"

    def judge(self, requests):
        out = []
        for i, r in enumerate(requests):
            if i % 2:
                out.append(JudgeVerdict.failed("judge timed out" if i % 4 == 1 else ""))
            else:
                out.append(JudgeVerdict({k.qid: j % 3 == 0 for j, k in enumerate(r.key_points) if j % 5 != 4}))
        return out


@pytest.mark.parametrize("judge", [LexicalJudge(), _Failing()], ids=["lexical", "failing"])
def test_each_row_is_written_exactly_as_json_dumps_writes_it(judge: Judge) -> None:
    """The rows are assembled around their verdict slots: the text must be what json.dumps gives,
    on the malformed-outputs corpus (parse issues, surrogates) with judge errors and skipped points."""
    records = json.loads(DEMO.read_text(encoding="utf-8"))
    corpus = [json.loads(line) for line in (FIXTURES / "malformed_outputs.jsonl").read_text().split("\n") if line]
    scenes = load_scenes(records)
    good = {
        r["scene_id"]: json.dumps(r["annotations"][r["language"]]["evaluation_targets"], ensure_ascii=False)
        for r in records
    }
    outputs = {s.scene_id: good[s.scene_id] if i % 3 else corpus[i]["output"] for i, s in enumerate(scenes)}
    texts: list[str] = []
    summary = score_into(scenes, outputs, judge, texts.append)
    assert len(texts) == len(scenes)
    for text in texts:
        assert text == json.dumps(json.loads(text), ensure_ascii=False)
    rows = [json.loads(t) for t in texts]
    assert any(k["judge_error"] for r in rows for k in r["key_points"]) == isinstance(judge, _Failing)
    assert summarize([r for r in rows if r["modality"] == "audio-visual"]) == summary["audio-visual"]


def test_streaming_from_a_file_scores_as_from_a_list(tmp_path: Path) -> None:
    records = json.loads(DEMO.read_text(encoding="utf-8"))
    (tmp_path / "scenes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    outputs = {r["scene_id"]: None for r in records}
    from_list = score_scenes(load_scenes(records), outputs, LexicalJudge())
    for path in (DEMO, tmp_path / "scenes.jsonl"):
        rows: list[str] = []
        summary = score_into(iter_scenes(path, "scene"), outputs, LexicalJudge(), rows.append, spool_dir=tmp_path)
        assert summary == from_list.summary
        assert [json.loads(r) for r in rows] == from_list.scenes
    assert list(tmp_path.iterdir()) == [tmp_path / "scenes.jsonl"]  # the spool is gone


def test_a_streaming_judge_and_one_batch_give_the_same_rows(tmp_path: Path) -> None:
    class Batched(LexicalJudge):
        streams = False
        batches: list[int] = []

        def judge(self, requests: list[JudgeRequest]) -> list[JudgeVerdict]:
            Batched.batches.append(len(requests))
            return super().judge(requests)

    records = json.loads(DEMO.read_text(encoding="utf-8"))
    outputs = {
        r["scene_id"]: json.dumps(r["annotations"][r["language"]]["evaluation_targets"], ensure_ascii=False)
        for r in records
    }
    streamed, batched = [], []
    summary = score_into(load_scenes(records), outputs, LexicalJudge(), streamed.append)
    assert score_into(load_scenes(records), outputs, Batched(), batched.append, spool_dir=tmp_path) == summary
    assert streamed == batched and len(Batched.batches) == 1 and Batched.batches[0] > 1


def test_unknown_prediction_ids_are_refused_before_the_judge_is_called(tmp_path: Path) -> None:
    class Counting(LexicalJudge):
        streams = False  # a judge on a server: one batch, after every scene was read
        calls = 0

        def judge(self, requests: list[JudgeRequest]) -> list[JudgeVerdict]:
            Counting.calls += 1
            return super().judge(requests)

    with pytest.raises(ValueError, match="1 prediction id\\(s\\) not among the scenes: nope"):
        score_into(load_scenes(DEMO), {"nope": "{}"}, Counting(), lambda _: None)
    assert Counting.calls == 0


def test_only_the_reference_in_use_is_built(tmp_path: Path) -> None:
    record = json.loads(DEMO.read_text(encoding="utf-8"))[0]
    other = "zh" if record["language"] == "en" else "en"
    record["annotations"][other] = {"evaluation_targets": {"has_demand": "broken"}}
    scene = scene_from_dict(record, 0, "scene")
    assert set(scene.annotations) == {record["language"]}
    with pytest.raises(SchemaError, match=f"annotations.{other}"):
        scene_from_dict(record, 0, other)
    with pytest.raises(SchemaError, match=f"annotations.{other}"):
        scene_from_dict(record, 0)  # every language: the release's full check


def test_stored_verdicts_score_the_same_streamed(tmp_path: Path) -> None:
    records = json.loads(DEMO.read_text(encoding="utf-8"))
    with (tmp_path / "verdicts.jsonl").open("w") as fh:
        for r in records:
            for g, seg in enumerate(r["annotations"][r["language"]]["evaluation_targets"]["segments"]):
                for k in seg["key_points"][::2]:
                    fh.write(json.dumps({"scene_id": r["scene_id"], "segment": g, "qid": k["qid"], "hit": True}) + "\n")
    outputs = {
        r["scene_id"]: json.dumps(r["annotations"][r["language"]]["evaluation_targets"], ensure_ascii=False)
        for r in records
    }
    judge = StoredVerdictJudge(tmp_path / "verdicts.jsonl")
    run = score_scenes(load_scenes(records), outputs, judge)
    assert run.summary["judge_errors"] > 0  # points without a stored row are judge errors, never misses
    assert all(k["hit"] is not False for r in run.scenes for k in r["key_points"] if k["matched"])


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("s3", float("nan"), "'s3' must be a score in [0, 1] or null, got nan"),
        ("s2", 1.5, "'s2' must be a score in [0, 1] or null, got 1.5"),
        ("s4", -0.1, "'s4' must be a score in [0, 1] or null, got -0.1"),
        ("s5", "0.5", "'s5' must be a score in [0, 1] or null, got '0.5'"),
        ("s2_errors_as_misses", True, "'s2_errors_as_misses' must be a score in [0, 1] or null, got True"),
        ("has_demand", 1, "'has_demand' must be true or false, got 1"),
        ("modality", "video", "'modality' must be one of audio-visual, audio-only, got 'video'"),
        (
            "key_points",
            [{"judge_error": 3}],
            "'key_points' must be a list of objects, each with 'judge_error' text or null",
        ),
        ("inference_error", 0, "'inference_error' must be text or null, got 0"),
    ],
)
def test_a_row_no_summary_could_count_is_named_by_its_field(field: str, value: object, said: str) -> None:
    """Issue 23: a NaN scene score was averaged into the report; every field summarize() reads is checked."""
    from odu.runs.contract import row_problem

    row = dict(_demo_run().scenes[0])
    assert row_problem(row) is None
    assert row_problem({**row, field: value}) == said
    for score in ("s2", "s3", "s4", "s5"):
        assert row_problem({**row, score: None}) is None and row_problem({**row, score: 1}) is None
