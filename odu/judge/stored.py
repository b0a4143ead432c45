"""Stored verdicts: key-point decisions read from a JSONL file (e.g. a released judge run).

Rows: ``{"scene_id": str, "segment": int (0-based reference segment), "qid": str, "hit": bool}``.
A key point without a stored row is a judge error for its segment, never a miss.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.schema import SchemaError, iter_json_records
from .base import Judge, JudgeRequest, JudgeVerdict


class StoredVerdictJudge(Judge):
    name = "verdicts"
    streams = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._hits: dict[tuple[str, int, str], bool] = {}
        names: dict[str, str] = {}  # one string per scene id and qid, however many rows repeat it
        for n, (_, row) in enumerate(iter_json_records(self.path), 1):
            where = f"{self.path}: row {n}"
            if not isinstance(row, dict):
                raise SchemaError(f"{where}: must be an object")
            sid, seg, qid, hit = (row.get(k) for k in ("scene_id", "segment", "qid", "hit"))
            if not isinstance(sid, str) or not isinstance(qid, str):
                raise SchemaError(f"{where}: needs string 'scene_id' and 'qid'")
            if isinstance(seg, bool) or not isinstance(seg, int) or seg < 0:
                raise SchemaError(f"{where} (scene {sid}): 'segment' must be a 0-based index")
            if not isinstance(hit, bool):
                raise SchemaError(f"{where} (scene {sid}, {qid}): 'hit' must be true/false")
            key = (names.setdefault(sid, sid), seg, names.setdefault(qid, qid))
            if key in self._hits and self._hits[key] != hit:
                raise SchemaError(f"{where}: conflicting verdicts for scene {sid} segment {seg} {qid}")
            self._hits[key] = hit
        self.model = str(self.path)

    def judge(self, requests: Sequence[JudgeRequest]) -> list[JudgeVerdict]:
        out = []
        for r in requests:
            hits = {k.qid: self._hits.get((r.scene_id, r.segment, k.qid)) for k in r.key_points}
            missing = [qid for qid, hit in hits.items() if hit is None]
            if missing:
                out.append(JudgeVerdict.failed(f"no stored verdict for {', '.join(missing)}"))
            else:
                out.append(JudgeVerdict({qid: hit for qid, hit in hits.items() if hit is not None}))
        return out
