"""A loopback fake of the Gemini REST API (``generateContent`` and the Files API), as strict as the
real one where its documentation or its users' reports say what it refuses.

It runs on :class:`openai_server.OpenAIServer` (real sockets, fault injection) and is reached
through the ``google-genai`` SDK's ``http_options.base_url``. Each refusal below names its source;
:class:`GeminiFake` answers a scene's request with that scene's reference annotation (found from
the final clip's bytes, inline or uploaded) or with what the test's script says.

Refusals (HTTP status, Google's error status):

* no ``x-goog-api-key`` header: 403 PERMISSION_DENIED; a wrong key: 400 INVALID_ARGUMENT with
  reason ``API_KEY_INVALID`` — the key travels in that header
  (https://ai.google.dev/gemini-api/docs/api-key), and a wrong one is answered 400, not 401
  (google-gemini/gemini-cli#25198, cequence-io/openai-scala-client#109);
* an unknown model: 404 NOT_FOUND (https://ai.google.dev/gemini-api/docs/troubleshooting);
* ``contents`` empty, a role other than ``user`` / ``model``
  (https://ai.google.dev/api/caching#Content: "Must be either 'user' or 'model'"), a content
  without parts, two consecutive contents of one role (Portkey-AI/gateway#246,
  earendil-works/pi#471) or a last content that is not the user's ("Please ensure that multiturn
  requests ends with a user role", songquanpeng/one-api#836, microsoft/semantic-kernel#13288);
* a part holding none or several of ``text`` / ``inlineData`` / ``fileData`` (the ``data``
  union of https://ai.google.dev/api/caching#Part);
* an audio or video MIME type outside the documented lists
  (https://ai.google.dev/gemini-api/docs/audio#supported-formats,
  https://ai.google.dev/gemini-api/docs/video-understanding#supported-formats) or data that is
  not base64;
* a request body above :attr:`GeminiFake.inline_limit` bytes (20 MB: "use the Files API when the
  total request size ... is larger than 20 MB", https://ai.google.dev/gemini-api/docs/audio;
  the message is the API's "Request payload size exceeds the limit");
* ``fileData`` naming a file that does not exist or is not ``ACTIVE`` yet (400 FAILED_PRECONDITION;
  https://ai.google.dev/gemini-api/docs/video-understanding: wait until the file is ACTIVE), or
  whose MIME type differs from the upload's;
* ``thinkingLevel`` together with ``thinkingBudget`` (https://ai.google.dev/gemini-api/docs/gemini-3:
  "You cannot use both ... 400 error"), ``thinkingLevel`` on a Gemini 2.5 model or outside
  minimal/low/medium/high, ``MINIMAL`` on Gemini 3.1 Pro (rule ``gemini.thinking-levels``,
  docs/providers.md: low / medium / high only), ``thinkingBudget: 0`` on 2.5 Pro (https://ai.google.dev/gemini-api/docs/thinking:
  "Cannot disable thinking");
* Files API resumable upload (https://ai.google.dev/gemini-api/docs/files, REST tab): a start
  request without ``X-Goog-Upload-Protocol: resumable``, ``X-Goog-Upload-Command: start`` and the
  ``X-Goog-Upload-Header-Content-Length`` / ``-Content-Type`` headers; a chunk whose
  ``X-Goog-Upload-Offset`` is not the bytes received so far, or a finalize whose total differs from
  the announced length.

Field names are accepted in lowerCamelCase or as written in the proto (the SDK sends
``mime_type``), enum values in any case: the proto3 JSON mapping accepts both
(https://protobuf.dev/programming-guides/json/).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from support.omni_fakes import SampleScenes, reference_output
from support.openai_server import Fault, OpenAIServer, RecordedRequest, Reply

API_VERSIONS = ("v1", "v1beta")
AUDIO_TYPES = {"audio/wav", "audio/mp3", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"}
VIDEO_TYPES = {f"video/{kind}" for kind in ("mp4", "mpeg", "mov", "avi", "x-flv", "mpg", "webm", "wmv", "3gpp")}
IMAGE_TYPES = {"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}
THINKING_LEVELS = {"MINIMAL", "LOW", "MEDIUM", "HIGH"}
#: "Request payload size exceeds the limit: 20971520 bytes." (20 MiB, the API's own message).
INLINE_LIMIT = 20 * 1024 * 1024


def google_error(status: int, code: str, message: str, reason: str | None = None) -> Reply:
    """An error body in Google's format (``{"error": {"code", "message", "status", "details"}}``)."""
    error: dict[str, Any] = {"code": status, "message": message, "status": code}
    if reason:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com"}
        ]
    return Reply(status=status, body={"error": error})


