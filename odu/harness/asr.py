"""ASR input of the text-only baseline (App D.2): each clip's sentences with timestamps local to it.

Two sources:

* a sidecar JSONL file, one row per clip:
  ``{"scene_id": ..., "clip": "v1", "sentences": [{"start_ms", "end_ms", "text", "speaker"?}]}``
  (an empty ``sentences`` list means the ASR heard no speech: the block becomes App D.2's
  no-speech notice);
* an OpenAI-compatible ``/audio/transcriptions`` endpoint (Whisper-style servers:
  ``response_format="verbose_json"``, segment timestamps become the sentences). Results are cached
  on disk per model and clip hash (``<cache>/asr/``), so reruns and lm-eval's request cache see the
  same text. The API key comes from an environment variable and is never written.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..constants import MODEL_API_KEY_ENV, MODEL_CONCURRENCY, MODEL_RETRIES, MODEL_TIMEOUT_S
from ..cache import cache_dir as odu_cache_dir
from ..data.media import DEFAULT_AUDIO_SAMPLE_RATE, LazyClip
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
        if not isinstance(row, Mapping) or not isinstance(row.get("scene_id"), str) or not isinstance(row.get("clip"), str):
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
            row = {"scene_id": scene_id, "clip": clip, "sentences": [
                {"start_ms": s.start_ms, "end_ms": s.end_ms, "text": s.text, "speaker": s.speaker} for s in sentences]}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


class TranscriptionEndpoint:
    """Sentences from an OpenAI-compatible ``/audio/transcriptions`` endpoint, cached per clip hash."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = MODEL_API_KEY_ENV,
                 concurrency: int = MODEL_CONCURRENCY, timeout: float = MODEL_TIMEOUT_S,
                 retries: int = MODEL_RETRIES, cache_dir: str | Path | None = None, progress: bool = True) -> None:
        key = os.environ.get(api_key_env)
        if not key and base_url is None:
            raise ValueError(f"ASR API key: environment variable {api_key_env} is not set")
        self._api_key = key or "EMPTY"
        self.model, self.base_url, self.api_key_env = model, base_url, api_key_env
        self.concurrency, self.timeout, self.retries, self.progress = concurrency, timeout, retries, progress
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else odu_cache_dir() / "asr" / slug
        self.requests = 0
        self.cache_hits = 0

    def info(self) -> dict[str, Any]:
        from ..openai_transport import public_url

        return {"source": "endpoint", "model": self.model, "base_url": public_url(self.base_url),
                "api_key_env": self.api_key_env, "requests": self.requests, "cache_hits": self.cache_hits,
                "cache": str(self.cache_dir)}

    def transcribe(self, clips: Iterable[tuple[str, str, str, LazyClip]]) -> AsrTable:
        """Sentences for ``(scene_id, clip id, sha256, clip)`` items; concurrent, cached."""
        from openai import OpenAI

        items = list(clips)
        client = OpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=self.retries, timeout=self.timeout)
        table: AsrTable = {}

        def one(item: tuple[str, str, str, LazyClip]) -> tuple[tuple[str, str], tuple[AsrSentence, ...]]:
            scene_id, clip_id, sha, clip = item
            return (scene_id, clip_id), self._clip(client, scene_id, clip_id, sha, clip)

        with concurrent.futures.ThreadPoolExecutor(self.concurrency, thread_name_prefix="odu-asr") as pool:
            for key, sentences in tqdm(pool.map(one, items), total=len(items), desc=f"asr {self.model}",
                                       unit="clip", disable=not self.progress):
                table[key] = sentences
        client.close()
        return table

    def _clip(self, client: Any, scene_id: str, clip_id: str, sha: str, clip: LazyClip) -> tuple[AsrSentence, ...]:
        import openai

        from ..models.openai_omni import wav_bytes

        cached = self.cache_dir / f"{sha}.json"
        if cached.is_file():
            self.cache_hits += 1
            return _sentences(json.loads(cached.read_text(encoding="utf-8")), f"{cached}")
        where = f"scene {scene_id} clip {clip_id}"
        audio = wav_bytes(clip.audio(DEFAULT_AUDIO_SAMPLE_RATE), DEFAULT_AUDIO_SAMPLE_RATE)
        self.requests += 1
        try:
            result = client.audio.transcriptions.create(
                model=self.model, file=(f"{clip_id}.wav", audio, "audio/wav"),
                response_format="verbose_json", timestamp_granularities=["segment"],
            )
        except openai.OpenAIError as exc:
            message = str(exc).replace(self._api_key, "***") if len(self._api_key) >= 4 else str(exc)
            raise AsrError(f"{where}: transcription failed: {message}") from None
        segments = getattr(result, "segments", None)
        text = (getattr(result, "text", "") or "").strip()
        if segments is None:
            if text:
                raise AsrError(f"{where}: the ASR server returned no segment timestamps (App D.2 needs them)")
            segments = []
        raw = [{"start_ms": round(float(_get(s, "start")) * 1000), "end_ms": round(float(_get(s, "end")) * 1000),
                "text": str(_get(s, "text")).strip()} for s in segments if str(_get(s, "text")).strip()]
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


__all__ = ["AsrError", "AsrTable", "TranscriptionEndpoint", "missing_clips", "read_sidecar", "write_sidecar"]
