"""A loopback Hugging Face Hub for tests: real HTTP on 127.0.0.1, used through ``HF_ENDPOINT``.

It serves what ``huggingface_hub`` (``HfApi.create_repo`` / ``upload_folder``) and ``evaluate.load``
call, and refuses what the Hub refuses:

* ``POST /api/repos/create`` (``huggingface_hub/hf_api.py``, ``create_repo``): a token is required;
  ``type`` is ``model`` (absent), ``dataset`` or ``space``; a Space needs ``sdk``, one of
  ``gradio``, ``streamlit``, ``docker``, ``static`` (``constants.SPACES_SDK_TYPES``; the values of
  ``sdk`` in https://huggingface.co/docs/hub/spaces-config-reference); the name follows the Hub's
  rule (``utils/_validators.py``, ``REPO_ID_REGEX``: ``[\\w\\-.]{1,96}``, not starting or ending with
  ``-`` or ``.``, no ``--`` or ``..``); an existing repo is a 409.
* ``POST /api/{type}s/{repo}/preupload/{revision}`` (``_commit_api.py``, ``_fetch_upload_modes``):
  token, existing repo, a JSON ``files`` list of ``{path, sample (base64), size}``; answers each
  file's ``uploadMode`` (``regular`` for small text, ``lfs`` for binary or large files, as the Hub
  decides) and ``shouldIgnore`` (checked by ``_validate_preupload_info``).
* ``POST /api/{type}s/{repo}/commit/{revision}`` (``_commit_api.py``, ``_prepare_commit_payload``;
  https://github.com/huggingface/huggingface_hub/issues/1085#issuecomment-1265208073): token,
  ``Content-Type: application/x-ndjson``, a ``header`` line with a non-empty ``summary`` first,
  then ``file`` lines (``path``, base64 ``content``, ``encoding: base64``) or ``deletedFile`` lines;
  an ``lfsFile`` whose object was never uploaded is refused (the Hub rejects a pointer to a missing
  LFS object); relative paths only; a ``README.md`` must pass the metadata check below. Answers
  ``commitUrl``, ``commitOid``.
* ``POST /api/validate-yaml`` (``HfApi._validate_yaml``, called by ``upload_folder`` / ``create_commit``
  before anything is uploaded when a ``README.md`` is committed): front matter that parses to a
  mapping; for a Space it is required, with ``sdk`` one of the four (spaces-config-reference);
  errors come back as ``{"errors": [{"message"}]}`` with a 400.
* ``HEAD|GET /{spaces/|datasets/|}{repo}/resolve/{revision}/{path}`` (``hf_hub_url``; evaluate's
  ``HUB_EVALUATE_URL``): ``main`` or a commit id; errors carry ``X-Error-Code`` ``RepoNotFound``,
  ``RevisionNotFound`` or ``EntryNotFound``, which ``utils/_http.py`` (``hf_raise_for_status``) maps.

Anything else (e.g. ``/api/agent-harnesses``, fetched by ``huggingface_hub`` 2.x) is a 404.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

SPACES_SDK_TYPES = ("gradio", "streamlit", "docker", "static")
REPO_TYPES = ("model", "dataset", "space")
_URL_PREFIX = {"space": "spaces/", "dataset": "datasets/", "model": ""}
LFS_THRESHOLD = 10 * 1024 * 1024


@dataclass
class Repo:
    type: str
    repo_id: str
    sdk: str | None = None
    private: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Logged:
    method: str
    path: str
    status: int
    authorization: str | None


class HubRefusal(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, **body: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.body = status, message, code, body


class FakeHub:
    """Start with ``with FakeHub(token) as hub``; point ``HF_ENDPOINT`` at :attr:`endpoint`."""

    def __init__(self, token: str = "hf_fake_write_token_0123456789") -> None:
        self.token = token
        self.repos: dict[tuple[str, str], Repo] = {}
        self.log: list[Logged] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self._httpd is not None, "hub not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeHub:
        handler = type("_Bound", (_Handler,), {"hub": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    def put(self, repo_type: str, repo_id: str, files: dict[str, bytes], **settings: Any) -> Repo:
        """A repo that already exists on the hub (for download tests)."""
        repo = Repo(repo_type, repo_id, **settings)
        repo.files.update(files)
        repo.commits.append(hashlib.sha1(repr(sorted(files)).encode()).hexdigest())
        self.repos[(repo_type, repo_id)] = repo
        return repo

    # --- handling ------------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: Any, body: bytes) -> tuple[int, dict[str, str], bytes]:
        path = unquote(urlsplit(raw_path).path)
        try:
            status, extra, payload = self._route(method, path, headers, body)
        except HubRefusal as exc:
            status, extra = exc.status, {"X-Error-Code": exc.code} if exc.code else {}
            payload = json.dumps({"error": exc.message, **exc.body}).encode()
        with self._lock:
            self.log.append(Logged(method, path, status, headers.get("Authorization")))
        return status, extra, payload

    def _authorized(self, headers: Any) -> None:
        if headers.get("Authorization") != f"Bearer {self.token}":
            raise HubRefusal(401, "Invalid credentials in Authorization header")

    def _repo(self, repo_type: str, repo_id: str, headers: Any) -> Repo:
        repo = self.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and headers.get("Authorization") != f"Bearer {self.token}"):
            raise HubRefusal(404, "Repository Not Found", "RepoNotFound")
        return repo

    def _route(self, method: str, path: str, headers: Any, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if method == "POST" and path == "/api/repos/create":
            return self._create(headers, body)
        if method == "POST" and path == "/api/validate-yaml":
            return self._validate_yaml(body)
        api = re.fullmatch(r"/api/(model|dataset|space)s/([^/]+/[^/]+)/(preupload|commit)/(.+)", path)
        if method == "POST" and api:
            repo_type, repo_id, action, revision = api.groups()
            self._authorized(headers)
            repo = self._repo(repo_type, repo_id, headers)
            if revision != "main":
                raise HubRefusal(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            return self._preupload(body) if action == "preupload" else self._commit(repo, headers, body)
        resolve = re.fullmatch(r"/(spaces/|datasets/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if method in ("GET", "HEAD") and resolve:
            prefix, repo_id, revision, file = resolve.groups()
            repo_type = {"spaces/": "space", "datasets/": "dataset"}.get(prefix or "", "model")
            return self._resolve(self._repo(repo_type, repo_id, headers), revision, file, method)
        raise HubRefusal(404, f"Sorry, we can't find the page you are looking for ({method} {path})")

    def _create(self, headers: Any, body: bytes) -> tuple[int, dict[str, str], bytes]:
        self._authorized(headers)
        try:
            spec = json.loads(body)
        except ValueError:
            raise HubRefusal(400, "body must be JSON") from None
        name, org, repo_type = spec.get("name"), spec.get("organization"), spec.get("type") or "model"
        if repo_type not in REPO_TYPES:
            raise HubRefusal(400, f"Invalid repo type {repo_type!r}")
        for part in (name, org or "user"):
            if not _valid_name(part):
                raise HubRefusal(400, f"Invalid repo name {part!r}")
        sdk = spec.get("sdk")
        if repo_type == "space" and sdk not in SPACES_SDK_TYPES:
            raise HubRefusal(400, f"sdk must be one of {', '.join(SPACES_SDK_TYPES)} for a space, got {sdk!r}")
        repo_id = f"{org or 'user'}/{name}"
        url = f"{self.endpoint}/{_URL_PREFIX[repo_type]}{repo_id}"
        if (repo_type, repo_id) in self.repos:
            raise HubRefusal(409, f"You already created this {repo_type} repo", url=url)
        private = bool(spec.get("private")) or spec.get("visibility") == "private"
        self.repos[(repo_type, repo_id)] = Repo(repo_type, repo_id, sdk=sdk, private=private)
        return 200, {}, json.dumps({"url": url, "name": repo_id}).encode()

    def _validate_yaml(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        try:
            spec = json.loads(body)
            content, repo_type = spec["content"], spec.get("repoType") or "model"
        except (ValueError, KeyError, TypeError):
            raise HubRefusal(400, "body must be JSON with 'content' and 'repoType'") from None
        try:
            _check_card(content.encode("utf-8", errors="replace"), repo_type)
        except HubRefusal as exc:
            return 400, {}, json.dumps({"errors": [{"message": exc.message}], "warnings": []}).encode()
        return 200, {}, json.dumps({"errors": [], "warnings": []}).encode()

    def _preupload(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        try:
            files = json.loads(body)["files"]
            modes = []
            for f in files:
                sample = base64.b64decode(f["sample"], validate=True)
                binary = b"\x00" in sample
                modes.append(
                    {
                        "path": f["path"],
                        "uploadMode": "lfs" if binary or int(f["size"]) > LFS_THRESHOLD else "regular",
                        "shouldIgnore": False,
                    }
                )
        except (ValueError, KeyError, TypeError) as exc:
            raise HubRefusal(400, f"invalid preupload payload: {exc}") from None
        return 200, {}, json.dumps({"files": modes, "commitOid": None}).encode()

    def _commit(self, repo: Repo, headers: Any, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if headers.get("Content-Type") != "application/x-ndjson":
            raise HubRefusal(400, "commit payload must be application/x-ndjson")
        try:
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        except ValueError:
            raise HubRefusal(400, "commit payload: a line is not JSON") from None
        if not lines or lines[0].get("key") != "header" or not (lines[0].get("value") or {}).get("summary"):
            raise HubRefusal(400, "commit payload must start with a header holding a summary")
        files = dict(repo.files)
        for line in lines[1:]:
            key, value = line.get("key"), line.get("value") or {}
            path = value.get("path")
            if not isinstance(path, str) or not path or path.startswith("/") or ".." in path.split("/"):
                raise HubRefusal(400, f"invalid path in commit: {path!r}")
            if key == "file":
                if value.get("encoding") != "base64":
                    raise HubRefusal(400, f"{path}: file content must be base64-encoded")
                try:
                    files[path] = base64.b64decode(value["content"], validate=True)
                except (KeyError, ValueError):
                    raise HubRefusal(400, f"{path}: content is not base64") from None
            elif key == "deletedFile":
                files.pop(path, None)
            elif key == "lfsFile":
                raise HubRefusal(422, f"{path}: LFS pointer points to an object that was never uploaded")
            else:
                raise HubRefusal(400, f"unknown commit operation {key!r}")
        if "README.md" in files:
            _check_card(files["README.md"], repo.type)
        oid = hashlib.sha1(json.dumps(sorted((p, hashlib.sha256(d).hexdigest()) for p, d in files.items())).encode())
        commit = oid.hexdigest()
        repo.files, repo.commits = files, [*repo.commits, commit]
        url = f"{self.endpoint}/{_URL_PREFIX[repo.type]}{repo.repo_id}/commit/{commit}"
        return 200, {}, json.dumps({"commitUrl": url, "commitOid": commit, "pullRequestUrl": None}).encode()

    def _resolve(self, repo: Repo, revision: str, file: str, method: str) -> tuple[int, dict[str, str], bytes]:
        if revision != "main" and revision not in repo.commits:
            raise HubRefusal(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        if file not in repo.files:
            raise HubRefusal(404, f"Entry not found: {file}", "EntryNotFound")
        data = repo.files[file]
        etag = f'"{hashlib.sha1(data).hexdigest()}"'
        headers = {"ETag": etag, "X-Repo-Commit": repo.commits[-1], "Content-Length": str(len(data))}
        return 200, headers, b"" if method == "HEAD" else data


def _valid_name(part: Any) -> bool:
    return (
        isinstance(part, str)
        and re.fullmatch(r"[\w\-.]{1,96}", part) is not None
        and part[0] not in "-."
        and part[-1] not in "-."
        and "--" not in part
        and ".." not in part
    )


def _check_card(card: bytes, repo_type: str) -> None:
    """README.md metadata as the Hub validates it: YAML front matter that parses to a mapping; for
    a Space it is required and its ``sdk`` is one of the four (spaces-config-reference)."""
    text = card.decode("utf-8", errors="replace")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if not match:
        if repo_type == "space":
            raise HubRefusal(400, "Invalid metadata in README.md: a Space needs YAML front matter")
        return
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise HubRefusal(400, f"Invalid metadata in README.md: {exc}") from None
    if not isinstance(meta, dict):
        raise HubRefusal(400, "Invalid metadata in README.md: the front matter is not a mapping")
    if repo_type == "space" and meta.get("sdk") not in SPACES_SDK_TYPES:
        raise HubRefusal(400, f'Invalid metadata in README.md: "sdk" must be one of {list(SPACES_SDK_TYPES)}')


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, headers, payload = self.hub.handle(method, self.path, self.headers, body)
        self.send_response(status)
        content_length = headers.pop("Content-Length", str(len(payload)))
        self.send_header("Content-Type", "application/json" if status != 200 or method == "POST" else "text/plain")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", content_length)
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(payload)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def do_POST(self) -> None:
        self._serve("POST")
