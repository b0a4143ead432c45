"""What a real OpenAI-compatible server refuses, as pure checks for the loopback test server.

Each check returns ``None`` (accepted) or a :data:`Refusal`: the HTTP status and an OpenAI-style
error body ``{"error": {"message", "type", "param", "code"}}``. Sources, cited per rule below:

* [OAI-REF] OpenAI API reference, "Create chat completion" (POST /chat/completions) and "Create
  transcription" (POST /audio/transcriptions):
  https://developers.openai.com/api/reference/resources/chat/subresources/completions/methods/create
* [OAI-ERR] the errors the OpenAI API answers, as users quote them, e.g. 401 ``invalid_api_key``;
  404 ``model_not_found`` (github.com/Aider-AI/aider/issues/2030); 400 "Unrecognized request
  argument supplied: top_k" (github.com/xlinx/sd-webui-decadetw-auto-prompt-llm/issues/29);
  "Invalid value: 'developer'. Supported values are: ..." with ``param: messages[0].role``
  (github.com/run-llama/llama_index/issues/17748); "Invalid type for 'messages[1].content':
  expected one of a string or array of objects" (github.com/pydantic/pydantic-ai/issues/2653);
  "Expected a base64-encoded data URL with an image MIME type" (github.com/Alibaba-NLP/OmniSearch/issues/3).
* [VLLM] vLLM's OpenAI-compatible server: the ``--api-key`` middleware (401 for a ``/v1`` request
  whose ``Authorization`` is not ``Bearer <key>``), ``SamplingParams._verify_args``
  (vllm/sampling_params.py: temperature in [0, 2], top_p in (0, 1], max_tokens >= 1, penalties in
  [-2, 2], top_k >= -1, min_p in [0, 1]), ``MediaConnector`` (vllm/multimodal/media/connector.py:
  only base64 ``data:`` URLs, ``file:`` URLs only under ``--allowed-local-media-path``), the
  ``video_url``/``audio_url`` content parts (vllm/entrypoints/chat_utils.py) and the extra request
  fields of its Chat API (docs: "OpenAI-Compatible Server", section "Extra Parameters").
"""

from __future__ import annotations

import base64
import binascii
import email.parser
import email.policy
import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

#: The key the loopback server accepts by default (``Authorization: Bearer <API_KEY>``).
API_KEY = "sk-loopback-test-0123456789"
#: The model the loopback server serves by default.
DEFAULT_MODEL = "loopback"

#: An HTTP status and an OpenAI-style error body.
Refusal = tuple[int, dict[str, Any]]

#: The paths of the OpenAI API the server guards with its key [OAI-REF, VLLM]; other routes (a Gemini
#: fake on the same server) answer for themselves.
OPENAI_PATHS = frozenset(
    {"/v1/chat/completions", "/v1/completions", "/v1/models", "/v1/audio/transcriptions", "/v1/embeddings"}
)

#: Top-level fields of a chat completion request [OAI-REF]; anything else is refused [OAI-ERR].
CHAT_FIELDS = frozenset(
    {
        "model", "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias",
        "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "n",
        "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key", "reasoning_effort",
        "response_format", "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
        "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user",
        "verbosity", "web_search_options",
    }
)  # fmt: skip
#: Extra fields vLLM's Chat API takes [VLLM]; a server accepts them only when listed in its ``extra_fields``.
VLLM_EXTRA_FIELDS = frozenset(
    {
        "top_k", "min_p", "repetition_penalty", "min_tokens", "stop_token_ids", "ignore_eos",
        "skip_special_tokens", "include_stop_str_in_output", "chat_template", "chat_template_kwargs",
        "mm_processor_kwargs", "add_generation_prompt", "continue_final_message", "priority",
    }
)  # fmt: skip
#: Extra fields SGLang's ``ChatCompletionRequest`` declares (python/sglang/srt/entrypoints/openai/protocol.py);
#: ``use_audio_in_video`` only in newer releases. SGLang itself ignores other fields without a word.
SGLANG_EXTRA_FIELDS = frozenset(
    {
        "top_k", "min_p", "min_tokens", "regex", "ebnf", "repetition_penalty", "stop_token_ids", "no_stop_trim",
        "ignore_eos", "continue_final_message", "skip_special_tokens", "lora_path", "session_params",
        "separate_reasoning", "stream_reasoning", "chat_template_kwargs", "max_dynamic_patch", "min_dynamic_patch",
        "rid", "priority",
    }
)  # fmt: skip