class Refusal(Exception):
    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.body["error"]["message"])
        self.reply = reply


def _bad(message: str) -> Refusal:
    return Refusal(google_error(400, "INVALID_ARGUMENT", message))


def field(obj: Mapping[str, Any], camel: str) -> Any:
    """``obj[camel]``, or its proto (snake_case) spelling."""
    if camel in obj:
        return obj[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return obj.get(snake)


class GeminiFake(SampleScenes):
    """The Gemini API for ``model`` with ``key``, answering scenes of ``dataset_dir``.

    ``script`` maps a scene id to ``"garbage"`` (prose, no JSON), ``"error"`` (HTTP 500),
    ``"blocked"`` (finish reason SAFETY, no text) or ``"think"`` (thought parts before the answer).
    ``processing_polls``: how many ``files.get`` calls see a new upload still PROCESSING.
    """

    def __init__(
        self,
        dataset_dir: Path | None,
        *,
        key: str,
        model: str = "gemini-3.1-pro-preview",
        script: Mapping[str, str] | None = None,
        inline_limit: int = INLINE_LIMIT,
        processing_polls: int = 1,
    ) -> None:
        super().__init__(dataset_dir)  # final clips as stored: sent inline or uploaded as they are
        self.key = key
        self.model = model
        self.script = dict(script or {})
        self.inline_limit = inline_limit
        self.processing_polls = processing_polls
        self.generate_requests: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self.files: dict[str, dict[str, Any]] = {}  # "files/<id>" -> metadata + bytes + polls
        self.deleted: list[str] = []
        self._sessions: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.server: OpenAIServer | None = None

    # --- wiring ---------------------------------------------------------------------------------------

    def attach(self, server: OpenAIServer) -> GeminiFake:
        self.server = server
        for version in API_VERSIONS:
            server.route("POST", f"/{version}/models/{self.model}:generateContent", self._guarded(self._generate))
            server.route("POST", f"/upload/{version}/files", self._guarded(self._upload_start))
        return self

    def _guarded(self, handler: Any) -> Any:
        def serve(req: RecordedRequest) -> Reply | Fault:
            try:
                return handler(req)
            except Refusal as refusal:
                self.refusals.append(refusal.args[0])
                return refusal.reply

        return serve

    def _check_key(self, req: RecordedRequest) -> None:
        key = req.headers.get("x-goog-api-key")
        if key is None:
            raise Refusal(
                google_error(
                    403,
                    "PERMISSION_DENIED",
                    "Method doesn't allow unregistered callers "
                    "(callers without established identity). Please use API Key or other form of "
                    "API consumer identity to call this API.",
                )
            )
        if key != self.key:
            raise Refusal(
                google_error(
                    400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", reason="API_KEY_INVALID"
                )
            )

    # --- generateContent ------------------------------------------------------------------------------

    def _generate(self, req: RecordedRequest) -> Reply | Fault:
        self._check_key(req)
        if len(req.body) > self.inline_limit:
            raise _bad(f"Request payload size exceeds the limit: {self.inline_limit} bytes.")
        body = req.json
        if not isinstance(body, dict):
            raise _bad("Invalid JSON payload received.")
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            raise _bad("* GenerateContentRequest.contents: contents is not specified")
        media: list[bytes] = []
        previous = None
        for i, content in enumerate(contents):
            role = content.get("role")
            if role not in ("user", "model"):
                raise _bad(f"Please use a valid role: user, model. (contents[{i}].role={role!r})")
            if role == previous:
                raise _bad("Please ensure that multiturn requests alternate between user and model.")
            previous = role
            parts = content.get("parts")
            if not isinstance(parts, list) or not parts:
                raise _bad(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
            for j, part in enumerate(parts):
                media.extend(self._part(part, f"contents[{i}].parts[{j}]", role))
        if previous != "user":
            raise _bad("Please ensure that multiturn requests ends with a user role or a function response.")
        system = field(body, "systemInstruction")
        if system is not None and not all("text" in p for p in system.get("parts", [])):
            raise _bad("* GenerateContentRequest.system_instruction: only text parts are supported")
        self._check_generation(field(body, "generationConfig") or {})
        self.generate_requests.append(body)
        return self._answer(media)

    def _part(self, part: Mapping[str, Any], where: str, role: str) -> list[bytes]:
        kinds = [k for k in ("text", "inlineData", "fileData") if field(part, k) is not None]
        if len(kinds) != 1:
            raise _bad(
                f"* GenerateContentRequest.{where}.data: required oneof field 'data' must have one initialized "
                f"field (got {kinds or 'none'})"
            )
        if kinds == ["text"]:
            return []
        if role != "user":
            raise _bad(f"* GenerateContentRequest.{where}: media parts in a model turn")
        if kinds == ["inlineData"]:
            blob = field(part, "inlineData")
            mime = field(blob, "mimeType")
            self._check_mime(mime, where)
            try:  # proto3 JSON bytes: "either standard or URL-safe base64 encoding with/without paddings"
                data = str(blob.get("data") or "")
                return [
                    base64.b64decode(
                        data + "=" * (-len(data) % 4),
                        altchars=b"-_" if "-" in data or "_" in data else None,
                        validate=True,
                    )
                ]
            except (binascii.Error, ValueError):
                raise _bad(f"* GenerateContentRequest.{where}.inline_data.data: Base64 decoding failed") from None
        ref = field(part, "fileData")
        uri, mime = field(ref, "fileUri") or "", field(ref, "mimeType")
        name = "files/" + uri.rstrip("/").rsplit("/files/", 1)[-1] if "/files/" in uri else ""
        with self._lock:
            meta = self.files.get(name)
        if meta is None:
            raise Refusal(
                google_error(
                    403,
                    "PERMISSION_DENIED",
                    f"You do not have permission to access the File {name or uri} or it may not exist.",
                )
            )
        if meta["state"] != "ACTIVE":
            raise Refusal(
                google_error(
                    400, "FAILED_PRECONDITION", f"The File {name} is not in an ACTIVE state and usage is not allowed."
                )
            )
        if mime != meta["mimeType"]:
            raise _bad(
                f"* GenerateContentRequest.{where}.file_data.mime_type: {mime} differs from the file's "
                f"{meta['mimeType']}"
            )
        return [meta["data"]]

    def _check_mime(self, mime: Any, where: str) -> None:
        if mime in AUDIO_TYPES or mime in VIDEO_TYPES or mime in IMAGE_TYPES or mime == "text/plain":
            return
        raise _bad(f"* GenerateContentRequest.{where}.inline_data.mime_type: Unsupported MIME type: {mime}")

    def _check_generation(self, config: Mapping[str, Any]) -> None:
        thinking = field(config, "thinkingConfig") or {}
        level, budget = field(thinking, "thinkingLevel"), field(thinking, "thinkingBudget")
        if level is not None and budget is not None:
            raise _bad(
                "You cannot use both thinking_level and the legacy thinking_budget parameter in the same request."
            )
        if level is not None:
            if self.model.startswith("gemini-2"):
                raise _bad("Thinking level is not supported for this model.")
            if str(level).upper() not in THINKING_LEVELS:
                raise _bad(f"Invalid value at 'generation_config.thinking_config.thinking_level' ({level})")
            if str(level).upper() == "MINIMAL" and "gemini-3.1-pro" in self.model:
                # rule gemini.thinking-levels: Gemini 3.1 Pro takes low / medium / high only (docs.rs adk-rust
                # ThinkingLevel "Minimal ... Not supported on Gemini 3.1 Pro"); the message wording is ours
                raise _bad("Thinking level MINIMAL is not supported for this model.")
        if budget == 0 and self.model.startswith("gemini-2.5-pro"):
            raise _bad("Budget 0 is invalid. This model only works in thinking mode.")

    def _answer(self, media: list[bytes]) -> Reply | Fault:
        sid = self.scene_sent(media[-1]) if media else None
        mode = self.script.get(sid or "", "reference")
        usage = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
        if mode == "error":
            return Fault(
                status=500,
                body={"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}},
            )
        if mode == "blocked":
            return Reply(body={"candidates": [{"finishReason": "SAFETY", "index": 0}], "usageMetadata": usage})
        if sid is None:
            text = '{"has_demand": false, "segments": []}'
        elif mode == "garbage":
            text = "Sorry, I am not sure what the user wants here."
        else:
            text = reference_output(self.records[sid])
        parts: list[dict[str, Any]] = [{"text": text}]
        if mode == "think":
            parts.insert(0, {"text": "The user points at the oil bottle.", "thought": True})
            usage["thoughtsTokenCount"] = 7
        return Reply(
            body={
                "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": usage,
                "modelVersion": self.model,
            }
        )

    # --- Files API --------------------------------------------------------------------------------------

    def _upload_start(self, req: RecordedRequest) -> Reply:
        self._check_key(req)
        h = req.headers
        if h.get("x-goog-upload-protocol") != "resumable" or h.get("x-goog-upload-command") != "start":
            raise _bad("Upload requests must set X-Goog-Upload-Protocol: resumable and X-Goog-Upload-Command: start")
        try:
            length = int(h["x-goog-upload-header-content-length"])
            mime = h["x-goog-upload-header-content-type"]
        except (KeyError, ValueError):
            raise _bad("Missing X-Goog-Upload-Header-Content-Length / X-Goog-Upload-Header-Content-Type") from None
        self._check_mime(mime, "file")
        meta = (req.json or {}).get("file") or {}
        sid = f"s{next(self._ids)}"
        path = f"{req.path}/sessions/{sid}"
        with self._lock:
            self._sessions[sid] = {
                "length": length,
                "mime": mime,
                "data": b"",
                "display_name": field(meta, "displayName"),
            }
        assert self.server is not None
        self.server.route("POST", path, self._guarded(lambda r, sid=sid: self._upload_chunk(r, sid)))
        return Reply(
            body={}, headers={"X-Goog-Upload-URL": f"{self.server.origin}{path}", "X-Goog-Upload-Status": "active"}
        )

    def _upload_chunk(self, req: RecordedRequest, sid: str) -> Reply:
        # The chunk requests carry no API key: the upload URL is the credential (the SDK sends none).
        with self._lock:
            session = self._sessions[sid]
        command = req.headers.get("x-goog-upload-command", "")
        if command not in ("upload", "upload, finalize"):
            raise _bad(f"Unsupported X-Goog-Upload-Command: {command!r}")
        if int(req.headers.get("x-goog-upload-offset", -1)) != len(session["data"]):
            raise _bad(f"X-Goog-Upload-Offset {req.headers.get('x-goog-upload-offset')} != {len(session['data'])}")
        session["data"] += req.body
        if command == "upload":
            return Reply(body={}, headers={"X-Goog-Upload-Status": "active"})
        if len(session["data"]) != session["length"]:
            raise _bad(f"Uploaded {len(session['data'])} bytes, announced {session['length']}")
        name = f"files/f{next(self._ids)}"
        assert self.server is not None
        uri = f"{self.server.origin}/v1beta/{name}"
        meta = {
            "name": name,
            "displayName": session["display_name"],
            "mimeType": session["mime"],
            "sizeBytes": str(len(session["data"])),
            "uri": uri,
            "state": "PROCESSING",
            "sha256Hash": base64.b64encode(hashlib.sha256(session["data"]).hexdigest().encode()).decode(),
        }
        with self._lock:
            self.files[name] = {**meta, "data": session["data"], "polls": 0}
        for version in API_VERSIONS:
            self.server.route("GET", f"/{version}/{name}", self._guarded(lambda r, n=name: self._get_file(r, n)))
            self.server.route("DELETE", f"/{version}/{name}", self._guarded(lambda r, n=name: self._delete_file(r, n)))
        return Reply(body={"file": meta}, headers={"X-Goog-Upload-Status": "final"})

    def _public(self, name: str) -> dict[str, Any]:
        return {k: v for k, v in self.files[name].items() if k not in ("data", "polls")}

    def _get_file(self, req: RecordedRequest, name: str) -> Reply:
        self._check_key(req)
        with self._lock:
            meta = self.files.get(name)
            if meta is None:
                raise Refusal(google_error(404, "NOT_FOUND", f"File {name} not found."))
            meta["polls"] += 1
            if meta["polls"] > self.processing_polls:
                meta["state"] = "ACTIVE"
            return Reply(body=self._public(name))

    def _delete_file(self, req: RecordedRequest, name: str) -> Reply:
        self._check_key(req)
        with self._lock:
            if self.files.pop(name, None) is None:
                raise Refusal(google_error(404, "NOT_FOUND", f"File {name} not found."))
            self.deleted.append(name)
        return Reply(body={})
