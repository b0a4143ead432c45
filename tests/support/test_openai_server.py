"""The loopback OpenAI-compatible server used by the judge and lm-eval tests behaves as documented,
and refuses what a real OpenAI-compatible server refuses (each rule's source is cited in
``tests/support/openai_rules.py``: [OAI-REF] the OpenAI API reference, [OAI-ERR] the errors it
answers, [VLLM] vLLM's OpenAI-compatible server)."""

from __future__ import annotations

import base64
import concurrent.futures
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest

from support.openai_rules import API_KEY, VLLM_EXTRA_FIELDS
from support.openai_server import Fault, OpenAIServer, Reply

MODELS = ["judge", "asr"]
WAV = base64.b64encode(b"RIFF0000WAVEfmt ").decode()
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
MP4 = "data:video/mp4;base64," + base64.b64encode(b"\x00\x00\x00\x18ftypmp42").decode()


@pytest.fixture
def server(openai_server: OpenAIServer) -> OpenAIServer:
    openai_server.models = list(MODELS)
    return openai_server


def _client(server: OpenAIServer, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=API_KEY, max_retries=0, timeout=timeout)


def _ask(client: openai.OpenAI, text: str = "hello") -> str | None:
    reply = client.chat.completions.create(model="judge", messages=[{"role": "user", "content": text}], temperature=0)
    return reply.choices[0].message.content


@dataclass(frozen=True)
class Answer:
    status_code: int
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def _send(url: str, data: bytes, headers: dict[str, str]) -> Answer:
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5.0) as reply:
            return Answer(reply.status, reply.read().decode())
    except urllib.error.HTTPError as refused:
        return Answer(refused.code, refused.read().decode())


def _post(server: OpenAIServer, body: Any, auth: str | None = f"Bearer {API_KEY}") -> Answer:
    headers = {"Content-Type": "application/json", **({"Authorization": auth} if auth else {})}
    return _send(server.base_url + "/chat/completions", json.dumps(body).encode(), headers)