#: Message roles [OAI-REF]; the error names them as the API does [OAI-ERR].
ROLES = ("system", "assistant", "user", "function", "tool", "developer")
#: Content part types per role [OAI-REF]; users may also send vLLM's ``video_url``/``audio_url`` [VLLM].
PART_TYPES = {
    "system": ("text",),
    "developer": ("text",),
    "user": ("text", "image_url", "input_audio", "file", "video_url", "audio_url"),
    "assistant": ("text", "refusal"),
    "tool": ("text",),
}
#: ``input_audio.format`` values [OAI-REF].
AUDIO_FORMATS = ("wav", "mp3")
#: ``image_url.detail`` values [OAI-REF].
IMAGE_DETAILS = ("auto", "low", "high")
#: ``response_format`` of a transcription [OAI-REF].
TRANSCRIPTION_FORMATS = ("json", "text", "srt", "verbose_json", "vtt")


def refusal(status: int, message: str, param: str | None = None, code: str | None = None) -> Refusal:
    """An OpenAI-style error (the API types its 400, 401 and 404 answers ``invalid_request_error``)."""
    return status, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def check_auth(authorization: str | None, api_key: str | None) -> Refusal | None:
    """401 unless the request carries ``Authorization: Bearer <api_key>`` [OAI-REF "Authentication", VLLM];
    ``api_key=None`` accepts anything. The key is never echoed."""
    if api_key is None:
        return None
    if not authorization:
        return refusal(401, "You didn't provide an API key (Authorization: Bearer YOUR_KEY).")
    if authorization != f"Bearer {api_key}":
        return refusal(401, "Incorrect API key provided.", code="invalid_api_key")
    return None


def check_model(model: Any, models: Collection[str]) -> Refusal | None:
    """404 ``model_not_found`` for a model the server does not serve [OAI-ERR; VLLM answers 404 too]."""
    if not isinstance(model, str) or not model:
        return refusal(400, "you must provide a model parameter", param="model")
    if model not in models:
        return refusal(
            404, f"The model `{model}` does not exist or you do not have access to it.", code="model_not_found"
        )
    return None


def check_chat(body: Any, extra_fields: Collection[str] = (), local_media_root: Path | None = None) -> Refusal | None:
    """400 for a chat request a real server refuses (the model is :func:`check_model`'s)."""
    if not isinstance(body, dict):
        return refusal(400, "We could not parse the JSON body of your request.")
    unknown = sorted(set(body) - CHAT_FIELDS - set(extra_fields))
    if unknown:
        return refusal(400, f"Unrecognized request argument supplied: {unknown[0]}", param=unknown[0])
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return refusal(400, "'messages' must be a non-empty array.", param="messages")
    for i, message in enumerate(messages):
        if problem := _message(message, f"messages[{i}]", local_media_root):
            return problem
    return _sampling(body) or _extras(body)


def check_transcription(content_type: str | None, body: bytes) -> tuple[Refusal | None, dict[str, Any]]:
    """A transcription upload [OAI-REF "Create transcription"]: ``multipart/form-data`` with a
    non-empty ``file``; ``response_format`` one of :data:`TRANSCRIPTION_FORMATS`;
    ``timestamp_granularities[]`` only with ``verbose_json``. Returns the refusal and the form
    fields (``file`` as bytes; the required ``model`` is :func:`check_model`'s)."""
    if not (content_type or "").startswith("multipart/form-data"):
        return refusal(400, "Content-Type must be multipart/form-data.", param="file"), {}
    form = _form(content_type or "", body)
    if not isinstance(form.get("file"), bytes) or not form["file"]:
        return refusal(400, "you must provide a file to transcribe", param="file"), form
    fmt = form.get("response_format", "json")
    if fmt not in TRANSCRIPTION_FORMATS:
        return _invalid_value("response_format", fmt, TRANSCRIPTION_FORMATS), form
    if "timestamp_granularities[]" in form and fmt != "verbose_json":
        return refusal(400, "timestamp_granularities requires response_format=verbose_json", "response_format"), form
    return None, form


# --- messages and parts -------------------------------------------------------------------------


