"""Secrets out of everything the toolkit writes or prints: one rule for URLs, one for request bodies,
one list of known secrets.

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

**Request bodies, by type.** What the toolkit hands to a server without reading it, a request
body (``extra_body`` of a model, ``--judge-extra-body``: :func:`body_named`), is stored by type
at every depth, whatever its names (:func:`stored_body`): its names and
structure, numbers, booleans, null and *setting words* (``low``, ``json_object``) as given;
every other string, a *free string*, is :data:`REDACTED` in its place (``{"api_key2": "sk-..."}``,
``{"metadata": [{"apiKey2": ...}]}``, ``[["Authorization", "Bearer ..."]]`` alike). It applies to
every JSON file written (:func:`scrub_value`, :func:`holds_body`), a command line
(:func:`scrub_command`), the arguments of a log record and the files lm-eval wrote
(:func:`scrub_file`). What may echo a free string (a log line of the model arguments, a server's
error message) is covered by value: its credential-shaped pieces are known secrets from the
moment a backend or a judge reads the body (:func:`register_body`). Where nothing of ours can scrub what is shown
(plain ``lm_eval``), model arguments that would not be stored as given are refused
(:func:`unstored_paths`).

**Keys never on the command line.** A key is read from an environment variable only:
:func:`refuse_credentials` refuses an option or model argument named like a credential at any
depth (:data:`CREDENTIAL_NAMES`, :data:`CREDENTIAL_WORDS`: ``api_key=``, ``auth``, ``passphrase``,
...), and :data:`odu.transport.openai_client.KEY_ENV_NAME` refuses a key given where the name of its
variable belongs. Names are a courtesy that says why early; the rules above are what keeps a
credential out whatever its name.
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

from .console import OduWarning, inert_stream

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
#: A string of a request body is stored as given only when it is a *setting word*: lower-case ASCII
#: words joined by single ``_`` or ``-`` (``low``, ``json_object``, ``in-memory``) ...
_SETTING_WORD = re.compile(r"[a-z]+(?:[_-][a-z]+)*")
#: ... of at most this many characters.
MAX_SETTING_WORD_CHARS = 16
#: Where a free string of a request body is cut into the pieces registered as known secrets.
_PIECE_STOPS = re.compile(r"""[\s"'\\,:;=&?#<>\[\]{}()]+""")
#: A credential-shaped piece that is plain words (``Authorization``, ``application/json``) is not
#: registered: replaced wherever it occurs it would rewrite ordinary text.
_PLAIN_WORDS = re.compile(r"[A-Za-z]+(?:[-_./][A-Za-z]+)*")
#: A JSON key naming a request body, in the text of a JSON file (:func:`holds_body`).
_BODY_KEY = re.compile(r'extra[_-]body"')
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


# --- request bodies ----------------------------------------------------------------------------------


def body_named(name: object) -> bool:
    """Whether a setting named ``name`` holds a request body (``extra_body``, ``judge_extra_body``,
    ``--judge-extra-body``)."""
    return isinstance(name, str) and name.strip().replace("-", "_").endswith("extra_body")


def holds_body(text: str) -> bool:
    """Whether a JSON text may name a request body (a cheap test before walking its value)."""
    return 'body"' in text and _BODY_KEY.search(text) is not None


def needs_scrub(text: str) -> bool:
    """Whether a JSON text must be written from its scrubbed value (:func:`scrub_value`): it holds a
    registered secret or names a request body."""
    return holds_secret(text) or holds_body(text)


def setting_word(value: str) -> bool:
    """Whether a string of a request body is stored as given: lower-case ASCII words joined by single
    ``_`` or ``-``, at most :data:`MAX_SETTING_WORD_CHARS` characters.

    >>> [setting_word(v) for v in ("low", "json_object", "in-memory", "sk-proj", "Bearer", "gpt4", "a_b_c_d_e_f_g_h_i")]
    [True, True, True, True, False, False, False]
    """
    return len(value) <= MAX_SETTING_WORD_CHARS and _SETTING_WORD.fullmatch(value) is not None


def _free_strings(value: Any) -> Iterator[str]:
    """The strings of a request body that are not setting words, at every depth."""
    if isinstance(value, str):
        if not setting_word(value):
            yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _free_strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _free_strings(item)


