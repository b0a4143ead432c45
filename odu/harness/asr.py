"""ASR input of the text-only baseline (App D.2): each clip's sentences with timestamps local to it.

Two sources:

* a sidecar JSONL file, one row per clip:
  ``{"scene_id": ..., "clip": "v1", "sentences": [{"start_ms", "end_ms", "text", "speaker"?}]}``
  (an empty ``sentences`` list means the ASR heard no speech: the block becomes App D.2's
  no-speech notice);
* an OpenAI-compatible ``/audio/transcriptions`` endpoint (Whisper-style servers:
  ``response_format="verbose_json"``, segment timestamps become the sentences). Results are cached
  on disk per model and clip hash (``<cache>/asr/``), so reruns and lm-eval's request cache see the
  same text. The toolkit's one OpenAI client carries the calls (:mod:`odu.transport.openai_client`: retries,
  a refusing server stops the run, the API key comes from an environment variable and is never written).

:class:`AsrInput` is what a text-only task holds: one of the two sources, transcribing only the clips
of the docs lm-eval evaluates.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..core.prompts import AsrSentence, ClipRef
from ..core.schema import read_json_records
from ..data.media import DEFAULT_AUDIO_SAMPLE_RATE, LazyClip
from ..io.cache import cache_dir as odu_cache_dir
from ..io.files import replace_file, sha256_file
from ..io.jsonio import dump_line, read_json
from ..io.scrub import scrub_secrets
from ..models.clips import DatasetClips, wav_bytes
from ..models.providers import provider_of_host
from ..models.remote import MODEL_CONCURRENCY, MODEL_TIMEOUT_S
from ..transport.openai_client import (
    API_KEY_ENV,
    RETRIES,
    CallFailedError,
    CallStats,
    OpenAIClient,
    ServerUnavailableError,
)
from .runcard import RECORDER

#: OpenAI's cap on a transcription upload, the whole multipart body (rule ``openai.transcription-25mb``,
#: docs/providers.md), and the room its form fields and boundaries take besides the file.
OPENAI_TRANSCRIPTION_MAX_BYTES = 26_214_400
TRANSCRIPTION_FORM_ROOM = 4096
#: Transcription models of OpenAI's, whose uploads the cap applies to wherever they are served.
OPENAI_TRANSCRIPTION_MODEL = re.compile(r"^(?:openai/)?(?:whisper-1|gpt-4o.*transcribe)", re.IGNORECASE)

#: (scene_id, clip id) -> sentences of that clip.
AsrTable = dict[tuple[str, str], tuple[AsrSentence, ...]]
#: A clip to transcribe: (scene_id, clip id, sha256 of its media, a function that loads it).
ClipItem = tuple[str, str, str, Callable[[], LazyClip]]


class AsrError(ValueError):
    """ASR input missing or malformed; the message names the scene and clip."""


def _sentences(raw: Any, where: str) -> tuple[AsrSentence, ...]:
    if not isinstance(raw, list):
        raise AsrError(f"{where}: 'sentences' must be a list")
    out = []
    for i, s in enumerate(raw):
        w = f"{where}: sentences[{i}]"
        if not isinstance(s, Mapping) or not isinstance(s.get("text"), str):
            raise AsrError(f"{w}: needs a string 'text'")
        try:
            start, end = int(round(float(s["start_ms"]))), int(round(float(s["end_ms"])))
        except (KeyError, TypeError, ValueError):
            raise AsrError(f"{w}: needs numeric 'start_ms' and 'end_ms'") from None
        speaker = s.get("speaker")
        out.append(AsrSentence(start, end, s["text"], None if speaker is None else str(speaker)))
    return tuple(out)


def read_sidecar(path: str | Path) -> AsrTable:
    """The ASR table of a sidecar JSONL (or JSON array) file."""
    table: AsrTable = {}
    for n, row in enumerate(read_json_records(path), 1):
        where = f"{path}: row {n}"
        if (
            not isinstance(row, Mapping)
            or not isinstance(row.get("scene_id"), str)
            or not isinstance(row.get("clip"), str)
        ):
            raise AsrError(f"{where}: needs string 'scene_id' and 'clip'")
        key = (row["scene_id"], row["clip"])
        if key in table:
            raise AsrError(f"{where}: duplicate scene {key[0]} clip {key[1]}")
        table[key] = _sentences(row.get("sentences"), f"{where} (scene {key[0]} clip {key[1]})")
    return table


def write_sidecar(table: AsrTable, path: str | Path) -> Path:
    """Write ``table`` in the sidecar format (sorted by scene and clip; the file replaced, never
    written through a link)."""
    path = Path(path)
    rows = (
        {
            "scene_id": scene_id,
            "clip": clip,
            "sentences": [
                {"start_ms": s.start_ms, "end_ms": s.end_ms, "text": s.text, "speaker": s.speaker} for s in sentences
            ],
        }
        for (scene_id, clip), sentences in sorted(table.items())
    )
    replace_file(path, b"".join(dump_line(row) for row in rows))
    return path


class AsrUnavailableError(AsrError, ServerUnavailableError):
    """The ASR server refuses every call (wrong key, model or URL); the message says which."""


@dataclass
class AsrStats(CallStats):
    """The endpoint's counters: the client's, plus clips answered from the cache."""

    cache_hits: int = 0


class TranscriptionEndpoint:
    """Sentences from an OpenAI-compatible ``/audio/transcriptions`` endpoint (through the toolkit's
    one OpenAI client, :mod:`odu.transport.openai_client`), cached per clip hash."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = API_KEY_ENV,
        concurrency: int = MODEL_CONCURRENCY,
        timeout: float = MODEL_TIMEOUT_S,
        retries: int = RETRIES,
        cache_dir: str | Path | None = None,
        progress: bool = True,
    ) -> None:
        self.stats = AsrStats()
        self.client = OpenAIClient(
            "ASR",
            model,
            base_url=base_url,
            api_key_env=api_key_env,
            timeout=timeout,
            retries=retries,
            stats=self.stats,
            unavailable=AsrUnavailableError,
        )
        self.model, self.concurrency, self.progress = model, concurrency, progress
        self.max_upload = (
            OPENAI_TRANSCRIPTION_MAX_BYTES - TRANSCRIPTION_FORM_ROOM
            if provider_of_host(base_url) == "openai" or OPENAI_TRANSCRIPTION_MODEL.match(model)
            else None
        )
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else odu_cache_dir() / "asr" / slug

    def info(self) -> dict[str, Any]:
        return {
            "source": "endpoint",
            "model": self.model,
            "base_url": self.client.public_base_url,
            "api_key_env": self.client.api_key_env,
            "requests": self.stats.requests,
            "cache_hits": self.stats.cache_hits,
            "cache": str(self.cache_dir),
        }

    def transcribe(self, clips: Iterable[ClipItem]) -> AsrTable:
        """Sentences for ``(scene_id, clip id, sha256, load)`` items, ``load()`` giving the clip; concurrent,
        cached per clip hash (a cached clip is never loaded; at most ``concurrency`` clips are in memory)."""
        items = list(clips)
        return self.client.run(lambda: self._transcribe_all(items))

    async def _transcribe_all(self, items: list[ClipItem]) -> AsrTable:
        sdk = self.client.async_sdk()
        gate = asyncio.Semaphore(self.concurrency)
        bar = tqdm(total=len(items), desc=f"asr {self.model}", unit="clip", disable=not self.progress)

        async def one(item: ClipItem) -> tuple[tuple[str, str], tuple[AsrSentence, ...]]:
            async with gate:
                sentences = await self._clip(sdk, *item)
            bar.update(1)
            return (item[0], item[1]), sentences

        try:
            return dict(await self.client.gather(one(item) for item in items))
        finally:
            bar.close()
            await sdk.close()

    async def _clip(
        self, sdk: Any, scene_id: str, clip_id: str, sha: str, load: Callable[[], LazyClip]
    ) -> tuple[AsrSentence, ...]:
        cached = self.cache_dir / f"{sha}.json"
        if cached.is_file():
            self.stats.cache_hits += 1
            return _sentences(read_json(cached), f"{cached}")
        where = f"scene {scene_id} clip {clip_id}"
        audio = await asyncio.to_thread(lambda: wav_bytes(load(), DEFAULT_AUDIO_SAMPLE_RATE))
        if self.max_upload is not None and len(audio) > self.max_upload:
            raise AsrError(
                f"{where}: {len(audio) / 2**20:.1f} MiB of 16 kHz WAV, beyond the {OPENAI_TRANSCRIPTION_MAX_BYTES:,}-byte "
                "upload limit of OpenAI's transcriptions (rule openai.transcription-25mb, docs/providers.md); "
                "nothing was sent: transcribe this clip elsewhere and pass a sidecar file (--asr FILE)"
            )

        async def send() -> Any:
            self.stats.requests += 1
            return await sdk.audio.transcriptions.create(
                model=self.model,
                file=(f"{clip_id}.wav", audio, "audio/wav"),
                response_format="verbose_json",
                timestamp_granularities=["segment"],
            )

        try:
            result = await self.client.call(send)
        except CallFailedError as exc:
            self.stats.errors += 1
            raise AsrError(self.client.scrub(f"{where}: transcription failed: {exc}")) from None
        segments = getattr(result, "segments", None)
        text = (getattr(result, "text", "") or "").strip()
        if segments is None:
            if text:
                raise AsrError(f"{where}: the ASR server returned no segment timestamps (App D.2 needs them)")
            segments = []
        raw = [
            {
                "start_ms": round(float(_get(s, "start")) * 1000),
                "end_ms": round(float(_get(s, "end")) * 1000),
                "text": scrub_secrets(str(_get(s, "text")).strip()),  # a server echoing the key
            }
            for s in segments
            if str(_get(s, "text")).strip()
        ]
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, cached)
        return _sentences(raw, where)


