"""Replay: answers produced elsewhere, read from a predictions JSONL and scored through the same
pipeline (lm-eval tasks, judge, run card).

The file is the ``odu-bench score`` predictions format: one ``{"scene_id": ..., "output": "<raw
model text>"}`` per line (a JSON array works too). One file may hold several tasks' scenes; rows
for scenes a task does not ask about are ignored. A scene missing from the file, or with
``"output": null``, is reported as an inference error naming the file and scored as "no output",
exactly as ``odu-bench score`` scores a missing prediction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.schema import read_predictions
from .base import Backend, Generation, SceneRequest


class Replay(Backend):
    name = "replay"

    def __init__(self, predictions: str | Path) -> None:
        self.path = Path(predictions)
        self.outputs = read_predictions(self.path)

    def answer(self, request: SceneRequest) -> Generation:
        text = self.outputs.get(request.scene_id)
        return Generation(text) if text is not None else Generation.failed(f"no output for this scene in {self.path}")

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, "predictions": str(self.path.resolve()), "n_predictions": len(self.outputs)}

    def pitfalls(self) -> list[str]:
        return ["replayed outputs: generation settings are those of the run that produced them, not recorded here"]


__all__ = ["Replay"]
