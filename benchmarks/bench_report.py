"""Scene-bootstrap speed of ``odu-bench report``: vectorised numpy vs a naive per-resample loop,
both computing the same intervals from the same draws (asserted equal).

Synthetic scored runs of the release's audio-visual size (1,347 scenes, 1,060 positive with ~3.7
key points each, App B.1 / E.1), four systems. Timed in the same run, each side doing the whole
job (draw the resamples, compute every statistic in every resample, take the 95% intervals):

* headline intervals (Avg, M1-M5, FTR of one system): ``odu.report.headline.bootstrap_metrics``
  (multiplicity blocks x per-scene columns) vs the naive loop that, per resample, builds the
  resampled row list and calls the scalar core metrics (``odu.runs.contract.summarize``);
* evidence-channel gap intervals (four systems, seven channels, App E.1):
  ``odu.report.channels.channel_report`` vs a naive loop pooling each drawn scene's hit and point
  counts per resample.

Both sides take their draws from the same :class:`odu.report.bootstrap.SceneBootstrap` (same seed
and population), so every resample's statistics must agree (to 1e-9: sums in another order) and
so must the intervals; the script stops otherwise.

Run: ``python benchmarks/bench_report.py [--resamples 10000] [--repeats 3]``. Prints JSON, then a
table.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from _timing import best_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.report_rows import key_point, report_row  # noqa: E402

from odu.core.tables import TABLE3_COLUMNS  # noqa: E402
from odu.report.bootstrap import BOOTSTRAP_RESAMPLES, SceneBootstrap, percentile_interval, ratio  # noqa: E402
from odu.report.channels import (  # noqa: E402
    CHANNEL_ALL_CONTEXT,
    CHANNEL_REQUEST,
    CHANNELS,
    CONTEXT_CHANNELS,
    channel_report,
    scene_counts,
)
from odu.report.headline import bootstrap_metrics  # noqa: E402
from odu.report.runs import System  # noqa: E402
from odu.runs.contract import summarize  # noqa: E402

N_SCENES, N_POSITIVE, N_SYSTEMS = 1347, 1060, 4
MODALITY, SEED = "audio-visual", 1
#: The channels with a request-minus-channel gap (as in ``odu.report.channels``).
GAP_CHANNELS = (CHANNEL_ALL_CONTEXT, *CONTEXT_CHANNELS)
SOURCES = (
    "intent",
    "intent",
    "required_context.visual",
    "required_context.audio",
    "required_context.dialogue_history",
    "required_context.user_emotion",
)


def synthetic_rows(seed: int) -> list[dict[str, Any]]:
    """scenes.jsonl rows of realistic shape (the fields the report reads)."""
    rng = random.Random(seed)
    rows = []
    for i in range(N_SCENES):
        positive = i < N_POSITIVE
        matched = rng.random() < 0.9
        points = [
            key_point(f"kp{k:02d}", rng.choice(SOURCES), matched and rng.random() < 0.6, matched)
            for k in range(rng.randint(2, 5) if positive else 0)
        ]
        score = (lambda: rng.random()) if positive else (lambda: None)
        rows.append(
            report_row(
                f"avp_gen_{i:06d}" if positive else f"avn_gen_{i:06d}",
                positive,
                rng.random() < (0.9 if positive else 0.6),
                (score(), score(), score(), score()),
                language="zh",
                key_points=points,
            )
        )
    return rows


def resample_indices(boot: SceneBootstrap) -> Iterator[np.ndarray]:
    """The scene indices of each resample of ``boot`` (its multiplicities spelled out)."""
    scenes = np.arange(boot.n)
    for block in boot.blocks():
        for counts in block.astype(np.int64):
            yield np.repeat(scenes, counts)


def vectorised_headline(rows: list[dict[str, Any]], boot: SceneBootstrap) -> tuple[np.ndarray, np.ndarray]:
    """(per-resample metrics ``(R, 7)``, intervals ``(2, 7)``) as ``odu-bench report`` computes them."""
    samples = np.column_stack(list(bootstrap_metrics(rows, boot).values()))
    return samples, percentile_interval(samples)


def naive_headline(rows: list[dict[str, Any]], boot: SceneBootstrap) -> tuple[np.ndarray, np.ndarray]:
    """The same, one resample at a time through the scalar metrics."""
    samples = []
    for idx in resample_indices(boot):
        summary = summarize([rows[i] for i in idx])
        samples.append([np.nan if summary[m] is None else summary[m] for m in TABLE3_COLUMNS])
    samples_array = np.array(samples, dtype=float)
    return samples_array, percentile_interval(samples_array)


def vectorised_channels(systems: list[System], resamples: int, seed: int) -> np.ndarray:
    """Gap intervals ``(2, systems, channels)`` (NaN where no gap is defined) from ``channel_report``."""
    report = channel_report(systems, MODALITY, resamples, seed)
    return np.array(
        [
            [
                [np.nan if c["gap_ci"] is None or c["gap_ci"][k] is None else c["gap_ci"][k] for c in s["channels"]]
                for s in report["systems"]
            ]
            for k in (0, 1)
        ]
    )


def naive_channels(systems: list[System], resamples: int, seed: int) -> np.ndarray:
    """The same intervals: per resample, each system's drawn scenes' counts pooled in a loop."""
    ids = sorted(set.intersection(*({r["scene_id"] for r in s.rows if r["label"] == "positive"} for s in systems)))
    per_system = [{r["scene_id"]: scene_counts(r)[0] for r in s.rows} for s in systems]
    full = np.array([sum(counts[sid] for sid in ids) for counts in per_system])  # (systems, channels, 2)
    request = CHANNELS.index(CHANNEL_REQUEST)
    gaps = []
    for idx in resample_indices(SceneBootstrap(len(ids), resamples, seed, population=f"channels/{MODALITY}")):
        draw = [ids[i] for i in idx]
        per = []
        for counts in per_system:
            pooled = np.zeros((len(CHANNELS), 2))
            for sid in draw:
                pooled += counts[sid]
            coverage = ratio(pooled[:, 0], pooled[:, 1])
            per.append(coverage[request] - coverage)
        gaps.append(per)
    intervals = percentile_interval(np.array(gaps))
    defined = np.array([[c in GAP_CHANNELS for c in CHANNELS]] * len(systems)) & (full[..., 1] > 0)
    defined &= full[:, [request], 1] > 0
    return np.where(defined, intervals, np.nan)


def _same(a: np.ndarray, b: np.ndarray, what: str) -> None:
    if a.shape != b.shape or not np.allclose(a, b, rtol=0, atol=1e-9, equal_nan=True):
        raise SystemExit(f"bench_report: {what} differ between the vectorised and the naive computation")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=BOOTSTRAP_RESAMPLES)
    parser.add_argument("--repeats", type=int, default=3, help="best of N for the vectorised side")
    parser.add_argument("--naive-repeats", type=int, default=1, help="best of N for the naive side")
    args = parser.parse_args()

    systems = [System(f"system{k}", {"judge": {}}, synthetic_rows(k)) for k in range(N_SYSTEMS)]
    rows = sorted(systems[0].rows, key=lambda r: r["scene_id"])
    boot = SceneBootstrap(len(rows), args.resamples, SEED, f"headline/{MODALITY}")
    timings: dict[str, tuple[float, float]] = {}
    outputs: dict[str, Any] = {}

    def keep(name: str, fn: Callable[[], Any]) -> Callable[[], None]:
        def call() -> None:
            outputs[name] = fn()

        return call

    timings["headline (1 system, 1347 scenes)"] = (
        best_of(args.repeats, keep("vec_headline", lambda: vectorised_headline(rows, boot))),
        best_of(args.naive_repeats, keep("naive_headline", lambda: naive_headline(rows, boot))),
    )
    _same(outputs["vec_headline"][0], outputs["naive_headline"][0], "per-resample headline metrics")
    _same(outputs["vec_headline"][1], outputs["naive_headline"][1], "headline intervals")
    timings["channel gaps (4 systems, 1060 scenes)"] = (
        best_of(args.repeats, keep("vec_channels", lambda: vectorised_channels(systems, args.resamples, SEED))),
        best_of(args.naive_repeats, keep("naive_channels", lambda: naive_channels(systems, args.resamples, SEED))),
    )
    _same(outputs["vec_channels"], outputs["naive_channels"], "channel-gap intervals")
    out = {
        "resamples": args.resamples,
        "outputs_equal": True,
        "results": {
            k: {"vectorised_s": round(v, 4), "naive_s": round(n, 2), "ratio": round(n / v, 1)}
            for k, (v, n) in timings.items()
        },
    }
    print(json.dumps(out, indent=2))
    print(f"\n{'task':<40} {'vectorised':>11} {'naive':>10} {'ratio':>8}")
    for k, (v, n) in timings.items():
        print(f"{k:<40} {v:>10.3f}s {n:>9.1f}s {n / v:>7.0f}x")


if __name__ == "__main__":
    main()
