"""Strict fakes of the servers behind the OpenAI-compatible omni backend: each refuses what its real
server refuses, rule by rule from the rule table (``odu/models/provider_rules.py``, docs/providers.md
"Rule table"; each refusal names its rule), with the status and error shape the real server uses, so
that a regression of a request shape fails a test instead of passing a friendly loopback server. A
fake more permissive than its server is a defect; where the real server drops something without an
error (a video's audio track), the fake refuses it, making the silent loss visible.

* :class:`VllmFake` — vLLM (``GET /models`` ``owned_by: "vllm"``; ``GET /version``), started like the
  real server with its version, ``--limit-mm-per-prompt`` and ``--trust-request-mm-kwargs`` (or not):
  ``vllm.trust-request-mm-kwargs`` (0.31.0 on), ``vllm.limit-mm-per-prompt``,
  ``vllm.qwen-omni.audio-in-video`` / ``vllm.nemotron.audio-in-video`` (a video whose audio would be
  dropped), ``vllm.audio-in-video.counts``, ``vllm.soundless-video``, ``vllm.separate-track``,
  ``vllm.ming.recipe``, ``vllm.kimi-audio.one-audio`` and ``vllm.kimi-audio.chat-template`` (started with a
  chat template or not); its answers count audio items in ``usage.prompt_tokens`` (``vllm.hearing``). Its
  messages and error body are vLLM 0.32.0's, as the real server answers them in the vLLM lane
  (``tests/real/test_vllm_serve.py::test_the_fake_refuses_as_the_real_server``,
  ``tests/real/test_vllm_kimi_audio.py``, ``tests/real/test_vllm_nemotron_omni.py``).
* :class:`SglangFake` — SGLang (``owned_by: "sglang"``; ``GET /server_info``) with the chat schema of
  before (``schema="old"``) or after (``"new"``) sgl-project/sglang#33606: ``sglang.audio-url``,
  ``sglang.audio-in-video``, ``sglang.extra-fields``.
* :class:`OpenAIFake` — api.openai.com: ``openai.max-completion-tokens``, ``openai.default-sampling``,
  ``openai.no-video-url``, ``openai.audio-models-only``; ``/audio/transcriptions``:
  ``openai.verbose-json-whisper-only``, ``openai.transcription-25mb``.
* :class:`DashScopeFake` — Model Studio's Qwen-Omni: ``dashscope.stream-only``, ``dashscope.data-urls``,
  ``dashscope.one-modality``, ``dashscope.one-file`` (Qwen3-Omni-Flash / Qwen-Omni-Turbo only),
  ``dashscope.item-10mb``.
* :class:`ArkFake` — Volcengine Ark: ``ark.audio-url`` (``audio_url``, or ``input_audio {url}`` on
  endpoints that refuse ``audio_url``; OpenAI's ``input_audio {data, format}`` refused), ``ark.no-stop``,
  ``ark.item-50mb``.

Every fake is the strict loopback server (``openai_rules.py``: the key, the served models, the OpenAI
API's body checks; DashScope and Ark have their own part shapes and keep only the first two) with the
provider's rules on top, and answers through a responder as :class:`openai_server.OpenAIServer` does;
the provider refusals are kept in :attr:`StrictServer.refusals`. Where the real message is not known,
the refusal's wording is ours and says so in the code.
"""

from __future__ import annotations

import base64
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

from .openai_rules import (
    OPENAI_PATHS,
    SGLANG_EXTRA_FIELDS,
    VLLM_EXTRA_FIELDS,
    Refusal,
    check_auth,
    check_model,
)
from .openai_server import Fault, OpenAIServer, RecordedRequest, Reply, Responder, chat_completion