def _message(message: Any, where: str, root: Path | None) -> Refusal | None:
    if not isinstance(message, dict):
        return _invalid_type(where, "an object", message)
    role = message.get("role")
    if role not in ROLES:
        return _invalid_value(f"{where}.role", role, ROLES)
    content = message.get("content")
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return refusal(400, f"Missing required parameter: '{where}.tool_call_id'.", f"{where}.tool_call_id")
    if content is None and (role == "function" or (role == "assistant" and message.get("tool_calls"))):
        return None
    if isinstance(content, str):
        return None
    if not isinstance(content, list) or (role == "function"):
        expected = "a string" if role == "function" else "one of a string or array of objects"
        return _invalid_type(f"{where}.content", expected, content)
    for j, part in enumerate(content):
        if problem := _part(part, f"{where}.content[{j}]", PART_TYPES[role], root):
            return problem
    return None


def _part(part: Any, where: str, allowed: tuple[str, ...], root: Path | None) -> Refusal | None:
    if not isinstance(part, dict):
        return _invalid_type(where, "an object", part)
    kind = part.get("type")
    if kind not in allowed:
        return _invalid_value(f"{where}.type", kind, allowed)
    if kind in ("text", "refusal"):
        return None if isinstance(part.get(kind), str) else _invalid_type(f"{where}.{kind}", "a string", part.get(kind))
    if kind == "file":
        file = part.get("file")
        ok = isinstance(file, dict) and any(isinstance(file.get(k), str) for k in ("file_data", "file_id"))
        return None if ok else _missing(f"{where}.file.file_data")
    if kind == "input_audio":
        return _input_audio(part.get("input_audio"), f"{where}.input_audio")
    spec = part.get(kind)
    if not isinstance(spec, dict):
        return _invalid_type(f"{where}.{kind}", "an object", spec)
    if kind == "image_url" and spec.get("detail", "auto") not in IMAGE_DETAILS:
        return _invalid_value(f"{where}.image_url.detail", spec.get("detail"), IMAGE_DETAILS)
    url = spec.get("url")
    if not isinstance(url, str):
        return _missing(f"{where}.{kind}.url") if url is None else _invalid_type(f"{where}.{kind}.url", "a string", url)
    return _media_url(url, f"{where}.{kind}.url", "image/" if kind == "image_url" else "", root)


def _input_audio(spec: Any, where: str) -> Refusal | None:
    """``{"data": <base64>, "format": "wav" | "mp3"}`` [OAI-REF]."""
    if not isinstance(spec, dict):
        return _invalid_type(where, "an object", spec)
    if spec.get("format") not in AUDIO_FORMATS:
        return _invalid_value(f"{where}.format", spec.get("format"), AUDIO_FORMATS)
    data = spec.get("data")
    if not isinstance(data, str) or not _b64(data):
        return refusal(400, f"Invalid '{where}.data': expected base64-encoded audio bytes.", f"{where}.data")
    return None


