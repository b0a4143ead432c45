"""What the ``evaluate`` metric (``odu_metric/``) stores: each reference and prediction as JSON text.

``evaluate`` writes a metric's inputs to Arrow files before ``compute`` (and gathers them across
processes), so both columns are ``Value("string")``:

* a reference may be what a training loop holds: a release record (``dict``), a dataset row exactly
  as ``load_dataset("odu-bench", cfg)`` yields it (media bytes, or :class:`~odu.data.media.LazyClip` s
  after :func:`~odu.data.dataset.with_lazy_media`), a :class:`~odu.core.schema.Scene`, or the JSON text of
  a record or row. It is validated at once (:func:`odu.core.schema.scene_from_dict`: an error names the
  reference and the scene) and stored as its canonical record without display fields and without
  media: only what scoring reads;
* a prediction is raw output text, a parsed prediction (``dict``) or ``None`` (no output), stored as
  the JSON text of that value.

JSON is written ASCII-escaped, so any Unicode, lone surrogates included (which UTF-8, hence Arrow,
cannot hold as text), survives storage and gathering and decodes to the same string.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from ..core.schema import Scene, scene_from_dict, scene_to_dict


def reference_record(value: Any, index: int) -> dict[str, Any]:
    """The release record of reference ``index``, reduced to what scoring reads (see the module docstring)."""
    if isinstance(value, Scene):
        scene = value
    else:
        if isinstance(value, (str, bytes)):
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise ValueError(f"reference {index}: not a scene record in JSON ({exc})") from None
        if not isinstance(value, Mapping):
            raise ValueError(
                f"reference {index}: expected a scene record, a dataset row, a Scene or their JSON text, "
                f"got {type(value).__name__}"
            )
        if "turns" in value:  # a dataset row: its record, media left behind
            from ..data.dataset import row_to_record

            try:
                value = row_to_record(value)
            except (KeyError, TypeError) as exc:
                raise ValueError(f"reference {index}: a dataset row without the field {exc}") from None
        scene = scene_from_dict(value, index)
    return scene_to_dict(dataclasses.replace(scene, extra={}))


def encode_reference(value: Any, index: int) -> str:
    """Reference ``index`` as stored: the JSON text of :func:`reference_record`."""
    return json.dumps(reference_record(value, index), separators=(",", ":"))


def encode_prediction(value: Any, index: int) -> str:
    """Prediction ``index`` as stored: the JSON text of the output text, the parsed dict or ``None``."""
    if value is not None and not isinstance(value, (str, Mapping)):
        raise ValueError(f"prediction {index}: expected output text, a dict or None, got {type(value).__name__}")
    try:
        return json.dumps(dict(value) if isinstance(value, Mapping) else value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"prediction {index}: not JSON-serialisable ({exc})") from None


def decode_prediction(text: str) -> str | None:
    """A stored prediction as the scorer takes it: output text, or ``None`` for no output (a parsed
    dict goes back to its JSON text, which the parser reads like any output)."""
    value = json.loads(text)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value


__all__ = ["decode_prediction", "encode_prediction", "encode_reference", "reference_record"]