class AsrInput:
    """The ASR input of the text-only tasks (App D.2): each clip's sentences, from a sidecar file (read
    and checked against the docs when a task loads them) or from a transcription endpoint.

    An endpoint transcribes a clip only when it is first needed: lm-eval calls :func:`prepare` (through
    :mod:`.preflight`) with the docs it will evaluate, ``--limit`` / ``--samples`` applied, so the other
    clips are never sent; :meth:`sentences` transcribes a doc's clips itself if they were not prepared.
    Clips are read from the docs' dataset rows (:class:`~odu.models.clips.DatasetClips`) at send time.
    """

    def __init__(self, spec: str, base_url: str | None = None) -> None:
        self.spec = spec
        self.id = self.key(spec, base_url)
        self.table: AsrTable = {}
        self.endpoint: TranscriptionEndpoint | None = None
        self.record_keys: set[str] = set()
        if spec.startswith("openai:"):
            self.endpoint = TranscriptionEndpoint(spec.removeprefix("openai:"), base_url=base_url)
            self._clips = DatasetClips()
        else:
            path = Path(spec)
            self.table = read_sidecar(path)
            self._sidecar = {"source": "sidecar", "path": str(path.resolve()), "sha256": sha256_file(path)}

    @staticmethod
    def key(spec: str, base_url: str | None = None) -> str:
        """The id of an ASR input: its settings (a sidecar's content included), hashed; docs carry it."""
        content = "" if spec.startswith("openai:") else sha256_file(Path(spec))
        return "asr-" + hashlib.sha256(json.dumps([spec, base_url, content]).encode()).hexdigest()[:16]

    def info(self) -> dict[str, Any]:
        """Where the sentences come from (run card): the sidecar file, or the endpoint and its counters."""
        return self.endpoint.info() if self.endpoint is not None else dict(self._sidecar)

    def record(self, key: str | None = None) -> None:
        """Write :meth:`info` to the run card recorder for ``key`` and every task key recorded before."""
        if key is not None:
            self.record_keys.add(key)
        for k in self.record_keys:
            RECORDER.record("asr", k, self.info())

    def prepare(self, docs: Iterable[Mapping[str, Any]]) -> None:
        """Make sure every clip of ``docs`` has its sentences: transcribe the missing ones in one
        concurrent batch (endpoint), or raise :class:`AsrError` naming them (sidecar)."""
        missing = [
            (doc, i, clip)
            for doc in docs
            for i, clip in enumerate(doc["clips"])
            if (doc["scene_id"], clip["id"]) not in self.table
        ]
        if not missing:
            return
        if self.endpoint is None:
            names = missing_clips(self.table, [(doc["scene_id"], clip["id"]) for doc, _, clip in missing])
            shown = ", ".join(names[:5]) + (f" (+{len(names) - 5} more)" if len(names) > 5 else "")
            raise AsrError(f"ASR input {self.spec}: no entry for {len(names)} clip(s): {shown}")
        clips = self._clips
        items: list[ClipItem] = [
            (
                doc["scene_id"],
                clip["id"],
                clip["sha256"],
                functools.partial(
                    clips.load,
                    doc["media"],
                    doc["scene_id"],
                    ClipRef(i, clip["id"], clip["sha256"], int(clip["duration_ms"])),
                ),
            )
            for doc, i, clip in missing
        ]
        self.table.update(self.endpoint.transcribe(items))
        self.record()

    def sentences(self, doc: Mapping[str, Any]) -> list[tuple[AsrSentence, ...]]:
        """The sentences of each clip of ``doc``, in order."""
        self.prepare([doc])
        return [self.table[(doc["scene_id"], clip["id"])] for clip in doc["clips"]]


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name)