MEDIA = ("video_url", "image_url", "input_audio", "audio_url", "video")
AUDIO = ("input_audio", "audio_url")
# The fakes' own readings of the providers' rules, independent of the code under test:
#: OpenAI reasoning models (gpt-5 family, o-series): default temperature only, no max_tokens.
REASONING = re.compile(r"^(gpt-5|o[1-9])")
#: OpenAI models that take input_audio (rule openai.audio-models-only).
OPENAI_AUDIO_MODEL = re.compile(r"^gpt-.*audio")
#: Qwen-Omni models and Nemotron Omni, whose vLLM processors take use_audio_in_video.
AUDIO_IN_VIDEO_MODEL = re.compile(r"Qwen[\d.]*-Omni|Nemotron.*Omni", re.IGNORECASE)
MING_MODEL = re.compile(r"Ming-flash-omni", re.IGNORECASE)
#: MiniCPM-o, whose video's audio vLLM's chat parser reads as an audio item under ``use_audio_in_video``
#: (vllm/renderers/chat_utils.py ``parse_video``; the model takes it: rule vllm.minicpm-o.track-part).
MINICPMO_MODEL = re.compile(r"MiniCPM-o", re.IGNORECASE)
#: Kimi-Audio, whose vLLM processor takes one audio item and no video or image per prompt.
KIMI_AUDIO_MODEL = re.compile(r"Kimi-Audio", re.IGNORECASE)
#: Kimi-Audio's items per prompt on vLLM (vllm/model_executor/models/kimi_audio.py ``get_supported_mm_limits``:
#: audio 1, no other modality), whatever ``--limit-mm-per-prompt`` says (rule vllm.kimi-audio.one-audio).
KIMI_AUDIO_LIMITS = {"image": 0, "video": 0, "audio": 1}
#: What vLLM 0.32.0 answers a chat request to Kimi-Audio started without ``--chat-template`` (transformers'
#: refusal of a missing template, rule vllm.kimi-audio.chat-template).
VLLM_NO_CHAT_TEMPLATE = (
    "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat "
    "template if the tokenizer does not define one."
)
#: DashScope families with one video file and one audio file per request (rule dashscope.one-file).
DASHSCOPE_ONE_FILE = re.compile(r"qwen3-omni|qwen-omni-turbo", re.IGNORECASE)
#: DashScope: 10 MB of Base64 per media item; Ark: 50 MB files; OpenAI transcriptions: 25 MiB bodies.
DASHSCOPE_ITEM_LIMIT = 10 * 1024 * 1024
ARK_ITEM_BYTES = 50_000_000
TRANSCRIPTION_BODY_LIMIT = 26_214_400
#: vLLM's default --limit-mm-per-prompt for a modality not named (vllm/config/multimodal.py).
VLLM_DEFAULT_MM_LIMIT = 999
#: vLLM's refusal of per-request mm_processor_kwargs without --trust-request-mm-kwargs, from 0.31.0
#: (vllm/entrypoints/generate/base/protocol.py ``validate_request_mm_kwargs``; VLLMValidationError's text
#: ends with its parameter, vllm/exceptions.py).
VLLM_MM_KWARGS_REFUSAL = (
    "Per-request mm_processor_kwargs are disabled by default because they can change multimodal preprocessing "
    "resource usage. Start the server with --trust-request-mm-kwargs only when clients are trusted. "
    "(parameter=mm_processor_kwargs)"
)
#: Prompt tokens the fake counts per audio item (a stand-in for the placeholder tokens vLLM counts: 27 for
#: a 1 s tone on the lane's tiny Qwen2.5-Omni, 15 on its Qwen3-Omni).
VLLM_AUDIO_ITEM_TOKENS = 25


