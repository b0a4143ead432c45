"""Secrets out of everything the toolkit writes or prints: one rule for URLs, one list of known secrets.

**URLs, by rule.** Whenever a URL is shown or written (a run card, ``results.json``, a command
line, a log line, an error message), :func:`scrub_url` removes its user info and replaces the
value of every query parameter not in :data:`HARMLESS_QUERY_PARAMS` (an allow-list, never a
deny-list) and its fragment by :data:`REDACTED`: ``http://u:pw@h/v1?api_token=T#access_token=F``
becomes ``http://h/v1?api_token=***#***``. A URL whose user info cannot be told apart from its
path (a password holding ``#``, ``/`` or ``?``) loses everything up to its last ``@``. Inside a
text (:func:`scrub_text`) a URL runs from its scheme to white space, a quote, a bracket or
``|`` (the replica separator of a ``base_url``), so each replica of a list is scrubbed.

**Known secrets, everywhere.** The value of each API key the toolkit reads and the credentials of
each server URL it is given (:func:`url_credentials`) are registered once
(:func:`register_secret`, by :class:`odu.openai_client.ApiClient`) and replaced by
:data:`REDACTED` in every text written or printed (:func:`scrub_secrets`): the model's and the
judge's replies as they arrive (a server that echoes the key), every JSON / JSONL file
(:mod:`odu.jsonio` writes through it), the console and the log records of every command
(:func:`scrubbed_console`), and in messages through :func:`scrub_text`.

**Keys never on the command line.** A key is read from an environment variable only:
:func:`refuse_credentials` refuses an option or model argument named like a key (``api_key=``,
``token=``, ...), and :data:`odu.openai_client.KEY_ENV_NAME` refuses a key given where the name
of its variable belongs.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote

#: What a secret is replaced by.
REDACTED = "***"
#: Query parameters whose value is shown (compared case-insensitively, ``-`` read as ``_``): names
#: that never carry a credential. Every other query value is a secret when a URL is shown.
HARMLESS_QUERY_PARAMS: frozenset[str] = frozenset({"api_version"})
#: A registered secret shorter than this is not replaced on its own (a 3-character password would
#: blot out ordinary text and hides nothing); an API key is replaced whatever its length.
MIN_SECRET_CHARS = 4
#: Option and model-argument names that hold a credential (compared case-insensitively, ``-`` read
#: as ``_``; also any name ending in ``_key``, ``_token``, ``_secret`` or ``_password``): refused,
#: since a key is read from an environment variable only.
CREDENTIAL_NAMES: frozenset[str] = frozenset(
    {"key", "api_key", "apikey", "token", "secret", "password", "passwd", "authorization", "credentials", "jwt"}
)

#: A URL inside a text: a scheme, ``://``, then anything up to white space, a quote, a bracket or ``|``.
_URL = re.compile(r"""[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>`|\\]+""")
_PLAIN_AUTHORITY = re.compile(r"[^:@]*")  # a host without a port, user info or password

_secrets: list[str] = []  # longest first, so that a secret holding another one is replaced whole
_lock = threading.Lock()


# --- known secrets --------------------------------------------------------------------------------


def register_secret(value: str | None, always: bool = False) -> None:
    """Replace ``value`` by :data:`REDACTED` in everything written or printed from now on in this
    process (values shorter than :data:`MIN_SECRET_CHARS` only when ``always``: an API key)."""
    if not value or (len(value) < MIN_SECRET_CHARS and not always):
        return
    with _lock:
        if value not in _secrets:
            _secrets.append(value)
            _secrets.sort(key=len, reverse=True)


def forget_secrets() -> None:
    """Forget every registered secret (tests that need a clean process state)."""
    with _lock:
        _secrets.clear()


def scrub_secrets(text: str) -> str:
    """``text`` with every registered secret replaced by :data:`REDACTED` (URLs left as they are)."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


# --- URLs -------------------------------------------------------------------------------------------


def _split(url: str) -> tuple[str, str | None, bool, str]:
    """``(scheme://, user info or None, whether it was guessed, the rest)``. The user info of an
    ambiguous URL (an ``@`` after an authority holding a ``:``: a password with ``#``, ``/`` or
    ``?`` in it, or a port) is guessed as everything up to the last ``@``."""
    scheme, sep, rest = url.partition("://")
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    if "@" in authority:
        userinfo, _, host = authority.rpartition("@")
        return scheme + sep, userinfo, False, host + rest[end:]
    if "@" in rest and not _PLAIN_AUTHORITY.fullmatch(authority):
        userinfo, _, after = rest.rpartition("@")
        return scheme + sep, userinfo, True, after
    return scheme + sep, None, False, rest


def _harmless(name: str) -> bool:
    return name.strip().lower().replace("-", "_") in HARMLESS_QUERY_PARAMS


def scrub_url(url: str) -> str:
    """``url`` as it may be shown or written (module docstring): no user info (``***@`` where it
    had to be guessed), every query value but :data:`HARMLESS_QUERY_PARAMS`' and the fragment
    :data:`REDACTED`, registered secrets replaced.

    >>> scrub_url("https://bob:s3cret@api.example.com:8443/v1?api-version=2024-06-01&api_token=abc#t=1")
    'https://api.example.com:8443/v1?api-version=2024-06-01&api_token=***#***'
    >>> scrub_url("http://u:pa#ss@host:8000/v1")
    'http://***@host:8000/v1'
    >>> scrub_url("http://localhost:8000/v1")
    'http://localhost:8000/v1'
    """
    if "://" not in url:
        return scrub_secrets(url)
    scheme, _, guessed, rest = _split(url)
    head = scheme + (f"{REDACTED}@" if guessed else "")
    rest, hash_, fragment = rest.partition("#")
    rest, mark, query = rest.partition("?")
    if mark:
        pieces = []
        for piece in query.split("&"):
            name, eq, value = piece.partition("=")
            pieces.append(piece if (eq and _harmless(name)) or not piece else f"{name}={REDACTED}" if eq else REDACTED)
        rest += "?" + "&".join(pieces)
    if hash_:
        rest += "#" + (REDACTED if fragment else "")
    return scrub_secrets(head + rest)


#: The schemes of a server URL.
URL_SCHEMES = ("http", "https", "ws", "wss")


def check_url(url: str, option: str = "base_url") -> None:
    """:class:`ValueError` unless ``url`` is a server URL a client can use (a scheme of
    :data:`URL_SCHEMES`, a host, a numeric port if any, and no ``#``, ``/`` or ``?`` left unescaped
    in a password: an ``@`` after the host); the message shows it scrubbed (:func:`scrub_url`).

    >>> check_url("http://u:p#w@h:8000/v1")
    Traceback (most recent call last):
    ...
    ValueError: base_url 'http://***@h:8000/v1' is not a server URL (an '@' after the host: ...
    """
    scheme, _, guessed, rest = _split(url)
    host_port = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host, colon, port = host_port.rpartition(":") if not host_port.endswith("]") else (host_port, "", "")
    problem = ""
    if not scheme.endswith("://") or scheme[:-3].lower() not in URL_SCHEMES:
        problem = "not an http(s) URL"
    elif guessed:
        problem = "an '@' after the host: a password holding '#', '/' or '?' must be percent-encoded (%23, %2F, %3F)"
    elif not (host if colon else host_port) or (colon and not port.isdigit()):
        problem = "no host, or a port that is not a number"
    if problem:
        raise ValueError(f"{option} {scrub_url(url)!r} is not a server URL ({problem}), e.g. http://localhost:8000/v1")


def scrub_text(text: str) -> str:
    """``text`` with every URL in it scrubbed (:func:`scrub_url`) and every registered secret
    replaced.

    >>> scrub_text("base_url=http://u:SECRET@127.0.0.1:9/v1|http://h/v1?key=K --x 1")
    'base_url=http://127.0.0.1:9/v1|http://h/v1?key=*** --x 1'
    """
    if "://" in text:
        text = _URL.sub(lambda m: scrub_url(m.group(0)), text)
    return scrub_secrets(text)


def url_credentials(url: str | None) -> list[str]:
    """What of ``url`` (each replica of a ``|`` list alike) is a credential: its user info whole,
    its password (as written and percent-decoded) and the HTTP Basic credentials a client sends for
    it, each query and fragment value (but :data:`HARMLESS_QUERY_PARAMS`') and the fragment whole.

    >>> url_credentials("https://bob:s3cret@host/v1?api-key=abcd1234&api-version=1")
    ['bob:s3cret', 's3cret', 'Ym9iOnMzY3JldA==', 'abcd1234']
    """
    if not url or "://" not in url:
        return []
    found: list[str] = []
    for one in _URL.findall(url):
        _, userinfo, _, rest = _split(one)
        if userinfo:
            plain = unquote(userinfo)  # what the client sends: HTTP Basic auth, base64 of "user:password"
            found += [userinfo, userinfo.partition(":")[2], plain.partition(":")[2]]
            found.append(base64.b64encode(plain.encode()).decode())
        rest, _, fragment = rest.partition("#")
        for part in (rest.partition("?")[2], fragment):
            for piece in part.split("&") if part else ():
                name, eq, value = piece.partition("=")
                found += [] if eq and _harmless(name) else [value if eq else piece, unquote(value if eq else piece)]
        found.append(fragment)
    return [s for s in dict.fromkeys(found) if s]


def scrub_value(value: Any, urls: bool = True) -> Any:
    """``value`` (JSON-like: mappings, lists, tuples, strings, scalars) with every string scrubbed
    (:func:`scrub_text`; only of registered secrets when not ``urls``: model text, whose own URLs
    are data); mapping keys too. Another object becomes its text, scrubbed, when that text
    changes (what ``json.dumps(default=str)`` writes); others are returned as they are."""
    scrub = scrub_text if urls else scrub_secrets
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {scrub(k) if isinstance(k, str) else k: scrub_value(v, urls) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v, urls) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = str(value)  # what json.dumps(default=str) would write
    return scrubbed if (scrubbed := scrub(text)) != text else value


def refuse_credentials(options: Mapping[str, Any], where: str) -> None:
    """:class:`ValueError` when ``options`` (or a mapping inside them) names a credential
    (:data:`CREDENTIAL_NAMES`): keys are read from environment variables only. The value is not shown."""
    for name, value in options.items():
        norm = str(name).strip().lower().replace("-", "_")
        if norm in CREDENTIAL_NAMES or norm.endswith(("_key", "_token", "_secret", "_password")):
            raise ValueError(
                f"{where}: {name!r} holds a credential, which is never taken on the command line or stored: "
                "put the key in an environment variable and name the variable (api_key_env=VAR / --judge-api-key-env VAR)"
            )
        if isinstance(value, Mapping):
            refuse_credentials(value, f"{where}.{name}")


# --- the console and log records -----------------------------------------------------------------------


class ScrubFilter(logging.Filter):
    """A logging filter that scrubs each record's message (its arguments merged in) before any
    handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit: left for logging to report
            return True
        scrubbed = scrub_text(message)
        if scrubbed != message or record.args:
            record.msg, record.args = scrubbed, None
        return True


_FILTER = ScrubFilter()


class ScrubbedStream:
    """A text stream that scrubs what is written to it before passing it on (a URL is written whole
    by one ``write`` call of ``print``, ``logging`` and ``tqdm``); everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def scrubbed_console() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` scrub what is written to them, and
    so do the log handlers (:func:`install_log_filter`, also applied on leaving)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbedStream(sys.stdout), ScrubbedStream(sys.stderr)
    install_log_filter()
    try:
        yield
    finally:
        install_log_filter()
        sys.stdout, sys.stderr = saved


def scrub_file(path: Path) -> bool:
    """Rewrite a text file (JSON, JSONL, a log) with every URL and registered secret scrubbed,
    replacing it (:func:`odu.files.replace_file`: never written through a link); True when it changed."""
    from .files import replace_file

    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    scrubbed = scrub_text(text)
    if scrubbed == text:
        return False
    replace_file(path, scrubbed.encode("utf-8", errors="surrogateescape"))
    return True


def install_log_filter() -> None:
    """Scrub every log record of this process: the filter goes on each handler of the root
    logger and of every logger already created (lm-eval's among them), idempotently.
    Call it again after a library adds handlers."""
    loggers = [
        logging.getLogger(),
        *(v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger)),
    ]
    for logger in loggers:
        for handler in logger.handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)


__all__ = [
    "CREDENTIAL_NAMES",
    "HARMLESS_QUERY_PARAMS",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "ScrubFilter",
    "ScrubbedStream",
    "URL_SCHEMES",
    "check_url",
    "forget_secrets",
    "install_log_filter",
    "refuse_credentials",
    "register_secret",
    "scrub_file",
    "scrub_secrets",
    "scrub_text",
    "scrub_url",
    "scrub_value",
    "scrubbed_console",
    "url_credentials",
]
