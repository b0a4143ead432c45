"""Strict fakes of the servers behind the OpenAI-compatible omni backend: each refuses what its real
server refuses, with the status and error shape the real server uses, so that a regression of a
request shape fails a test instead of passing a friendly loopback server.

* :class:`VllmFake` — vLLM serving a model (``GET /models`` ``owned_by: "vllm"``, vLLM's ``ModelCard``).
  A video whose audio would not reach the model is refused (HTTP 400): for Qwen-Omni models a
  ``video_url`` without ``mm_processor_kwargs.use_audio_in_video`` (vllm-project/vllm#47788: the
  real server drops the track silently; the fake makes the drop visible), for other models a
  ``video_url`` not followed by its ``input_audio`` (vLLM's video loader reads frames only).
* :class:`SglangFake` — SGLang (``owned_by: "sglang"``), whose HTTP API never forwards
  ``use_audio_in_video`` (sgl-project/sglang-omni#708: the track is dropped silently): a
  ``video_url`` not followed by its ``input_audio`` is refused, making the drop visible.
* :class:`OpenAIFake` — api.openai.com: reasoning models (gpt-5*, o-series) refuse ``max_tokens``
  and any temperature but 1 with OpenAI's 400 bodies (openai/openai-python#2046,
  autohandai/code-cli#77 for gpt-5.4); chat content parts are text / image_url / input_audio / file,
  so ``video_url`` is refused (https://platform.openai.com/docs/api-reference/chat/create);
  ``/audio/transcriptions`` gives segment timestamps (``verbose_json``) for ``whisper-1`` only
  (https://platform.openai.com/docs/api-reference/audio/createTranscription).
* :class:`DashScopeFake` — Model Studio's Qwen-Omni (https://help.aliyun.com/zh/model-studio/qwen-omni):
  streaming only; ``input_audio.data`` a URL or a ``data:;base64,`` data URL, never bare Base64;
  one non-text modality per user message; one video file and one audio file per request; 10 MB of
  Base64 per item.
* :class:`ArkFake` — Volcengine Ark: ``audio_url`` parts refused, ``input_audio`` taken
  (JimLiu/doubao-multimodal-skill ``.env.example``).

Every fake is the strict loopback server (``openai_rules.py``: the key, the served models, the OpenAI
API's body checks; DashScope has its own data URLs and keeps only the first two) with the provider's
rules on top, and answers through a responder as :class:`openai_server.OpenAIServer` does; the
provider refusals are kept in :attr:`StrictServer.refusals`.
"""

from __future__ import annotations

import email.parser
import hashlib
import json
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from odu.data.media import LazyClip
from odu.models.clips import wav_bytes

from .openai_rules import OPENAI_PATHS, VLLM_EXTRA_FIELDS, Refusal, check_auth, check_model
from .openai_server import Fault, OpenAIServer, RecordedRequest, Reply, Responder, chat_completion

MEDIA = ("video_url", "image_url", "input_audio", "audio_url", "video")
# The fakes' own readings of the providers' rules, independent of the code under test:
#: OpenAI reasoning models (gpt-5 family, o-series): default temperature only, no max_tokens.
REASONING = re.compile(r"^(gpt-5|o[1-9])")
#: Qwen-Omni models, whose vLLM processor takes use_audio_in_video.
QWEN_OMNI_MODEL = re.compile(r"Qwen[\d.]*-Omni")
#: DashScope: 10 MB of Base64 per media item.
DASHSCOPE_ITEM_LIMIT = 10 * 1024 * 1024


