"""odu/report/paired.py: paired bootstrap intervals and permutation p-values between systems on the
same scenes, checked against a naive per-resample loop over the same draws, and on the cases whose
answer is known (one scene apart: no evidence; every scene better: strong evidence)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import numpy as np
import pytest
from support.report_rows import report_row
from support.sample_runs import scored_sample_run

from odu.core.tables import TABLE3_COLUMNS
from odu.report.bootstrap import SceneBootstrap, SceneSwaps, cluster_codes, percentile_interval
from odu.report.paired import PAIRED_MIN_SCENES, paired_comparisons, permutation_p_values
from odu.report.runs import System
from odu.runs.contract import summarize

AV, AO = "audio-visual", "audio-only"


def scene_rows(n: int, seed: int, modality: str = AV, prefix: str = "s") -> list[dict[str, Any]]:
    """scenes.jsonl rows (the fields the report reads) with random outcomes: 70% demand scenes."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        positive = rng.random() < 0.7
        score = (lambda: round(rng.random(), 3)) if positive else (lambda: None)
        language, source = rng.choice(["en", "zh"]), rng.choice(["generated", "human-recorded"])
        axis1 = rng.choice(["1.1", "1.2", "1.3"])
        rows.append(
            report_row(
                f"{prefix}{i:04d}",
                positive,
                rng.random() < (0.8 if positive else 0.4),
                (score(), score(), score(), score()),
                modality=modality,
                language=language,
                source=source,
                axes={"axis1": axis1},
            )
        )
    return rows


def system(name: str, rows: list[dict[str, Any]]) -> System:
    return System(name, {"judge": {}}, rows)


def metric_vector(rows: list[dict[str, Any]]) -> np.ndarray:
    summary = summarize(rows)
    return np.array([np.nan if summary[m] is None else summary[m] for m in TABLE3_COLUMNS])


def naive(a: list[dict], b: list[dict], resamples: int, seed: int, modality: str, clusters=None, suffix=""):
    """The same comparison one resample and one relabelling at a time through odu.runs.contract.summarize."""
    ids = sorted({r["scene_id"] for r in a} & {r["scene_id"] for r in b})
    rows_a = [{r["scene_id"]: r for r in a}[i] for i in ids]
    rows_b = [{r["scene_id"]: r for r in b}[i] for i in ids]
    boot = SceneBootstrap(len(ids), resamples, seed, f"headline/{modality}{suffix}", clusters)
    diffs = []
    for w in boot.multiplicities().astype(int):
        drawn = np.repeat(np.arange(len(ids)), w)
        diffs.append(metric_vector([rows_a[i] for i in drawn]) - metric_vector([rows_b[i] for i in drawn]))
    observed = metric_vector(rows_a) - metric_vector(rows_b)
    relabelled = []
    for s in SceneSwaps(len(ids), resamples, seed, f"paired-permutation/{modality}{suffix}", clusters).weights():
        first = [rows_b[i] if s[i] else rows_a[i] for i in range(len(ids))]
        second = [rows_a[i] if s[i] else rows_b[i] for i in range(len(ids))]
        relabelled.append(metric_vector(first) - metric_vector(second))
    return observed, percentile_interval(np.array(diffs)), permutation_p_values(observed, np.array(relabelled))


