"""Sidecar ASR files for the text-only tasks (``ODU_ASR=PATH``, docs/harness.md): the reference
transcript of each scene's final clip, a short "hm" for every other clip."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from odu.core.schema import scene_from_dict


def write_sidecar(
    records: Mapping[str, Mapping[str, Any]], path: Path, modality: str | None = None, tag: bool = False
) -> Path:
    """Rows ``{"scene_id", "clip", "sentences"}`` for the scenes of ``modality`` (None: all) of
    ``records`` (scene id -> release record); ``tag``: every sentence starts with ``(scene id)``, so a
    scripted model knows which scene it is asked about."""
    with path.open("w", encoding="utf-8") as fh:
        for sid, record in records.items():
            if modality is not None and record["modality"] != modality:
                continue
            scene = scene_from_dict(record)
            prefix = f"({sid}) " if tag else ""
            for i, clip in enumerate(scene.clips):
                final = i == len(scene.clips) - 1
                spoken = [
                    {"start_ms": g.start_ms, "end_ms": g.end_ms, "text": prefix + g.transcript}
                    for g in (scene.annotation().segments if final else ())
                ]
                spoken = spoken or [{"start_ms": 0, "end_ms": 500, "text": prefix + "hm", "speaker": "1"}]
                fh.write(json.dumps({"scene_id": sid, "clip": clip.id, "sentences": spoken}) + "\n")
    return path