def _multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes, str]]) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body and its content type."""
    boundary, out = "loopback-boundary-7f3a", b""
    for name, value in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
    for name, (filename, data, mime) in files.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
        out += f"{head}Content-Type: {mime}\r\n\r\n".encode() + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def _chat(**changes: Any) -> dict[str, Any]:
    """A valid chat request with multimodal parts, then ``changes`` (``None`` removes a field)."""
    body: dict[str, Any] = {
        "model": "judge",
        "messages": [
            {"role": "system", "content": "You annotate."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "clip:"},
                    {"type": "video_url", "video_url": {"url": MP4}},
                    {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                    {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}},
                ],
            },
            {"role": "assistant", "content": "First reply."},
            {"role": "user", "content": "and now?"},
        ],
        "temperature": 0,
        "max_tokens": 64,
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not None}


def _with_part(part: dict[str, Any]) -> dict[str, Any]:
    body = _chat()
    body["messages"][1]["content"].append(part)
    return body


# --- what the server does ------------------------------------------------------------------------


def test_chat_reply_usage_and_log(server: OpenAIServer) -> None:
    server.responder = lambda body: "echo " + body["messages"][-1]["content"]
    client = _client(server)
    reply = client.chat.completions.create(model="judge", messages=[{"role": "user", "content": "two words"}])
    assert reply.choices[0].message.content == "echo two words"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (2, 3)
    (req,) = server.requests
    assert req.path == "/v1/chat/completions" and req.json["model"] == "judge"
    assert req.headers["authorization"] == f"Bearer {API_KEY}"


def test_a_valid_multimodal_request_is_answered(server: OpenAIServer) -> None:
    reply = _post(server, _chat())
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "ok"


def test_injected_faults_in_order(server: OpenAIServer) -> None:
    client = _client(server, timeout=0.3)
    server.inject(Fault.server_error(503), Fault.rate_limit(2.5), Fault.slow(1.0), Fault.not_json(), Fault.dropped())
    with pytest.raises(openai.InternalServerError):
        _ask(client)
    with pytest.raises(openai.RateLimitError) as rate:
        _ask(client)
    assert rate.value.response.headers["retry-after"] == "2.5"
    with pytest.raises(openai.APITimeoutError):
        _ask(client)
    with pytest.raises(ValueError):  # the SDK surfaces an undecodable 200 body as a JSON error
        _ask(client)
    with pytest.raises(openai.APIConnectionError):
        _ask(client)
    assert _ask(client) == "ok"
    assert server.count() == 6


def test_concurrency_is_measured(server: OpenAIServer) -> None:
    server.latency = 0.2
    client = _client(server)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda i: _ask(client), range(4))) == ["ok"] * 4
    assert server.max_in_flight >= 2
    assert server.in_flight == 0


def test_custom_route_and_fault_plan(server: OpenAIServer) -> None:
    server.route("POST", "/v1/audio/transcriptions", lambda req: Reply(body={"text": "hi"}))
    client = _client(server)
    text = client.audio.transcriptions.create(model="asr", file=("a.wav", b"RIFF0000", "audio/wav"))
    assert text.text == "hi"
    assert server.count("/v1/audio/transcriptions") == 1
    server.fault_plan = lambda req: Fault.server_error() if req.index % 2 == 1 else None
    with pytest.raises(openai.InternalServerError):
        _ask(client)  # request index 1
    assert _ask(client) == "ok"  # request index 2
    server.reset()
    assert server.requests == [] and server.max_in_flight == 0


def test_models_lists_what_is_served(server: OpenAIServer) -> None:
    assert [m.id for m in _client(server).models.list()] == MODELS


# --- what it refuses, as a real server does ----------------------------------------------------------


@pytest.mark.parametrize(
    ("auth", "code"),
    [(None, None), ("Bearer sk-wrong-0000000000", "invalid_api_key"), (f"Basic {API_KEY}", "invalid_api_key")],
    ids=["none", "wrong", "not-bearer"],
)
def test_missing_or_wrong_key_is_401_without_echoing_the_key(server: OpenAIServer, auth: str | None, code) -> None:
    """[OAI-REF "Authentication"; VLLM ``--api-key``]: ``Authorization: Bearer <key>`` on every /v1 call."""
    reply = _post(server, _chat(), auth=auth)
    assert reply.status_code == 401 and reply.json()["error"]["code"] == code
    assert "sk-wrong" not in reply.text and API_KEY not in reply.text
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server.base_url, api_key="sk-wrong", max_retries=0).models.list()


def test_no_key_check_when_api_key_is_none(server: OpenAIServer) -> None:
    """A vLLM server started without ``--api-key`` takes any key [VLLM]."""
    server.api_key = None
    assert _post(server, _chat(), auth="Bearer EMPTY").status_code == 200


def test_unknown_model_is_404_model_not_found(server: OpenAIServer) -> None:
    """[OAI-ERR] 404 ``model_not_found``; vLLM answers 404 for a model it does not serve [VLLM]."""
    reply = _post(server, _chat(model="gpt-nope"))
    assert reply.status_code == 404 and reply.json()["error"]["code"] == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        _client(server).chat.completions.create(model="gpt-nope", messages=[{"role": "user", "content": "hi"}])
    assert _post(server, _chat(model=None)).status_code == 400  # no model at all


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set ``messages[i].<keys>`` (``path`` like ``1.content.1.video_url.url``) of a :func:`_chat` body."""

    def apply(body: dict[str, Any]) -> None:
        *keys, last = [int(k) if k.isdigit() else k for k in path.split(".")]
        node: Any = body["messages"]
        for k in keys:
            node = node[k]
        node[last] = value

    return apply


