"""Finding a request's media: clip references -> lazily decoded clips, and files when a path is needed.

Requests carry clip hashes only (:mod:`.base`); the lm-eval docs carry a *locator* naming the
prepared dataset (path or Hub repo, config, revision) and the row. :class:`DatasetClips` opens that
dataset once (``datasets`` memory-maps it) and reads a row only when a backend sends its scene,
checking every clip against the hash the request was built with. :func:`spool_clip` writes a
clip to a content-addressed file for backends that take paths (``file://`` URLs, local models).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.prompts import ClipRef
from ..data.media import LazyClip, MediaError, video_track_only
from ..io.cache import cache_dir
from ..io.files import is_sha256


def locator(source: str | os.PathLike[str], config: str, row: int, revision: str | None = None) -> str:
    """The JSON locator of one dataset row, as stored in a doc's ``media`` field."""
    return json.dumps({"dataset": str(source), "config": config, "revision": revision, "row": row}, sort_keys=True)


def read_locator(where: str | Mapping[str, Any]) -> dict[str, Any]:
    """The locator ``where`` holds (its JSON text or the object); ``ValueError`` saying what a
    locator is when it is not one."""
    try:
        loc = json.loads(where) if isinstance(where, str) else where
    except ValueError:
        loc = None
    if (
        not isinstance(loc, Mapping)
        or not isinstance(loc.get("dataset"), str)
        or not isinstance(loc.get("config"), str)
        or not isinstance(loc.get("revision"), (str, type(None)))
        or type(loc.get("row")) is not int
        or loc["row"] < 0
    ):
        raise ValueError(
            'is not a media locator (a JSON object {"dataset": text, "config": text, "revision": text or '
            f'null, "row": a row number}}), got {str(where)[:80]!r}'
        )
    return dict(loc)


class DatasetClips:
    """Loads clips of prepared-dataset rows by locator; thread-safe, one open dataset per locator."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._datasets: dict[tuple[str, str, str | None], Any] = {}

    def _dataset(self, source: str, config: str, revision: str | None) -> Any:
        key = (source, config, revision)
        with self._lock:
            if key not in self._datasets:
                from ..data.hub import load_split  # the one loader: a card may not point outside its folder

                self._datasets[key] = load_split(source, config, revision)
            return self._datasets[key]

    def load(self, where: str | Mapping[str, Any], scene_id: str, ref: ClipRef) -> LazyClip:
        """Clip ``ref`` of the row at ``where``; :class:`MediaError` names scene and clip on any mismatch."""
        try:
            loc = read_locator(where)
            row = self._dataset(loc["dataset"], loc["config"], loc.get("revision"))[int(loc["row"])]
        except (KeyError, IndexError, OSError, ValueError) as exc:
            raise MediaError(f"scene {scene_id} clip {ref.id}: cannot read its dataset row ({exc})") from None
        if row["scene_id"] != scene_id:
            raise MediaError(f"scene {scene_id} clip {ref.id}: dataset row {loc['row']} holds scene {row['scene_id']}")
        users = [t for t in row["turns"] if t["role"] == "user"]
        if ref.index >= len(users) or users[ref.index]["clip_id"] != ref.id:
            raise MediaError(f"scene {scene_id} clip {ref.id}: not clip {ref.index + 1} of its dataset row")
        turn = users[ref.index]
        if turn["sha256"] != ref.sha256:
            raise MediaError(f"scene {scene_id} clip {ref.id}: media differs from the request (dataset changed?)")
        return LazyClip(turn["media"]["bytes"], duration=turn["duration"])


def media_type(clip: LazyClip) -> tuple[str, str]:
    """``(MIME type, file suffix)`` of a clip from its container header (no decoding)."""
    info = clip.info
    names = set(info.container.split(","))
    if "wav" in names:
        return "audio/wav", ".wav"
    if "flac" in names:
        return "audio/flac", ".flac"
    if "mp3" in names:
        return "audio/mpeg", ".mp3"
    if "ogg" in names:
        return "audio/ogg", ".ogg"
    if "webm" in names or "matroska" in names:
        return ("video/webm", ".webm") if info.has_video else ("audio/webm", ".webm")
    if "mp4" in names or "mov" in names:
        return ("video/mp4", ".mp4") if info.has_video else ("audio/mp4", ".m4a")
    return ("video/mp4", ".mp4") if info.has_video else ("audio/wav", ".wav")


def _wav(samples: Any, sample_rate: int) -> bytes:
    """Mono ``samples`` at ``sample_rate`` as a 16-bit PCM WAV file."""
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, samples, sample_rate, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def wav_bytes(clip: LazyClip, sample_rate: int) -> bytes:
    """The clip's audio, mono at ``sample_rate``, as a 16-bit PCM WAV file (for APIs that take few codecs)."""
    return _wav(clip.audio(sample_rate), sample_rate)


def joined_wav_bytes(clips: Sequence[LazyClip], sample_rate: int, gap_s: float) -> bytes:
    """The clips' audio one after another, ``gap_s`` of silence between, mono at ``sample_rate``, as one 16-bit
    PCM WAV file (for a model that takes one audio per prompt)."""
    import numpy as np

    gap = np.zeros(round(gap_s * sample_rate), np.float32)
    pieces = [piece for clip in clips for piece in (gap, clip.audio(sample_rate))][1:]
    return _wav(np.concatenate(pieces), sample_rate)


def media_cache() -> Path:
    """The folder clips are spooled into (``<cache>/media``; what the clip server serves from)."""
    return cache_dir() / "media"


def spool_clip(
    clip: LazyClip,
    sha256: str,
    directory: Path | None = None,
    *,
    video_only: bool = False,
    wav_rate: int | None = None,
    in_cache: bool = False,
) -> Path:
    """``clip`` as a file named by its hash (``<cache>/media/<sha256><suffix>``), written once (an
    entry of that name that is not a regular file, a link say, is replaced); ``video_only``: its video
    stream alone, the sound track left out (``<sha256>.video<suffix>``,
    :func:`odu.data.media.video_track_only`); ``wav_rate``: its sound track alone, mono 16-bit PCM WAV
    at that rate (``<sha256>.<rate>.wav``, :func:`wav_bytes`); ``in_cache``: in the folder even when
    the clip is a file elsewhere. :class:`MediaError` unless ``sha256`` is a SHA-256 (it names the file)."""
    if not is_sha256(sha256):  # the file's name: never a path such as ../../x
        raise MediaError(f"clip hash {sha256[:80]!r} is not a SHA-256 (64 hex digits); it names no file")
    if clip.path is not None and not video_only and wav_rate is None and not in_cache:
        return clip.path
    folder = directory or media_cache()
    folder.mkdir(parents=True, exist_ok=True)
    if wav_rate is not None:
        path = folder / f"{sha256}.{wav_rate}.wav"
    else:
        path = folder / f"{sha256}{'.video' if video_only else ''}{media_type(clip)[1]}"
    if not path.is_file() or path.is_symlink():
        if wav_rate is not None:
            data = wav_bytes(clip, wav_rate)
        else:
            data = video_track_only(clip.path or clip.bytes) if video_only else clip.bytes
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".spool-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)  # atomic: concurrent writers leave one complete file
    return path


__all__ = [
    "DatasetClips",
    "joined_wav_bytes",
    "locator",
    "media_cache",
    "media_type",
    "read_locator",
    "spool_clip",
    "wav_bytes",
]
