"""A scripted omni model for the loopback server (``tests/support/openai_server.py``).

:class:`FakeOmni` recognises which scene a chat request is about from the media it carries (the
final clip's bytes as sent; text-only requests name it in their ASR text), answers with that scene's reference annotation as a prediction, or
with what the test's script says for it: ``"garbage"`` (no JSON), ``"think"`` (the reference inside
``<think>`` prose and a code fence), ``"error"`` (HTTP 500). Judge requests (App F.4 system
prompt) go to :func:`judge_fakes.judge_responder`. Every request is kept for payload assertions.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from odu.core.schema import scene_from_dict
from odu.data.media import LazyClip
from odu.judge.prompt import JUDGE_INSTRUCTION
from odu.models.clips import joined_wav_bytes, media_type, wav_bytes
from odu.models.openai_omni import HEARING_PROBE_TEXT, JOINED_AUDIO_GAP_S
from odu.transport.server_check import PROBE_TEXT

from .judge_fakes import judge_responder
from .openai_server import Fault

MEDIA_TYPES = ("video_url", "image_url", "input_audio", "audio_url")


def media_parts(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"] if p["type"] in MEDIA_TYPES
    ]


def part_bytes(part: Mapping[str, Any]) -> bytes:
    """The bytes of a media part: bare Base64 or a data URL (``data:;base64,...`` on DashScope; Ark's
    ``input_audio {url}``)."""
    if part["type"] == "input_audio":
        audio = part["input_audio"]
        return base64.b64decode((audio.get("data") or audio["url"]).rpartition(",")[2])
    return base64.b64decode(part[part["type"]]["url"].split(",", 1)[1])


def sent_form(data: bytes) -> bytes:
    """The bytes the OpenAI backend sends for one clip by default (video/WAV as is, else 16 kHz WAV)."""
    clip = LazyClip(data)
    if media_type(clip)[0] in ("audio/wav", "audio/mpeg") or clip.info.has_video:
        return data
    return wav_bytes(clip, 16_000)


def joined_form(clips: Sequence[bytes]) -> bytes:
    """The one audio part the OpenAI backend sends for a scene's clips where the model takes one audio per
    prompt (``Profile.joins_audio``: Kimi-Audio on vLLM)."""
    return joined_wav_bytes([LazyClip(data) for data in clips], 16_000, JOINED_AUDIO_GAP_S)


def reference_output(record: Mapping[str, Any]) -> str:
    """The scene's own-language reference annotation, written as a model prediction (App A.1)."""
    scene = scene_from_dict(record)
    ann = scene.annotation()
    segments = []
    for g in ann.segments:
        seg: dict[str, Any] = {
            "start_ms": g.start_ms,
            "end_ms": g.end_ms,
            "transcript": g.transcript,
            "structured_intent": g.structured_intent,
            "required_context": [{"type": c.type, "description": c.description} for c in g.required_context],
        }
        if g.user_in_frame is not None:
            seg["user_in_frame"] = g.user_in_frame
        seg |= {"user_gender": g.user_gender, "user_age_group": g.user_age_group}
        segments.append(seg)
    return json.dumps({"has_demand": ann.has_demand, "segments": segments}, ensure_ascii=False)


class SampleScenes:
    """The scenes a fake model answers, from a prepared dataset (none without one): release records
    by scene id, each scene's clip hashes, and the scene of a final clip found by the bytes the
    API receives for it (``sent``: what the backend makes of the stored bytes; ``joined``: of an audio-only
    scene's clips sent as one part)."""

    def __init__(
        self,
        dataset_dir: Path | None,
        configs: Sequence[str] = ("av", "ao"),
        sent: Callable[[bytes], bytes] = bytes,
        joined: Callable[[Sequence[bytes]], bytes] | None = None,
    ) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.clips: dict[str, list[str]] = {}  # scene -> sha256 of each clip as stored
        self._final: dict[str, str] = {}  # sha256 of the final clip as sent -> scene
        if dataset_dir is None:
            return
        import datasets

        from odu.data.dataset import row_to_record

        for config in configs:
            for row in datasets.load_dataset(str(dataset_dir), config, split="test"):
                users = [t for t in row["turns"] if t["role"] == "user"]
                self.records[row["scene_id"]] = row_to_record(row)
                self.clips[row["scene_id"]] = [t["sha256"] for t in users]
                self._final[hashlib.sha256(sent(users[-1]["media"]["bytes"])).hexdigest()] = row["scene_id"]
                if (
                    joined is not None
                    and len(users) > 1
                    and not any(LazyClip(t["media"]["bytes"]).info.has_video for t in users)
                ):
                    clips = [t["media"]["bytes"] for t in users]
                    self._final[hashlib.sha256(joined(clips)).hexdigest()] = row["scene_id"]

    def scene_sent(self, final_clip: bytes) -> str | None:
        """The scene whose final clip the API received as ``final_clip``."""
        return self._final.get(hashlib.sha256(final_clip).hexdigest())


class FakeOmni(SampleScenes):
    """Responder for :class:`openai_server.OpenAIServer`: scripted omni answers + the fake judge."""

    def __init__(self, dataset_dir: Path, script: Mapping[str, str] | None = None) -> None:
        super().__init__(dataset_dir, sent=sent_form, joined=joined_form)
        self.script = dict(script or {})
        self.model_requests: list[dict[str, Any]] = []
        self.probes: list[dict[str, Any]] = []
        self._judge = judge_responder()

    def scene_of(self, body: Mapping[str, Any]) -> str:
        """The scene of the last media part that is a final clip (a video's separate audio track may follow it)."""
        sid = next(filter(None, (self.scene_sent(part_bytes(p)) for p in reversed(media_parts(body)))), None)
        assert sid is not None, "a final clip of no scene of the dataset"
        return sid

    def scene_in_text(self, body: Mapping[str, Any]) -> str:
        """Text-only requests: the scene named in the ASR text (tests write ``(scene_id)`` into it)."""
        user = " ".join(m["content"] for m in body["messages"] if m["role"] == "user")
        return next(sid for sid in self.records if f"({sid})" in user)

    def __call__(self, body: dict[str, Any]) -> str | Fault:
        if body["messages"] == [{"role": "user", "content": PROBE_TEXT}]:  # odu.transport.server_check's probe
            self.probes.append(body)
            return "ok"
        first = body["messages"][0]["content"]
        if isinstance(first, list) and first[:1] == [{"type": "text", "text": HEARING_PROBE_TEXT}]:
            self.probes.append(body)  # the server check of odu.models.hearing (a tone, or none)
            return "ok"
        if body["messages"][0]["content"] == JUDGE_INSTRUCTION:
            return self._judge(body)
        self.model_requests.append(body)
        sid = self.scene_of(body) if media_parts(body) else self.scene_in_text(body)
        mode = self.script.get(sid, "reference")
        if mode == "error":
            return Fault.server_error()
        if mode == "garbage":
            return "Sorry, I am not sure what the user wants here."
        text = reference_output(self.records[sid])
        if mode == "think":
            return f"<think>The user points at something.</think>Here is the JSON:\n```json\n{text}\n```"
        return text
