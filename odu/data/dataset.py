"""ODU-Bench as a Hugging Face dataset: features, configs, record <-> row, lazy media.

One row is one scene. Its columns keep the release record (``odu.core.schema``) field for field, so
that :func:`row_to_record` gives back the record :func:`odu.core.schema.scene_from_dict` reads:

* scene fields: ``scene_id``, ``language``, ``modality``, ``source`` (generated /
  human-recorded), ``label`` (positive / negative);
* taxonomy: ``axes`` (axes 1-6, App B.2), ``taxonomy_axes`` (the four challenge axes),
  ``negative_reason`` and ``negative_signal`` (App B.3);
* ``turns`` in order (App D.1): a ``user`` turn per clip, with ``media`` ``{bytes, path}`` (the
  clip's file, embedded; ``path`` is its release ``src``), ``duration`` (s) and ``sha256`` of the
  bytes; an ``assistant`` turn per reply, with ``text``. The last user turn is the annotated clip;
* ``annotations``: ``en`` and ``zh`` references (``evaluation_targets`` of the release), segments
  with required context and key points (``qid``, ``point``, ``source``, ``tiers``);
* ``extra_json``: the record's display fields (title, summary, ...) as JSON, kept verbatim.

Media is a plain struct, not ``datasets.Audio``/``Video`` (which need torch + torchcodec):
:func:`with_lazy_media` (a ``with_transform``) or :func:`row_clips` wrap clips into
:class:`odu.data.media.LazyClip`, decoded with PyAV / soundfile only on access. When torchcodec is
installed, :func:`cast_media` lets ``datasets`` decode them instead.

``datasets`` is imported inside functions only (the core must import without it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.constants import AUDIO_ONLY, AUDIO_VISUAL, LANGUAGES
from ..core.schema import RECORD_FIELDS, SCENE_FIELDS, Scene, scene_from_dict, scene_to_dict

if TYPE_CHECKING:  # pragma: no cover
    import datasets

    from .media import LazyClip

T = TypeVar("T")

#: The only split of the benchmark.
SPLIT = "test"

MODALITY_CODES: dict[str, str] = {AUDIO_VISUAL: "av", AUDIO_ONLY: "ao"}
LABEL_CODES: dict[str, str] = {"positive": "pos", "negative": "neg"}

USER, ASSISTANT = "user", "assistant"

_CLIP_FIELDS = frozenset({"id", "src", "duration", "replies"})


# --- configs ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DatasetConfig:
    """A subset of the benchmark: scenes of one modality, language and/or label (``None``: any)."""

    name: str
    modality: str | None = None
    language: str | None = None
    label: str | None = None

    def includes(self, scene: Scene) -> bool:
        return (
            (self.modality is None or scene.modality == self.modality)
            and (self.language is None or scene.language == self.language)
            and (self.label is None or scene.label == self.label)
        )

    @property
    def leaves(self) -> tuple[str, ...]:
        """The single-modality/language/label configs whose union this config is, in order."""
        return tuple(leaf.name for leaf in LEAF_CONFIGS if self.covers(leaf))

    def covers(self, other: DatasetConfig) -> bool:
        return all(
            mine is None or mine == theirs
            for mine, theirs in (
                (self.modality, other.modality),
                (self.language, other.language),
                (self.label, other.label),
            )
        )

    @property
    def description(self) -> str:
        if self.modality is None:
            return "All scenes: both modalities, both languages, positives and negatives."
        parts = [self.modality]
        parts.append({"en": "English", "zh": "Mandarin"}[self.language] if self.language else "both languages pooled")
        parts.append(
            {"positive": "positive (demand) scenes only", "negative": "negative (no-demand) scenes only"}.get(
                self.label or "", "positives and negatives"
            )
        )
        note = " (the paper's reporting unit)" if self.language is None and self.label is None else ""
        return ", ".join(parts) + note + "."


def _config(modality: str | None, language: str | None, label: str | None) -> DatasetConfig:
    parts = [MODALITY_CODES[modality]] if modality else ["all"]
    parts += [language] if language else []
    parts += [LABEL_CODES[label]] if label else []
    return DatasetConfig("_".join(parts), modality, language, label)


_LABELS = tuple(LABEL_CODES)
LEAF_CONFIGS: tuple[DatasetConfig, ...] = tuple(
    _config(m, lang, lab) for m in MODALITY_CODES for lang in LANGUAGES for lab in _LABELS
)
#: Every config, the default (``all``) first: both modalities, then per modality pooled over
#: languages (the paper's reporting unit), per modality and language, and each as _pos / _neg.
CONFIGS: tuple[DatasetConfig, ...] = (
    _config(None, None, None),
    *(_config(m, None, None) for m in MODALITY_CODES),
    *(_config(m, lang, None) for m in MODALITY_CODES for lang in LANGUAGES),
    *(_config(m, None, lab) for m in MODALITY_CODES for lab in _LABELS),
    *LEAF_CONFIGS,
)
DEFAULT_CONFIG = CONFIGS[0].name
CONFIG_NAMES: tuple[str, ...] = tuple(c.name for c in CONFIGS)


def get_config(name: str) -> DatasetConfig:
    """The config called ``name``; :class:`KeyError` lists the valid names.

    >>> get_config("av_en").leaves
    ('av_en_pos', 'av_en_neg')
    >>> get_config("ao").description
    "audio-only, both languages pooled, positives and negatives (the paper's reporting unit)."
    """
    for config in CONFIGS:
        if config.name == name:
            return config
    raise KeyError(f"unknown ODU-Bench config {name!r}; choose one of {', '.join(CONFIG_NAMES)}")


def leaf_config(scene: Scene) -> str:
    """The name of the single leaf config holding ``scene``."""
    return f"{MODALITY_CODES[scene.modality]}_{scene.language}_{LABEL_CODES[scene.label]}"


# --- features ----------------------------------------------------------------------------------------


def features() -> datasets.Features:
    """The explicit ``datasets.Features`` of a scene row (see the module docstring)."""
    from datasets import Features, List, Value

    text = Value("string")
    axis = {"axis": text, "code": text, "name": text}
    key_point = {"qid": text, "point": text, "source": text, "tiers": List(text)}
    context = {"type": text, "description": text, "necessity": text}
    segment = {
        "start_ms": Value("int64"),
        "end_ms": Value("int64"),
        "transcript": text,
        "structured_intent": text,
        "required_context": List(context),
        "user_in_frame": Value("bool"),  # null for audio-only scenes
        "user_gender": text,
        "user_age_group": text,
        "key_points": List(key_point),
    }
    annotation = {"has_demand": Value("bool"), "segments": List(segment)}
    turn = {
        "role": text,  # "user" | "assistant"
        "clip_id": text,
        "media": {"bytes": Value("binary"), "path": text},
        "duration": Value("float64"),
        "sha256": text,
        "text": text,
        "extra_json": text,
    }
    return Features(
        {
            **{name: text for name in SCENE_FIELDS},
            "axes": List(axis),
            "taxonomy_axes": List(axis),
            "negative_reason": text,
            "negative_signal": text,
            "turns": List(turn),
            "annotations": {lang: annotation for lang in LANGUAGES},
            "extra_json": text,
        }
    )


# --- record <-> row ------------------------------------------------------------------------------------


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dump(value: Mapping[str, Any]) -> str | None:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) if value else None


def _load(text: str | None) -> dict[str, Any]:
    return json.loads(text) if text else {}


def record_to_row(record: Mapping[str, Any], media: Sequence[bytes]) -> dict[str, Any]:
    """The dataset row of a release record, ``media`` holding each clip's file bytes in order.

    The record goes through :func:`odu.core.schema.scene_from_dict` (so a bad record raises its
    :class:`~odu.core.schema.SchemaError`); clip fields the schema does not know are kept per turn.
    """
    scene = scene_from_dict(record)
    if len(media) != len(scene.clips):
        raise ValueError(f"scene {scene.scene_id}: {len(scene.clips)} clip(s) but {len(media)} media file(s)")
    canon = scene_to_dict(scene)
    turns: list[dict[str, Any]] = []
    for clip, raw, data in zip(scene.clips, record["clips"], media):
        extras = {k: v for k, v in raw.items() if k not in _CLIP_FIELDS}
        turns.append(
            _turn(
                USER,
                clip_id=clip.id,
                media={"bytes": bytes(data), "path": clip.src},
                duration=clip.duration,
                sha256=sha256_hex(data),
                extra_json=_dump(extras),
            )
        )
        turns.extend(_turn(ASSISTANT, text=reply) for reply in clip.replies)
    annotations = {
        lang: _annotation_row(canon["annotations"][lang]["evaluation_targets"])
        if lang in canon["annotations"]
        else None
        for lang in LANGUAGES
    }
    extra = {k: v for k, v in canon.items() if k not in RECORD_FIELDS}
    return {
        **{name: canon[name] for name in SCENE_FIELDS},
        "axes": canon["axes"],
        "taxonomy_axes": canon["taxonomy_axes"],
        "negative_reason": canon["negative_reason"],
        "negative_signal": canon["negative_signal"],
        "turns": turns,
        "annotations": annotations,
        "extra_json": _dump(extra),
    }


def _turn(role: str, **fields: Any) -> dict[str, Any]:
    return {
        "role": role,
        "clip_id": None,
        "media": None,
        "duration": None,
        "sha256": None,
        "text": None,
        "extra_json": None,
        **fields,
    }


def _annotation_row(targets: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "has_demand": targets["has_demand"],
        "segments": [{**segment, "user_in_frame": segment.get("user_in_frame")} for segment in targets["segments"]],
    }


def row_to_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """The release record of a dataset row (inverse of :func:`record_to_row`); works on lazy rows too."""
    clips: list[dict[str, Any]] = []
    for i, turn in enumerate(row["turns"]):
        if turn["role"] == USER:
            clips.append(
                {
                    "id": turn["clip_id"],
                    "src": _media_path(turn),
                    "duration": turn["duration"],
                    "replies": [],
                    **_load(turn["extra_json"]),
                }
            )
        elif turn["role"] == ASSISTANT and clips:
            clips[-1]["replies"].append(turn["text"])
        else:
            raise ValueError(f"scene {row['scene_id']}: turns[{i}] has role {turn['role']!r} before any user clip")
    annotations = {
        lang: {
            "evaluation_targets": {
                "has_demand": ann["has_demand"],
                "segments": [_segment_record(s) for s in ann["segments"]],
            }
        }
        for lang, ann in row["annotations"].items()
        if ann is not None
    }
    return {
        **{name: row[name] for name in SCENE_FIELDS},
        "axes": [dict(a) for a in row["axes"]],
        "taxonomy_axes": [dict(a) for a in row["taxonomy_axes"]],
        "negative_reason": row["negative_reason"],
        "negative_signal": row["negative_signal"],
        "annotations": annotations,
        "clips": clips,
        **_load(row["extra_json"]),
    }


def _segment_record(segment: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in segment.items() if k != "user_in_frame" or v is not None}
    out["required_context"] = [dict(c) for c in segment["required_context"]]
    out["key_points"] = [{**k, "tiers": list(k["tiers"])} for k in segment["key_points"]]
    return out


def rows_without_media(ds: datasets.Dataset) -> list[dict[str, Any]]:
    """The dataset's rows as plain dicts, each user turn's ``media`` reduced to ``{"path"}``: read
    column by column from the Arrow table, so media bytes are never copied (lm-eval docs keep
    only a locator; models read the bytes when they send a scene)."""
    import pyarrow.compute as pc

    table = ds.with_format("arrow")[:]
    rows = table.drop_columns(["turns"]).to_pylist()
    turns: list[list[dict[str, Any]]] = []
    names = ("role", "clip_id", "duration", "sha256", "text", "extra_json")
    for chunk in table.column("turns").chunks:
        flat = chunk.flatten()
        columns = {n: flat.field(n).to_pylist() for n in names}
        paths = flat.field("media").field("path").to_pylist()
        start = 0
        for length in pc.list_value_length(chunk).to_pylist():
            turns.append(
                [
                    {
                        **{n: columns[n][j] for n in names},
                        "media": {"path": paths[j]} if columns["role"][j] == "user" else None,
                    }
                    for j in range(start, start + (length or 0))
                ]
            )
            start += length or 0
    for row, row_turns in zip(rows, turns):
        row["turns"] = row_turns
    return rows


def row_to_scene(row: Mapping[str, Any]) -> Scene:
    """The typed :class:`~odu.core.schema.Scene` of a dataset row (what the scorer takes)."""
    return scene_from_dict(row_to_record(row))


def _media_path(turn: Mapping[str, Any]) -> str:
    media = turn["media"]
    return media["path"] if isinstance(media, Mapping) else turn["path"]


# --- lazy media ----------------------------------------------------------------------------------------


def lazy_turn(turn: Mapping[str, Any]) -> dict[str, Any]:
    """A user turn whose ``media`` is a :class:`~odu.data.media.LazyClip` (knowing its duration, so
    reading ``.duration`` decodes nothing) and whose release ``src`` moves to ``path``."""
    from .media import LazyClip

    media = turn["media"]
    if not isinstance(media, Mapping):
        return dict(turn)
    return {**turn, "media": LazyClip(media["bytes"], duration=turn["duration"]), "path": media["path"]}


def row_clips(row: Mapping[str, Any]) -> list[LazyClip]:
    """The user clips of a row, in order, as lazily decoded clips; the last one is annotated."""
    return [lazy_turn(turn)["media"] for turn in row["turns"] if turn["role"] == USER]


def lazy_media_transform(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """``with_transform`` function: every user turn's ``media`` becomes a :class:`~odu.data.media.LazyClip`
    (see :func:`lazy_turn`)."""
    if "turns" in batch:
        batch["turns"] = [
            [lazy_turn(turn) if turn["role"] == USER else turn for turn in turns] for turns in batch["turns"]
        ]
    return batch


def with_lazy_media(dataset: datasets.Dataset) -> datasets.Dataset:
    """``dataset`` whose rows carry :class:`~odu.data.media.LazyClip` media: nothing decodes until a
    clip's ``frames()`` / ``audio()`` is called (see :mod:`odu.data.media`)."""
    return dataset.with_transform(lazy_media_transform)