def _media_url(url: str, where: str, family: str, root: Path | None) -> Refusal | None:
    """``data:<mime>;base64,<data>`` with a MIME type (an image's for ``image_url`` [OAI-ERR]) and
    valid base64 [VLLM ``_load_data_url``]; ``http(s)``; ``file:`` under the allowed root only [VLLM]."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("http", "https"):
        return None if urlparse(url).netloc else refusal(400, f"Invalid URL in '{where}'.", where, "invalid_value")
    if scheme == "file":
        path = Path(unquote(urlparse(url).path))
        if root is None:
            return refusal(400, "Cannot load local files without `--allowed-local-media-path`.", where)
        if root.resolve() not in path.resolve().parents:
            return refusal(400, f"The file path {path} must be a subpath of `--allowed-local-media-path`.", where)
        return None if path.is_file() else refusal(400, f"The file path {path} does not exist.", where)
    if scheme != "data":
        return refusal(400, f"Invalid '{where}': expected an http(s) URL or a base64 data URL.", where, "invalid_value")
    spec, sep, data = url[5:].partition(",")
    mime, _, encoding = spec.rpartition(";")
    mime = mime.partition(";")[0]
    if not sep or encoding != "base64":
        return refusal(400, "Only base64 data URLs are supported.", where, "invalid_value")
    if "/" not in mime or not mime.startswith(family):
        want = f"an {family[:-1]} MIME type" if family else "a MIME type"
        return refusal(400, f"Invalid '{where}': expected a base64-encoded data URL with {want}.", where)
    if not _b64(data):
        return refusal(400, f"Invalid '{where}': the base64 data is not valid (or empty).", where, "invalid_value")
    return None


# --- sampling and other fields ---------------------------------------------------------------------

#: name -> (low, high, low inclusive, integer) [OAI-REF ranges; VLLM ``_verify_args``, top_p > 0].
_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "temperature": (0.0, 2.0, True, False),
    "top_p": (0.0, 1.0, False, False),
    "max_tokens": (1, math.inf, True, True),
    "max_completion_tokens": (1, math.inf, True, True),
    "n": (1, 128, True, True),
    "presence_penalty": (-2.0, 2.0, True, False),
    "frequency_penalty": (-2.0, 2.0, True, False),
    "top_logprobs": (0, 20, True, True),
    "seed": (-math.inf, math.inf, True, True),
    "top_k": (-1, math.inf, True, True),
    "min_p": (0.0, 1.0, True, False),
    "repetition_penalty": (0.0, math.inf, False, False),
    "min_tokens": (0, math.inf, True, True),
}


def _sampling(body: Mapping[str, Any]) -> Refusal | None:
    for name, (low, high, closed, integer) in _RANGES.items():
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
            return _invalid_type(name, "an integer" if integer else "a number", value)
        if not math.isfinite(value) or value > high or value < low or (value == low and not closed):
            side = "above maximum" if value > high else "below minimum"
            return refusal(400, f"Invalid '{name}': {value} is {side} value (range {low}..{high}).", name)
    stop = body.get("stop")
    if stop is not None:
        stops = [stop] if isinstance(stop, str) else stop
        if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops) or len(stops) > 4:
            return refusal(400, "Invalid 'stop': up to 4 non-empty strings.", "stop")
    for flag in ("stream", "logprobs", "store", "parallel_tool_calls"):
        if flag in body and not isinstance(body[flag], bool):
            return _invalid_type(flag, "a boolean", body[flag])
    if "stream_options" in body and body.get("stream") is not True:
        return refusal(
            400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options"
        )
    fmt = body.get("response_format")
    if fmt is not None and (not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema")):
        return _invalid_value("response_format.type", fmt, ("text", "json_object", "json_schema"))
    return None


def _extras(body: Mapping[str, Any]) -> Refusal | None:
    """vLLM's object-valued extras must be objects [VLLM]."""
    for name in ("chat_template_kwargs", "mm_processor_kwargs"):
        if name in body and not isinstance(body[name], dict):
            return _invalid_type(name, "an object", body[name])
    return None


# --- helpers ---------------------------------------------------------------------------------------


def _b64(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _type_name(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a decimal", str: "a string", list: "an array"}
    return "null" if value is None else names.get(type(value), "an object")


def _invalid_type(param: str, expected: str, value: Any) -> Refusal:
    message = f"Invalid type for '{param}': expected {expected}, but got {_type_name(value)} instead."
    return refusal(400, message, param, "invalid_type")


def _invalid_value(param: str, value: Any, allowed: tuple[str, ...]) -> Refusal:
    listed = ", ".join(f"'{v}'" for v in allowed)
    return refusal(400, f"Invalid value: {value!r}. Supported values are: {listed}.", param, "invalid_value")


def _missing(param: str) -> Refusal:
    return refusal(400, f"Missing required parameter: '{param}'.", param, "missing_required_parameter")


def _form(content_type: str, body: bytes) -> dict[str, Any]:
    """The fields of a ``multipart/form-data`` body (files as bytes, the rest as text)."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    form: dict[str, Any] = {}
    for part in message.iter_parts() if message.is_multipart() else ():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True) or b""
        is_file = part.get_param("filename", header="content-disposition") is not None
        form[str(name)] = payload if is_file else payload.decode("utf-8", "replace")
    return form


__all__ = [
    "API_KEY",
    "CHAT_FIELDS",
    "DEFAULT_MODEL",
    "OPENAI_PATHS",
    "SGLANG_EXTRA_FIELDS",
    "VLLM_EXTRA_FIELDS",
    "Refusal",
    "check_auth",
    "check_chat",
    "check_model",
    "check_transcription",
    "refusal",
]
