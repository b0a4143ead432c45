"""Cost of the paired comparisons of ``odu-bench report`` (``odu.report.paired``): three systems
on the release's size, and the vectorised computation against a naive per-resample loop over the
same draws (asserted equal).

Synthetic scored runs of the release's composition (App B.1, Table 5: 1,347 audio-visual and 731
audio-only scenes, 1,631 of 2,078 with a demand), three systems scoring the same scenes. Timed:

* **paired comparisons, 3 systems** (3 pairs x 2 modalities, ``--resamples`` bootstrap resamples
  and as many permutations each): ``paired_comparisons`` as the report calls it; and the same with
  ``--cluster-by language``;
* **the whole report, 3 systems** (``build_report``: headline, channels, taxonomy and the paired
  comparisons), to show the paired part's share;
* **vectorised vs naive**, one pair, audio-visual, ``--naive-resamples`` draws: per resample the
  drawn row lists of both systems through ``odu.runs.contract.summarize``, per relabelling the swapped row
  lists likewise (the loop a user would write), against ``paired_comparisons`` on the same draws.
  Both sides draw from the same ``SceneBootstrap`` / ``SceneSwaps`` (same seed, population and
  size); the script stops unless differences, intervals (to 1e-9) and p-values are equal.

Run: ``python benchmarks/bench_paired.py [--resamples 10000] [--naive-resamples 1000] [--repeats 3]``.
Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _timing import best_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.report_rows import key_point, report_row  # noqa: E402

from odu.core.tables import TABLE3_COLUMNS  # noqa: E402
from odu.report import build_report  # noqa: E402
from odu.report.bootstrap import BOOTSTRAP_RESAMPLES, SceneBootstrap, SceneSwaps, percentile_interval  # noqa: E402
from odu.report.paired import paired_comparisons, permutation_p_values  # noqa: E402
from odu.report.runs import System  # noqa: E402
from odu.runs.contract import summarize  # noqa: E402

#: Table 5: scenes per modality and demand scenes overall (1,631 of 2,078).
SCENES = {"audio-visual": 1347, "audio-only": 731}
POSITIVE_SHARE = 1631 / 2078
N_SYSTEMS, SEED = 3, 1
SOURCES = ("intent", "required_context.visual", "required_context.audio", "required_context.dialogue_history")


def scenes(seed: int) -> list[dict[str, Any]]:
    """The shared scenes: id, modality, language, label."""
    rng = random.Random(seed)
    return [
        {
            "scene_id": f"{modality[:2]}_{i:05d}",
            "modality": modality,
            "language": rng.choice(["en", "zh"]),
            "source": rng.choice(["generated", "generated", "human-recorded"]),
            "positive": rng.random() < POSITIVE_SHARE,
        }
        for modality, n in SCENES.items()
        for i in range(n)
    ]


def system_rows(shared: list[dict[str, Any]], skill: float, seed: int) -> list[dict[str, Any]]:
    """One system's scenes.jsonl rows over ``shared`` (the fields the report reads)."""
    rng = random.Random(seed)
    rows = []
    for s in shared:
        positive = s["positive"]
        score = (lambda: min(1.0, max(0.0, rng.gauss(skill, 0.25)))) if positive else (lambda: None)
        points = [
            key_point(f"kp{k:02d}", rng.choice(SOURCES), rng.random() < skill, True)
            for k in range(rng.randint(2, 5) if positive else 0)
        ]
        axis1 = rng.choice(["1.1", "1.2", "1.3"])
        rows.append(
            report_row(
                s["scene_id"],
                positive,
                rng.random() < (skill if positive else 1 - skill),
                (score(), score(), score(), score()),
                modality=s["modality"],
                language=s["language"],
                source=s["source"],
                axes={"axis1": axis1},
                key_points=points,
            )
        )
    return rows


def metric_vector(rows: list[dict[str, Any]]) -> list[float]:
    summary = summarize(rows)
    return [np.nan if summary[m] is None else summary[m] for m in TABLE3_COLUMNS]


