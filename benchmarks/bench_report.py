"""Scene-bootstrap speed of ``odu-bench report``: vectorised numpy vs a naive per-resample loop.

Synthetic scored runs of the release's audio-visual size (1,347 scenes, 1,060 positive with ~3.7
key points each, App B.1 / E.1), four systems. Timed in the same run:

* headline intervals (Avg, M1-M5, FTR of one system): ``odu.report.headline.bootstrap_metrics``
  (multiplicity blocks x per-scene columns) vs the naive loop that draws scene indices, builds
  the resampled row list and calls the scalar core metrics (``odu.run.summarize``);
* evidence-channel gap intervals (four systems, seven channels, App E.1):
  ``odu.report.channels.channel_report`` vs a naive loop pooling hit and point counts per resample.

The naive loops run ``--naive-resamples`` resamples (default 200) and are extrapolated linearly
to ``--resamples`` (default 10,000, App E.1); the vectorised code runs all of them.

Run: ``python benchmarks/bench_report.py [--resamples 10000] [--naive-resamples 200] [--repeats 3]``.
Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

import numpy as np
from _timing import best_of

from odu.report.bootstrap import SceneBootstrap
from odu.report.channels import CHANNELS, channel_report, scene_counts
from odu.report.headline import bootstrap_metrics
from odu.report.runs import System
from odu.run import summarize

N_SCENES, N_POSITIVE, N_SYSTEMS = 1347, 1060, 4
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
            {
                "segment": 0,
                "qid": f"kp{k:02d}",
                "point": "p",
                "source": rng.choice(SOURCES),
                "tiers": ["T1"],
                "matched": matched,
                "hit": matched and rng.random() < 0.6,
                "judge_error": None,
            }
            for k in range(rng.randint(2, 5) if positive else 0)
        ]
        score = (lambda: rng.random()) if positive else (lambda: None)
        rows.append(
            {
                "scene_id": f"avp_gen_{i:06d}" if positive else f"avn_gen_{i:06d}",
                "modality": "audio-visual",
                "language": "zh",
                "source": "generated",
                "label": "positive" if positive else "negative",
                "axes": {},
                "has_demand": positive,
                "predicted_has_demand": rng.random() < (0.9 if positive else 0.6),
                "s2": score(),
                "s2_errors_as_misses": None,
                "s3": score(),
                "s4": score(),
                "s5": score(),
                "key_points": points,
                "parse_error": False,
                "no_output": False,
            }
        )
    return rows


def naive_headline(rows: list[dict[str, Any]], resamples: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(resamples):
        summarize([rows[i] for i in rng.integers(0, len(rows), len(rows))])


def naive_channels(systems: list[System], resamples: int, seed: int) -> None:
    ids = sorted(r["scene_id"] for r in systems[0].rows if r["label"] == "positive")
    per_system = [{r["scene_id"]: scene_counts(r)[0] for r in s.rows if r["label"] == "positive"} for s in systems]
    request = CHANNELS.index("spoken request")
    rng = np.random.default_rng(seed)
    for _ in range(resamples):
        draw = [ids[i] for i in rng.integers(0, len(ids), len(ids))]
        for counts in per_system:
            pooled = np.zeros((len(CHANNELS), 2))
            for sid in draw:
                pooled += counts[sid]
            coverage = pooled[:, 0] / np.maximum(pooled[:, 1], 1)
            _ = coverage[request] - coverage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--naive-resamples", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    systems = [System(f"system{k}", {"judge": {}}, synthetic_rows(k)) for k in range(N_SYSTEMS)]
    rows = sorted(systems[0].rows, key=lambda r: r["scene_id"])
    scale = args.resamples / args.naive_resamples
    boot = SceneBootstrap(len(rows), args.resamples, 1, "headline/audio-visual")
    results = {
        "headline (1 system, 1347 scenes)": (
            best_of(args.repeats, lambda: bootstrap_metrics(rows, boot)),
            best_of(1, lambda: naive_headline(rows, args.naive_resamples, 1)) * scale,
        ),
        "channel gaps (4 systems, 1060 scenes)": (
            best_of(args.repeats, lambda: channel_report(systems, "audio-visual", args.resamples, 1)),
            best_of(1, lambda: naive_channels(systems, args.naive_resamples, 1)) * scale,
        ),
    }
    out = {
        "resamples": args.resamples,
        "naive_resamples_timed": args.naive_resamples,
        "results": {
            k: {"vectorised_s": round(v, 4), "naive_s_extrapolated": round(n, 2), "ratio": round(n / v, 1)}
            for k, (v, n) in results.items()
        },
    }
    print(json.dumps(out, indent=2))
    print(f"\n{'task':<40} {'vectorised':>11} {'naive (extrap.)':>16} {'ratio':>8}")
    for k, (v, n) in results.items():
        print(f"{k:<40} {v:>10.3f}s {n:>15.1f}s {n / v:>7.0f}x")


if __name__ == "__main__":
    main()
