"""Typed records for the release schema (scenes) and the prediction schema (App A.1, Fig. 6).

Scene records follow the authors' published layout (``shared/odu-demo/README.md``): a scene with
taxonomy labels, its user clips, and reference annotations in both languages. Readers accept the
real irregularities (empty negative reason/signal, no ``user_in_frame`` for audio-only, optional
display fields) and reject anything that would make scoring wrong, naming scene and field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..io.jsonio import MAX_RECORD_DEPTH, JsonFileError, clean_text, encode, iter_records, nests_too_deep
from .constants import AUDIO_ONLY, AUDIO_VISUAL, LANGUAGES, MAX_TIME_MS, MODALITIES


class SchemaError(ValueError):
    """A scene record does not follow the release schema; the message names scene and field
    (a lone surrogate quoted from the record is shown as U+FFFD: the message stays printable)."""

    def __init__(self, message: str) -> None:
        super().__init__(clean_text(message))


# --- reference side ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyPoint:
    """One frozen key point of a reference segment (App A.3, M2)."""

    qid: str
    point: str
    source: str = ""  # evidence channel, e.g. "intent", "required_context.visual" (App A.4)
    tiers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ContextItem:
    """A required-context item; ``necessity`` exists on references only."""

    type: str
    description: str
    necessity: str = ""


@dataclass(frozen=True, slots=True)
class ReferenceSegment:
    """A reference demand segment, times in ms local to the final clip (App A.1)."""

    start_ms: int
    end_ms: int
    transcript: str
    structured_intent: str
    required_context: tuple[ContextItem, ...]
    user_in_frame: bool | None  # None for audio-only scenes
    user_gender: str
    user_age_group: str
    key_points: tuple[KeyPoint, ...]


@dataclass(frozen=True, slots=True)
class Annotation:
    """``annotations.<lang>.evaluation_targets`` of a scene."""

    has_demand: bool
    segments: tuple[ReferenceSegment, ...]


@dataclass(frozen=True, slots=True)
class AxisLabel:
    axis: str  # "axis1" .. "axis6"
    code: str  # "1.2"; "" when not assigned
    name: str


@dataclass(frozen=True, slots=True)
class Clip:
    """One user turn: media at ``src``, duration in seconds, assistant replies that follow it."""

    id: str
    src: str
    duration: float
    replies: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scene:
    """One benchmark scene; only the final clip is annotated (App A.1)."""

    scene_id: str
    language: str
    modality: str
    source: str  # "generated" | "human-recorded"
    label: str  # "positive" | "negative"
    clips: tuple[Clip, ...]
    annotations: Mapping[str, Annotation]
    axes: tuple[AxisLabel, ...] = ()
    taxonomy_axes: tuple[AxisLabel, ...] = ()
    negative_reason: str = ""
    negative_signal: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)  # display fields, kept verbatim

    @property
    def is_positive(self) -> bool:
        return self.label == "positive"

    @property
    def final_clip(self) -> Clip:
        return self.clips[-1]

    def annotation(self, language: str = "scene") -> Annotation:
        """The reference used for scoring: the scene's own language by default, or ``en``/``zh``."""
        lang = self.language if language == "scene" else language
        try:
            return self.annotations[lang]
        except KeyError:
            raise SchemaError(f"scene {self.scene_id}: no annotations.{lang}") from None

    def axis_code(self, axis: str) -> str:
        """The category code of ``axis`` (e.g. "axis1" -> "1.2"), "" when not assigned."""
        return next((a.code for a in self.axes if a.axis == axis), "")


# --- prediction side ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PredictedContext:
    type: str
    description: str


@dataclass(frozen=True, slots=True)
class PredictedSegment:
    """A parsed predicted segment. Times are ``None`` when the model gave no usable time."""

    start_ms: int | None
    end_ms: int | None
    transcript: str = ""
    structured_intent: str = ""
    required_context: tuple[PredictedContext, ...] = ()
    user_in_frame: bool | None = None
    user_gender: str | None = None
    user_age_group: str | None = None

    @property
    def has_span(self) -> bool:
        return self.start_ms is not None and self.end_ms is not None


@dataclass(frozen=True, slots=True)
class Prediction:
    """A parsed model output with the list of problems met while reading it."""

    has_demand: bool
    segments: tuple[PredictedSegment, ...] = ()
    issues: tuple[str, ...] = ()
    parse_error: bool = False  # no usable JSON: scored as no demand, no segments
    no_output: bool = False  # the scene had no model output at all


