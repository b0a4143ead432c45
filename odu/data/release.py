"""The raw release: scene records (authors' schema) plus the media file of every clip.

A release is a records file (JSON array or JSONL, see :mod:`odu.core.schema`) and media at each clip's
``src``, relative to the records file's folder unless another media root is given. Reading it
checks what the dataset and the scorer rely on:

* every record follows the schema, scene ids are unique (and, in the release's id shape, agree
  with modality, label and source), clip ids are unique within a scene, and the scene's and its
  annotations' languages are ones the dataset carries (``en``, ``zh``);
* every clip's media exists, decodes (:func:`odu.data.media.probe`), has an audio stream (and a video
  stream for audio-visual scenes) and lasts its ``duration`` within
  :data:`MEDIA_DURATION_TOLERANCE_S`;
* reference segments lie inside the final clip (App A.1: times are local to it).

Every problem names its scene and clip. By default all problems are collected and raised together
as a :class:`ReleaseError`; with ``skip_invalid`` the faulty scenes are left out and the problems
are returned in :attr:`Release.problems`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..core.constants import AUDIO_ONLY, AUDIO_VISUAL, LANGUAGES
from ..core.schema import Clip, Scene, SchemaError, check_tree, iter_json_records, scene_from_dict
from ..io.console import ProblemsError
from ..io.jsonio import clean_text
from .dataset import leaf_config

#: Record files looked for, in this order, when a release is given as a directory.
RELEASE_RECORD_FILES: tuple[str, ...] = ("scenes.jsonl", "scenes.json")
#: Our choice: a clip's media may differ from its record ``duration`` by at most this many
#: seconds (container durations drift by about one audio frame, 64 ms for AAC at 16 kHz, and one
#: video frame, 40 ms at 25 fps); reference segments may end at most this far past the final clip.
MEDIA_DURATION_TOLERANCE_S = 0.1


@dataclass(frozen=True, slots=True)
class ReleaseProblem:
    """One reason a scene cannot enter the dataset."""

    scene_id: str  # "record N" when the record has no usable scene_id
    clip_id: str | None
    message: str

    def __str__(self) -> str:
        where = f"scene {self.scene_id}" + (f", clip {self.clip_id}" if self.clip_id else "")
        return f"{where}: {self.message}"


class ReleaseError(ProblemsError):
    """The release has problems; :attr:`problems` lists all of them (one console line each)."""

    problems: list[ReleaseProblem]

    def __init__(self, problems: Sequence[ReleaseProblem]):
        super().__init__(f"{len(problems)} problem(s) in the release:", problems)


@dataclass(frozen=True, slots=True)
class ReleaseScene:
    """A valid scene: its record, kept as compact JSON (``raw``: UTF-8 bytes, what the prepared
    ``scenes.jsonl`` holds) so that a large release costs its file size in memory, not that of its
    decoded objects; its id and leaf config, and its clips' media paths in order."""

    raw: bytes
    scene_id: str
    leaf: str  # the leaf config holding it (odu.data.dataset.leaf_config)
    media_paths: tuple[Path, ...]

    @property
    def record(self) -> dict[str, Any]:
        """The record as read (decoded anew on each access)."""
        return json.loads(self.raw)

    @property
    def scene(self) -> Scene:
        """The typed scene (built anew on each access)."""
        return scene_from_dict(self.record)


@dataclass(slots=True)
class Release:
    """The valid scenes of a release, in record order, and the problems met while reading it."""

    records_path: Path
    media_root: Path
    scenes: list[ReleaseScene]
    problems: list[ReleaseProblem] = field(default_factory=list)

    def __iter__(self) -> Iterator[ReleaseScene]:
        return iter(self.scenes)

    def __len__(self) -> int:
        return len(self.scenes)


def find_records(path: str | Path) -> Path:
    """The records file of a release given as that file or as its directory."""
    path = Path(path)
    if path.is_dir():
        for name in RELEASE_RECORD_FILES:
            if (path / name).is_file():
                return path / name
        raise FileNotFoundError(f"{path}: no release records file (looked for {', '.join(RELEASE_RECORD_FILES)})")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such release records file or directory")
    return path


class MediaPathError(ValueError):
    """A clip's ``src`` leads out of the media root (absolute, ``..`` above it, or a symbolic link
    resolving outside it)."""


