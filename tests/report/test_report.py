"""``odu-bench report`` on synthetic runs with known answers, and end to end on real records."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from support.predictions import damaged_outputs
from support.report_rows import report_row

from odu.cli import main
from odu.core.schema import load_scenes
from odu.core.tables import table3_caveat
from odu.judge import make_judge
from odu.report import build_report, load_systems, write_report
from odu.report.channels import channel_report
from odu.report.headline import bootstrap_metrics, headline, metrics_weighted, source_deltas
from odu.report.runs import System
from odu.report.taxonomy import ftr_profile, m2_profile
from odu.runs.contract import ScoredRun, read_run, summarize, summarize_run, write_run
from odu.runs.scoring import score_scenes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AV = "audio-visual"


def kp(source: str, hit: bool | None, matched: bool = True, error: str | None = None, segment: int = 0) -> dict:
    return {
        "segment": segment,
        "qid": f"kp{random.random()}",
        "point": "p",
        "source": source,
        "tiers": ["T1"],
        "matched": matched,
        "hit": hit,
        "judge_error": error,
    }


def row(
    sid: str,
    *,
    label: str = "positive",
    pred: bool | None = None,
    s: tuple = (None,) * 4,
    key_points=(),
    axes=None,
    modality: str = AV,
    language: str = "en",
    source: str = "generated",
    reason: str = "",
    signal: str = "",
) -> dict:
    positive = label == "positive"
    base = report_row(
        sid,
        positive,
        positive if pred is None else pred,
        s,
        modality=modality,
        language=language,
        source=source,
        axes=axes,
        key_points=key_points,
    )
    extra = {"s2_errors_as_misses": s[0], "issues": [], "matches": [], "candidates": []}
    return base | {"negative_reason": reason, "negative_signal": signal} | extra


def system(name: str, rows: list[dict], approximate: bool = False) -> System:
    return System(name, {"judge": {"name": "verdicts", "model": None, "approximate": approximate}}, rows)


def _channel(report: dict, system_index: int, channel: str) -> dict:
    return next(c for c in report["systems"][system_index]["channels"] if c["channel"] == channel)


# --- evidence channels (App E.1) -----------------------------------------------------------------


def test_channel_coverage_counts_unmatched_as_misses_and_excludes_judge_errors():
    rows = [
        row(
            "a",
            key_points=[
                kp("intent", True),
                kp("required_context.visual", False),
                kp("required_context.audio", True),
                kp("required_context.user_emotion", True),
                kp("required_context.visual", None, error="timeout"),
                kp("", True),
            ],
        ),
        row(
            "b",
            key_points=[
                kp("intent", False, matched=False),
                kp("required_context.dialogue_history", False, matched=False),
            ],
        ),
        row("n", label="negative"),  # negatives carry no key points and are not in the population
    ]
    report = channel_report([system("S", rows)], AV, resamples=200, seed=1)
    assert report["n_scenes"] == 2
    assert report["systems"][0]["judge_error_points"] == 1
    expect = {  # channel: (hits, points)
        "spoken request": (1, 2),
        "visual": (0, 1),
        "audio": (1, 1),
        "dialogue history": (0, 1),
        "other context": (1, 1),
        "all context": (2, 4),
        "all points": (4, 7),
    }
    for channel, (hits, points) in expect.items():
        c = _channel(report, 0, channel)
        assert (c["hits"], c["points"]) == (hits, points), channel
        assert c["coverage"] == pytest.approx(hits / points)
    assert _channel(report, 0, "all context")["gap"] == pytest.approx(0.5 - 0.5)
    assert _channel(report, 0, "audio")["gap"] == pytest.approx(0.5 - 1.0)
    assert _channel(report, 0, "spoken request")["gap"] is None


def _random_channel_rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [
        row(
            f"s{i:04d}",
            key_points=[
                kp("intent", rng.random() < 0.8),
                kp("intent", rng.random() < 0.8),
                kp("required_context.visual", rng.random() < 0.5),
                kp("required_context.audio", rng.random() < 0.5),
            ],
        )
        for i in range(n)
    ]


def test_gap_interval_contains_estimate_and_narrows_with_more_scenes():
    widths = []
    for n in (30, 600):
        report = channel_report([system("S", _random_channel_rows(n, seed=n))], AV, resamples=2000, seed=7)
        c = _channel(report, 0, "all context")
        lo, hi = c["gap_ci"]
        assert lo < c["gap"] < hi
        assert 0.1 < c["gap"] < 0.5  # true gap is 0.3
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 2  # ~ 1/sqrt(20) in theory


def test_every_system_sees_the_same_draws():
    rows = _random_channel_rows(40, seed=3)
    twin = [dict(r) for r in rows]
    report = channel_report([system("A", rows), system("B", twin)], AV, resamples=500, seed=11)
    assert report["systems"][0]["channels"] == report["systems"][1]["channels"]
    alone = channel_report([system("A", rows)], AV, resamples=500, seed=11)
    assert alone["systems"][0]["channels"] == report["systems"][0]["channels"]


def test_channel_population_is_the_common_scene_set():
    a = _random_channel_rows(10, seed=1)
    b = a[:6]
    report = channel_report([system("A", a), system("B", b)], AV, resamples=100, seed=1)
    assert report["n_scenes"] == 6


# --- taxonomy (App E.3, Figs. 9/10; §5.4, Fig. 5) ----------------------------------------------------


def test_m2_profile_is_category_mean_minus_system_mean():
    def rows(scores):
        return [
            row("p1", s=(scores[0], 1, 1, 1), axes={"axis1": "1.2", "axis3": "3.2"}),
            row("p2", s=(scores[1], 1, 1, 1), axes={"axis1": "1.2", "axis3": "3.2"}),
            row("p3", s=(scores[2], 1, 1, 1), axes={"axis1": "1.3", "axis3": "3.3"}),
            row("p4", s=(scores[3], 1, 1, 1), axes={"axis1": "1.3", "axis3": "3.3", "axis5": "5.1"}),
            row("p5", s=(None, None, None, None), axes={"axis3": "3.3"}),  # undefined for A: not in cohort
        ]

    a, b = system("A", rows([1.0, 0.5, 0.5, 0.0])), system("B", rows([1.0, 1.0, 1.0, 0.0]))
    profile = m2_profile([a, b], AV)
    assert profile["n_scenes"] == 4
    assert profile["columns"] == [
        "1.2 Vision-grounded",
        "1.3 Audio-grounded",
        "3.2 Direct Question",
        "3.3 Indirect or Descriptive Request",
    ]
    cells = {r["system"]: r["cells"] for r in profile["rows"]}
    assert cells["A"]["3.3 Indirect or Descriptive Request"]["delta"] == pytest.approx(0.25 - 0.5)
    assert cells["B"]["3.3 Indirect or Descriptive Request"]["delta"] == pytest.approx(0.5 - 0.75)
    assert cells["panel mean"]["3.3 Indirect or Descriptive Request"]["delta"] == pytest.approx(-0.25)
    assert cells["panel mean"]["1.2 Vision-grounded"]["delta"] == pytest.approx((0.25 + 0.25) / 2)
    assert cells["A"]["3.3 Indirect or Descriptive Request"]["n"] == 2


def test_audio_only_axis1_uses_its_own_vocabulary():
    rows = [row("p1", modality="audio-only", s=(0.5, 1, 1, 1), axes={"axis1": "1.2"})]
    assert m2_profile([system("A", rows)], "audio-only")["columns"] == ["1.2 Acoustic-event dependence"]


def test_ftr_profile_uses_labelled_negatives_only():
    rows = [
        row("n1", label="negative", pred=True, signal="linguistic_signal", reason="target_mismatch"),
        row("n2", label="negative", pred=True, signal="linguistic_signal", reason="source_mismatch"),
        row("n3", label="negative", pred=False, signal="semantic_signal", reason="target_mismatch"),
        row("n4", label="negative", pred=False, signal="semantic_signal", reason="intent_not_real"),
        row("n5", label="negative", pred=True),  # unlabelled (human-recorded style): left out
    ]
    profile = ftr_profile([system("A", rows)], AV)
    assert profile["n_scenes"] == 4
    signal = {c: v for c, v in profile["signal"]["rows"][0]["cells"].items()}
    assert profile["signal"]["rows"][0]["base"] == 0.5
    assert signal["S1 Linguistic"]["delta"] == pytest.approx(0.5)
    assert signal["S2 Semantic"]["delta"] == pytest.approx(-0.5)
    reason = profile["reason"]["rows"][0]["cells"]
    assert reason["R1 Wrong Addressee"]["delta"] == pytest.approx(0.0)
    assert reason["R2 Wrong Source"]["delta"] == pytest.approx(0.5)
    assert profile["signal"]["rows"][-1]["system"] == "panel mean"


# --- headline metrics and sources ------------------------------------------------------------------


def _mixed_rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if rng.random() < 0.75:
            score = lambda: None if rng.random() < 0.05 else rng.random()  # noqa: E731
            out.append(
                row(
                    f"p{i:04d}",
                    pred=rng.random() < 0.9,
                    s=(score(), score(), score(), score()),
                    source="human-recorded" if i % 4 == 0 else "generated",
                    language="zh",
                )
            )
        else:
            out.append(
                row(
                    f"n{i:04d}",
                    label="negative",
                    pred=rng.random() < 0.4,
                    language="zh",
                    source="human-recorded" if i % 4 == 0 else "generated",
                )
            )
    return out


def test_full_sample_weighting_reproduces_the_scorer_summary():
    rows = _mixed_rows(80, seed=5)
    full = metrics_weighted(rows, np.ones((1, len(rows))))
    point = summarize(rows)
    for m, values in full.items():
        assert values[0] == pytest.approx(point[m])


def test_headline_intervals_contain_the_point_and_narrow_with_more_scenes():
    widths = []
    for n in (40, 800):
        entry = headline([system("S", _mixed_rows(n, seed=n))], resamples=1000, seed=2)[AV][0]
        for m, value in entry["metrics"].items():
            lo, hi = value["ci"]
            assert lo <= value["value"] <= hi, m
        widths.append(entry["metrics"]["avg"]["ci"][1] - entry["metrics"]["avg"]["ci"][0])
    assert widths[1] < widths[0] / 2


def test_bootstrap_metrics_shape_and_m1_recomputed_per_resample():
    from odu.report.bootstrap import SceneBootstrap

    rows = sorted(_mixed_rows(50, seed=9), key=lambda r: r["scene_id"])
    samples = bootstrap_metrics(rows, SceneBootstrap(len(rows), 300, 1, "x"))
    assert set(samples) == {"avg", "m1", "m2", "m3", "m4", "m5", "ftr"}
    assert all(v.shape == (300,) for v in samples.values())
    assert np.unique(samples["m1"]).size > 10
    # the stacked one-product path equals the per-weights path on the same draws
    direct = metrics_weighted(rows, SceneBootstrap(len(rows), 300, 1, "x").multiplicities())
    for m, values in samples.items():
        assert np.allclose(values, direct[m], equal_nan=True), m


def test_source_deltas_are_recorded_minus_generated():
    rows = _mixed_rows(120, seed=4)
    (entry,) = source_deltas([system("S", rows)])
    gen = summarize([r for r in rows if r["source"] == "generated"])
    rec = summarize([r for r in rows if r["source"] == "human-recorded"])
    assert (entry["modality"], entry["language"]) == (AV, "zh")
    for m in ("avg", "m1", "m2", "ftr"):
        assert entry["metrics"][m]["delta"] == pytest.approx(rec[m] - gen[m])
    assert source_deltas([system("S", [r for r in rows if r["source"] == "generated"])]) == []


# --- end to end: real records, real scorer, CLI ----------------------------------------------------


@pytest.fixture(scope="module")
def scored_runs(tmp_path_factory) -> list[Path]:
    records = json.loads((FIXTURES / "demo_scenes.json").read_text(encoding="utf-8"))
    scenes = load_scenes(records)
    dirs = []
    for name, flip, drop in (("strong", 0.05, 0.1), ("weak", 0.4, 0.6)):
        run = score_scenes(scenes, damaged_outputs(records, flip, drop, seed=len(name)), make_judge("lexical"))
        dirs.append(write_run(run, tmp_path_factory.mktemp("runs") / name))
    return dirs


def test_report_on_the_bundled_sample(tmp_path, capsys):
    from odu.data.sample import sample_dir

    records = [json.loads(line) for line in (sample_dir() / "scenes.jsonl").read_text(encoding="utf-8").splitlines()]
    scenes = load_scenes(records)
    dirs = []
    for name, flip, drop in (("ref-copy", 0.0, 0.0), ("damaged", 0.5, 0.7)):
        run = score_scenes(scenes, damaged_outputs(records, flip, drop, seed=3), make_judge("lexical"))
        dirs.append(str(write_run(run, tmp_path / name)))
    out = tmp_path / "report"
    assert main(["report", *dirs, "--out", str(out), "--resamples", "300", "--no-plots"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    positives = {m: sum(1 for s in scenes if s.modality == m and s.is_positive) for m in ("audio-visual", "audio-only")}
    for modality, n in positives.items():
        assert report["channels"][modality]["n_scenes"] == n
        by_name = {s["system"]: s for s in report["channels"][modality]["systems"]}
        points = sum(
            len(g.key_points)
            for s in scenes
            if s.modality == modality and s.is_positive
            for g in s.annotation().segments
        )
        assert _channel({"systems": [by_name["damaged"]]}, 0, "all points")["points"] == points
    # every modality/language holding both sources gets a Table 4 comparison
    both = {(s.modality, s.language) for s in scenes if s.source == "generated"} & {
        (s.modality, s.language) for s in scenes if s.source == "human-recorded"
    }
    assert {(e["modality"], e["language"]) for e in report["sources"] if e["system"] == "damaged"} == both
    labelled = sum(1 for s in scenes if s.modality == "audio-visual" and not s.is_positive and s.negative_signal)
    assert report["taxonomy"]["ftr"]["audio-visual"]["n_scenes"] == labelled
    copy = next(e for e in report["headline"]["audio-visual"] if e["system"] == "ref-copy")
    assert copy["metrics"]["m1"]["value"] == 1.0 and copy["metrics"]["ftr"]["value"] == 0.0


def test_cli_report_writes_every_output(scored_runs, tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["report", *map(str, scored_runs), "--out", str(out), "--resamples", "500", "--no-plots"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "strong" in printed and "approximate judge" in printed
    for name in (
        "report.json",
        "report.md",
        "table3.csv",
        "headline_ci.csv",
        "paired.csv",
        "sources.csv",
        "channels.csv",
        "taxonomy_m2.csv",
        "taxonomy_ftr.csv",
    ):
        assert (out / name).is_file(), name
    report = json.loads((out / "report.json").read_text())
    assert [s["name"] for s in report["systems"]] == ["strong", "weak"]
    assert all(s["approximate"] for s in report["systems"])
    md = (out / "report.md").read_text()
    assert "APPROXIMATE" in md and "Table 6" in md and "Fig. 5" in md
    # headline point estimates are the scorer's summary.json values
    for entry in report["headline"][AV]:
        summary = json.loads((scored_runs[entry["system"] == "weak"] / "summary.json").read_text())
        for m, v in entry["metrics"].items():
            assert v["value"] == summary[AV][m]
    header = (out / "table3.csv").read_text().splitlines()[0]
    assert header.startswith("model,av_avg,av_m1,av_m2,av_m3,av_m4,av_m5,av_ftr,ao_avg")
    # the stronger system covers more context on the same common scenes
    ch = report["channels"][AV]["systems"]
    cov = {s["system"]: _channel({"systems": [s]}, 0, "all context")["coverage"] for s in ch}
    assert cov["strong"] > cov["weak"]


def test_report_prints_and_stores_the_caveat(scored_runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    assert main(["report", *map(str, scored_runs), "--out", str(out), "--resamples", "20", "--no-plots"]) == 0
    summaries = [json.loads((run / "summary.json").read_text(encoding="utf-8")) for run in scored_runs]
    caveat = table3_caveat(summaries)
    assert "\n".join(caveat) in capsys.readouterr().out
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["table3_caveat"] == caveat
    assert "\n".join(caveat) in (out / "report.md").read_text(encoding="utf-8")


def test_cli_names_and_run_card(scored_runs, tmp_path):
    def carded(card: dict, name: str) -> Path:  # the strong run again, with a run card written with it
        return write_run(read_run(scored_runs[0]), tmp_path / name, json_files={"run_card.json": card})

    runs = [carded({"system": "Carded Model"}, "a"), scored_runs[1]]
    systems = load_systems(runs)
    assert systems[0].name == "Carded Model" and systems[1].name == "weak"
    assert [s.name for s in load_systems(runs, ["x", "y"])] == ["x", "y"]
    # odu.harness.runcard layout: the served model id names the system
    card = {"model": {"name": "odu-openai", "model_args": {"model": "qwen3-omni"}}}
    assert load_systems([carded(card, "b")])[0].name == "qwen3-omni"


@pytest.mark.parametrize(
    "args, message",
    [
        (["nowhere"], "no summary.json"),
        (["RUN", "RUN"], "duplicate system name"),
        (["RUN", "--names", "a", "b"], "--names gives 2 name(s) for 1 run(s)"),
        (["RUN", "--resamples", "0"], "--resamples must be at least 1"),
    ],
)
def test_cli_errors_name_the_problem(scored_runs, tmp_path, capsys, args, message):
    args = [str(scored_runs[0]) if a == "RUN" else str(tmp_path / a) if a == "nowhere" else a for a in args]
    assert main(["report", *args, "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


def test_runs_with_disagreeing_labels_are_rejected(tmp_path):
    a = write_run(ScoredRun(summarize_run([row("x")], {}, "scene"), [row("x")]), tmp_path / "a")
    negative = [row("x", label="negative")]
    b = write_run(ScoredRun(summarize_run(negative, {}, "scene"), negative), tmp_path / "b")
    with pytest.raises(ValueError, match="scene x"):
        load_systems([a, b], allow_incomplete=True)


def test_comparability_notes_flag_mixed_judges_and_languages():
    a = System("A", {"judge": {"name": "lexical", "approximate": True}, "annotation_language": "scene"}, [row("x")])
    b = System("B", {"judge": {"name": "openai", "model": "m"}, "annotation_language": "en"}, [row("x")])
    notes = build_report([a, b], resamples=10, seed=1)["notes"]
    assert any("different reference languages" in n for n in notes)
    assert any("different judges" in n for n in notes)
    assert any("approximate judge (A)" in n for n in notes)
    assert build_report([b], resamples=10, seed=1)["notes"] == []


def test_heatmaps_are_rendered(scored_runs, tmp_path):
    pytest.importorskip("matplotlib")
    report = build_report(load_systems(scored_runs), resamples=200, seed=1)
    written, note = write_report(report, tmp_path)
    assert note is None
    pngs = sorted(p.name for p in written if p.suffix == ".png")
    assert {"taxonomy_m2_av.png", "ftr_av.png", "channels_av.png"} <= set(pngs)
    for name in pngs:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_plots_are_skipped_with_a_message_without_matplotlib(scored_runs, tmp_path, monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert main(["report", *map(str, scored_runs), "--out", str(tmp_path), "--resamples", "50"]) == 0
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.png")) and (tmp_path / "report.md").is_file()
