"""Word / character edits of M4 (App A.3 Eq. 4) for display: what the scorer counted, where.

Transcripts are compared as the scorer compares them (:func:`odu.core.text.edit_count`): both
normalised, in words or, for a CJK-dominant reference, characters; references linked through
shared predictions are one group, concatenated in time order (``odu.runs.scoring``). The alignment is
rapidfuzz's Levenshtein opcodes over those units.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz.distance import Levenshtein

from .sources import edit_count, is_cjk_dominant, normalize, pred_order_key, units


def alignment(reference: str, hypothesis: str) -> dict[str, Any]:
    """Opcodes ``[tag, reference piece, hypothesis piece]`` (tags: equal, replace, delete,
    insert), the unit (``word`` / ``char``) and the scorer's (edits, reference length)."""
    ref_norm, hyp_norm = normalize(reference), normalize(hypothesis)
    chars = is_cjk_dominant(ref_norm)
    ref_units, hyp_units = units(ref_norm, chars), units(hyp_norm, chars)
    sep = "" if chars else " "
    ops = [
        [op.tag, sep.join(ref_units[op.src_start : op.src_end]), sep.join(hyp_units[op.dest_start : op.dest_end])]
        for op in Levenshtein.opcodes(ref_units, hyp_units)
    ]
    edits, length = edit_count(reference, hypothesis)
    return {"unit": "char" if chars else "word", "ops": ops, "edits": edits, "length": length}


def transcript_groups(matches: Sequence[Mapping[str, Any]]) -> list[tuple[list[int], list[int]]]:
    """(reference ids, prediction ids) of each M4 group of a scene row's ``matches``: a 1:1 match
    is its own group; references whose matches share a prediction are one group."""
    groups: list[tuple[set[int], set[int]]] = []
    for m in matches:
        group = ({m["reference"]}, set(m["predictions"]))
        for other in [g for g in groups if g[1] & group[1]]:
            groups.remove(other)
            group[0].update(other[0])
            group[1].update(other[1])
        groups.append(group)
    return [(sorted(r), sorted(p)) for r, p in groups]


def group_alignments(
    refs: Sequence[Any], preds: Sequence[Any], matches: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The alignment of every M4 group: references in time order against the group's predicted
    transcripts in the scorer's prediction order (an unmatched reference meets an empty text)."""
    out = []
    for ref_ids, pred_ids in transcript_groups(matches):
        ref_ids = sorted(ref_ids, key=lambda i: (refs[i].start_ms, i))
        pred_ids = sorted(pred_ids, key=lambda j: pred_order_key(preds[j]))
        reference = " ".join(refs[i].transcript for i in ref_ids)
        hypothesis = " ".join(preds[j].transcript for j in pred_ids)
        out.append({"references": ref_ids, "predictions": pred_ids, **alignment(reference, hypothesis)})
    return out
