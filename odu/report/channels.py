"""Key-point coverage by evidence channel and the request-minus-context gap (App E.1, Table 6).

Population: the positive scenes of one modality present in every system's run. Each key point
counts once (point-weighted); points of unmatched reference segments are misses; points whose
judge call failed are left out of numerator and denominator and counted (``judge_error_points``).
The key point's ``source`` label gives its channel (``KEY_POINT_CHANNELS``); points without an
assigned channel count in "all points" only (App A.4).

The gap's 95% interval comes from the scene bootstrap: the same draws for every system and
channel, each drawn scene contributing all its points, coverage recomputed from pooled counts
(App E.1 "Scene-bootstrap procedure"). The gap itself uses the full sample.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .bootstrap import SceneBootstrap, percentile_interval, ratio
from .numbers import optional
from .runs import Row, System, common_rows

#: Evidence channel of a key point, from its ``source`` label (App A.4 "Aggregation and key-point
#: accounting", App E.1 "Population and counting"). Other context pools emotion, activity,
#: identity and scene condition. A source missing from this table has no assigned channel: it stays
#: in the overall point count but in no channel-specific rate (App A.4).
CHANNEL_REQUEST = "spoken request"
CHANNEL_VISUAL = "visual"
CHANNEL_AUDIO = "audio"
CHANNEL_HISTORY = "dialogue history"
CHANNEL_OTHER = "other context"
CHANNEL_ALL_CONTEXT = "all context"
KEY_POINT_CHANNELS: dict[str, str] = {
    "intent": CHANNEL_REQUEST,
    "required_context.visual": CHANNEL_VISUAL,
    "required_context.audio": CHANNEL_AUDIO,
    "required_context.dialogue_history": CHANNEL_HISTORY,
    "required_context.user_emotion": CHANNEL_OTHER,
    "required_context.user_activity": CHANNEL_OTHER,
    "required_context.user_identity": CHANNEL_OTHER,
    "required_context.scene_condition": CHANNEL_OTHER,
}
#: Context channels pooled into "all context" (App E.1), in reporting order.
CONTEXT_CHANNELS: tuple[str, ...] = (CHANNEL_VISUAL, CHANNEL_AUDIO, CHANNEL_HISTORY, CHANNEL_OTHER)

ALL_POINTS = "all points"
#: Rows of the channel table, in order (Table 6 order, plus "other context" and "all points").
CHANNELS: tuple[str, ...] = (CHANNEL_REQUEST, CHANNEL_ALL_CONTEXT, *CONTEXT_CHANNELS, ALL_POINTS)
_GAP_CHANNELS = (CHANNEL_ALL_CONTEXT, *CONTEXT_CHANNELS)


def channels_of(source: str) -> tuple[str, ...]:
    """The table rows a key point of this ``source`` counts in.

    >>> channels_of("intent")
    ('spoken request', 'all points')
    >>> channels_of("required_context.user_emotion")
    ('other context', 'all context', 'all points')
    >>> channels_of("")
    ('all points',)
    """
    channel = KEY_POINT_CHANNELS.get(source)
    if channel is None:
        return (ALL_POINTS,)
    if channel in CONTEXT_CHANNELS:
        return (channel, CHANNEL_ALL_CONTEXT, ALL_POINTS)
    return (channel, ALL_POINTS)


def scene_counts(row: Row) -> tuple[np.ndarray, int]:
    """Per-channel ``(hits, points)`` of one scene row, shape ``(len(CHANNELS), 2)``, and the
    number of points left out for a judge error."""
    counts = np.zeros((len(CHANNELS), 2))
    errors = 0
    for kp in row["key_points"]:
        if kp["matched"] and kp["hit"] is None:  # judge error: excluded and counted
            errors += 1
            continue
        hit = bool(kp["matched"] and kp["hit"])  # unmatched segment: a miss (App A.3 Eq. 2)
        for channel in channels_of(kp.get("source", "")):
            i = CHANNELS.index(channel)
            counts[i] += (hit, 1)
    return counts, errors


def channel_report(systems: Sequence[System], modality: str, resamples: int, seed: int) -> dict[str, Any]:
    """Table 6 for one modality: coverage per system and channel, gaps and bootstrap intervals."""
    ids, by_system = common_rows(systems, modality, lambda r: r["label"] == "positive")
    out: dict[str, Any] = {
        "modality": modality,
        "n_scenes": len(ids),
        "resamples": resamples,
        "seed": seed,
        "systems": [],
    }
    if not ids:
        return out
    # columns: per system, per channel, (hits, points) -> (n_scenes, systems * channels * 2)
    per_scene = np.empty((len(ids), len(systems), len(CHANNELS), 2))
    errors = np.zeros(len(systems), dtype=int)
    for j, rows in enumerate(by_system):
        for i, sid in enumerate(ids):
            per_scene[i, j], e = scene_counts(rows[sid])
            errors[j] += e
    full = per_scene.sum(axis=0)  # (systems, channels, 2)
    coverage = ratio(full[..., 0], full[..., 1])
    boot = SceneBootstrap(len(ids), resamples, seed, population=f"channels/{modality}")
    sums = boot.weighted_sums(per_scene.reshape(len(ids), -1)).reshape(resamples, *full.shape)
    boot_coverage = ratio(sums[..., 0], sums[..., 1])  # (resamples, systems, channels)
    request = CHANNELS.index(CHANNEL_REQUEST)
    boot_gaps = boot_coverage[:, :, [request]] - boot_coverage
    intervals = percentile_interval(boot_gaps)  # (2, systems, channels)
    for j, system in enumerate(systems):
        rows_out = []
        for c, channel in enumerate(CHANNELS):
            gap = channel in _GAP_CHANNELS and full[j, c, 1] > 0 and full[j, request, 1] > 0
            rows_out.append(
                {
                    "channel": channel,
                    "points": int(full[j, c, 1]),
                    "hits": int(full[j, c, 0]),
                    "coverage": optional(coverage[j, c]),
                    "gap": optional(coverage[j, request] - coverage[j, c]) if gap else None,
                    "gap_ci": [optional(intervals[0, j, c]), optional(intervals[1, j, c])] if gap else None,
                }
            )
        out["systems"].append(
            {
                "system": system.name,
                "approximate": system.approximate,
                "judge_error_points": int(errors[j]),
                "channels": rows_out,
            }
        )
    return out


def channel_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Flat rows (one per system and channel) for CSV and Markdown."""
    return [
        {
            "modality": report["modality"],
            "system": s["system"],
            **{k: v for k, v in c.items() if k != "gap_ci"},
            "gap_ci_low": c["gap_ci"][0] if c["gap_ci"] else None,
            "gap_ci_high": c["gap_ci"][1] if c["gap_ci"] else None,
            "judge_error_points": s["judge_error_points"],
        }
        for s in report["systems"]
        for c in s["channels"]
    ]