def missing_clips(table: AsrTable, wanted: Sequence[tuple[str, str]]) -> list[str]:
    """``scene/clip`` names in ``wanted`` that ``table`` lacks."""
    return [f"{s}/{c}" for s, c in wanted if (s, c) not in table]


#: ASR inputs of the text-only tasks in this process, by :meth:`AsrInput.key` (the docs' ``asr`` field).
_INPUTS: dict[str, AsrInput] = {}


def input_for(spec: str, base_url: str | None) -> AsrInput:
    """The one :class:`AsrInput` of this process for ``spec`` on ``base_url`` (made on first use)."""
    key = AsrInput.key(spec, base_url)
    if key not in _INPUTS:
        _INPUTS[key] = AsrInput(spec, base_url)
    return _INPUTS[key]


def doc_asr(doc: Mapping[str, Any]) -> AsrInput | None:
    """The ASR input of a text-only doc (``None`` for a native doc)."""
    key = doc.get("asr")
    if not key:
        return None
    if key not in _INPUTS:
        raise AsrError(f"scene {doc['scene_id']}: its ASR input {key} was not loaded in this process (load_docs)")
    return _INPUTS[key]


__all__ = [
    "AsrError",
    "AsrInput",
    "AsrStats",
    "AsrTable",
    "AsrUnavailableError",
    "ClipItem",
    "TranscriptionEndpoint",
    "doc_asr",
    "input_for",
    "missing_clips",
    "read_sidecar",
    "write_sidecar",
]
