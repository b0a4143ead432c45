"""Judge-stability audit, App E.2 / Table 7.

* **Panel B (stored-output re-judging).** The stored per-segment candidate texts of one or more
  scored runs (``scenes.jsonl`` ``candidates`` + ``key_points``) are re-judged by several judges;
  no model inference or matching is repeated. The audit keeps points with tier labels and
  available candidate text, on the demand scenes present in every run. Per judge and system,
  coverage is point-weighted over the *all-judge common verdict set* of that system (points every
  judge decided, i.e. without judge errors). Reported: coverage, its range across judges (max -
  min), and whether every judge orders the systems the same way (an ordering is a list of tiers:
  systems with equal coverage tie, printed ``a = b > c``, never as an order).
* **Panel A (target recoverability).** Each reference segment's own ``structured_intent`` and
  ``required_context`` descriptions, formatted as a candidate (App A.5; necessity notes left out,
  App D.3), are judged against its key points. Recoverability is the point-weighted hit rate over
  the common verdict set; the orphan rate is one minus it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.schema import KeyPoint, PredictedContext, PredictedSegment, Scene
from .base import Judge, JudgeRequest, JudgeVerdict, candidate_text


@dataclass(frozen=True, slots=True)
class _Item:
    """One judge request of the audit and the group (system name, or "panel_a") it belongs to."""

    group: str
    request: JudgeRequest


def _population(runs: Mapping[str, Sequence[Mapping[str, Any]]], modality: str | None) -> set[str]:
    """Demand scenes (of ``modality``, if given) present in every run."""
    common: set[str] | None = None
    for rows in runs.values():
        ids = {r["scene_id"] for r in rows if r["has_demand"] and (modality is None or r["modality"] == modality)}
        common = ids if common is None else common & ids
    return common or set()


def stored_requests(rows: Iterable[Mapping[str, Any]], scene_ids: set[str]) -> list[JudgeRequest]:
    """Requests rebuilt from a run's scenes.jsonl rows: one per stored candidate text, with the
    segment's tier-labelled key points."""
    requests = []
    for row in rows:
        if row["scene_id"] not in scene_ids:
            continue
        for cand in row.get("candidates") or []:
            points = tuple(
                KeyPoint(k["qid"], k["point"], k.get("source", ""), tuple(k.get("tiers") or ()))
                for k in row["key_points"]
                if k["segment"] == cand["segment"] and k.get("tiers")
            )
            if points and cand["text"]:
                requests.append(JudgeRequest(row["scene_id"], cand["segment"], cand["text"], points))
    return requests


def reference_candidate(scene: Scene, segment: int, language: str = "scene") -> str:
    """The reference segment's own intent + context descriptions, formatted like a candidate."""
    ref = scene.annotation(language).segments[segment]
    as_prediction = PredictedSegment(
        None,
        None,
        structured_intent=ref.structured_intent,
        required_context=tuple(PredictedContext(c.type, c.description) for c in ref.required_context),
    )
    return candidate_text(as_prediction)


def recoverability_requests(
    scenes: Iterable[Scene], scene_ids: set[str] | None, language: str = "scene"
) -> list[JudgeRequest]:
    """Panel A requests: every reference segment of the demand scenes judged against its own text."""
    requests = []
    for scene in scenes:
        if not scene.is_positive or (scene_ids is not None and scene.scene_id not in scene_ids):
            continue
        for i, ref in enumerate(scene.annotation(language).segments):
            points = tuple(k for k in ref.key_points if k.tiers)
            if points:
                requests.append(JudgeRequest(scene.scene_id, i, reference_candidate(scene, i, language), points))
    return requests


def _point_verdicts(
    items: Sequence[_Item], verdicts: Sequence[JudgeVerdict]
) -> dict[tuple[str, str, int, str], bool | None]:
    """(group, scene, segment, qid) -> hit, or None for a judge error."""
    out: dict[tuple[str, str, int, str], bool | None] = {}
    if len(verdicts) != len(items):  # a short answer must not silently shrink the population
        raise ValueError(f"a judge returned {len(verdicts)} verdicts for {len(items)} requests")
    for item, verdict in zip(items, verdicts):
        r = item.request
        for k in r.key_points:
            out[(item.group, r.scene_id, r.segment, k.qid)] = None if verdict.hits is None else verdict.hits[k.qid]
    return out


def _rate(hits: Iterable[bool]) -> tuple[float | None, int]:
    values = list(hits)
    return (sum(values) / len(values) if values else None), len(values)


#: Coverages that agree to this many decimals are a tie in an ordering (float noise is no order).
TIE_DECIMALS = 12


def ranking(coverage: Mapping[str, float | None]) -> list[list[str]]:
    """Systems from the highest coverage down, as tiers: systems with equal coverage share a tier
    (names sorted within it); systems without coverage come last, together.

    >>> ranking({"oracle": 0.5, "good": 0.5, "bad": 0.25, "none": None})
    [['good', 'oracle'], ['bad'], ['none']]
    """
    tiers: dict[float | None, list[str]] = {}
    for system, value in coverage.items():
        tiers.setdefault(None if value is None else round(value, TIE_DECIMALS), []).append(system)
    order = sorted(tiers, key=lambda v: (v is None, -(v or 0.0)))
    return [sorted(tiers[v]) for v in order]