def _stored(value: Any) -> Any:
    """A request body read from JSON (or given as Python values) as stored (:func:`stored_body`)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value if setting_word(value) else REDACTED
    if isinstance(value, Mapping):
        return {k: _stored(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stored(v) for v in value]
    return REDACTED


def _read_body(body: Any) -> Any:
    """``body``, read from its JSON text when it is given as one (``extra_body={...}`` in ``key=value`` model arguments)."""
    if isinstance(body, str) and isinstance(parsed := _json_object(body), (dict, list)):
        return parsed
    return body


def stored_body(body: Any) -> Any:
    """A request body as it may be stored (module docstring): at every depth (mappings, lists,
    tuples, pairs alike) its names and structure, numbers, booleans, null and setting words as
    given; every other string, and any other object, :data:`REDACTED`. A body given as JSON text
    is stored as the JSON text of its stored value.

    >>> stored_body({"reasoning_effort": "low", "api_key2": "sk-4fA9", "metadata": [{"n": 2, "t": "a b"}]})
    {'reasoning_effort': 'low', 'api_key2': '***', 'metadata': [{'n': 2, 't': '***'}]}
    >>> stored_body('{"headers": [["Authorization", "Bearer sk-4fA9"]], "stream": true}')
    '{"headers": [["***", "***"]], "stream": true}'
    """
    read = _read_body(body)
    return json.dumps(_stored(read), ensure_ascii=False) if read is not body else _stored(body)


def body_secrets(body: Any) -> list[str]:
    """What of a request body's free strings may be replaced wherever it occurs (:func:`register_body`):
    each free string and each piece of it outside its URLs (cut at white space, quotes and the
    punctuation of JSON, headers, cookies and queries) that is credential-shaped and not plain
    words (``Authorization``), and the credentials of each URL in it (:func:`url_credentials`).

    >>> body_secrets({"headers": [["Authorization", "Bearer sk-4fA9-x"]], "n": 1, "effort": "low"})
    ['sk-4fA9-x']
    >>> body_secrets({"hook": "see https://h.example/v1?sig=Zq81-sig-x"})
    ['Zq81-sig-x']
    """
    found: list[str] = []
    for text in _free_strings(_read_body(body)):
        found += [text, *_PIECE_STOPS.split(_URL.sub(" ", text))]
        found += [secret for url in _URL.findall(text) for secret in url_credentials(url)]
    return [s for s in dict.fromkeys(found) if credential_shaped(s) and not _PLAIN_WORDS.fullmatch(s)]


def register_body(body: Any) -> None:
    """Register the credential-shaped pieces of a request body's free strings (:func:`body_secrets`),
    so that no echo of them (lm-eval's line of the model arguments above its table, a server's
    error message) is written or printed; a backend or a judge calls it when it reads its body."""
    for secret in body_secrets(body):
        register_secret(secret)


def _url_named(name: object) -> bool:
    """Whether a setting named ``name`` holds a URL (``base_url``, ``--judge-base-url``, ``asr_url``)."""
    return isinstance(name, str) and name.strip().lower().replace("-", "_").endswith("url")


def scrub_value(value: Any, urls: bool = True) -> Any:
    """``value`` (JSON-like: mappings, lists, tuples, strings, scalars) with every string value
    scrubbed (:func:`scrub_text`; a value named like a URL, :func:`scrub_urls`; only of
    registered secrets when not ``urls``: model text, whose own URLs are data), and every value
    named like a request body stored by its rule (:func:`stored_body`), at any depth. A mapping's
    keys are names, never scrubbed by value: with ``urls`` a key holding a URL gets the URL rule
    only. Another object becomes its text, scrubbed, when that text changes (what
    ``json.dumps(default=str)`` writes); others are returned as they are."""
    scrub = scrub_text if urls else scrub_secrets
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {
            (_URL.sub(lambda m: _by_rule(m.group(0)), k) if urls and isinstance(k, str) else k): (
                scrub_value(stored_body(v), urls)
                if body_named(k)
                else scrub_urls(v)
                if urls and isinstance(v, str) and _url_named(k)
                else scrub_value(v, urls)
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
    like a URL (``--judge-base-url V``, ``--x-url=V``) is a URL list (:func:`scrub_urls`), that of
    an option named like a request body (``--judge-extra-body V``) and the value of each
    ``extra_body=`` in an argument are stored by the body rule (:func:`stored_body`), an argument
    holding a JSON object is scrubbed as a value (:func:`scrub_value`), and in any other argument a
    URL runs from its scheme to the argument's end.

    >>> scrub_command(["--judge-base-url", "u:pw@h/v1", "--model-args", "model=m,base_url=http://h/v1?k=a b,x=1"])
    ['--judge-base-url', 'h/v1', '--model-args', 'model=m,base_url=http://h/v1?k=***']
    >>> scrub_command(["--judge-extra-body", '{"key2": "sk-4fA9"}', "-a", 'model=m,extra_body={"t": "sk-4fA9"},x=1'])
    ['--judge-extra-body', '{"key2": "***"}', '-a', 'model=m,extra_body={"t": "***"},x=1']
    """
    shown: list[str] = []
    for i, arg in enumerate(args):
        option, eq, value = arg.partition("=")
        named = args[i - 1][2:] if i and args[i - 1].startswith("--") and "=" not in args[i - 1] else None
        if named is not None and _url_named(named):
            shown.append(scrub_urls(arg))
        elif arg.startswith("--") and eq and _url_named(option[2:]):
            shown.append(f"{option}={scrub_urls(value)}")
        elif named is not None and body_named(named):
            shown.append(_stored_text(arg))
        elif arg.startswith("--") and eq and body_named(option[2:]):
            shown.append(f"{option}={_stored_text(value)}")
        elif arg.lstrip().startswith("{") and isinstance(obj := _json_object(arg), dict):
            shown.append(json.dumps(scrub_value(obj), ensure_ascii=False))
        elif (found := _URL.search(arg := _stored_assignments(arg))) is not None:
            shown.append(scrub_secrets(arg[: found.start()]) + scrub_urls(arg[found.start() :]))
        else:
            shown.append(scrub_secrets(arg))
    return shown