# --- reading scene records ----------------------------------------------------------------------


def _req(rec: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in rec:
        raise SchemaError(f"{where}: missing field {key!r}")
    return rec[key]


def _str(rec: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = rec.get(key, default) if default is not None else _req(rec, key, where)
    if value is None and default is not None:
        value = default
    if not isinstance(value, str):
        raise SchemaError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    return value


def _int_ms(rec: Mapping[str, Any], key: str, where: str) -> int:
    value = _req(rec, key, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise SchemaError(f"{where}: field {key!r} must be milliseconds, got {_short(value)}")
    if not -MAX_TIME_MS < value < MAX_TIME_MS:  # also ±Infinity (1e400 in JSON)
        raise SchemaError(f"{where}: field {key!r} is {_short(value)} ms, not under MAX_TIME_MS = {MAX_TIME_MS} (24 h)")
    return int(round(value))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SchemaError(f"{where}: must be an object, got {type(value).__name__} {_short(value)}")
    return value


def check_tree(rec: Any, where: str, *, text: bool = False) -> None:
    """Raise :class:`SchemaError` naming the field when ``rec`` nests deeper than
    :data:`~odu.io.jsonio.MAX_RECORD_DEPTH` or, with ``text``, holds a string (or key) with a lone
    surrogate, which has no UTF-8 form. Scoring takes such text (files get
    :data:`odu.io.jsonio.SURROGATE_RULE`); a release refuses it (:mod:`odu.data.release`), since the
    rule would alter its reference. The common case costs one C-level encoding; the walk that names
    the field is iterative: no recursion on hostile nesting."""
    try:
        dumped = json.dumps(rec, ensure_ascii=False, default=repr)
        if not nests_too_deep(rec, dumped):
            if text:
                dumped.encode("utf-8")
            return
    except (RecursionError, UnicodeEncodeError, ValueError, TypeError):
        pass  # the walk below names the field (or finds that a key type was the trouble: fine)
    stack: list[tuple[Any, str, int]] = [(rec, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if text and _has_surrogate(value):
                raise SchemaError(f"{where}: field {path.lstrip('.')!r} holds a lone surrogate (not UTF-8 text)")
            continue
        if not isinstance(value, (Mapping, list, tuple)):
            continue
        if depth > MAX_RECORD_DEPTH:
            raise SchemaError(
                f"{where}: field {path.lstrip('.')!r} nests deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}"
            )
        if isinstance(value, Mapping):
            for key, item in value.items():  # the key is checked first: it names its item's field
                stack.append((item, f"{path}.{key}", depth + 1))
                stack.append((key, f"{path}.{key!r} (a key)", depth))
        else:
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))


def _list(rec: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = rec.get(key) or []
    if not isinstance(value, list):
        raise SchemaError(f"{where}: field {key!r} must be a list")
    return value


def _axes(raw: Any, where: str) -> tuple[AxisLabel, ...]:
    if not isinstance(raw, list):
        raise SchemaError(f"{where}: must be a list of axis labels")
    out = []
    for i, a in enumerate(raw):
        w = f"{where}[{i}]"
        if not isinstance(a, Mapping):
            raise SchemaError(f"{w}: must be an object")
        out.append(AxisLabel(_str(a, "axis", w), _str(a, "code", w, ""), _str(a, "name", w, "")))
    return tuple(out)


def _segment(raw: Any, where: str, modality: str) -> ReferenceSegment:
    if not isinstance(raw, Mapping):
        raise SchemaError(f"{where}: must be an object")
    start, end = _int_ms(raw, "start_ms", where), _int_ms(raw, "end_ms", where)
    if start < 0 or end < start:
        raise SchemaError(f"{where}: invalid span {start}-{end} ms")
    context = []
    for i, c in enumerate(_list(raw, "required_context", where)):
        w = f"{where}.required_context[{i}]"
        c = _object(c, w)
        context.append(ContextItem(_str(c, "type", w), _str(c, "description", w, ""), _str(c, "necessity", w, "")))
    points = []
    for i, k in enumerate(_list(raw, "key_points", where)):
        w = f"{where}.key_points[{i}]"
        k = _object(k, w)
        tiers = k.get("tiers") or []
        if not isinstance(tiers, list) or not all(isinstance(t, str) for t in tiers):
            raise SchemaError(f"{w}: field 'tiers' must be a list of strings, got {_short(tiers)}")
        points.append(KeyPoint(_str(k, "qid", w), _str(k, "point", w), _str(k, "source", w, ""), tuple(tiers)))
    if len({p.qid for p in points}) != len(points):
        raise SchemaError(f"{where}: duplicate key-point qid")
    in_frame = raw.get("user_in_frame")
    if modality == AUDIO_ONLY:
        in_frame = None
    elif not isinstance(in_frame, bool):
        raise SchemaError(f"{where}: audio-visual segment needs boolean 'user_in_frame'")
    return ReferenceSegment(
        start_ms=start,
        end_ms=end,
        transcript=_str(raw, "transcript", where, ""),
        structured_intent=_str(raw, "structured_intent", where, ""),
        required_context=tuple(context),
        user_in_frame=in_frame,
        user_gender=_str(raw, "user_gender", where, "unknown"),
        user_age_group=_str(raw, "user_age_group", where, "unknown"),
        key_points=tuple(points),
    )


def _annotation(raw: Any, where: str, modality: str) -> Annotation:
    targets = raw.get("evaluation_targets") if isinstance(raw, Mapping) else None
    if not isinstance(targets, Mapping):
        raise SchemaError(f"{where}: missing 'evaluation_targets'")
    where = f"{where}.evaluation_targets"
    has_demand = _req(targets, "has_demand", where)
    if not isinstance(has_demand, bool):
        raise SchemaError(f"{where}: 'has_demand' must be a boolean")
    segs = tuple(
        _segment(s, f"{where}.segments[{i}]", modality) for i, s in enumerate(_list(targets, "segments", where))
    )
    if has_demand != bool(segs):
        raise SchemaError(f"{where}: has_demand={has_demand} but {len(segs)} segment(s)")
    return Annotation(has_demand, segs)


#: The release record's own fields (a scene's other keys are display fields, kept in ``extra``).
SCENE_FIELDS: tuple[str, ...] = ("scene_id", "language", "modality", "source", "label")
RECORD_FIELDS = frozenset(
    {*SCENE_FIELDS, "axes", "taxonomy_axes", "negative_reason", "negative_signal", "annotations", "clips"}
)


def _wanted_annotations(
    raw: Mapping[str, Any], own: str, annotation_language: str | None, where: str
) -> Mapping[str, Any]:
    """The annotation blocks to build: all of them, or only the one scoring reads (``"scene"``: the
    scene's own language; ``"en"`` / ``"zh"``)."""
    if own not in raw:
        raise SchemaError(f"{where}: no annotations for its own language {own!r}")
    if annotation_language is None:
        return raw
    lang = own if annotation_language == "scene" else annotation_language
    if lang not in raw:
        raise SchemaError(f"{where}: no annotations.{lang}")
    return {lang: raw[lang]}


def scene_from_dict(
    rec: Mapping[str, Any], index: int | None = None, annotation_language: str | None = None, *, read: bool = False
) -> Scene:
    """Build a :class:`Scene` from one release record, raising :class:`SchemaError` on bad input.

    ``annotation_language`` (``"scene"``, ``"en"``, ``"zh"``) builds and checks only the reference
    that scoring in that language reads (:meth:`Scene.annotation`); None builds every language.
    ``read``: the record is one that :mod:`odu.io.jsonio`'s reader decoded (JSON types only, nesting
    already checked against :data:`~odu.io.jsonio.MAX_RECORD_DEPTH`), so :func:`check_tree` is not run
    again on it (its encoding cost a tenth of scoring a file: ``bench_scoring.py``).
    """
    if not isinstance(rec, Mapping):
        raise SchemaError(f"record {index}: must be a JSON object")
    sid = rec.get("scene_id")
    if not isinstance(sid, str) or not sid:
        raise SchemaError(f"record {index}: missing field 'scene_id'")
    where = f"scene {sid}"
    if not read:
        check_tree(rec, where)
    modality = _str(rec, "modality", where)
    if modality not in MODALITIES:
        raise SchemaError(f"{where}: modality {modality!r} is not one of {MODALITIES}")
    language = _str(rec, "language", where)
    label = _str(rec, "label", where)
    if label not in ("positive", "negative"):
        raise SchemaError(f"{where}: label {label!r} is not positive/negative")
    raw_ann = _req(rec, "annotations", where)
    if not isinstance(raw_ann, Mapping) or not raw_ann:
        raise SchemaError(f"{where}: 'annotations' must map language -> annotation")
    wanted = _wanted_annotations(raw_ann, language, annotation_language, where)
    annotations = {lang: _annotation(a, f"{where}: annotations.{lang}", modality) for lang, a in wanted.items()}
    for lang, ann in annotations.items():
        if ann.has_demand != (label == "positive"):
            raise SchemaError(f"{where}: label {label} disagrees with annotations.{lang}.has_demand")
    clips = []
    for i, c in enumerate(_list(rec, "clips", where)):
        w = f"{where}: clips[{i}]"
        if not isinstance(c, Mapping):
            raise SchemaError(f"{w}: must be an object")
        dur = _req(c, "duration", w)
        if isinstance(dur, bool) or not isinstance(dur, (int, float)) or not 0 < dur < MAX_TIME_MS / 1000:
            raise SchemaError(
                f"{w}: 'duration' must be positive seconds under MAX_TIME_MS = {MAX_TIME_MS} ms, got {_short(dur)}"
            )
        replies = _list(c, "replies", w)
        if not all(isinstance(r, str) for r in replies):
            raise SchemaError(f"{w}: 'replies' must be strings")
        clips.append(Clip(_str(c, "id", w), _str(c, "src", w, ""), float(dur), tuple(replies)))
    if not clips:
        raise SchemaError(f"{where}: no clips")
    return Scene(
        scene_id=sid,
        language=language,
        modality=modality,
        source=_str(rec, "source", where, ""),
        label=label,
        clips=tuple(clips),
        annotations=annotations,
        axes=_axes(rec.get("axes") or [], f"{where}: axes"),
        taxonomy_axes=_axes(rec.get("taxonomy_axes") or [], f"{where}: taxonomy_axes"),
        negative_reason=_str(rec, "negative_reason", where, ""),
        negative_signal=_str(rec, "negative_signal", where, ""),
        extra={k: v for k, v in rec.items() if k not in RECORD_FIELDS},
    )


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def scene_to_dict(scene: Scene) -> dict[str, Any]:
    """The release-schema record of ``scene`` (inverse of :func:`scene_from_dict`)."""

    def segment(g: ReferenceSegment) -> dict[str, Any]:
        out: dict[str, Any] = {
            "start_ms": g.start_ms,
            "end_ms": g.end_ms,
            "transcript": g.transcript,
            "structured_intent": g.structured_intent,
            "required_context": [
                {"type": c.type, "description": c.description, "necessity": c.necessity} for c in g.required_context
            ],
        }
        if g.user_in_frame is not None:
            out["user_in_frame"] = g.user_in_frame
        out |= {
            "user_gender": g.user_gender,
            "user_age_group": g.user_age_group,
            "key_points": [
                {"qid": k.qid, "point": k.point, "source": k.source, "tiers": list(k.tiers)} for k in g.key_points
            ],
        }
        return out

    def axes(labels: tuple[AxisLabel, ...]) -> list[dict[str, str]]:
        return [{"axis": a.axis, "code": a.code, "name": a.name} for a in labels]

    return {
        "scene_id": scene.scene_id,
        "language": scene.language,
        "modality": scene.modality,
        "source": scene.source,
        "label": scene.label,
        "axes": axes(scene.axes),
        "taxonomy_axes": axes(scene.taxonomy_axes),
        "negative_reason": scene.negative_reason,
        "negative_signal": scene.negative_signal,
        "annotations": {
            lang: {"evaluation_targets": {"has_demand": a.has_demand, "segments": [segment(g) for g in a.segments]}}
            for lang, a in scene.annotations.items()
        },
        "clips": [{"id": c.id, "src": c.src, "duration": c.duration, "replies": list(c.replies)} for c in scene.clips],
        **scene.extra,
    }


_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _sha256_json(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (keys sorted, no spaces, UTF-8 by :func:`odu.io.jsonio.encode`)."""
    return hashlib.sha256(encode(_CANONICAL.encode(value))).hexdigest()


def content_hashes(scene: Scene, annotation_language: str = "scene") -> tuple[str, str]:
    """``(scene_sha256, reference_sha256)`` of ``scene`` scored against ``annotation_language``: the
    scene as a model sees it and as it is labelled (its record, :func:`scene_to_dict`, without the
    references and the display fields) and the reference it is scored against (its language and
    evaluation targets), each over canonical JSON. Two runs that hold a scene id with different
    hashes scored different content under it (``odu-bench report`` refuses to pair them)."""
    language = scene.language if annotation_language == "scene" else annotation_language
    scene.annotation(language)  # SchemaError naming the scene when it has no such reference
    record = scene_to_dict(scene)
    reference = {language: record.pop("annotations")[language]}
    for key in scene.extra:
        del record[key]
    return _sha256_json(record), _sha256_json(reference)


def iter_json_records(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, record) of a JSON array file or a JSONL file, read one record at a time
    (:func:`odu.io.jsonio.iter_records`: lines split on ``"\\n"`` only); :class:`SchemaError` names the
    file and line of anything unreadable."""
    try:
        yield from iter_records(path)
    except JsonFileError as exc:
        raise SchemaError(str(exc)) from None
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read ({exc.strerror or exc})") from None


def read_json_records(path: str | Path) -> list[Any]:
    """Records from a JSON array file or a JSONL file (blank lines skipped), as a list."""
    return [record for _, record in iter_json_records(path)]


def read_predictions(path: str | Path) -> dict[str, str | None]:
    """``{"scene_id": ..., "output": "<raw model text>"}`` JSONL rows -> outputs by scene id.

    Raises :class:`SchemaError` naming the row for a missing id, a missing or non-text output (a
    scene with no output has ``"output": null``, or no row) or a duplicate.
    """
    outputs: dict[str, str | None] = {}
    for n, (_, row) in enumerate(iter_json_records(path), 1):
        where = f"{path}: row {n}"
        if not isinstance(row, dict) or not isinstance(row.get("scene_id"), str):
            raise SchemaError(f"{where}: needs a string 'scene_id'")
        sid, output = row["scene_id"], row.get("output")
        if "output" not in row:
            raise SchemaError(f"{where} (scene {sid}): missing 'output' (the raw model text; null for no output)")
        if output is not None and not isinstance(output, str):
            raise SchemaError(f"{where} (scene {sid}): 'output' must be a string or null")
        if sid in outputs:
            raise SchemaError(f"{where}: duplicate prediction for scene {sid}")
        outputs[sid] = output
    return outputs


def iter_scenes(
    source: str | Path | Iterable[Mapping[str, Any]], annotation_language: str | None = None
) -> Iterator[Scene]:
    """Scenes from a JSON array / JSONL path (streamed: one record in memory at a time) or from
    already-decoded records; ids must be unique. ``annotation_language``: see :func:`scene_from_dict`."""
    read = isinstance(source, (str, Path))
    records: Iterable[Mapping[str, Any]] = (
        (r for _, r in iter_json_records(source)) if isinstance(source, (str, Path)) else source
    )
    seen: set[str] = set()
    for i, record in enumerate(records):
        scene = scene_from_dict(record, i, annotation_language, read=read)
        if scene.scene_id in seen:
            raise SchemaError(f"scene {scene.scene_id}: duplicate scene_id")
        seen.add(scene.scene_id)
        yield scene


def load_scenes(
    source: str | Path | Iterable[Mapping[str, Any]], annotation_language: str | None = None
) -> list[Scene]:
    """Scenes from a JSON array / JSONL path or from already-decoded records, as a list (:func:`iter_scenes`)."""
    return list(iter_scenes(source, annotation_language))


def iter_modalities(scenes: Iterable[Scene]) -> Iterator[str]:
    """Modalities present, in the fixed reporting order (audio-visual first)."""
    present = {s.modality for s in scenes}
    return (m for m in (AUDIO_VISUAL, AUDIO_ONLY) if m in present)


__all__ = [
    "LANGUAGES",
    "RECORD_FIELDS",
    "SCENE_FIELDS",
    "Annotation",
    "AxisLabel",
    "Clip",
    "ContextItem",
    "KeyPoint",
    "PredictedContext",
    "PredictedSegment",
    "Prediction",
    "ReferenceSegment",
    "Scene",
    "SchemaError",
    "check_tree",
    "content_hashes",
    "iter_json_records",
    "iter_modalities",
    "iter_scenes",
    "load_scenes",
    "read_json_records",
    "read_predictions",
    "scene_from_dict",
    "scene_to_dict",
]