def media_path(media_root: Path, src: str, link_root: Path | None = None) -> Path:
    """Where a clip's ``src`` points: ``media_root / src``, which must lie inside ``media_root``.

    ``src`` must be a relative path that stays inside the root, also once symbolic links are
    resolved (in ``src`` or in the root itself), else :class:`MediaPathError`; a release thus never
    reads a host file of its choosing, and no host path reaches the prepared dataset. Media kept
    elsewhere is named explicitly as the root (``odu-bench prepare --media-root DIR``).
    ``link_root`` widens only where links may resolve to (the Hub cache: a snapshot's files are
    links into the repo's ``blobs/`` folder).
    """
    if not src:
        raise MediaPathError("no media path ('src')")
    rel = PurePosixPath(src)
    if rel.is_absolute() or PureWindowsPath(src).drive or PureWindowsPath(src).root:
        raise MediaPathError(f"media path {src!r} is absolute; 'src' must be relative to the media root")
    if ".." in rel.parts and not _inside(Path(os.path.normpath(media_root / rel)), Path(os.path.normpath(media_root))):
        raise MediaPathError(f"media path {src!r} leads out of the media root {media_root}")
    path = media_root / rel
    real_root, real = _resolved(link_root or media_root, src), _resolved(path, src)
    if not _inside(real, real_root):
        raise MediaPathError(
            f"media path {src!r} resolves outside the media root {real_root} (symbolic link to "
            f"{real}); name that folder with --media-root to use it"
        )
    return path


