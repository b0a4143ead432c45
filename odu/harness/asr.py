"""ASR input of the text-only baseline (App D.2): each clip's sentences with timestamps local to it.

Two sources:

* a sidecar JSONL file, one row per clip:
  ``{"scene_id": ..., "clip": "v1", "sentences": [{"start_ms", "end_ms", "text", "speaker"?}]}``
  (an empty ``sentences`` list means the ASR heard no speech: the block becomes App D.2's
  no-speech notice);
* an OpenAI-compatible ``/audio/transcriptions`` endpoint (Whisper-style servers:
  ``response_format="verbose_json"``, segment timestamps become the sentences). Results are cached
  on disk per model and clip hash (``<cache>/asr/``), so reruns and lm-eval's request cache see the
  same text. The toolkit's one OpenAI client carries the calls (:mod:`odu.openai_client`: retries,
  a refusing server stops the run, the API key comes from an environment variable and is never written).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..cache import cache_dir as odu_cache_dir
from ..data.media import DEFAULT_AUDIO_SAMPLE_RATE, LazyClip
from ..models.clips import wav_bytes
from ..models.remote import MODEL_CONCURRENCY, MODEL_TIMEOUT_S
from ..openai_client import API_KEY_ENV, RETRIES, CallFailedError, CallStats, OpenAIClient, ServerUnavailableError
from ..prompts import AsrSentence
from ..schema import read_json_records

#: (scene_id, clip id) -> sentences of that clip.
AsrTable = dict[tuple[str, str], tuple[AsrSentence, ...]]


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
    """Write ``table`` in the sidecar format (sorted by scene and clip)."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as fh:
        for (scene_id, clip), sentences in sorted(table.items()):
            row = {
                "scene_id": scene_id,
                "clip": clip,
                "sentences": [
                    {"start_ms": s.start_ms, "end_ms": s.end_ms, "text": s.text, "speaker": s.speaker}
                    for s in sentences
                ],
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


class AsrUnavailableError(AsrError, ServerUnavailableError):
    """The ASR server refuses every call (wrong key, model or URL); the message says which."""


@dataclass
class AsrStats(CallStats):
    """The endpoint's counters: the client's, plus clips answered from the cache."""

    cache_hits: int = 0


class TranscriptionEndpoint:
    """Sentences from an OpenAI-compatible ``/audio/transcriptions`` endpoint (through the toolkit's
    one OpenAI client, :mod:`odu.openai_client`), cached per clip hash."""

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

    def transcribe(self, clips: Iterable[tuple[str, str, str, LazyClip]]) -> AsrTable:
        """Sentences for ``(scene_id, clip id, sha256, clip)`` items; concurrent, cached."""
        items = list(clips)
        return self.client.run(lambda: self._transcribe_all(items))

    async def _transcribe_all(self, items: list[tuple[str, str, str, LazyClip]]) -> AsrTable:
        sdk = self.client.async_sdk()
        gate = asyncio.Semaphore(self.concurrency)
        bar = tqdm(total=len(items), desc=f"asr {self.model}", unit="clip", disable=not self.progress)

        async def one(item: tuple[str, str, str, LazyClip]) -> tuple[tuple[str, str], tuple[AsrSentence, ...]]:
            async with gate:
                sentences = await self._clip(sdk, *item)
            bar.update(1)
            return (item[0], item[1]), sentences

        try:
            return dict(await self.client.gather(one(item) for item in items))
        finally:
            bar.close()
            await sdk.close()

    async def _clip(self, sdk: Any, scene_id: str, clip_id: str, sha: str, clip: LazyClip) -> tuple[AsrSentence, ...]:
        cached = self.cache_dir / f"{sha}.json"
        if cached.is_file():
            self.stats.cache_hits += 1
            return _sentences(json.loads(cached.read_text(encoding="utf-8")), f"{cached}")
        where = f"scene {scene_id} clip {clip_id}"
        audio = await asyncio.to_thread(lambda: wav_bytes(clip, DEFAULT_AUDIO_SAMPLE_RATE))

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
                "text": str(_get(s, "text")).strip(),
            }
            for s in segments
            if str(_get(s, "text")).strip()
        ]
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, cached)
        return _sentences(raw, where)


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name)


def missing_clips(table: AsrTable, wanted: Sequence[tuple[str, str]]) -> list[str]:
    """``scene/clip`` names in ``wanted`` that ``table`` lacks."""
    return [f"{s}/{c}" for s, c in wanted if (s, c) not in table]


__all__ = [
    "AsrError",
    "AsrStats",
    "AsrTable",
    "AsrUnavailableError",
    "TranscriptionEndpoint",
    "missing_clips",
    "read_sidecar",
    "write_sidecar",
]