#: (id, change to a valid request, expected ``param`` of the 400) — each a request a real server refuses.
REFUSED: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    # [OAI-REF] roles: developer, system, user, assistant, tool, function [OAI-ERR "Invalid value"]
    ("role-unknown", _set("0.role", "narrator"), "messages[0].role"),
    ("role-missing", lambda b: b["messages"][0].pop("role"), "messages[0].role"),
    ("tool-without-call-id", _set("0.role", "tool"), "messages[0].tool_call_id"),
    # [OAI-REF] content: a string or an array of parts [OAI-ERR "Invalid type for 'messages[1].content'"]
    ("content-integer", _set("3.content", 42), "messages[3].content"),
    ("content-object", _set("3.content", {"type": "text", "text": "hi"}), "messages[3].content"),
    ("content-null-user", _set("3.content", None), "messages[3].content"),
    ("message-not-object", _set("3", "hello"), "messages[3]"),
    ("messages-empty", lambda b: b.update(messages=[]), "messages"),
    # [OAI-REF] part types per role (system: text only; users also vLLM's video_url/audio_url [VLLM])
    ("part-type-unknown", _set("1.content.0.type", "input_video"), "messages[1].content[0].type"),
    ("part-image-in-system", _set("0.content", [{"type": "image_url", "image_url": {"url": PNG}}]), "messages[0].content[0].type"),
    ("part-text-not-string", _set("1.content.0.text", 7), "messages[1].content[0].text"),
    # [OAI-REF] image_url {url, detail: auto|low|high}; input_audio {data: base64, format: wav|mp3}
    ("image-url-string", _set("1.content.3.image_url", PNG), "messages[1].content[3].image_url"),
    ("image-detail", _set("1.content.3.image_url.detail", "ultra"), "messages[1].content[3].image_url.detail"),
    ("image-url-missing", _set("1.content.3.image_url", {"detail": "low"}), "messages[1].content[3].image_url.url"),
    ("audio-format", _set("1.content.2.input_audio.format", "flac"), "messages[1].content[2].input_audio.format"),
    ("audio-bad-base64", _set("1.content.2.input_audio.data", "not base64!"), "messages[1].content[2].input_audio.data"),
    ("audio-data-url", _set("1.content.2.input_audio.data", "data:audio/wav;base64," + WAV), "messages[1].content[2].input_audio.data"),
    ("video-url-missing", _set("1.content.1.video_url", {}), "messages[1].content[1].video_url.url"),
    # [OAI-ERR "Expected a base64-encoded data URL with an image MIME type"; VLLM ``_load_data_url``]
    ("data-url-bad-base64", _set("1.content.1.video_url.url", "data:video/mp4;base64,@@@@"), "messages[1].content[1].video_url.url"),
    ("data-url-no-mime", _set("1.content.1.video_url.url", "data:;base64,AAAA"), "messages[1].content[1].video_url.url"),
    ("data-url-not-base64", _set("1.content.1.video_url.url", "data:video/mp4,AAAA"), "messages[1].content[1].video_url.url"),
    ("data-url-empty", _set("1.content.1.video_url.url", "data:video/mp4;base64,"), "messages[1].content[1].video_url.url"),
    ("image-url-not-image", _set("1.content.3.image_url.url", MP4), "messages[1].content[3].image_url.url"),
    ("url-raw-base64", _set("1.content.3.image_url.url", "iVBORw0KGgo="), "messages[1].content[3].image_url.url"),
    # [VLLM ``_load_file_url``] file: URLs only under --allowed-local-media-path
    ("file-url-not-allowed", _set("1.content.1.video_url.url", "file:///etc/hostname"), "messages[1].content[1].video_url.url"),
    # [OAI-REF] ranges; [VLLM ``SamplingParams._verify_args``]: temperature [0, 2], top_p (0, 1], max_tokens >= 1
    ("temperature-negative", lambda b: b.update(temperature=-5), "temperature"),
    ("temperature-above-2", lambda b: b.update(temperature=2.5), "temperature"),
    ("temperature-string", lambda b: b.update(temperature="0"), "temperature"),
    ("top-p-above-1", lambda b: b.update(top_p=1.5), "top_p"),
    ("top-p-zero", lambda b: b.update(top_p=0), "top_p"),
    ("max-tokens-zero", lambda b: b.update(max_tokens=0), "max_tokens"),
    ("max-tokens-float", lambda b: b.update(max_tokens=1.5), "max_tokens"),
    ("max-completion-tokens-negative", lambda b: b.update(max_completion_tokens=-1), "max_completion_tokens"),
    ("n-zero", lambda b: b.update(n=0), "n"),
    ("presence-penalty", lambda b: b.update(presence_penalty=3), "presence_penalty"),
    ("frequency-penalty", lambda b: b.update(frequency_penalty=-2.5), "frequency_penalty"),
    ("seed-bool", lambda b: b.update(seed=True), "seed"),
    ("stop-five", lambda b: b.update(stop=["a", "b", "c", "d", "e"]), "stop"),
    ("stop-empty-string", lambda b: b.update(stop=[""]), "stop"),
    ("stream-string", lambda b: b.update(stream="yes"), "stream"),
    ("stream-options-without-stream", lambda b: b.update(stream_options={"include_usage": True}), "stream_options"),
    ("response-format", lambda b: b.update(response_format={"type": "xml"}), "response_format.type"),
    # [OAI-ERR "Unrecognized request argument supplied"]: vLLM extras are refused unless allowed
    ("unknown-field", lambda b: b.update(tempreature=0), "tempreature"),
    ("vllm-extra-not-allowed", lambda b: b.update(mm_processor_kwargs={"use_audio_in_video": True}), "mm_processor_kwargs"),
    ("top-k-not-allowed", lambda b: b.update(top_k=5), "top_k"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "param"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_invalid_chat_requests_are_400(server: OpenAIServer, change, param: str) -> None:
    seen: list[Any] = []
    server.responder = lambda body: seen.append(body) or "ok"
    body = _chat()
    change(body)
    reply = _post(server, body)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error" and error["message"]
    assert seen == [] and server.count() == 1  # refused before the responder, and logged


def test_listed_vllm_extras_are_accepted_and_still_checked(server: OpenAIServer) -> None:
    """vLLM takes its extra fields [VLLM "Extra Parameters"]; their values are still checked."""
    server.extra_fields = set(VLLM_EXTRA_FIELDS)
    extras = {"mm_processor_kwargs": {"use_audio_in_video": True}, "chat_template_kwargs": {"enable_thinking": False}}
    assert _post(server, _chat(top_k=20, min_p=0.1, **extras)).status_code == 200
    for bad in ({"top_k": -2}, {"min_p": 1.5}, {"repetition_penalty": 0}, {"chat_template_kwargs": "on"}):
        assert _post(server, _chat(**bad)).status_code == 400, bad
    with pytest.raises(openai.BadRequestError):  # through the SDK's extra_body, as the backends send it
        _client(server).chat.completions.create(
            model="judge", messages=[{"role": "user", "content": "hi"}], extra_body={"best_of": 2}
        )


def test_file_urls_are_read_only_under_the_allowed_root(server: OpenAIServer, tmp_path: Path) -> None:
    """[VLLM ``_load_file_url``]: ``file:`` URLs need ``--allowed-local-media-path`` and must lie under it."""
    clip = tmp_path / "media" / "clip.mp4"
    clip.parent.mkdir()
    clip.write_bytes(b"\x00")
    body = _chat()
    _set("1.content.1.video_url.url", clip.as_uri())(body)
    assert _post(server, body).status_code == 400
    server.local_media_root = clip.parent
    assert _post(server, body).status_code == 200
    _set("1.content.1.video_url.url", (tmp_path / "media" / ".." / "other.mp4").as_uri())(body)
    assert _post(server, body).status_code == 400


def test_transcriptions_need_multipart_with_file_and_known_model(server: OpenAIServer) -> None:
    """[OAI-REF "Create transcription"]: multipart/form-data, ``file`` and ``model`` required;
    ``timestamp_granularities`` only with ``verbose_json``."""
    server.route("POST", "/v1/audio/transcriptions", lambda req: Reply(body={"text": "hi"}))
    url, auth = server.base_url + "/audio/transcriptions", {"Authorization": f"Bearer {API_KEY}"}
    wav = {"file": ("a.wav", b"RIFF0000", "audio/wav")}

    def send(data: dict[str, str], files: dict = wav, headers: dict = auth) -> int:
        body, content_type = _multipart(data, files)
        return _send(url, body, {**headers, "Content-Type": content_type}).status_code

    assert send({"model": "asr"}) == 200
    assert send({"model": "asr"}, headers={}) == 401
    assert send({"model": "whisper-nope"}) == 404
    assert send({}) == 400  # no model
    assert send({"model": "asr"}, files={"audio": ("a.wav", b"RIFF0000", "audio/wav")}) == 400  # no file
    assert send({"model": "asr"}, files={"file": ("a.wav", b"", "audio/wav")}) == 400  # empty file
    assert send({"model": "asr", "response_format": "xml"}) == 400
    assert send({"model": "asr", "timestamp_granularities[]": "segment"}) == 400  # not verbose_json
    assert send({"model": "asr", "response_format": "verbose_json", "timestamp_granularities[]": "segment"}) == 200
    json_body = _send(
        url, json.dumps({"model": "asr", "file": WAV}).encode(), {**auth, "Content-Type": "application/json"}
    )
    assert json_body.status_code == 400  # not multipart
    assert server.count("/v1/audio/transcriptions") == 10


def test_other_routes_answer_for_themselves(server: OpenAIServer) -> None:
    """Checks apply to the OpenAI API's paths only (a Gemini fake on the same server has its own)."""
    server.route("POST", "/v1/models/gemini-x:generateContent", lambda req: Reply(body={"ok": True}))
    url = server.origin + "/v1/models/gemini-x:generateContent"
    assert _send(url, b"{}", {"Content-Type": "application/json"}).status_code == 200