def media_features(kind: str = "audio", *, sampling_rate: int | None = None, decode: bool = True) -> datasets.Features:
    """:func:`features` with every turn's ``media`` typed ``datasets.Audio`` (MP4 audio tracks and
    WAV alike) or ``datasets.Video``, so that ``datasets`` decodes the clips itself; pass it as
    ``load_dataset(..., features=media_features("video"))`` (no extra copy: the first load writes
    the Arrow cache anyway). Decoding needs torch + torchcodec; ``decode=False`` only relabels."""
    from datasets import Audio, Video

    if kind not in ("audio", "video"):
        raise ValueError(f"media kind must be 'audio' or 'video', got {kind!r}")
    target = features()
    target["turns"].feature["media"] = (
        Audio(sampling_rate=sampling_rate, decode=decode) if kind == "audio" else Video(decode=decode)
    )
    return target


def cast_media(
    dataset: datasets.Dataset, kind: str = "audio", *, sampling_rate: int | None = None, decode: bool = True
) -> datasets.Dataset:
    """An already loaded ``dataset`` with :func:`media_features` (``Dataset.cast`` rewrites its Arrow
    cache; prefer ``features=`` at load time for large splits). ``"video"`` needs audio-visual rows."""
    from datasets import Features

    if kind == "video" and AUDIO_ONLY in set(dataset.unique("modality")):
        raise ValueError("cast_media(kind='video'): the dataset holds audio-only scenes; use kind='audio'")
    target = media_features(kind, sampling_rate=sampling_rate, decode=decode)
    return dataset.cast(Features({name: target[name] for name in dataset.features}))