#: ``extra_body=`` in a ``key=value`` list of model arguments (at its start or after a comma).
_BODY_ASSIGNMENT = re.compile(r"(?:^|,)\s*[\w.-]*extra[_-]body\s*=")


def _stored_text(text: str) -> str:
    """The text of a request body given on a command line, as stored: a JSON value by the body rule,
    anything else :data:`REDACTED` whole."""
    read = _read_body(text)
    return json.dumps(_stored(read), ensure_ascii=False) if read is not text else REDACTED


def _stored_assignments(arg: str) -> str:
    """``arg`` with the value of each ``extra_body=`` stored by the body rule: the JSON value that
    starts there, or everything to the argument's end when none does."""
    pieces, at = [], 0
    decoder = json.JSONDecoder()
    while (found := _BODY_ASSIGNMENT.search(arg, at)) is not None:
        start = found.end()
        pieces.append(arg[at:start])
        try:
            value, end = decoder.raw_decode(arg, start)
        except ValueError:
            return "".join(pieces) + REDACTED
        pieces.append(json.dumps(_stored(value), ensure_ascii=False))
        at = end
    return "".join(pieces) + arg[at:]


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
    """:class:`CredentialArgumentError` when ``options``, or a mapping at any depth inside them (in
    a list too), names a credential (:func:`names_credential`): keys are read from environment
    variables only. The value is not shown."""
    for name, value in options.items():
        if names_credential(name):
            raise CredentialArgumentError(
                f"{where}: {name!r} holds a credential, which is never taken on the command line or stored: "
                "put the key in an environment variable and name the variable (api_key_env=VAR / --judge-api-key-env VAR)"
            )
        for inner, at in _mappings_in(value, f"{where}.{name}"):
            refuse_credentials(inner, at)


def _mappings_in(value: Any, where: str) -> Iterator[tuple[Mapping[str, Any], str]]:
    """The outermost mappings in ``value`` (itself one, or items of lists at any depth), with where each is."""
    if isinstance(value, Mapping):
        yield value, where
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _mappings_in(item, f"{where}[{i}]")


def unstored_paths(options: Mapping[str, Any]) -> list[str]:
    """Where in ``options`` (``extra_body.metadata[0].api_key``) a value would not be stored as given
    (:func:`scrub_value`: a URL's credentials, a free string of a request body, a registered
    secret): what a door that shows options verbatim must refuse.

    >>> unstored_paths({"model": "m", "base_url": "http://u:pw@h/v1", "extra_body": {"t": 0, "m": [{"k": "sk-4fA9"}]}})
    ['base_url', 'extra_body.m[0].k']
    """
    return _differences(options, scrub_value(options), "")