def naive_pair(a: list[dict[str, Any]], b: list[dict[str, Any]], resamples: int, modality: str) -> np.ndarray:
    """(difference, interval low, interval high, p) x metrics, one resample and relabelling at a time."""
    rows_a, rows_b = sorted(a, key=lambda r: r["scene_id"]), sorted(b, key=lambda r: r["scene_id"])
    n = len(rows_a)
    diffs = []
    for w in SceneBootstrap(n, resamples, SEED, f"headline/{modality}").multiplicities().astype(int):
        drawn = np.repeat(np.arange(n), w)
        diffs.append(np.subtract(metric_vector([rows_a[i] for i in drawn]), metric_vector([rows_b[i] for i in drawn])))
    relabelled = []
    for s in SceneSwaps(n, resamples, SEED, f"paired-permutation/{modality}").weights():
        first = [rows_b[i] if s[i] else rows_a[i] for i in range(n)]
        second = [rows_a[i] if s[i] else rows_b[i] for i in range(n)]
        relabelled.append(np.subtract(metric_vector(first), metric_vector(second)))
    observed = np.subtract(metric_vector(rows_a), metric_vector(rows_b))
    interval = percentile_interval(np.array(diffs))
    return np.vstack([observed, interval, permutation_p_values(observed, np.array(relabelled))])


def vectorised_pair(systems: list[System], resamples: int, modality: str) -> np.ndarray:
    """The same from ``paired_comparisons`` (first pair, ``modality``)."""
    report = paired_comparisons(systems[:2], resamples, SEED)
    entry = next(c for c in report["comparisons"] if c["modality"] == modality)
    nan = lambda x: np.nan if x is None else x  # noqa: E731
    cells = [entry["metrics"][m] for m in TABLE3_COLUMNS]
    return np.array(
        [
            [nan(c["difference"]) for c in cells],
            [nan(c["ci"][0]) for c in cells],
            [nan(c["ci"][1]) for c in cells],
            [nan(c["p_value"]) for c in cells],
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=BOOTSTRAP_RESAMPLES)
    parser.add_argument("--naive-resamples", type=int, default=1000, help="draws of the naive-vs-vectorised check")
    parser.add_argument("--repeats", type=int, default=3, help="best of N for the vectorised side")
    args = parser.parse_args()

    shared = scenes(SEED)
    systems = [System(f"system{k}", {"judge": {}}, system_rows(shared, 0.5 + 0.05 * k, k)) for k in range(N_SYSTEMS)]
    timings: dict[str, float] = {}
    outputs: dict[str, Any] = {}

    def keep(name: str, fn: Callable[[], Any]) -> Callable[[], None]:
        def call() -> None:
            outputs[name] = fn()

        return call

    timings["paired comparisons (3 systems)"] = best_of(
        args.repeats, keep("paired", lambda: paired_comparisons(systems, args.resamples, SEED))
    )
    timings["paired comparisons, --cluster-by language"] = best_of(
        args.repeats, lambda: paired_comparisons(systems, args.resamples, SEED, cluster_by="language")
    )
    timings["whole report (3 systems)"] = best_of(1, lambda: build_report(systems, args.resamples, SEED))
    modality = "audio-visual"
    rows = [s.rows_of(modality) for s in systems[:2]]
    vec = best_of(args.repeats, keep("vec", lambda: vectorised_pair(systems, args.naive_resamples, modality)))
    naive = best_of(1, keep("naive", lambda: naive_pair(rows[0], rows[1], args.naive_resamples, modality)))
    if not np.allclose(outputs["vec"], outputs["naive"], rtol=0, atol=1e-9, equal_nan=True):
        raise SystemExit("bench_paired: the vectorised and the naive comparison differ")
    pairs = len(outputs["paired"]["comparisons"])
    out = {
        "scenes": SCENES,
        "systems": N_SYSTEMS,
        "comparisons": pairs,
        "resamples": args.resamples,
        "seconds": {k: round(v, 3) for k, v in timings.items()},
        "naive_check": {
            "resamples": args.naive_resamples,
            "pair": "system0 - system1, audio-visual",
            "vectorised_s": round(vec, 4),
            "naive_s": round(naive, 2),
            "ratio": round(naive / vec, 1),
            "outputs_equal": True,
        },
    }
    print(json.dumps(out, indent=2))
    print(f"\n{'task':<48} {'seconds':>9}")
    for k, v in timings.items():
        print(f"{k:<48} {v:>8.2f}s")
    print(
        f"{'naive vs vectorised, 1 pair AV, ' + str(args.naive_resamples) + ' draws':<48} {naive:>8.1f}s vs {vec:.3f}s = {naive / vec:.0f}x"
    )


if __name__ == "__main__":
    main()