def openai_error(status: int, message: str, param: str | None = None, code: str | None = None) -> Reply:
    """An OpenAI-style error body (``{"error": {...}}``), which every server here uses but vLLM and SGLang."""
    return Reply(
        status=status,
        body={"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}},
    )


def server_error(message: str) -> Reply:
    """SGLang's error body (``ErrorResponse``: ``object``, ``message``, ``type``, ``code``)."""
    return Reply(status=400, body={"object": "error", "message": message, "type": "BadRequestError", "code": 400})


def vllm_error(message: str, param: str | None = None) -> Reply:
    """vLLM 0.32.0's 400 (``ErrorResponse`` ``{"error": ErrorInfo}``, vllm/entrypoints/serve/engine/protocol.py;
    a ``VLLMValidationError`` names its parameter at the end of the message too)."""
    text = f"{message} (parameter={param})" if param else message
    return Reply(status=400, body={"error": {"message": text, "type": "BadRequestError", "param": param, "code": 400}})


def parts_of(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def all_parts(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p for m in body["messages"] for p in parts_of(m)]


def data_url_bytes(url: str) -> bytes | None:
    """The bytes of a ``data:`` URL (None for any other URL)."""
    return base64.b64decode(url.split(",", 1)[1]) if url.startswith("data:") else None


def silent_videos(body: Mapping[str, Any], audio_in_video: bool) -> list[int]:
    """Indexes (among all parts) of ``video_url`` parts whose audio would not reach the model: not
    followed by an audio part, unless ``audio_in_video`` feeds it from the video itself."""
    parts = all_parts(body)
    return [
        i
        for i, p in enumerate(parts)
        if p.get("type") == "video_url"
        and not audio_in_video
        and not (i + 1 < len(parts) and parts[i + 1].get("type") in AUDIO)
    ]


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

    def _key_and_model(self, req: RecordedRequest) -> Refusal | None:
        """The key and the served model only (servers whose part shapes are not the OpenAI API's)."""
        if req.path not in OPENAI_PATHS:
            return None
        if refused := check_auth(req.headers.get("authorization"), self.api_key):
            return refused
        if req.path == "/v1/chat/completions" and isinstance(req.json, dict):
            return check_model(req.json.get("model"), self.models)
        return None


class VllmFake(StrictServer):
    """vLLM's OpenAI-compatible server, of ``version``, started with ``--limit-mm-per-prompt``
    ``limit_mm_per_prompt`` and with ``--trust-request-mm-kwargs`` or not; see the module docstring."""

    owner = "vllm"

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        version: str = "0.32.0",
        limit_mm_per_prompt: Mapping[str, int] | None = None,
        trust_request_mm_kwargs: bool = False,
        chat_template: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(responder, **kwargs)
        self.version, self.limits = version, dict(limit_mm_per_prompt or {})
        self.trust_request_mm_kwargs, self.chat_template = trust_request_mm_kwargs, chat_template
        self.extra_fields |= VLLM_EXTRA_FIELDS  # vLLM's own request fields (mm_processor_kwargs, ...)
        self.route("GET", "/version", lambda req: Reply(body={"version": self.version}))

    def _older(self, version: str) -> bool:
        def parts(v: str) -> tuple[int, ...]:
            return tuple(int(x) for x in re.findall(r"\d+", v)[:3])

        return parts(self.version) < parts(version)

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        model, parts = body["model"], all_parts(body)
        if body.get("mm_processor_kwargs") and not self.trust_request_mm_kwargs and not self._older("0.31.0"):
            return Reply(
                status=400,  # rule vllm.trust-request-mm-kwargs: the message as vLLM 0.32.0 answers it
                body={
                    "error": {
                        "message": VLLM_MM_KWARGS_REFUSAL,
                        "type": "BadRequestError",
                        "param": "mm_processor_kwargs",
                        "code": 400,
                    }
                },
            )
        counts = {
            "image": sum(p.get("type") == "image_url" for p in parts),
            "video": sum(p.get("type") == "video_url" for p in parts),
            "audio": sum(p.get("type") in AUDIO for p in parts),
        }
        kimi = bool(KIMI_AUDIO_MODEL.search(model))
        for modality, count in counts.items():  # rule vllm.limit-mm-per-prompt (chat_utils.py's message)
            limit = self.limits.get(modality, VLLM_DEFAULT_MM_LIMIT)
            if kimi:  # rule vllm.kimi-audio.one-audio: the model's own limits win over the launch flag
                limit = min(limit, KIMI_AUDIO_LIMITS[modality])
            if count > limit:
                return vllm_error(f"At most {limit} {modality}(s) may be provided in one prompt.", modality)
        if kimi and not self.chat_template:  # rule vllm.kimi-audio.chat-template
            return vllm_error(VLLM_NO_CHAT_TEMPLATE)
        flag = self._audio_in_video(body)
        takes_flag = bool(AUDIO_IN_VIDEO_MODEL.search(model))
        if flag and takes_flag and counts["video"]:
            if self._older("0.16.0"):  # before vllm#33605; wording ours
                return vllm_error("use_audio_in_video is not supported in chat requests before vllm#33605")
            if counts["audio"]:  # rule vllm.audio-in-video.counts (test_online_audio_in_video_interleaved)
                return vllm_error(
                    "use_audio_in_video requires equal number of audio and video items, "
                    f"got num_audios={counts['audio'] + counts['video']}, num_videos={counts['video']}"
                )
        if flag and counts["video"] and self._soundless(parts):
            # rule vllm.soundless-video: the chat parser reads each video's audio with the audio loader, whose
            # PyAV path answers this for a file without an audio stream (vllm/multimodal/media/audio.py)
            return vllm_error("No audio stream found.")
        fed = flag and (takes_flag or bool(MINICPMO_MODEL.search(model)))  # the server reads each video's audio
        if silent_videos(body, fed):  # the silent drop made visible
            why = (
                "use_audio_in_video is off: vLLM would drop this video's audio track silently (vllm#47788)"
                if takes_flag
                else "vLLM's video loader reads frames only: this video's audio is not sent as an audio part"
            )
            return vllm_error(why)
        system = next((m for m in body["messages"] if m.get("role") == "system"), None)
        if MING_MODEL.search(model) and system is not None:  # rule vllm.ming.recipe: the system prompt's last line
            if not re.search(r"detailed thinking (on|off)$", str(system.get("content", ""))):
                return vllm_error("Ming's system prompt must end with 'detailed thinking on|off' (the recipe's switch)")
        return None

    def answer(self, body: dict[str, Any], text: str) -> Reply:
        """The completion, cut at ``max_tokens`` words (``finish_reason: "length"``: vLLM keeps to the limit), its
        prompt tokens counting every audio item the server reads (rule vllm.hearing): an audio part, and a
        video's track under ``use_audio_in_video``."""
        limit = body.get("max_tokens")
        words = text.split()
        cut = isinstance(limit, int) and len(words) > limit
        reply = chat_completion(body, " ".join(words[:limit]) if cut else text)
        if cut:
            reply["choices"][0]["finish_reason"] = "length"
        parts = all_parts(body)
        audio = sum(p.get("type") in AUDIO for p in parts)
        if self._audio_in_video(body):
            audio += sum(p.get("type") == "video_url" for p in parts)
        prompt_words = sum(len(str(p.get("text", "")).split()) for p in parts if p.get("type") == "text")
        usage = reply["usage"]
        usage["prompt_tokens"] += prompt_words + VLLM_AUDIO_ITEM_TOKENS * audio
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return Reply(body=reply)

    @staticmethod
    def _audio_in_video(body: Mapping[str, Any]) -> bool:
        return (body.get("mm_processor_kwargs") or {}).get("use_audio_in_video") is True

    @staticmethod
    def _soundless(parts: list[dict[str, Any]]) -> bool:
        for part in parts:
            data = data_url_bytes(part["video_url"]["url"]) if part.get("type") == "video_url" else None
            if data is not None and not LazyClip(data).info.has_audio:
                return True
        return False


class SglangFake(StrictServer):
    """SGLang's OpenAI-compatible server (``owned_by: "sglang"``) with the chat schema of before
    (``schema="old"``: ``audio_url`` only) or after (``"new"``) sgl-project/sglang#33606."""

    owner = "sglang"

    def __init__(self, responder: Responder | None = None, *, schema: str = "new", version: str = "0.5.9", **kw: Any):
        super().__init__(responder, **kw)
        if schema not in ("old", "new"):
            raise ValueError(f"schema must be old or new, got {schema!r}")
        self.schema, self.version = schema, version
        self.extra_fields |= SGLANG_EXTRA_FIELDS | ({"use_audio_in_video"} if schema == "new" else set())
        info = "/server_info" if schema == "new" else "/get_server_info"
        self.route("GET", info, lambda req: Reply(body={"version": self.version, "model_path": self.models[0]}))

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        if self.schema == "old" and any(p.get("type") == "input_audio" for p in all_parts(body)):
            # rule sglang.audio-url: the union of content parts has no input_audio before sglang#33606 (a
            # pydantic validation error, HTTP 400; wording abridged)
            return server_error(
                "1 validation error for ChatCompletionRequest: messages.content: Input tag 'input_audio' found "
                "using 'type' does not match any of the expected tags"
            )
        if silent_videos(body, audio_in_video=False):  # rule sglang.audio-in-video: the silent drop made visible
            return server_error("this video's audio is not sent as an audio part: SGLang would drop it silently")
        return None


class OpenAIFake(StrictServer):
    """api.openai.com; see the module docstring. ``transcripts`` maps the SHA-256 of an uploaded WAV
    to its transcript text (:func:`sample_transcripts`)."""

    owner = "openai"

    def __init__(self, responder: Responder | None = None, *, transcripts: Mapping[str, str] | None = None, **kw: Any):
        super().__init__(responder, **kw)
        self.transcripts = dict(transcripts or {})
        self.route("POST", "/v1/audio/transcriptions", self._transcribe)

    def _refusal(self, req: RecordedRequest) -> Refusal | None:
        if req.path == "/v1/audio/transcriptions" and len(req.body) > TRANSCRIPTION_BODY_LIMIT:
            # rule openai.transcription-25mb: the whole body is capped (HTTP 413, as users log it)
            return 413, {
                "error": {
                    "message": f"Maximum content size limit ({TRANSCRIPTION_BODY_LIMIT}) exceeded "
                    f"({len(req.body)} bytes read)",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            }
        return super()._refusal(req)

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        if REASONING.match(body["model"]):
            if "max_tokens" in body:  # rule openai.max-completion-tokens
                return openai_error(
                    400,
                    "Unsupported parameter: 'max_tokens' is not supported with this model. "
                    "Use 'max_completion_tokens' instead.",
                    "max_tokens",
                    "unsupported_parameter",
                )
            for name in ("temperature", "top_p"):  # rule openai.default-sampling
                if name in body and body[name] != 1:
                    return openai_error(
                        400,
                        f"Unsupported value: '{name}' does not support {body[name]} with this model. "
                        "Only the default (1) value is supported.",
                        name,
                        "unsupported_value",
                    )
        for part in all_parts(body):
            if part.get("type") not in ("text", "image_url", "input_audio", "file"):  # rule openai.no-video-url
                return openai_error(
                    400,
                    f"Invalid value: '{part.get('type')}'. Supported values are: 'text', 'image_url', "
                    "'input_audio', 'refusal', 'audio', and 'file'.",
                    "messages.content.type",
                    "invalid_value",
                )
            if part.get("type") == "input_audio" and not OPENAI_AUDIO_MODEL.match(body["model"]):
                # rule openai.audio-models-only (wording ours)
                return openai_error(
                    400,
                    f"Invalid content type: input_audio is not supported by model {body['model']}.",
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
        if fmt == "verbose_json" and model != "whisper-1":  # rule openai.verbose-json-whisper-only
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
        return self._key_and_model(req)

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        if body.get("stream") is not True:  # rule dashscope.stream-only
            return openai_error(
                400,
                "This model only support stream mode, please enable the stream parameter to access the model.",
                code="invalid_parameter_error",
            )
        videos = audios = 0
        for message in body["messages"]:
            kinds = {p["type"] for p in parts_of(message) if p.get("type") in MEDIA}
            if len(kinds) > 1:  # rule dashscope.one-modality
                return openai_error(400, f"one non-text modality per user message, got {sorted(kinds)}")
            for part in parts_of(message):
                if part.get("type") == "input_audio":
                    audios += 1
                    data = str(part["input_audio"].get("data", ""))
                    if not data.startswith(("data:", "http://", "https://", "oss://")):  # rule dashscope.data-urls
                        return openai_error(400, "input_audio.data must be a URL or a data URL 'data:;base64,...'")
                    payload = data
                elif part.get("type") == "video_url":
                    videos += 1
                    payload = str(part["video_url"].get("url", ""))
                else:
                    continue
                if payload.startswith("data:") and len(payload.split(",", 1)[-1]) > DASHSCOPE_ITEM_LIMIT:
                    return openai_error(400, "a Base64 media item exceeds 10 MB")  # rule dashscope.item-10mb
        if DASHSCOPE_ONE_FILE.search(body["model"]) and (videos > 1 or audios > 1):  # rule dashscope.one-file
            return openai_error(400, f"only one video file and one audio file per request, got {videos} and {audios}")
        return None

    def answer(self, body: dict[str, Any], text: str) -> Reply:
        return Reply(body="".join(sse_chunks(body, text)), content_type="text/event-stream")


class ArkFake(StrictServer):
    """Volcengine Ark's OpenAI-compatible chat API; ``audio_url=False``: an endpoint that refuses
    ``audio_url`` parts (JimLiu/doubao-multimodal-skill ``.env.example``); see the module docstring."""

    owner = "volcengine"

    def __init__(self, responder: Responder | None = None, *, audio_url: bool = True, **kw: Any) -> None:
        super().__init__(responder, **kw)
        self.takes_audio_url = audio_url

    def _refusal(self, req: RecordedRequest) -> Refusal | None:
        """The key and the served model; Ark's part shapes (``input_audio {url}``) are not the OpenAI API's."""
        return self._key_and_model(req)

    def refuse(self, body: dict[str, Any]) -> Reply | None:
        if "stop" in body:  # rule ark.no-stop (deep-reasoning models; wording ours)
            return openai_error(400, "stop is not supported by deep reasoning models", "stop")
        for part in all_parts(body):
            kind = part.get("type")
            if kind == "audio_url" and not self.takes_audio_url:  # rule ark.audio-url (the skill's 400)
                return openai_error(400, "invalid value: audio_url", "messages.content.type")
            if kind == "input_audio" and not isinstance(part["input_audio"].get("url"), str):
                # rule ark.audio-url: no source shows OpenAI's {data, format} taken (wording ours)
                return openai_error(400, "invalid value: input_audio needs a url", "messages.content.input_audio")
            spec = part.get(kind) if kind in ("audio_url", "video_url", "image_url", "input_audio") else None
            data = data_url_bytes(str(spec.get("url", ""))) if isinstance(spec, dict) else None
            if data is not None and len(data) > ARK_ITEM_BYTES:  # rule ark.item-50mb (wording ours)
                return openai_error(400, "a media item above 50 MB: upload it with the Files API")
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
    "VLLM_DEFAULT_MM_LIMIT",
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