def _differences(given: Any, stored: Any, where: str) -> list[str]:
    if isinstance(given, Mapping) and isinstance(stored, Mapping) and len(given) == len(stored):
        return [
            at
            for (name, value), kept in zip(given.items(), stored.values())
            for at in _differences(value, kept, f"{where}.{name}" if where else str(name))
        ]
    if isinstance(given, (list, tuple)) and isinstance(stored, list) and len(given) == len(stored):
        return [
            at
            for i, (value, kept) in enumerate(zip(given, stored))
            for at in _differences(value, kept, f"{where}[{i}]")
        ]
    return [] if given == stored else [where]


# --- the console and log records -----------------------------------------------------------------------


class ScrubFilter(logging.Filter):
    """A logging filter that scrubs each record's message (its arguments merged in, a mapping
    among them by :func:`scrub_value`) and makes its terminal controls inert
    (:func:`odu.io.console.inert_stream`) before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        # a mapping among the arguments (lm-eval's model arguments) gets its request body by its rule
        if isinstance(record.args, Mapping):
            record.args = scrub_value(record.args)
        elif record.args:
            record.args = tuple(scrub_value(a) if isinstance(a, Mapping) else a for a in record.args)
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit: left for logging to report
            return True
        scrubbed = inert_stream(scrub_text(message))
        if scrubbed != message or record.args:
            record.msg, record.args = scrubbed, None
        return True


_FILTER = ScrubFilter()


class ScrubbedStream:
    """A text stream that scrubs what is written to it before passing it on (a URL is written whole
    by one ``write`` call of ``print``, ``logging`` and ``tqdm``), terminal controls made inert
    (:func:`odu.io.console.inert_stream`); everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(inert_stream(scrub_text(text)))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def scrubbed_console() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` scrub what is written to them and make its
    terminal controls inert (:class:`ScrubbedStream`), and so do the log handlers
    (:func:`install_log_filter`, also applied on leaving)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbedStream(sys.stdout), ScrubbedStream(sys.stderr)
    install_log_filter()
    try:
        yield
    finally:
        install_log_filter()
        sys.stdout, sys.stderr = saved


def scrub_file(path: Path) -> bool:
    """Rewrite a text file (JSON, JSONL, a log) with every URL and registered secret scrubbed, and
    in a JSON or JSONL file every request body stored by its rule (:func:`stored_body`), replacing
    it (:func:`odu.io.files.replace_file`: never written through a link); True when it changed."""
    from .files import replace_file

    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    scrubbed = scrub_text(text)
    if path.suffix in (".json", ".jsonl") and holds_body(scrubbed):
        scrubbed = _bodies_stored(scrubbed, lines=path.suffix == ".jsonl")
    if scrubbed == text:
        return False
    replace_file(path, scrubbed.encode("utf-8", errors="surrogateescape"))
    return True


def _bodies_stored(text: str, lines: bool) -> str:
    """The text of a JSON file (``lines``: JSONL) with its request bodies stored by their rule, each
    value that names one written again (indented two spaces, as lm-eval writes its results); a
    value that does not parse is left as it is."""
    if lines:
        return "\n".join(_bodies_stored(line, False) if holds_body(line) else line for line in text.split("\n"))
    value = _json_object(text)
    if value is None:
        return text
    indent = 2 if "\n" in text.strip() else None
    return json.dumps(scrub_value(value, urls=False), ensure_ascii=False, indent=indent) + text[len(text.rstrip()) :]


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
    "MAX_SETTING_WORD_CHARS",
    "MIN_CREDENTIAL_CHARS",
    "REDACTED",
    "PlaceholderKeyWarning",
    "ScrubFilter",
    "ScrubbedStream",
    "URL_SCHEMES",
    "body_named",
    "body_secrets",
    "check_url",
    "credential_shaped",
    "forget_secrets",
    "holds_body",
    "holds_secret",
    "install_log_filter",
    "names_credential",
    "needs_scrub",
    "refuse_credentials",
    "register_body",
    "register_secret",
    "scrub_command",
    "scrub_file",
    "scrub_secrets",
    "scrub_text",
    "scrub_url",
    "scrub_urls",
    "scrub_value",
    "scrubbed_console",
    "setting_word",
    "split_url_list",
    "stored_body",
    "unstored_paths",
    "url_credentials",
]
