"""Secrets out of everything the toolkit writes or prints: one rule for URLs, one list of known secrets.

**URLs, by rule.** Whenever a URL is shown or written (a run card, ``results.json``, a command
line, a log line, an error message), :func:`scrub_url` removes its user info and replaces the
value of every query parameter not in :data:`HARMLESS_QUERY_PARAMS` (an allow-list, never a
deny-list) and its fragment by :data:`REDACTED`: ``http://u:pw@h/v1?api_token=T#access_token=F``
becomes ``http://h/v1?api_token=***#***``; a URL written without its scheme (``u:pw@h/v1?k=T``)
gets the same. A URL whose user info cannot be told apart from its path (a password holding
``#``, ``/`` or ``?``) loses everything up to its last ``@``. A value the toolkit knows is a URL
(a ``base_url`` option, a setting or argument named ``*url``, :func:`scrub_urls`) is a URL to its
end, white space, quotes and all, each replica of a ``|`` list alike (a piece after a query that
has no scheme is still that query: :func:`split_url_list`). Inside a free text
(:func:`scrub_text`) a URL runs from its scheme to white space, a quote, a bracket, a backslash or
``|``; what a query value holds past that is caught by value (below).

**Known secrets, by value.** The value of each API key the toolkit reads and the credentials of
each server URL it is given (:func:`url_credentials`) are registered once (:func:`register_secret`,
by :class:`odu.transport.openai_client.ApiClient`) and replaced by :data:`REDACTED` in every text written or
printed (:func:`scrub_secrets`): the model's and the judge's replies, every JSON / JSONL file
(:mod:`odu.io.jsonio`: inside string values only, never a key or the structure), the console and the
log records of every command (:func:`scrubbed_console`), and in messages through
:func:`scrub_text`. Only a value shaped like a credential is registered
(:func:`credential_shaped`, :data:`CREDENTIAL_RULE`): a placeholder (``x``, ``null``, ``-``,
``true``, ``EMPTY``) replaced wherever it occurs would rewrite ordinary text and JSON, and hides
nothing; an API key that is not credential-shaped is refused for a provider's own server and
warned about (:class:`PlaceholderKeyWarning`) for a ``base_url``. An occurrence that begins
inside an escape of a JSON string (``\\n``, ``\\u00e9``) keeps the escape, so a text stays as
parseable as it was.

**Keys never on the command line.** A key is read from an environment variable only:
:func:`refuse_credentials` refuses an option or model argument named like a credential
(:data:`CREDENTIAL_NAMES`, :data:`CREDENTIAL_WORDS`: ``api_key=``, ``auth``, ``passphrase``, ...),
and :data:`odu.transport.openai_client.KEY_ENV_NAME` refuses a key given where the name of its variable belongs.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import json
import logging
import re
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

from .console import OduWarning

#: What a secret is replaced by.
REDACTED = "***"
#: Query parameters whose value is shown (compared case-insensitively, ``-`` read as ``_``): names
#: that never carry a credential. Every other query value is a secret when a URL is shown.
HARMLESS_QUERY_PARAMS: frozenset[str] = frozenset({"api_version"})
#: A value is a secret by value (:func:`register_secret`) only when :func:`credential_shaped`:
#: at least this many characters ...
MIN_CREDENTIAL_CHARS = 8
#: ... each printable ASCII but white space, '"', '\\' and the JSON punctuation ``,:[]{}`` ...
_CREDENTIAL_CHARS = re.compile(r"[!#-+\--9;-Z^-z|~]+")
#: ... of at least two kinds (lower-case letter, upper-case letter, digit, other), not all of them
#: characters of a number (digits, ``e``, ``E``, ``.``, ``+``, ``-``).
_KINDS = (re.compile(r"[a-z]"), re.compile(r"[A-Z]"), re.compile(r"[0-9]"), re.compile(r"[^a-zA-Z0-9]"))
_NUMBER_CHARS = re.compile(r"[0-9eE.+\-]+")
#: The rule of :func:`credential_shaped`, as messages and docs state it.
CREDENTIAL_RULE = (
    f"at least {MIN_CREDENTIAL_CHARS} printable ASCII characters without white space, quotes, backslashes or "
    "JSON punctuation (,:[]{}), of at least two kinds (lower-case, upper-case, digits, others), and not a number"
)
#: Option and model-argument names that hold a credential (compared case-insensitively, ``-`` and
#: ``.`` read as ``_``, ``camelCase`` split into words: :func:`names_credential`): refused, since a
#: key is read from an environment variable only. A name is one when its last word is in
#: :data:`CREDENTIAL_WORDS` (``api_key``, ``auth``, ``session_token``, ``db_passphrase``), its first
#: word in :data:`CREDENTIAL_FIRST_WORDS` (``auth_header``, ``password_hash``), or it is one of
#: these whole names.
CREDENTIAL_NAMES: frozenset[str] = frozenset({"pass", "bearer"})
#: A name ending in one of these words names a credential (see :data:`CREDENTIAL_NAMES`).
CREDENTIAL_WORDS: frozenset[str] = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "cookie",
        "jwt",
    }
)
#: A name starting with one of these words names a credential (see :data:`CREDENTIAL_NAMES`).
CREDENTIAL_FIRST_WORDS: frozenset[str] = frozenset(
    {"auth", "authorization", "secret", "password", "passwd", "passphrase", "credential", "credentials"}
)

#: A URL inside a text: a scheme, ``://``, then anything up to white space, a quote, a bracket or ``|``.
_URL = re.compile(r"""[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>`|\\]+""")
_PLAIN_AUTHORITY = re.compile(r"[^:@]*")  # a host without a port, user info or password
#: Where a query value is cut inside a free text (what :data:`_URL` stops at): its pieces are secrets too.
_TEXT_STOPS = re.compile(r"""[\s"'<>`|\\]+""")
#: The end of a JSON string escape that a secret's occurrence may begin inside (``\n``, ``\u00e9``).
_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{0,4}|.)", re.DOTALL)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_secrets: list[str] = []  # longest first, so that a secret holding another one is replaced whole
_lock = threading.Lock()


# --- known secrets --------------------------------------------------------------------------------


class PlaceholderKeyWarning(OduWarning):
    """An API key that is not :func:`credential_shaped` (``x``, ``EMPTY``): sent, but not scrubbed by value."""


def credential_shaped(value: str) -> bool:
    """Whether ``value`` looks like a credential (:data:`CREDENTIAL_RULE`), and so may be replaced
    wherever it occurs without rewriting ordinary text or the structure of a JSON file.

    >>> [credential_shaped(v) for v in ("sk-proj-4fA9", "token-abc123", "x", "null", "EMPTY", "changeme", "1e100000")]
    [True, True, False, False, False, False, False]
    """
    return (
        len(value) >= MIN_CREDENTIAL_CHARS
        and _CREDENTIAL_CHARS.fullmatch(value) is not None
        and sum(1 for kind in _KINDS if kind.search(value)) >= 2
        and _NUMBER_CHARS.fullmatch(value) is None
    )


def register_secret(value: str | None) -> bool:
    """Replace ``value`` by :data:`REDACTED` in everything written or printed from now on in this
    process when it is :func:`credential_shaped`; whether it was (a placeholder is not)."""
    if not value or not credential_shaped(value):
        return False
    with _lock:
        if value not in _secrets:
            _secrets.append(value)
            _secrets.sort(key=len, reverse=True)
    return True


def forget_secrets() -> None:
    """Forget every registered secret (tests that need a clean process state)."""
    with _lock:
        _secrets.clear()


def holds_secret(text: str) -> bool:
    """Whether a registered secret occurs in ``text`` (a cheap test before scrubbing a value)."""
    return any(secret in text for secret in _secrets)


def scrub_secrets(text: str) -> str:
    """``text`` with every registered secret replaced by :data:`REDACTED` (URLs left as they are);
    an occurrence that begins inside a JSON string escape keeps the escape's characters.

    >>> register_secret("nK8-secret-value")
    True
    >>> scrub_secrets('{"a": "sent nK8-secret-value", "b": "\\\\nK8-secret-value"}')
    '{"a": "sent ***", "b": "\\\\n***"}'
    """
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, REDACTED) if "\\" not in text else _replace_outside_escapes(text, secret)
    return text


def _replace_outside_escapes(text: str, secret: str) -> str:
    """``text`` with each occurrence of ``secret`` replaced by :data:`REDACTED`; one that begins inside
    a JSON string escape (``\\n``, ``\\u00e9``) is replaced from the end of that escape on."""
    escapes = [(m.start(), m.end()) for m in _ESCAPE.finditer(text)]
    starts = [start for start, _ in escapes]
    pieces, at = [], 0
    for match in re.finditer(re.escape(secret), text):
        start = match.start()
        i = bisect.bisect_left(starts, start) - 1  # the last escape beginning before the occurrence
        if i >= 0 and escapes[i][1] > start:
            start = escapes[i][1]
        pieces += [text[at:start], REDACTED]
        at = match.end()
    return "".join(pieces) + text[at:]


# --- URLs -------------------------------------------------------------------------------------------


def _split(url: str) -> tuple[str, str | None, bool, str]:
    """``(scheme://, user info or None, whether it was guessed, the rest)`` (``scheme://`` is empty
    for a URL written without one). The user info of an ambiguous URL (an ``@`` after an authority
    holding a ``:``: a password with ``#``, ``/`` or ``?`` in it, or a port) is guessed as
    everything up to the last ``@``."""
    scheme, sep, rest = url.partition("://") if "://" in url else ("", "", url)
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


def _by_rule(url: str) -> str:
    """``url`` by the URL rule (module docstring), registered secrets left in."""
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
    return head + rest


def scrub_url(url: str) -> str:
    """``url`` as it may be shown or written (module docstring): no user info (``***@`` where it
    had to be guessed), every query value but :data:`HARMLESS_QUERY_PARAMS`' and the fragment
    :data:`REDACTED`, registered secrets replaced; the same for a URL written without its scheme.

    >>> scrub_url("https://bob:s3cret@api.example.com:8443/v1?api-version=2024-06-01&api_token=abc#t=1")
    'https://api.example.com:8443/v1?api-version=2024-06-01&api_token=***#***'
    >>> scrub_url("http://u:pa#ss@host:8000/v1")
    'http://***@host:8000/v1'
    >>> scrub_url("u:pw@localhost:8000/v1?key=a b")
    'localhost:8000/v1?key=***'
    """
    return scrub_secrets(_by_rule(url))


def split_url_list(value: str) -> list[str]:
    """The URLs of a ``|``-separated list (the replicas of a ``base_url``), each stripped. A piece
    without a scheme that follows a URL with a query or fragment is part of that query (a value
    holding ``|``), not a URL of its own.

    >>> split_url_list("http://a/v1?k=x|y | http://b/v1")
    ['http://a/v1?k=x|y', 'http://b/v1']
    """
    urls: list[str] = []
    for piece in value.split("|"):
        if urls and "://" not in piece and ("?" in urls[-1] or "#" in urls[-1]):
            urls[-1] += "|" + piece
        else:
            urls.append(piece)
    return [u.strip() for u in urls]


def scrub_urls(value: str) -> str:
    """A value known to be a URL or a ``|`` list of them (a ``base_url``) as it may be shown: each
    URL scrubbed whole (:func:`scrub_url`), white space, quotes and all.

    >>> scrub_urls("http://h/v1?key=a b|http://u:p@g/v1")
    'http://h/v1?key=***|http://g/v1'
    """
    return "|".join(scrub_url(url) for url in split_url_list(value))


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
    problem = ""
    if not scheme.endswith("://") or scheme[:-3].lower() not in URL_SCHEMES:
        problem = "not an http(s) URL"
    elif guessed:
        problem = "an '@' after the host: a password holding '#', '/' or '?' must be percent-encoded (%23, %2F, %3F)"
    else:
        try:
            parts = urlsplit("http://" + rest)
            if not parts.hostname:
                raise ValueError("no host")
            parts.port  # noqa: B018  (raises ValueError for a port that is not a number in range)
        except ValueError:
            problem = "no host, a host that is not a name or an address in brackets, or a port that is not a number"
    if problem:
        raise ValueError(f"{option} {scrub_url(url)!r} is not a server URL ({problem}), e.g. http://localhost:8000/v1")


def scrub_text(text: str) -> str:
    """``text`` with every URL in it scrubbed (:func:`scrub_url`) and every registered secret
    replaced.

    >>> scrub_text("base_url=http://u:SECRET@127.0.0.1:9/v1|http://h/v1?key=K --x 1")
    'base_url=http://127.0.0.1:9/v1|http://h/v1?key=*** --x 1'
    """
    if "://" in text:
        text = _URL.sub(lambda m: _by_rule(m.group(0)), text)
    return scrub_secrets(text)


def url_credentials(url: str | None) -> list[str]:
    """What of ``url`` (each URL of a ``|`` list alike, :func:`split_url_list`; with or without a
    scheme) is a credential: its user info whole, its password (as written and percent-decoded)
    and the HTTP Basic credentials a client sends for it, each query and fragment value (but
    :data:`HARMLESS_QUERY_PARAMS`') and the fragment whole, and each piece of those a free text
    would cut off (at white space, a quote, a backslash, ``<`` or ``|``: :func:`scrub_text`).

    >>> url_credentials("https://bob:s3cret@host/v1?api-key=abcd1234&api-version=1")
    ['bob:s3cret', 's3cret', 'Ym9iOnMzY3JldA==', 'abcd1234']
    """
    if not url:
        return []
    found: list[str] = []
    for one in split_url_list(url):
        _, userinfo, _, rest = _split(one)
        if userinfo:
            plain = unquote(userinfo)  # what the client sends: HTTP Basic auth, base64 of "user:password"
            found += [userinfo, userinfo.partition(":")[2], plain.partition(":")[2]]
            found.append(base64.b64encode(plain.encode()).decode())
        rest, _, fragment = rest.partition("#")
        for part in (rest.partition("?")[2], fragment):
            for piece in part.split("&") if part else ():
                name, eq, value = piece.partition("=")
                if not (eq and _harmless(name)):
                    value = value if eq else piece
                    found += [value, unquote(value), *_TEXT_STOPS.split(value)]
        found.append(fragment)
    return [s for s in dict.fromkeys(found) if s]


def _url_named(name: object) -> bool:
    """Whether a setting named ``name`` holds a URL (``base_url``, ``--judge-base-url``, ``asr_url``)."""
    return isinstance(name, str) and name.strip().lower().replace("-", "_").endswith("url")


def scrub_value(value: Any, urls: bool = True) -> Any:
    """``value`` (JSON-like: mappings, lists, tuples, strings, scalars) with every string value
    scrubbed (:func:`scrub_text`; a value named like a URL, :func:`scrub_urls`; only of
    registered secrets when not ``urls``: model text, whose own URLs are data). A mapping's keys
    are names, never scrubbed by value: with ``urls`` a key holding a URL gets the URL rule only.
    Another object becomes its text, scrubbed, when that text changes (what
    ``json.dumps(default=str)`` writes); others are returned as they are."""
    scrub = scrub_text if urls else scrub_secrets
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {
            (_URL.sub(lambda m: _by_rule(m.group(0)), k) if urls and isinstance(k, str) else k): (
                scrub_urls(v) if urls and isinstance(v, str) and _url_named(k) else scrub_value(v, urls)
            )
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [scrub_value(v, urls) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = str(value)  # what json.dumps(default=str) would write
    return scrubbed if (scrubbed := scrub(text)) != text else value


def scrub_command(args: Sequence[str]) -> list[str]:
    """A command line as it may be written (a run card's ``command``): the value of an option named
    like a URL (``--judge-base-url V``, ``--x-url=V``) is a URL list (:func:`scrub_urls`), an
    argument holding a JSON object is scrubbed as a value (:func:`scrub_value`), and in any other
    argument a URL runs from its scheme to the argument's end.

    >>> scrub_command(["--judge-base-url", "u:pw@h/v1", "--model-args", "model=m,base_url=http://h/v1?k=a b,x=1"])
    ['--judge-base-url', 'h/v1', '--model-args', 'model=m,base_url=http://h/v1?k=***']
    """
    shown: list[str] = []
    for i, arg in enumerate(args):
        option, eq, value = arg.partition("=")
        if i and args[i - 1].startswith("--") and "=" not in args[i - 1] and _url_named(args[i - 1][2:]):
            shown.append(scrub_urls(arg))
        elif arg.startswith("--") and eq and _url_named(option[2:]):
            shown.append(f"{option}={scrub_urls(value)}")
        elif arg.lstrip().startswith("{") and isinstance(obj := _json_object(arg), dict):
            shown.append(json.dumps(scrub_value(obj), ensure_ascii=False))
        elif (found := _URL.search(arg)) is not None:
            shown.append(scrub_secrets(arg[: found.start()]) + scrub_urls(arg[found.start() :]))
        else:
            shown.append(scrub_secrets(arg))
    return shown


def _json_object(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _words(name: str) -> list[str]:
    """The words of an option's name, lower-case: ``api-key``, ``apiKey`` and ``API_KEY`` -> ``['api', 'key']``."""
    return [w.lower() for w in _WORD.findall(name)]


def names_credential(name: object) -> bool:
    """Whether an option or argument named ``name`` holds a credential (:data:`CREDENTIAL_NAMES`).

    >>> [names_credential(n) for n in ("auth", "db-passphrase", "authToken", "max_tokens", "monkey", "top_k")]
    [True, True, True, False, False, False]
    """
    words = _words(str(name))
    return bool(words) and (
        words[-1] in CREDENTIAL_WORDS or words[0] in CREDENTIAL_FIRST_WORDS or "_".join(words) in CREDENTIAL_NAMES
    )


class CredentialArgumentError(ValueError):
    """An option or argument naming a credential (:func:`refuse_credentials`); the value is not shown."""


def refuse_credentials(options: Mapping[str, Any], where: str) -> None:
    """:class:`CredentialArgumentError` when ``options`` (or a mapping inside them) names a credential
    (:func:`names_credential`): keys are read from environment variables only. The value is not shown."""
    for name, value in options.items():
        if names_credential(name):
            raise CredentialArgumentError(
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
    replacing it (:func:`odu.io.files.replace_file`: never written through a link); True when it changed."""
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
    "CREDENTIAL_FIRST_WORDS",
    "CREDENTIAL_NAMES",
    "CREDENTIAL_RULE",
    "CREDENTIAL_WORDS",
    "CredentialArgumentError",
    "HARMLESS_QUERY_PARAMS",
    "MIN_CREDENTIAL_CHARS",
    "REDACTED",
    "PlaceholderKeyWarning",
    "ScrubFilter",
    "ScrubbedStream",
    "URL_SCHEMES",
    "check_url",
    "credential_shaped",
    "forget_secrets",
    "holds_secret",
    "install_log_filter",
    "names_credential",
    "refuse_credentials",
    "register_secret",
    "scrub_command",
    "scrub_file",
    "scrub_secrets",
    "scrub_text",
    "scrub_url",
    "scrub_urls",
    "scrub_value",
    "scrubbed_console",
    "split_url_list",
    "url_credentials",
]
