"""Credentials out of URLs: the one rule for everything the toolkit writes or prints.

A server URL may carry a password (``http://user:SECRET@host/v1``) or a key in its query
(``?key=...``, Gemini's REST form; ``?sig=...``, a signed storage URL). :func:`scrub_url` removes
the user info and every query parameter named in :data:`SECRET_QUERY_PARAMS`;
:func:`scrub_text` does it to every URL inside a text (a command line, a log line, an error);
:func:`scrub_value` to every string inside a JSON-like value (a run card, lm-eval's results, a
logged sample). ``odu-bench eval`` / ``lm-eval`` pass through it the run card (the command line
included), ``results.json`` (``config.model_args``), the logged samples, lm-eval's own output
files, the log records and what they print (:func:`install_log_filter`).

The API key itself never enters a URL or a file (:mod:`odu.openai_client` sends it as a header
and scrubs it from its messages); this module knows nothing of it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

#: Query parameters whose value is a credential (compared case-insensitively, ``-`` read as
#: ``_``): API keys (Gemini's REST ``?key=``, Azure's ``api-key``), OAuth tokens, passwords,
#: signed-URL signatures and credentials (S3 ``X-Amz-*``, Google ``X-Goog-*``, Azure SAS ``sig``).
SECRET_QUERY_PARAMS: frozenset[str] = frozenset(
    {
        "key",
        "api_key",
        "apikey",
        "access_key",
        "token",
        "access_token",
        "id_token",
        "refresh_token",
        "auth",
        "authorization",
        "password",
        "passwd",
        "pwd",
        "secret",
        "client_secret",
        "sig",
        "signature",
        "x_amz_signature",
        "x_amz_credential",
        "x_amz_security_token",
        "x_goog_signature",
        "x_goog_credential",
    }
)

#: A URL inside a text: a scheme, ``://``, then anything up to white space or a quote.
_URL = re.compile(r"""[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>`]+""")


def _secret_param(name: str) -> bool:
    return name.strip().lower().replace("-", "_") in SECRET_QUERY_PARAMS


def scrub_url(url: str) -> str:
    """``url`` without user info and without the query parameters of :data:`SECRET_QUERY_PARAMS`
    (other parameters, the path and the fragment stay).

    >>> scrub_url("https://bob:s3cret@api.example.com:8443/v1?api-version=2024-06-01&api-key=abc")
    'https://api.example.com:8443/v1?api-version=2024-06-01'
    >>> scrub_url("http://localhost:8000/v1")
    'http://localhost:8000/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unbalanced "[" in the host: keep only what precedes the host
        return url.partition("://")[0] + "://"
    netloc = parts.netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if not _secret_param(k)]
        if len(kept) != len(pairs):
            query = urlencode(kept)
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub_text(text: str) -> str:
    """``text`` with every URL in it scrubbed (:func:`scrub_url`).

    >>> scrub_text("model=m,base_url=http://u:SECRET@127.0.0.1:9/v1 --judge-base-url http://h/v1?key=K")
    'model=m,base_url=http://127.0.0.1:9/v1 --judge-base-url http://h/v1'
    """
    if "://" not in text:
        return text
    return _URL.sub(lambda m: scrub_url(m.group(0)), text)


def scrub_value(value: Any) -> Any:
    """``value`` (JSON-like: mappings, lists, tuples, strings, scalars) with every string scrubbed;
    mapping keys too. Another object whose text holds a URL becomes that text, scrubbed (what
    ``json.dumps(default=str)`` writes); others are returned as they are."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, Mapping):
        return {scrub_text(k) if isinstance(k, str) else k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = str(value)  # what json.dumps(default=str) would write
    return scrub_text(text) if "://" in text else value


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
    """Rewrite a text file (JSON, JSONL, a log) with every URL scrubbed; True when it changed."""
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    scrubbed = scrub_text(text)
    if scrubbed == text:
        return False
    path.write_text(scrubbed, encoding="utf-8", errors="surrogateescape")
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
    "SECRET_QUERY_PARAMS",
    "ScrubFilter",
    "ScrubbedStream",
    "install_log_filter",
    "scrub_file",
    "scrub_text",
    "scrub_url",
    "scrub_value",
    "scrubbed_console",
]