def ordering_text(tiers: Sequence[Sequence[str]]) -> str:
    """An ordering as text: ``>`` between tiers, ``=`` within one.

    >>> ordering_text([["good", "oracle"], ["bad"]])
    'good = oracle > bad'
    """
    return " > ".join(" = ".join(tier) for tier in tiers)


def audit(
    runs: Mapping[str, Sequence[Mapping[str, Any]]],
    judges: Mapping[str, Judge],
    scenes: Sequence[Scene] | None = None,
    modality: str | None = None,
    language: str = "scene",
) -> dict[str, Any]:
    """Table 7 for ``runs`` (system name -> scenes.jsonl rows) re-judged by ``judges`` (label -> judge).

    With ``scenes``, Panel A is computed too (on the runs' common population when runs are given).
    Each judge receives one batch with every request of both panels.
    """
    population = _population(runs, modality) if runs else None
    items = [_Item(system, r) for system, rows in runs.items() for r in stored_requests(rows, population or set())]
    if scenes is not None:
        chosen = [s for s in scenes if modality is None or s.modality == modality]
        items += [_Item("panel_a", r) for r in recoverability_requests(chosen, population, language)]
    points_by_judge = {
        label: _point_verdicts(items, judge.judge([i.request for i in items])) for label, judge in judges.items()
    }
    labels = list(judges)
    all_keys = list(next(iter(points_by_judge.values()))) if points_by_judge else []
    common = [key for key in all_keys if all(points_by_judge[j][key] is not None for j in labels)]
    errors = {j: sum(1 for v in points_by_judge[j].values() if v is None) for j in labels}

    def rates(group: str) -> tuple[dict[str, float | None], int, int]:
        keys = [k for k in common if k[0] == group]
        total = sum(1 for k in all_keys if k[0] == group)
        decided = {j: [hit for k in keys if (hit := points_by_judge[j][k]) is not None] for j in labels}
        return {j: _rate(decided[j])[0] for j in labels}, len(keys), total

    def by_coverage(judge: str) -> list[list[str]]:
        return ranking({s: coverage[s][judge] for s in runs})

    result: dict[str, Any] = {
        "population": {
            "modality": modality or "all",
            "scenes": len(population) if population is not None else None,
            "systems": list(runs),
        },
        "judges": {label: judge.info() for label, judge in judges.items()},
        "judge_error_points": errors,
    }
    if runs:
        coverage: dict[str, dict[str, float | None]] = {}
        points: dict[str, int] = {}
        retained: dict[str, int] = {}
        for system in runs:
            coverage[system], points[system], retained[system] = rates(system)
        spread = {
            s: (max(v) - min(v)) if (v := [c for c in coverage[s].values() if c is not None]) else None for s in runs
        }
        orderings = {j: by_coverage(j) for j in labels}
        counts = Counter(tuple(map(tuple, o)) for o in orderings.values())
        modal, agreeing = counts.most_common(1)[0] if labels else ((), 0)
        result["panel_b"] = {
            "coverage": coverage,
            "common_points": points,
            "retained_points": retained,
            "range": spread,
            "orderings": orderings,
            "ordering_agreement": {
                "judges_agreeing": agreeing,
                "judges": len(labels),
                "modal_ordering": [list(tier) for tier in modal],
                "identical": agreeing == len(labels),
            },
        }
    if scenes is not None:
        recoverability, common_points, retained_points = rates("panel_a")
        result["panel_a"] = {
            "recoverability": recoverability,
            "orphan_rate": {j: None if r is None else 1.0 - r for j, r in recoverability.items()},
            "common_points": common_points,
            "retained_points": retained_points,
        }
    return result


def audit_table(result: Mapping[str, Any]) -> str:
    """Table 7 as text: rows are quantities, columns judges, last column the stability readout."""
    labels = list(result["judges"])
    header = ["Setting", "Quantity", *labels, "Stability readout"]
    rows: list[list[str]] = []

    def fmt(x: float | None) -> str:
        return "—" if x is None else f"{x:.3f}"

    if "panel_a" in result:
        a = result["panel_a"]
        rows.append(
            ["A", "Recoverability", *(fmt(a["recoverability"][j]) for j in labels), f"{a['common_points']} key points"]
        )
        rows.append(["A", "Orphan rate", *(fmt(a["orphan_rate"][j]) for j in labels), "ceiling loss"])
    if "panel_b" in result:
        b = result["panel_b"]
        for system in result["population"]["systems"]:
            rows.append(
                [
                    "B",
                    f"{system} coverage",
                    *(fmt(b["coverage"][system][j]) for j in labels),
                    f"range {fmt(b['range'][system])} ({b['common_points'][system]} points)",
                ]
            )
        agree = b["ordering_agreement"]
        rows.append(
            [
                "B",
                "Model ordering",
                *(ordering_text(b["orderings"][j]) for j in labels),
                f"identical for {agree['judges_agreeing']} of {agree['judges']} judges",
            ]
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