# --- row order -------------------------------------------------------------------------------------------


def in_config_order(config: str | DatasetConfig, items: Iterable[T], scene_of: Callable[[T], Scene]) -> list[T]:
    """The items of ``config``, in the dataset's row order: leaf config by leaf config
    (``av_en_pos``, ``av_en_neg``, ..., ``ao_zh_neg``), release order within each; the parquet
    layout (one folder per leaf) and the builder both give rows in this order."""
    cfg = get_config(config) if isinstance(config, str) else config
    by_leaf: dict[str, list[T]] = {leaf: [] for leaf in cfg.leaves}
    for item in items:
        scene = scene_of(item)
        if cfg.includes(scene):
            by_leaf[leaf_config(scene)].append(item)
    return [item for leaf in by_leaf.values() for item in leaf]


__all__ = [
    "CONFIGS",
    "CONFIG_NAMES",
    "DEFAULT_CONFIG",
    "LEAF_CONFIGS",
    "SPLIT",
    "DatasetConfig",
    "cast_media",
    "features",
    "get_config",
    "lazy_turn",
    "lazy_media_transform",
    "media_features",
    "leaf_config",
    "record_to_row",
    "row_clips",
    "row_to_record",
    "row_to_scene",
    "rows_without_media",
    "in_config_order",
    "with_lazy_media",
]
