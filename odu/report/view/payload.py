"""The viewer's data, as JSON-ready dicts: one index entry and one scene page per scene.

Everything here is data; the pages (``assets/``) turn it into HTML with ``textContent`` only, so
text from runs (model outputs, transcripts) is never markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...core.constants import PROFILE_FIELDS
from ..taxonomy import NEGATIVE_REASONS, NEGATIVE_SIGNALS
from .align import group_alignments
from .sources import Run, Scene, SchemaError, merge_segments, parse_output, scene_from_dict

Row = Mapping[str, Any]


def flags(row: Row) -> list[str]:
    """What went wrong in a system's scene row, as the index's flag names."""
    out = []
    if row["predicted_has_demand"] and not row["has_demand"]:
        out.append("false trigger")
    if row["has_demand"] and not row["predicted_has_demand"]:
        out.append("missed demand")
    if row.get("parse_error"):
        out.append("parse error")
    if row.get("no_output"):
        out.append("no output")
    if any(k.get("judge_error") for k in row["key_points"]):
        out.append("judge error")
    if row.get("inference_error"):
        out.append("inference error")
    return out


def _scores(row: Row) -> dict[str, Any]:
    return {
        "predicted": row["predicted_has_demand"],
        **{s: row[s] for s in ("s2", "s3", "s4", "s5")},
        "flags": flags(row),
    }


def _negative(code: str, names: Mapping[str, tuple[str, str]]) -> dict[str, str] | None:
    if not code:
        return None
    short, name = names.get(code, ("", code))
    return {"value": code, "code": short, "name": name}


def _segment(seg: Any, modality: str) -> dict[str, Any]:
    """A reference or predicted segment for display (times in ms of the final clip)."""
    out: dict[str, Any] = {
        "start_ms": seg.start_ms,
        "end_ms": seg.end_ms,
        "transcript": seg.transcript,
        "intent": seg.structured_intent,
        "context": [
            {"type": c.type, "description": c.description, "necessity": getattr(c, "necessity", "")}
            for c in seg.required_context
        ],
        "profile": {f: getattr(seg, f) for f in PROFILE_FIELDS[modality]},
    }
    if hasattr(seg, "key_points"):
        out["key_points"] = [
            {"qid": k.qid, "point": k.point, "source": k.source, "tiers": list(k.tiers)} for k in seg.key_points
        ]
    return out


def _scene_facts(sid: str, first: Row) -> dict[str, Any]:
    """The scene's id, modality, language, source and label, as every run's row gives them."""
    return {"id": sid, **{name: first[name] for name in ("modality", "language", "source", "label")}}


def index_entry(
    sid: str, rows: Sequence[Row | None], record: Mapping[str, Any] | None, chunk: int, search: str
) -> dict[str, Any]:
    """A scene's row of the index table: scene facts from the first run holding it, then per system
    its predicted demand, s2-s5 and flags (None where the run lacks the scene)."""
    first = next(r for r in rows if r is not None)
    reason = _negative(first.get("negative_reason") or "", NEGATIVE_REASONS)
    return {
        **_scene_facts(sid, first),
        "reason": reason["code"] if reason else "",
        "axes": dict(first.get("axes") or {}),
        "title": (record or {}).get("title", ""),
        "chunk": chunk,
        "in_dataset": record is not None,
        "text": search,
        "systems": [_scores(r) if r is not None else None for r in rows],
    }


def _system_page(run: Run, row: Row | None, scene: Scene | None) -> dict[str, Any]:
    """One system's column of a scene page: scores, flags, verdicts, parsed segments, M4 edits,
    M5 fields, parse issues and the raw output."""
    if row is None:
        return {"present": False}
    out: dict[str, Any] = {
        "present": True,
        "language": run.annotation_language,
        **_scores(row),
        "issues": list(row.get("issues") or []),
        "inference_error": row.get("inference_error"),
        "matches": [dict(m) for m in row["matches"]],
        "key_points": {
            f"{k['segment']}/{k['qid']}": {"hit": k["hit"], "matched": k["matched"], "judge_error": k["judge_error"]}
            for k in row["key_points"]
        },
        "candidates": {str(c["segment"]): c["text"] for c in row.get("candidates") or []},
        "has_outputs": run.outputs is not None,
        "raw": None,
        "segments": None,
        "transcripts": None,
        "profile": None,
        "note": None,
    }
    if run.outputs is None:
        return out
    out["raw"] = run.outputs.get(row["scene_id"])
    prediction = parse_output(out["raw"], row["modality"])
    preds = prediction.segments if prediction.has_demand else ()
    out["segments"] = [_segment(p, row["modality"]) for p in preds]
    if scene is None:
        return out
    try:
        refs = scene.annotation(run.annotation_language).segments
    except SchemaError as exc:
        out["note"] = f"{exc}: the dataset lacks the reference this run was scored against"
        return out
    if any(m["reference"] >= len(refs) or any(j >= len(preds) for j in m["predictions"]) for m in row["matches"]):
        out["note"] = "the raw output does not give the segments this run scored (another output or parser?)"
        return out
    out["transcripts"] = group_alignments(refs, preds, row["matches"]) if scene.is_positive else []
    out["profile"] = []
    for m in row["matches"]:  # M5 (App A.3 Eq. 5): the merged prediction's field against the reference's
        merged = merge_segments([preds[j] for j in m["predictions"]]) if m["predictions"] else None
        ref = refs[m["reference"]]
        out["profile"].append(
            {
                f: {
                    "predicted": getattr(merged, f) if merged else None,
                    "ok": merged is not None and getattr(merged, f) == getattr(ref, f),
                }
                for f in PROFILE_FIELDS[row["modality"]]
            }
        )
    return out


def scene_page(
    sid: str,
    record: Mapping[str, Any] | None,
    runs: Sequence[Run],
    rows: Sequence[Row | None],
    clips: Sequence[Mapping[str, Any]],
    problems: list[str],
) -> dict[str, Any]:
    """Everything one scene page shows: the scene, its clips (media paths in the site), the
    reference of the final clip and each system's column. A reference the record lacks is added
    to ``problems``."""
    first = next(r for r in rows if r is not None)
    scene = scene_from_dict(record) if record is not None else None
    language = next(run.annotation_language for run, row in zip(runs, rows) if row is not None)
    reference = None
    if scene is not None:
        try:
            annotation = scene.annotation(language)
        except SchemaError as exc:
            problems.append(f"{exc}: no reference shown")
        else:
            reference = {
                "language": scene.language if language == "scene" else language,
                "has_demand": annotation.has_demand,
                "segments": [_segment(s, scene.modality) for s in annotation.segments],
            }
    extra = dict(scene.extra) if scene is not None else {}
    return {
        **_scene_facts(sid, first),
        "title": str(extra.pop("title", "") or ""),
        "summary": str(extra.pop("summary", "") or ""),
        "notes": {k: v for k, v in extra.items() if isinstance(v, str)},
        "axes": [{"axis": a.axis, "code": a.code, "name": a.name} for a in scene.axes]
        if scene is not None
        else [{"axis": k, "code": v, "name": ""} for k, v in (first.get("axes") or {}).items()],
        "negative_reason": _negative(first.get("negative_reason") or "", NEGATIVE_REASONS),
        "negative_signal": _negative(first.get("negative_signal") or "", NEGATIVE_SIGNALS),
        "in_dataset": record is not None,
        "problems": list(problems),
        "clips": list(clips),
        "reference": reference,
        "systems": [_system_page(run, row, scene) for run, row in zip(runs, rows)],
    }


def search_text(record: Mapping[str, Any] | None, pages: Sequence[Mapping[str, Any]]) -> str:
    """Lower-cased reference and predicted transcripts and intents of a scene, for the index search."""
    parts: list[str] = []
    for ann in ((record or {}).get("annotations") or {}).values():
        for seg in ann.get("evaluation_targets", {}).get("segments", []):
            parts += [seg.get("transcript", ""), seg.get("structured_intent", "")]
    for page in pages:
        parts += [t for s in page.get("segments") or [] for t in (s["transcript"], s["intent"])]
    return " \n ".join(p for p in dict.fromkeys(parts) if p).casefold()
