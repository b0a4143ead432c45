"""``odu-bench eval --shard auto`` / ``auto/N`` (``odu/runs/shards.py`` ``shard_from_env``): the shard of a
SLURM array task or of a Kubernetes indexed Job's pod, read from their environment, merged as any
``--shard K/N`` run; what is missing is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.shard_runs import eval_always, lines, merge

from odu.runs.shards import shard_from_env


def slurm(task: int, low: int, high: int, count: int | None = None) -> dict[str, str]:
    """A SLURM array task's variables (``sbatch --array=LOW-HIGH``)."""
    return {
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_MIN": str(low),
        "SLURM_ARRAY_TASK_MAX": str(high),
        "SLURM_ARRAY_TASK_COUNT": str(high - low + 1 if count is None else count),
    }


@pytest.mark.parametrize(
    ("text", "env", "shard"),
    [
        ("auto", slurm(0, 0, 3), (1, 4)),
        ("auto", slurm(3, 0, 3), (4, 4)),
        ("auto", slurm(2, 1, 4), (2, 4)),  # --array=1-4
        ("auto/4", slurm(1, 0, 3), (2, 4)),
        ("auto/3", {"JOB_COMPLETION_INDEX": "0"}, (1, 3)),
        ("auto/3", {"JOB_COMPLETION_INDEX": "2"}, (3, 3)),
    ],
)
def test_the_shard_of_a_slurm_task_or_an_indexed_job_pod(
    text: str, env: dict[str, str], shard: tuple[int, int]
) -> None:
    assert shard_from_env(text, env)[0] == shard


@pytest.mark.parametrize(
    ("text", "env", "named"),
    [
        ("auto", {}, "neither $SLURM_ARRAY_TASK_ID (a SLURM array, sbatch --array) nor $JOB_COMPLETION_INDEX"),
        ("auto", {"JOB_COMPLETION_INDEX": "1"}, "give --shard auto/N, N the Job's completions"),
        ("auto/2", {"JOB_COMPLETION_INDEX": "2"}, "JOB_COMPLETION_INDEX=2 is shard 3 of 2"),
        ("auto/2", {"JOB_COMPLETION_INDEX": "x"}, "$JOB_COMPLETION_INDEX must be a whole number, got 'x'"),
        (
            "auto",
            {"SLURM_ARRAY_TASK_ID": "1"},
            "$SLURM_ARRAY_TASK_MIN, $SLURM_ARRAY_TASK_MAX and $SLURM_ARRAY_TASK_COUNT",
        ),
        ("auto", slurm(4, 0, 8, count=3), "ids 0..8 hold 3 task(s), not a whole range"),  # --array=0-8:4
        ("auto/3", slurm(0, 0, 3), "the SLURM array has 4 task(s)"),
        ("auto/0", {"JOB_COMPLETION_INDEX": "0"}, "K/N, auto or auto/N with N >= 1"),
        ("automatic", {}, "K/N, auto or auto/N"),
    ],
)
def test_what_is_missing_or_wrong_is_named(text: str, env: dict[str, str], named: str) -> None:
    with pytest.raises(ValueError) as caught:
        shard_from_env(text, env)
    assert named in str(caught.value)


def test_auto_shards_merge_as_any(
    shards: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Task 1 of a SLURM array 0-1 is shard 2/2, pod 0 of a 2-pod indexed Job shard 1/2: each holds
    the scenes of that ``--shard K/N`` run, and the two merge."""
    monkeypatch.setenv("ODU_CACHE_DIR", str(shards / "cache"))
    for name, value in slurm(1, 0, 1).items():
        monkeypatch.setenv(name, value)
    assert eval_always(tmp_path / "slurm", "--shard", "auto") == 0
    assert "--shard auto: shard 2/2 (SLURM_ARRAY_TASK_ID=1 of 0-1)" in capsys.readouterr().err
    for name in slurm(1, 0, 1):
        monkeypatch.delenv(name)
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "0")
    assert eval_always(tmp_path / "job", "--shard", "auto/2") == 0
    assert "--shard auto/2: shard 1/2 (JOB_COMPLETION_INDEX=0)" in capsys.readouterr().err
    for run, k in (("slurm", 2), ("job", 1)):
        card = json.loads((tmp_path / run / "always" / "run_card.json").read_text(encoding="utf-8"))
        assert card["shard"] == {"index": k, "count": 2}
        ids = [row["scene_id"] for row in lines(tmp_path / run / "always" / "scenes.jsonl")]
        assert ids == [row["scene_id"] for row in lines(shards / f"s{k}" / "always" / "scenes.jsonl")]
    assert merge(tmp_path / "slurm" / "always", tmp_path / "job" / "always", tmp_path / "merged") == 0


def test_auto_without_its_variables_stops_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"):
        monkeypatch.delenv(name, raising=False)
    assert eval_always(tmp_path / "out", "--shard", "auto") == 2
    err = capsys.readouterr().err
    assert "odu-bench eval: error: --shard auto: neither $SLURM_ARRAY_TASK_ID" in err and "give --shard K/N" in err
    assert not (tmp_path / "out").exists()
