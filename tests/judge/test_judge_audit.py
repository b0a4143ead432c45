"""``odu-bench judge-audit`` (App E.2 / Table 7) with two judges on two loopback servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.judge_fakes import judge_responder, read_request, rule_verdicts
from support.openai_server import Fault, OpenAIServer

from odu.cli import main
from odu.core.schema import KeyPoint, load_scenes
from odu.judge import LexicalJudge
from odu.judge.audit import reference_candidate
from odu.runs.contract import write_run
from odu.runs.scoring import score_scenes

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "demo_scenes.json"


def _output(scene, with_context: bool) -> str:
    segments = [
        {
            "start_ms": g.start_ms,
            "end_ms": g.end_ms,
            "transcript": g.transcript,
            "structured_intent": g.structured_intent,
            "required_context": [{"type": c.type, "description": c.description} for c in g.required_context]
            if with_context
            else [],
            "user_in_frame": bool(g.user_in_frame),
            "user_gender": g.user_gender,
            "user_age_group": g.user_age_group,
        }
        for g in scene.annotation().segments
    ]
    return json.dumps({"has_demand": bool(segments), "segments": segments})


def strict_hit(candidate: str, point: str) -> bool:
    """The second judge: a hit only when the point's last two words both occur."""
    return all(w.strip(".").lower() in candidate.lower() for w in point.split()[-2:])


def strict_responder(body: dict) -> str:
    candidate, points = read_request(body)
    return json.dumps([{"qid": p["qid"], "hit": strict_hit(candidate, p["point"]), "reason": "r"} for p in points])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    scenes = load_scenes(FIXTURE)
    out = {}
    for name, with_context in (("full", True), ("intent-only", False)):
        directory = tmp_path_factory.mktemp(name)
        outputs = {s.scene_id: _output(s, with_context) for s in scenes}
        write_run(score_scenes(scenes, outputs, LexicalJudge()), directory)
        out[name] = directory
    return out


def _expected(run_dir: Path, hit) -> float:
    hits = []
    for row in map(json.loads, (run_dir / "scenes.jsonl").read_text().splitlines()):
        for cand in row["candidates"]:
            for k in row["key_points"]:
                if k["segment"] == cand["segment"] and k["tiers"]:
                    hits.append(hit(cand["text"], k["point"]))
    return sum(hits) / len(hits)


def test_table7_panels(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], openai_key: str
) -> None:
    with (
        OpenAIServer(judge_responder(), models=["lenient"]) as lenient,
        OpenAIServer(strict_responder, models=["strict"]) as strict,
    ):
        code = main(
            [
                "judge-audit",
                "--run",
                f"full={runs['full']}",
                "--run",
                f"intent-only={runs['intent-only']}",
                "--scenes",
                str(FIXTURE),
                "--out",
                str(tmp_path / "audit.json"),
                "--no-progress",
                "--judge",
                "openai:lenient",
                "--judge-base-url",
                lenient.base_url,
                "--judge",
                "openai:strict",
                "--judge-base-url",
                strict.base_url,
                "--judge-cache",
                str(tmp_path / "cache.sqlite"),
            ]
        )
        assert code == 0
        assert lenient.count() == strict.count() > 0
    result = json.loads((tmp_path / "audit.json").read_text())
    printed = capsys.readouterr().out
    assert "Recoverability" in printed and "Model ordering" in printed and "identical for 2 of 2 judges" in printed

    b = result["panel_b"]
    lenient_rule = lambda text, point: rule_verdicts(text, [KeyPoint("q", point)])["q"]  # noqa: E731
    for system in ("full", "intent-only"):
        assert b["coverage"][system]["openai:lenient"] == pytest.approx(_expected(runs[system], lenient_rule))
        assert b["coverage"][system]["openai:strict"] == pytest.approx(_expected(runs[system], strict_hit))
        values = b["coverage"][system].values()
        assert b["range"][system] == pytest.approx(max(values) - min(values))
    assert b["orderings"]["openai:lenient"] == b["orderings"]["openai:strict"] == [["full"], ["intent-only"]]
    assert b["ordering_agreement"]["identical"] is True

    scenes = [s for s in load_scenes(FIXTURE) if s.is_positive]
    texts_points = [
        (reference_candidate(s, i), k.point)
        for s in scenes
        for i, g in enumerate(s.annotation().segments)
        for k in g.key_points
    ]
    a = result["panel_a"]
    assert a["common_points"] == len(texts_points)
    expected = sum(lenient_rule(t, p) for t, p in texts_points) / len(texts_points)
    assert a["recoverability"]["openai:lenient"] == pytest.approx(expected)
    assert a["orphan_rate"]["openai:lenient"] == pytest.approx(1 - expected)


def test_judge_errors_shrink_the_common_set_and_fail_the_exit_code(
    runs: dict[str, Path], tmp_path: Path, openai_key: str
) -> None:
    with OpenAIServer(judge_responder(), models=["a"]) as good, OpenAIServer(judge_responder(), models=["b"]) as flaky:
        flaky.fault_plan = lambda req: Fault(400, {"error": {"message": "no"}}) if req.index % 4 == 0 else None
        argv = [
            "judge-audit",
            "--run",
            str(runs["full"]),
            "--out",
            str(tmp_path / "audit.json"),
            "--no-progress",
            "--judge",
            "openai:a",
            "--judge",
            "openai:b",
            "--judge-base-url",
            good.base_url,
            "--judge-base-url",
            flaky.base_url,
            "--no-cache",
        ]
        assert main(argv) == 1
        result = json.loads((tmp_path / "audit.json").read_text())
        errors = result["judge_error_points"]
        assert errors["openai:a"] == 0 and errors["openai:b"] > 0
        b = result["panel_b"]
        system = runs["full"].name
        assert b["common_points"][system] == b["retained_points"][system] - errors["openai:b"]
        assert main([*argv, "--allow-judge-errors"]) == 0


def test_mismatched_per_judge_options_are_refused(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "judge-audit",
            "--run",
            str(runs["full"]),
            "--judge",
            "openai:a",
            "--judge",
            "openai:b",
            "--judge",
            "openai:c",
            "--judge-base-url",
            "http://x/v1",
            "--judge-base-url",
            "http://y/v1",
        ]
    )
    assert code == 2 and "given 2 times for 3 judges" in capsys.readouterr().err


@pytest.mark.parametrize("order", [("good", "oracle"), ("oracle", "good")])
def test_a_tie_is_printed_as_a_tie_whatever_the_order_of_the_runs(
    runs: dict[str, Path], order: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 21 item 6: two runs with identical scores are "good = oracle", never "good > oracle"."""
    same = runs["full"]
    args = ["judge-audit", *(a for name in order for a in ("--run", f"{name}={same}")), "--no-progress"]
    assert main([*args, "--judge", "lexical", "--judge", "lexical"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out[: out.index("\nSetting")])
    assert result["panel_b"]["orderings"]["lexical #1"] == [["good", "oracle"]]
    assert result["panel_b"]["ordering_agreement"]["identical"] is True
    assert "good = oracle" in out and ">" not in out.split("Model ordering", 1)[1].splitlines()[0]
