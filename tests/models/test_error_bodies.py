"""The server's reason in a failed call, from every shape of error body the servers send (docs/harness.md,
"Its reason quotes the server's"): OpenAI's and vLLM's ``{"error": {"message": ...}}``, SGLang's
``{"object": "error", "message": ...}``, a FastAPI server's ``{"detail": ...}`` (``transformers serve``)
and its validation list, a gateway's plain text; at most ``MAX_REASON_CHARS`` of it, never the body's
JSON. The same reason where ``GET /models`` stops the preflight."""

from __future__ import annotations

import pytest
from support.client_calls import one_chat_call
from support.openai_server import OpenAIServer, Reply

from odu.models.openai_omni import OpenAIOmni
from odu.transport.openai_client import (
    MAX_REASON_CHARS,
    CallFailedError,
    OpenAIClient,
    ServerUnavailableError,
    sdk_status_message,
)
from odu.transport.server_check import PreflightError, check_model

KEY = "sk-reason-0123456789"
#: FastAPI's answer to a request its schema refuses (``RequestValidationError``, HTTP 422).
VALIDATION = {
    "detail": [
        {"type": "missing", "loc": ["body", "model"], "msg": "Field required", "input": {"messages": []}},
        {"type": "string_type", "loc": ["body", "messages", 0, "content"], "msg": "Input should be a valid string"},
    ]
}


def _failed_call(server: OpenAIServer, reply: Reply, monkeypatch: pytest.MonkeyPatch) -> str:
    """The message of the error one chat call through the client ends in, the server answering ``reply``."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.api_key, server.models = KEY, ["m"]
    server.responder = lambda _: reply
    client = OpenAIClient("model", "m", base_url=server.base_url, timeout=5.0, retries=0)

    with pytest.raises((CallFailedError, ServerUnavailableError)) as failed:
        one_chat_call(client)
    return str(failed.value)


@pytest.mark.parametrize(
    ("status", "body", "content_type", "reason"),
    [
        # OpenAI's error object; vLLM's ErrorResponse since 0.31 (docs/real-lane.md)
        (
            400,
            {"error": {"message": "bad field", "type": "BadRequestError", "param": "x", "code": 400}},
            None,
            "bad field",
        ),
        # SGLang's and older vLLM's ErrorResponse: the message at the top level
        (
            400,
            {"object": "error", "message": "context too long", "type": "BadRequestError", "code": 400},
            None,
            "context too long",
        ),
        # a proxy's error as a bare string
        (400, {"error": "model not loaded"}, None, "model not loaded"),
        # FastAPI's HTTPException (transformers serve from 5.25), white space around it dropped
        (
            400,
            {"detail": "  num_frames and fps are mutually exclusive \n"},
            None,
            "num_frames and fps are mutually exclusive",
        ),
        # FastAPI's validation errors: each where and what, not the request echoed back in "input"
        (422, VALIDATION, None, "body.model: Field required; body.messages.0.content: Input should be a valid string"),
        (422, {"detail": [{"loc": [], "msg": "Body is not JSON"}]}, None, "Body is not JSON"),
        # a gateway in front of the server
        (413, "Request Entity Too Large", "text/plain", "Request Entity Too Large"),
        # a reason of exactly the limit is whole; one character more is cut
        (400, {"detail": "y" * MAX_REASON_CHARS}, None, "y" * MAX_REASON_CHARS),
        (400, {"detail": "z" * (MAX_REASON_CHARS + 1)}, None, "z" * MAX_REASON_CHARS + " ..."),
    ],
)
def test_the_reason_of_every_shape_of_error_body(
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    status: int,
    body: object,
    content_type: str | None,
    reason: str,
) -> None:
    reply = Reply(status=status, body=body, content_type=content_type or "application/json")
    assert _failed_call(openai_server, reply, monkeypatch) == f"HTTP {status}: Error code: {status} - {reason}"


@pytest.mark.parametrize("body", [{"detail": " \n "}, {"detail": ""}, ""])
def test_a_body_saying_nothing_adds_nothing(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, body: object
) -> None:
    content_type = "text/plain" if isinstance(body, str) else "application/json"
    message = _failed_call(openai_server, Reply(status=400, body=body, content_type=content_type), monkeypatch)
    assert message == "HTTP 400: Error code: 400"


def test_a_refusal_names_the_servers_reason(openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 401/403/404 stops the run with the server's reason at the end of its one line."""
    reply = Reply(status=401, body={"detail": "Invalid API key"})
    message = _failed_call(openai_server, reply, monkeypatch)
    assert message.startswith(f"model server {openai_server.base_url} refused model 'm' with HTTP 401")
    assert message.endswith(": Error code: 401 - Invalid API key") and "{" not in message


def test_sdk_status_message_reads_a_top_level_message() -> None:
    """What a client's SDK leaves out of its text (the body as given to :func:`sdk_status_message`)."""
    assert sdk_status_message("Error code: 400", {"message": "bad field", "code": 400}) == "Error code: 400 - bad field"
    assert sdk_status_message("Error code: 400 - bad field", {"message": "bad field"}) == "Error code: 400 - bad field"


@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        ({"detail": "Invalid API key sk-listing-SECRET-42"}, "application/json", "Invalid API key ***"),
        ("Unauthorized", "text/plain", "Unauthorized"),
        ({"error": {"message": "go away"}}, "application/json", "go away"),
    ],
)
def test_the_preflight_names_the_reason_of_the_model_list(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, body: object, content_type: str, reason: str
) -> None:
    """``GET /models`` answering 401 stops the run with the server's reason, scrubbed, whatever its shape."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-listing-SECRET-42")
    openai_server.api_key, openai_server.models = "sk-listing-SECRET-42", ["m"]
    openai_server.route("GET", "/v1/models", lambda _: Reply(status=401, body=body, content_type=content_type))
    backend = OpenAIOmni("m", base_url=openai_server.base_url, provider="generic")
    with pytest.raises(PreflightError) as failed:
        check_model(backend)
    assert f"GET /models answered HTTP 401: Error code: 401 - {reason}" in str(failed.value)