def as_arrays(entry: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = entry["metrics"]
    nan = lambda x: np.nan if x is None else x  # noqa: E731
    return (
        np.array([nan(m[c]["difference"]) for c in TABLE3_COLUMNS]),
        np.array([[nan(m[c]["ci"][k]) for c in TABLE3_COLUMNS] for k in (0, 1)]),
        np.array([nan(m[c]["p_value"]) for c in TABLE3_COLUMNS]),
    )


@pytest.mark.parametrize("cluster_by", [None, "axes.axis1"])
def test_paired_results_equal_a_naive_per_resample_loop_on_the_same_draws(cluster_by):
    a, b = scene_rows(60, 1), scene_rows(60, 2)
    for row_b, row_a in zip(b, a):  # same scenes and labels, other outputs
        row_b |= {k: row_a[k] for k in ("scene_id", "label", "has_demand", "axes", "language", "source")}
        if not row_b["has_demand"]:
            row_b |= {"s2": None, "s3": None, "s4": None, "s5": None}
        elif row_b["s2"] is None:
            row_b |= {"s2": 0.5, "s3": 0.5, "s4": 0.5, "s5": 0.5}
    report = paired_comparisons([system("A", a), system("B", b)], resamples=300, seed=5, cluster_by=cluster_by)
    [entry] = report["comparisons"]
    clusters = (
        None
        if cluster_by is None
        else cluster_codes([r["axes"]["axis1"] for r in sorted(a, key=lambda r: r["scene_id"])])[0]
    )
    suffix = "" if cluster_by is None else f"/clusters:{cluster_by}"
    observed, interval, p = naive(a, b, 300, 5, AV, clusters, suffix)
    got_d, got_ci, got_p = as_arrays(entry)
    assert np.allclose(got_d, observed, rtol=0, atol=1e-12, equal_nan=True)
    assert np.allclose(got_ci, interval, rtol=0, atol=1e-9, equal_nan=True)
    assert np.array_equal(got_p, p, equal_nan=True)
    assert entry["clusters"] == (None if cluster_by is None else {"by": "axes.axis1", "n": 3})


def test_two_runs_one_scene_apart_show_no_evidence_of_a_difference():
    a = scene_rows(200, 3)
    b = copy.deepcopy(a)
    changed = next(r for r in b if r["has_demand"] and r["s2"] is not None)
    changed |= {
        "s2": 1 - changed["s2"],
        "s3": 1 - changed["s3"],
        "predicted_has_demand": not changed["predicted_has_demand"],
    }
    [entry] = paired_comparisons([system("A", a), system("B", b)], resamples=2000, seed=7)["comparisons"]
    for metric in ("avg", "m1", "m2", "m3"):
        cell = entry["metrics"][metric]
        assert cell["difference"] != 0, metric
        assert cell["ci"][0] <= 0 <= cell["ci"][1], metric
        # swapping the one differing scene only flips the sign: every relabelling is as extreme
        assert cell["p_value"] == 1.0, metric
    assert entry["metrics"]["m4"]["difference"] == 0 and entry["metrics"]["m4"]["p_value"] == 1.0
    assert entry["warnings"] == []


def improved(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy where every scene is better: every demand decision right, every scene score higher."""
    out = copy.deepcopy(rows)
    for r in out:
        r["predicted_has_demand"] = r["has_demand"]
        for k in ("s2", "s3", "s4", "s5"):
            if r[k] is not None:
                r[k] = min(1.0, r[k] + 0.2) if r[k] < 1 else r[k]
    return out


def test_a_run_against_its_copy_with_every_scene_improved_has_a_small_p_value():
    a = scene_rows(150, 4)
    for r in a:  # leave room above every score and make every decision wrong, so every scene improves
        r["predicted_has_demand"] = not r["has_demand"]
        for k in ("s2", "s3", "s4", "s5"):
            if r[k] is not None:
                r[k] = min(r[k], 0.7)
    [entry] = paired_comparisons([system("better", improved(a)), system("worse", a)], resamples=2000, seed=8)[
        "comparisons"
    ]
    for metric in ("avg", "m1", "m2", "m3", "m4", "m5"):
        cell = entry["metrics"][metric]
        assert cell["difference"] > 0 and cell["ci"][0] > 0, metric
        assert cell["p_value"] == pytest.approx(1 / 2001), metric  # no relabelling as extreme
    assert entry["metrics"]["ftr"]["difference"] < 0 and entry["metrics"]["ftr"]["ci"][1] < 0


def test_the_paired_draws_are_the_headline_draws_when_the_scenes_are_the_same():
    rows = scene_rows(40, 9)
    boot = SceneBootstrap(40, 50, 3, f"headline/{AV}")
    again = SceneBootstrap(40, 50, 3, f"headline/{AV}")
    assert (boot.multiplicities() == again.multiplicities()).all()
    # a system against itself: every difference and every interval is 0, every p-value 1
    [entry] = paired_comparisons([system("A", rows), system("A copy", copy.deepcopy(rows))], 50, 3)["comparisons"]
    for metric in TABLE3_COLUMNS:
        cell = entry["metrics"][metric]
        assert cell["difference"] == 0 and cell["ci"] == [0.0, 0.0] and cell["p_value"] == 1.0


def test_a_metric_whose_columns_two_systems_share_differs_by_exactly_zero_in_every_resample():
    """The same outputs scored by two judges: only M2 (and Avg) can differ. Summed in one matrix
    product, equal columns at different positions differ in the last bit ([0.0, 9.85e-17] with
    numpy 2.4.6); the paired sums of the differences keep them exactly equal."""
    rows = scene_rows(60, 1)
    other_judge = copy.deepcopy(rows)
    for r in other_judge:
        if r["s2"] is not None:
            r["s2"] = round(1 - r["s2"], 3)
    for pair in ([rows, copy.deepcopy(rows)], [rows, other_judge]):
        [entry] = paired_comparisons([system("A", pair[0]), system("B", pair[1])], 300, 3)["comparisons"]
        same = TABLE3_COLUMNS if pair[1] is not other_judge else ("m1", "m3", "m4", "m5", "ftr")
        for metric in same:
            cell = entry["metrics"][metric]
            assert (cell["difference"], cell["ci"], cell["p_value"]) == (0, [0.0, 0.0], 1.0), metric
    assert entry["metrics"]["m2"]["ci"][0] != entry["metrics"]["m2"]["ci"][1]


def test_unequal_scenes_and_small_samples_are_flagged():
    a = scene_rows(40, 10)
    b = copy.deepcopy(a[5:]) + scene_rows(3, 11, prefix="x")
    report = paired_comparisons([system("A", a), system("B", b)], 200, 1)
    [entry] = report["comparisons"]
    assert (entry["n_scenes"], entry["only_a"], entry["only_b"]) == (35, 5, 3)
    unequal, small = entry["warnings"]
    assert unequal.startswith("unequal scenes: A has 5 scene(s) B lacks and B has 3 A lacks")
    assert small.startswith(f"small sample: fewer than {PAIRED_MIN_SCENES} scenes behind")
    assert "FTR" in small and "Avg" not in small  # 35 common scenes, fewer than 30 negatives
    assert entry["metrics"]["m1"]["n"] == 35
    assert entry["metrics"]["ftr"]["n"] == sum(1 for r in a[5:] if not r["has_demand"])


def test_few_clusters_are_flagged_and_an_unknown_attribute_is_named():
    a = scene_rows(80, 12)
    b = improved(a)
    [entry] = paired_comparisons([system("A", a), system("B", b)], 200, 1, cluster_by="language")["comparisons"]
    assert entry["clusters"] == {"by": "language", "n": 2}
    assert any(w.startswith("few clusters: 2 cluster(s)") for w in entry["warnings"])
    # two clusters: four relabellings at most, so no p-value below 1/4 can be earned
    assert min(c["p_value"] for c in entry["metrics"].values()) >= 0.2
    with pytest.raises(ValueError, match="--cluster-by speaker: scene s0000 has no such attribute"):
        paired_comparisons([system("A", a), system("B", b)], 200, 1, cluster_by="speaker")


def test_pairs_modalities_and_systems_without_common_scenes():
    av = scene_rows(40, 13)
    ao = scene_rows(30, 14, modality=AO, prefix="o")
    systems = [system("A", av + ao), system("B", improved(av)), system("C", scene_rows(30, 15, prefix="z"))]
    comparisons = paired_comparisons(systems, 100, 1)["comparisons"]
    assert [(c["a"], c["b"], c["modality"]) for c in comparisons] == [
        ("A", "B", AV),
        ("A", "C", AV),
        ("B", "C", AV),
    ]
    no_common = comparisons[1]
    assert no_common["n_scenes"] == 0 and no_common["metrics"] == {}
    assert no_common["warnings"] == ["no common scenes: A and C scored different scenes"]


def test_an_incomplete_run_gets_no_avg_difference():
    a = scene_rows(40, 16)
    incomplete = System("B", {"judge": {}, "judge_errors": 2}, improved(a))
    [entry] = paired_comparisons([system("A", a), incomplete], 100, 1)["comparisons"]
    assert entry["metrics"]["avg"] == {
        "a": None,
        "b": None,
        "difference": None,
        "ci": [None, None],
        "p_value": None,
        "n": 40,
    }
    assert entry["metrics"]["m2"]["difference"] is not None


def test_permutation_p_values_count_ties_and_skip_undefined_relabellings():
    relabelled = np.array([[0.3, np.nan], [-0.3 + 1e-12, np.nan], [0.1, np.nan]])
    assert permutation_p_values(np.array([0.3, np.nan]), relabelled).tolist()[0] == 0.75
    assert np.isnan(permutation_p_values(np.array([0.3, np.nan]), relabelled)[1])


def test_report_compares_the_sample_runs_pairwise(tmp_path, capsys):
    from odu.cli import main
    from odu.runs.contract import read_run

    scored = read_run(scored_sample_run(tmp_path / "scored")).scenes
    rows = copy.deepcopy(scored)
    for r in rows:  # room to improve every scene: every decision wrong, every scene score halved
        r["predicted_has_demand"] = not r["has_demand"]
        for k in ("s2", "s3", "s4", "s5"):
            r[k] = None if r[k] is None else r[k] / 2
    base = scored_sample_run(tmp_path / "base", rows)
    one_apart = copy.deepcopy(rows)
    flipped = next(r for r in one_apart if r["modality"] == AV and r["has_demand"])
    flipped["predicted_has_demand"] = not flipped["predicted_has_demand"]
    better = copy.deepcopy(rows)
    for r in better:  # every scene improved: every decision right, every defined scene score up
        r["predicted_has_demand"] = r["has_demand"]
        for k in ("s2", "s3", "s4", "s5"):
            r[k] = None if r[k] is None else r[k] + 0.5
    runs = [base, scored_sample_run(tmp_path / "one-apart", one_apart), scored_sample_run(tmp_path / "better", better)]
    out = tmp_path / "report"
    assert main(["report", *map(str, runs), "--out", str(out), "--no-plots", "--resamples", "4000"]) == 0
    printed = capsys.readouterr().out
    assert "base − one-apart (audio-visual, 12 common scenes): Avg" in printed
    assert "warning: small sample: fewer than 30 scenes behind Avg (12)" in printed
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    by_pair = {(c["a"], c["b"], c["modality"]): c for c in report["paired"]["comparisons"]}
    assert len(by_pair) == 6  # three pairs, two modalities
    apart = by_pair[("base", "one-apart", AV)]["metrics"]["m1"]
    assert apart["difference"] != 0 and apart["ci"][0] <= 0 <= apart["ci"][1] and apart["p_value"] == 1.0
    assert by_pair[("base", "one-apart", AO)]["metrics"]["avg"]["difference"] == 0
    improved_av = by_pair[("base", "better", AV)]["metrics"]["avg"]
    assert improved_av["ci"][1] < 0 and improved_av["p_value"] < 0.01  # 2/2^12 is the exact p here
    assert (out / "paired.csv").read_text(encoding="utf-8").startswith("a,b,modality,metric,a_value,b_value,difference")
    assert "## Paired comparisons (same scenes)" in (out / "report.md").read_text(encoding="utf-8")