def _resolved(path: Path, src: str) -> Path:
    """``path`` with its links resolved; :class:`MediaPathError` on a link loop."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # RuntimeError: Python < 3.13 on a loop of symbolic links
        raise MediaPathError(f"media path {src!r}: cannot be resolved ({exc})") from None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def read_release(
    path: str | Path,
    media_root: str | Path | None = None,
    *,
    skip_invalid: bool = False,
    check_media: bool = True,
    progress: bool = False,
    link_root: str | Path | None = None,
) -> Release:
    """Read and validate a release (records file or its directory).

    Raises :class:`ReleaseError` listing every problem unless ``skip_invalid``, in which case faulty
    scenes are dropped and their problems kept in :attr:`Release.problems`. ``check_media=False``
    checks the records only (media presence and decoding are not looked at). Every clip's media
    must lie inside the media root (:func:`media_path`; ``link_root``: see there).
    """
    records_path = find_records(path)
    root = Path(media_root) if media_root is not None else records_path.parent
    records = (record for _, record in iter_json_records(records_path))
    link = Path(link_root) if link_root is not None else None
    scenes: list[ReleaseScene] = []
    problems: list[ReleaseProblem] = []
    seen: set[str] = set()
    for index, record in _progress(records, progress, f"checking {records_path.name}"):
        found, scene = _check_record(record, index, root, link, check_media, seen)
        problems.extend(found)
        if scene is not None and not found:
            scenes.append(scene)
    if problems and not skip_invalid:
        raise ReleaseError(problems)
    return Release(records_path, root, scenes, problems)


def fingerprint(path: str | Path, media_root: str | Path | None = None) -> str:
    """A key that changes when the release changes: sha256 of the records file's bytes and of the
    size and modification time of every media file under the media root (as ``datasets`` keys
    local data files), without reading the media."""
    records_path = find_records(path)
    root = Path(media_root) if media_root is not None else records_path.parent
    digest = hashlib.sha256()
    with records_path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    for _, record in iter_json_records(records_path):
        clips = record.get("clips") if isinstance(record, Mapping) else None
        for clip in clips if isinstance(clips, list) else ():
            src = clip.get("src") if isinstance(clip, Mapping) else None
            if not isinstance(src, str) or not src:
                continue
            try:
                stat = media_path(root, src).stat()
                digest.update(f"{src}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
            except (OSError, MediaPathError):
                digest.update(f"{src}\0missing\n".encode())
    return digest.hexdigest()


# --- checks ----------------------------------------------------------------------------------------


def _check_record(
    record: Any, index: int, root: Path, link_root: Path | None, check_media: bool, seen: set[str]
) -> tuple[list[ReleaseProblem], ReleaseScene | None]:
    try:
        scene = scene_from_dict(record, index)
        check_tree(record, f"scene {scene.scene_id}", text=True)  # the reference as written, or refused
    except SchemaError as exc:
        sid = record.get("scene_id") if isinstance(record, Mapping) else None
        sid = sid if isinstance(sid, str) and sid and clean_text(sid) == sid else f"record {index}"
        return [ReleaseProblem(sid, None, _strip_scene_prefix(str(exc), sid))], None
    sid = scene.scene_id
    problems = [ReleaseProblem(sid, clip, message) for clip, message in _scene_problems(scene)]
    if sid in seen:
        problems.append(ReleaseProblem(sid, None, "duplicate scene_id"))
    seen.add(sid)
    paths = []
    for clip in scene.clips:
        try:
            path = media_path(root, clip.src, link_root)
        except MediaPathError as exc:
            problems.append(ReleaseProblem(sid, clip.id, str(exc)))
            continue
        paths.append(path)
        if check_media:
            problems.extend(ReleaseProblem(sid, clip.id, m) for m in clip_media_problems(scene, clip, path))
    raw = json.dumps(record, ensure_ascii=False).encode()
    return problems, ReleaseScene(raw, sid, leaf_config(scene), tuple(paths))


#: Release scene ids: ``{av|ao}{p|n}_{gen|hr}_NNNNNN`` (shared/odu-demo/README.md). Ids of this
#: shape must agree with the scene's modality, label and source; other ids are not checked.
_SCENE_ID = re.compile(r"^(av|ao)(p|n)_(gen|hr)_\d+$")
_ID_PARTS = {
    "av": AUDIO_VISUAL,
    "ao": AUDIO_ONLY,
    "p": "positive",
    "n": "negative",
    "gen": "generated",
    "hr": "human-recorded",
}


def _scene_problems(scene: Scene) -> Iterator[tuple[str | None, str]]:
    if match := _SCENE_ID.match(scene.scene_id):
        said = [_ID_PARTS[part] for part in match.groups()]
        has = [scene.modality, scene.label, scene.source]
        for field, expected, actual in zip(("modality", "label", "source"), said, has):
            if expected != actual:
                yield None, f"the scene id says {field} {expected!r} but the record has {actual!r}"
    if scene.language not in LANGUAGES:
        yield None, f"language {scene.language!r} is not one of {LANGUAGES}"
    for lang in scene.annotations:
        if lang not in LANGUAGES:
            yield None, f"annotations.{lang}: language is not one of {LANGUAGES}"
    ids = [c.id for c in scene.clips]
    for clip_id in sorted({i for i in ids if ids.count(i) > 1}):
        yield clip_id, "duplicate clip id"
    final = scene.final_clip
    limit_ms = (final.duration + MEDIA_DURATION_TOLERANCE_S) * 1000
    for lang, annotation in scene.annotations.items():
        for i, segment in enumerate(annotation.segments):
            if not segment.key_points:
                yield None, f"annotations.{lang}.segments[{i}] has no key_points (M2 scores against them, App A.3)"
            if segment.end_ms > limit_ms:
                yield (
                    final.id,
                    (
                        f"annotations.{lang}.segments[{i}] ends at {segment.end_ms} ms, past the final clip "
                        f"({final.duration:.3f} s)"
                    ),
                )


def clip_media_problems(scene: Scene, clip: Clip, path: Path) -> list[str]:
    """What is wrong with the media file of ``clip`` at ``path`` (empty when it is usable)."""
    from .media import MediaError, probe

    duration = clip.duration
    if not clip.src:
        return ["no media path ('src')"]
    if not path.is_file():
        return [f"media file not found: {path}"]
    try:
        info = probe(path)
    except MediaError as exc:
        return [f"media does not decode: {exc}"]  # MediaError messages start with the path
    problems = []
    if not info.has_audio:
        problems.append(f"media has no audio stream: {path}")
    if scene.modality == AUDIO_VISUAL and not info.has_video:
        problems.append(f"audio-visual clip has no video stream: {path}")
    if info.duration_s is None or abs(info.duration_s - duration) > MEDIA_DURATION_TOLERANCE_S:
        lasts = "an unknown time" if info.duration_s is None else f"{info.duration_s:.3f} s"
        problems.append(
            f"media lasts {lasts} but the record says {duration:.3f} s "
            f"(tolerance {MEDIA_DURATION_TOLERANCE_S} s; truncated or wrong file?): {path}"
        )
    return problems


def _strip_scene_prefix(message: str, sid: str) -> str:
    for prefix in (f"scene {sid}: ", f"{sid}: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def _progress(records: Iterable[Any], enabled: bool, desc: str) -> Iterator[tuple[int, Any]]:
    if not enabled:
        return enumerate(records)
    from tqdm.auto import tqdm

    return enumerate(tqdm(records, desc=desc, unit="scene"))


__all__ = [
    "MEDIA_DURATION_TOLERANCE_S",
    "RELEASE_RECORD_FILES",
    "Release",
    "MediaPathError",
    "ReleaseError",
    "ReleaseProblem",
    "ReleaseScene",
    "clip_media_problems",
    "find_records",
    "fingerprint",
    "media_path",
    "read_release",
]