def openai_error(status: int, message: str, param: str | None = None, code: str | None = None) -> Reply:
    """An OpenAI-style error body (``{"error": {...}}``), which every server here uses but vLLM."""
    return Reply(
        status=status,
        body={"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}},
    )


def parts_of(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


class StrictServer(OpenAIServer):
    """The strict loopback server (key, served models, the OpenAI API's body checks of
    ``openai_rules.py``) with a provider's ``GET /models`` owner and its own refusals (:meth:`refuse`)."""

    owner = "loopback"

    def __init__(self, responder: Responder | None = None, *, models: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(responder, models=models, **kwargs)
        self.refusals: list[str] = []
        self.route("GET", "/v1/models", self._models)
        self.route("POST", "/v1/chat/completions", self._strict_chat)

    def _models(self, req: RecordedRequest) -> Reply:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": self.owner} for m in self.models]
        return Reply(body={"object": "list", "data": data})

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        """The provider's answer to a request it refuses (None: accepted)."""
        return None

    def answer(self, body: dict[str, Any], text: str) -> Reply:
        return Reply(body=chat_completion(body, text))

    def _strict_chat(self, req: RecordedRequest) -> Reply | Fault:
        body = req.json
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return openai_error(400, "body must be JSON with 'messages'")
        refused = self.refuse(body)
        if refused is not None:
            self.refusals.append(
                refused.body["error"]["message"] if "error" in refused.body else refused.body["message"]
            )
            return refused
        answer = self.responder(body)
        return answer if isinstance(answer, (Fault, Reply)) else self.answer(body, answer)


class VllmFake(StrictServer):
    """vLLM's OpenAI-compatible server; see the module docstring."""

    owner = "vllm"

    def __init__(self, responder: Responder | None = None, **kwargs: Any) -> None:
        super().__init__(responder, **kwargs)
        self.extra_fields |= VLLM_EXTRA_FIELDS  # vLLM's own request fields (mm_processor_kwargs, ...)

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        fed = (body.get("mm_processor_kwargs") or {}).get("use_audio_in_video") is True
        for message in body["messages"]:
            parts = parts_of(message)
            for i, part in enumerate(parts):
                if part.get("type") != "video_url":
                    continue
                follows = i + 1 < len(parts) and parts[i + 1].get("type") == "input_audio"
                if QWEN_OMNI_MODEL.search(body["model"]) and not fed:
                    why = "use_audio_in_video is off: vLLM would drop this video's audio track silently (vllm#47788)"
                elif not QWEN_OMNI_MODEL.search(body["model"]) and not follows:
                    why = "vLLM's video loader reads frames only: this video's audio is not sent as input_audio"
                else:
                    continue
                return Reply(
                    status=400, body={"object": "error", "message": why, "type": "BadRequestError", "code": 400}
                )
        return None


class SglangFake(StrictServer):
    """SGLang's OpenAI-compatible server (``owned_by: "sglang"``); see the module docstring."""

    owner = "sglang"

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        for message in body["messages"]:
            parts = parts_of(message)
            for i, part in enumerate(parts):
                follows = i + 1 < len(parts) and parts[i + 1].get("type") == "input_audio"
                if part.get("type") == "video_url" and not follows:
                    why = "SGLang does not forward use_audio_in_video: this video's audio would be dropped silently"
                    return openai_error(400, why + " (sglang-omni#708)")
        return None


class OpenAIFake(StrictServer):
    """api.openai.com; see the module docstring. ``transcripts`` maps the SHA-256 of an uploaded WAV
    to its transcript text (:func:`sample_transcripts`)."""

    owner = "openai"

    def __init__(self, responder: Responder | None = None, *, transcripts: Mapping[str, str] | None = None, **kw: Any):
        super().__init__(responder, **kw)
        self.transcripts = dict(transcripts or {})
        self.route("POST", "/v1/audio/transcriptions", self._transcribe)

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        if REASONING.match(body["model"]):
            if "max_tokens" in body:
                return openai_error(
                    400,
                    "Unsupported parameter: 'max_tokens' is not supported with this model. "
                    "Use 'max_completion_tokens' instead.",
                    "max_tokens",
                    "unsupported_parameter",
                )
            for name in ("temperature", "top_p"):
                if name in body and body[name] != 1:
                    return openai_error(
                        400,
                        f"Unsupported value: '{name}' does not support {body[name]} with this model. "
                        "Only the default (1) value is supported.",
                        name,
                        "unsupported_value",
                    )
        for message in body["messages"]:
            for part in parts_of(message):
                if part.get("type") not in ("text", "image_url", "input_audio", "file"):
                    return openai_error(
                        400,
                        f"Invalid value: '{part.get('type')}'. Supported values are: 'text', 'image_url', "
                        "'input_audio', 'refusal', 'audio', and 'file'.",
                        "messages.content.type",
                        "invalid_value",
                    )
        return None

    def _transcribe(self, req: RecordedRequest) -> Reply:
        head = f"Content-Type: {req.headers.get('content-type', '')}\r\n\r\n".encode()
        form = email.parser.BytesParser().parsebytes(head + req.body)
        fields = {p.get_param("name", header="content-disposition"): p.get_payload(decode=True) for p in form.walk()}
        model = (fields.get("model") or b"").decode()  # a served one: the strict server checked it
        fmt = (fields.get("response_format") or b"json").decode()
        if fmt == "verbose_json" and model != "whisper-1":
            return openai_error(
                400, f"response_format 'verbose_json' is not compatible with model '{model}'.", "response_format"
            )
        text = self.transcripts.get(hashlib.sha256(fields.get("file") or b"").hexdigest(), "")
        segments = [{"id": 0, "start": 0.0, "end": 1.0, "text": f" {text}"}] if text else []
        return Reply(body={"task": "transcribe", "language": "en", "duration": 1.0, "text": text, "segments": segments})


class DashScopeFake(StrictServer):
    """Model Studio's OpenAI-compatible mode for Qwen-Omni; see the module docstring."""

    owner = "system"

    def _refusal(self, req: RecordedRequest) -> Refusal | None:
        """The key and the served model as everywhere; not the OpenAI API's body checks, whose data
        URLs (bare Base64 audio, a MIME type in every data URL) DashScope's are not: :meth:`refuse`
        holds DashScope's own."""
        if req.path not in OPENAI_PATHS:
            return None
        if refused := check_auth(req.headers.get("authorization"), self.api_key):
            return refused
        if req.path == "/v1/chat/completions" and isinstance(req.json, dict):
            return check_model(req.json.get("model"), self.models)
        return None

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        if body.get("stream") is not True:
            return openai_error(
                400,
                "This model only support stream mode, please enable the stream parameter to access the model.",
                code="invalid_parameter_error",
            )
        videos = audios = 0
        for message in body["messages"]:
            kinds = {p["type"] for p in parts_of(message) if p.get("type") in MEDIA}
            if len(kinds) > 1:
                return openai_error(400, f"one non-text modality per user message, got {sorted(kinds)}")
            for part in parts_of(message):
                if part.get("type") == "input_audio":
                    audios += 1
                    data = str(part["input_audio"].get("data", ""))
                    if not data.startswith(("data:", "http://", "https://", "oss://")):
                        return openai_error(400, "input_audio.data must be a URL or a data URL 'data:;base64,...'")
                    payload = data
                elif part.get("type") == "video_url":
                    videos += 1
                    payload = str(part["video_url"].get("url", ""))
                else:
                    continue
                if payload.startswith("data:") and len(payload.split(",", 1)[-1]) > DASHSCOPE_ITEM_LIMIT:
                    return openai_error(400, "a Base64 media item exceeds 10 MB")
        if videos > 1 or audios > 1:
            return openai_error(400, f"only one video file and one audio file per request, got {videos} and {audios}")
        return None

    def answer(self, body: dict[str, Any], text: str) -> Reply:
        return Reply(body="".join(sse_chunks(body, text)), content_type="text/event-stream")


class ArkFake(StrictServer):
    """Volcengine Ark's OpenAI-compatible chat API; see the module docstring."""

    owner = "volcengine"

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        if any(p.get("type") == "audio_url" for m in body["messages"] for p in parts_of(m)):
            return openai_error(400, "invalid value: audio_url", "messages.content.type")
        return None


def sse_chunks(body: Mapping[str, Any], text: str, piece: int = 40) -> Iterator[str]:
    """``text`` as ``chat.completion.chunk`` server-sent events, usage last, then ``[DONE]``."""
    base = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body["model"],
    }
    for start in range(0, len(text), piece):
        delta = {"content": text[start : start + piece]}
        yield f"data: {json.dumps({**base, 'choices': [{'index': 0, 'delta': delta, 'finish_reason': None}]})}\n\n"
    yield f"data: {json.dumps({**base, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})}\n\n"
    usage = {"prompt_tokens": 1, "completion_tokens": len(text.split()), "total_tokens": 1 + len(text.split())}
    yield f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\ndata: [DONE]\n\n"


def sample_transcripts(dataset_dir: Path, configs: tuple[str, ...] = ("av", "ao")) -> dict[str, str]:
    """SHA-256 of each user clip as the ASR sends it (16 kHz WAV) -> a transcript naming its scene
    (``(scene_id) ...``, which :class:`omni_fakes.FakeOmni` reads in text-only requests)."""
    import datasets

    out = {}
    for config in configs:
        for row in datasets.load_dataset(str(dataset_dir), config, split="test"):
            for turn in row["turns"]:
                if turn["role"] == "user":
                    wav = wav_bytes(LazyClip(turn["media"]["bytes"]), 16_000)
                    out[hashlib.sha256(wav).hexdigest()] = f"({row['scene_id']}) could you turn it down"
    return out


__all__ = [
    "ArkFake",
    "DashScopeFake",
    "OpenAIFake",
    "SglangFake",
    "StrictServer",
    "VllmFake",
    "openai_error",
    "sample_transcripts",
    "sse_chunks",
]
