"""The one client of the toolkit's model and judge servers, and the only module of ``odu`` that
imports the ``openai`` SDK.

vLLM, SGLang, Ollama, DashScope, Gemini's OpenAI endpoint, OpenAI, ...: the key-point judge
(:mod:`odu.judge.openai_judge`), the omni model backends (:mod:`odu.models.openai_omni`,
:mod:`odu.models.realtime`) and the ASR of the text-only tasks (:mod:`odu.harness.asr`) all talk to
their server through an :class:`OpenAIClient`; the Gemini backend (:mod:`odu.models.gemini`) through
a client of the same base, :class:`ApiClient`, that knows Google's SDK. They all get the same:

* credentials: the API key is read from an environment variable (``OPENAI_API_KEY`` by default,
  or the first set of several, named as :data:`KEY_ENV_NAME` says), sent only in the request
  header, and :data:`LOCAL_SERVER_KEY` stands in for it when a local server (``base_url`` given)
  needs none (a dry run's clients, built in :func:`sending_nothing`, need no key: they send
  nothing); the key and the server URL's credentials are registered with :mod:`odu.io.scrub`,
  which removes them from every byte written or printed, and a URL is shown by its one rule
  (:func:`odu.io.scrub.scrub_url`); a ``base_url`` that is not a usable URL is refused
  (:func:`odu.io.scrub.check_url`);
* transport limits: each attempt of a call has a total deadline of ``timeout`` seconds (from the
  first byte sent to the last byte read, however slowly the server trickles; the SDK's own
  timeouts bound each connect and read), and a reply may not exceed :data:`MAX_RESPONSE_BYTES`
  (counted as it arrives, so an endless body is cut off; compressed replies are not asked for
  and refused); both failures are retried like a timeout;
* replicas: ``base_url`` may list several servers of the same model separated by
  :data:`REPLICA_SEPARATOR` (``http://a:8000/v1|http://b:8000/v1``); each attempt goes to the
  replica with the fewest attempts in flight, and a replica that fails an attempt rests for
  :data:`REPLICA_COOLDOWN_S` while its calls are retried at once on the others
  (:class:`ReplicaPool`);
* retry policy (:meth:`ApiClient.call`): 429, 408, 409, 5xx, timeouts, connection errors and
  undecodable bodies are retried with exponential backoff (``Retry-After`` / ``retry-after-ms``
  honoured up to :data:`MAX_RETRY_AFTER_S`); the SDKs' own retries are off, so every retry is
  counted; a call waits at most :data:`MAX_WAITING_S` between its attempts in all, then its
  client gives up (:class:`Waits`: each long wait and the giving up said in one console line);
  401 / 403 / 404 (a wrong key, model or URL, which no retry can mend) stop the run at once with a
  :class:`ServerUnavailableError` naming the server, the model and what to check. Each client
  sorts its SDK's exceptions into the policy (:meth:`ApiClient.classify`: retry, refusal or
  failure); a call may also raise the policy's own exceptions (:class:`TransientError`,
  :class:`ServerRefusedError`, :class:`CallFailedError`, e.g. from :func:`status_failure`);
* batch runner (:meth:`ApiClient.run`): a batch of async calls runs from plain code on its own
  event loop, and from code already inside a running loop (a notebook, a harness) on a private
  loop in a worker thread; :meth:`ApiClient.gather` cancels a batch's other calls when one
  fails for good;
* accounting (:class:`CallStats`): requests, retries, errors, tokens and wall time.

Anything that needs more of the ``openai`` SDK gets it through an accessor of :class:`OpenAIClient`
(:meth:`~OpenAIClient.async_sdk` for HTTP calls, :meth:`~OpenAIClient.realtime` for a Realtime
WebSocket session), so that no other module imports ``openai``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import email.utils
import functools
import json
import os
import random
import re
import sys
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from urllib.parse import parse_qsl

from tqdm.auto import tqdm

from ..io.scrub import (
    MIN_CREDENTIAL_CHARS,
    PlaceholderKeyWarning,
    check_url,
    register_secret,
    scrub_text,
    scrub_urls,
    split_url_list,
    url_credentials,
)

if TYPE_CHECKING:  # pragma: no cover
    import openai

T = TypeVar("T")

#: Environment variable holding the API key unless told otherwise (the key is never written anywhere).
API_KEY_ENV = "OPENAI_API_KEY"
#: The key sent to local servers (vLLM, SGLang, Ollama) when the key variable is not set: they
#: accept any key. It is not a secret.
LOCAL_SERVER_KEY = "EMPTY"
#: Retries per call on 429, 5xx, timeouts, connection errors and undecodable bodies.
RETRIES = 6
#: Exponential backoff between retries: first wait, growth factor and cap (seconds); ``Retry-After`` wins.
BACKOFF: tuple[float, float, float] = (1.0, 2.0, 60.0)
#: The longest wait a server may ask for (``Retry-After`` / ``retry-after-ms``), whatever the backoff:
#: a longer one (``Retry-After: 999999``) is cut to this, so no server can stall a run
#: (:data:`MAX_RETRY_AFTER_ENV` sets another for a run).
MAX_RETRY_AFTER_S = 60.0
#: The most one call waits between its attempts, all its waits summed (two of the longest): once it
#: has waited this long its client gives up on the server, and until one of its calls succeeds again a
#: call that fails is not retried, so a server answering 429 for ever holds a run for about this long
#: (:data:`MAX_WAITING_ENV` sets another for a run).
MAX_WAITING_S = 120.0
#: A wait this long or longer is said on the console in one line, as is every wait cut short of the
#: server's ``Retry-After``.
WAIT_NOTICE_S = 5.0
#: Environment variable setting :data:`MAX_RETRY_AFTER_S` for a run (:func:`seconds_setting`, read
#: when a client is made).
MAX_RETRY_AFTER_ENV = "ODU_MAX_RETRY_AFTER_S"
#: Environment variable setting :data:`MAX_WAITING_S` for a run (as :data:`MAX_RETRY_AFTER_ENV`).
MAX_WAITING_ENV = "ODU_MAX_WAITING_S"
#: Statuses that cannot succeed on any call of the run (wrong key, model or URL): stop at once.
FATAL_STATUSES = frozenset({401, 403, 404})
#: Statuses worth retrying besides 5xx.
RETRY_STATUSES = frozenset({408, 409, 429})
#: Largest reply body read from a server (16 MiB: a judge verdict is a few KB, a model answer a few
#: tens of KB); a longer one fails the attempt (:class:`ResponseTooLargeError`).
MAX_RESPONSE_BYTES = 16 * 2**20
#: Longest server reason kept in a failed call's message (the rest of a long error body is cut).
MAX_REASON_CHARS = 500
#: Seconds the SDK waits for a connection to open (capped by the request's ``timeout``).
CONNECT_TIMEOUT_S = 10.0
#: Separates the replicas listed in one ``base_url``.
REPLICA_SEPARATOR = "|"
#: Seconds a replica that failed an attempt is passed over while others are ready.
REPLICA_COOLDOWN_S = 30.0
#: Whether the clients built now are a dry run's (:func:`sending_nothing`), which need no key.
_SENDING_NOTHING: contextvars.ContextVar[bool] = contextvars.ContextVar("odu-sending-nothing", default=False)


@contextlib.contextmanager
def sending_nothing() -> Iterator[None]:
    """Clients built inside are a dry run's (``odu-bench eval --dry-run``): they send nothing, so a key
    variable that is not set stops nothing; :attr:`ApiClient.missing_key` says why a real run would stop."""
    token = _SENDING_NOTHING.set(True)
    try:
        yield
    finally:
        _SENDING_NOTHING.reset(token)


class ServerRefusedError(RuntimeError):
    """The server answered with a status in :data:`FATAL_STATUSES`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class CallFailedError(Exception):
    """A call that failed for good: retries used up, or a non-retryable answer."""


class ServerUnavailableError(RuntimeError):
    """The server refuses every call (wrong key, model or URL); the message says which, scrubbed."""


class TransientError(Exception):
    """A failure worth another attempt (5xx, 408/409/429, timeout, dropped connection), raised by a
    call or a client's :meth:`~ApiClient.classify`; ``response`` (when the failure had one) carries
    the server's ``Retry-After``."""

    def __init__(self, message: str, response: Any = None) -> None:
        super().__init__(message)
        self.response = response


class ModelListError(LookupError):
    """``GET /models`` gave no model list; ``status`` is the HTTP status the server answered (None:
    no answer at all), the message says why (scrubbed)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ResponseTooLargeError(TransientError):
    """The server's reply exceeded :data:`MAX_RESPONSE_BYTES` (or announced it would)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"reply larger than {limit:,} bytes (MAX_RESPONSE_BYTES): cut off")


#: Sorts an exception raised by a call into the retry policy: a :class:`TransientError` (try again),
#: a :class:`ServerRefusedError` (stop the run), a :class:`CallFailedError` (this call failed), or
#: None (not a call failure: it propagates as it is).
Classifier = Callable[[Exception], Exception | None]


def status_failure(status: int, message: str, response: Any = None) -> Exception:
    """The retry policy's exception for an HTTP(-like) ``status``.

    >>> [type(status_failure(s, "x")).__name__ for s in (401, 503, 429, 400)]
    ['ServerRefusedError', 'TransientError', 'TransientError', 'CallFailedError']
    >>> str(status_failure(400, "bad request"))
    'HTTP 400: bad request'
    """
    if status in FATAL_STATUSES:
        return ServerRefusedError(status, message)
    if status >= 500 or status in RETRY_STATUSES:
        return TransientError(f"HTTP {status}: {message}", response)
    return CallFailedError(f"HTTP {status}: {message}")


def sdk_status_message(message: str, body: Any) -> str:
    """The ``openai`` SDK's ``APIStatusError`` message with the server's reason: the SDK keeps only an
    ``{"error": {"message": ...}}`` field in its text, so a FastAPI server's ``{"detail": ...}``
    (``transformers serve`` from 5.25 answers a request's fault so: 400, server.py) or a plain-text
    body would leave ``Error code: 400`` alone. ``body`` is the SDK's ``exc.body``; at most
    :data:`MAX_REASON_CHARS` of the reason are kept.

    >>> sdk_status_message("Error code: 400", {"detail": "num_frames and fps are mutually exclusive"})
    'Error code: 400 - num_frames and fps are mutually exclusive'
    >>> sdk_status_message("Error code: 400 - bad field", {"message": "bad field"})
    'Error code: 400 - bad field'
    >>> sdk_status_message("Error code: 502", "Bad Gateway"), sdk_status_message("Error code: 500", None)
    ('Error code: 502 - Bad Gateway', 'Error code: 500')

    FastAPI's validation errors (422) are a list of ``{"loc": [...], "msg": ...}``: each shown as
    ``where: msg``, never as JSON.

    >>> sdk_status_message("Error code: 422", {"detail": [{"loc": ["body", "model"], "msg": "Field required"}]})
    'Error code: 422 - body.model: Field required'
    """
    if " - " in message or not body:
        return message
    reason: Any = body
    if isinstance(body, dict):
        said = body.get("detail", body.get("message"))
        if isinstance(said, list) and said and all(isinstance(e, dict) and isinstance(e.get("msg"), str) for e in said):
            said = "; ".join(_validation_error(e) for e in said)
        reason = said if isinstance(said, str) else json.dumps(body, ensure_ascii=False, default=str)
    reason = str(reason).strip()
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[:MAX_REASON_CHARS] + " ..."
    return f"{message} - {reason}" if reason else message


def _validation_error(error: dict[str, Any]) -> str:
    """One FastAPI validation error as a reason: ``body.model: Field required`` (its ``loc`` joined by
    ``.``, when it has one)."""
    where = ".".join(str(part) for part in error.get("loc") or ())
    return f"{where}: {error['msg']}" if where else error["msg"]


def split_replicas(base_url: str | None) -> list[str | None]:
    """The servers listed in ``base_url`` (one, or several separated by :data:`REPLICA_SEPARATOR`;
    a ``|`` inside a query value stays there: :func:`odu.io.scrub.split_url_list`).

    >>> split_replicas("http://a:8000/v1 | http://b:8000/v1")
    ['http://a:8000/v1', 'http://b:8000/v1']
    >>> split_replicas(None)
    [None]
    """
    if base_url is None:
        return [None]
    urls = split_url_list(base_url)
    if not all(urls):
        raise ValueError(f"base_url lists an empty replica: {scrub_urls(base_url)!r}")
    return list(urls)


def sdk_base(url: str | None) -> tuple[str | None, dict[str, str]]:
    """``(base URL, query)`` of a server URL as the SDK takes them: the path alone as ``base_url``
    (the SDK appends ``/chat/completions`` to it) and the query as ``default_query`` (sent with every
    request, e.g. Azure's ``api-version``); a fragment is never sent. :class:`ValueError` for a
    parameter given twice (the SDK keeps one value per name).

    >>> sdk_base("http://h/v1?route=blue&api-version=2024-06-01#x")
    ('http://h/v1', {'route': 'blue', 'api-version': '2024-06-01'})
    """
    if url is None:
        return None, {}
    base, _, query = url.partition("#")[0].partition("?")
    pairs = parse_qsl(query, keep_blank_values=True)
    names = [name for name, _ in pairs]
    if len(set(names)) < len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise ValueError(f"base_url {scrub_urls(url)!r}: query parameter {twice!r} given twice")
    return base, dict(pairs)


#: An environment variable's name as ``api_key_env`` takes it (upper-case letters, digits and ``_``,
#: e.g. ``OPENAI_API_KEY``): anything else is refused, since it may be the key itself.
KEY_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


def seconds_setting(env: str, default: float) -> float:
    """Seconds from environment variable ``env`` (a finite number >= 0), else ``default``;
    :class:`ValueError` naming the variable for anything else.

    >>> seconds_setting("ODU_UNSET_FOR_THIS_EXAMPLE", 60.0)
    60.0
    """
    value = os.environ.get(env, "").strip()
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 <= seconds < float("inf"):  # NaN too
        raise ValueError(f"{env}={value!r}: not a number of seconds (a finite number >= 0)")
    return seconds


def asked_wait(exc: Exception) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if any, as asked
    (at least 0; a date far ahead or ``inf`` may be huge or infinite)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    asked: float | None = None
    if (ms := headers.get("retry-after-ms")) is not None:
        with contextlib.suppress(ValueError):
            asked = float(ms) / 1000
    value = headers.get("retry-after")
    if asked is None and value:
        try:
            asked = float(value)
        except ValueError:
            with contextlib.suppress(ValueError, TypeError, OverflowError):
                parsed = email.utils.parsedate_to_datetime(value)
                asked = parsed.timestamp() - time.time() if parsed else None
    if asked is None or asked != asked:  # none given, or NaN
        return None
    return max(0.0, asked)


def retry_after(exc: Exception, longest: float = MAX_RETRY_AFTER_S) -> float | None:
    """:func:`asked_wait` cut to ``longest`` seconds (:data:`MAX_RETRY_AFTER_S`)."""
    asked = asked_wait(exc)
    return None if asked is None else min(asked, longest)


def _seconds(value: float) -> str:
    """Seconds as the console shows them: ``60``, ``0.5``, ``999999``."""
    return f"{round(value, 1):g}"


class Waits:
    """The waits between the retries of one client's calls, and what the console hears of them.

    A server's wait is cut to ``longest`` (:data:`MAX_RETRY_AFTER_S`). A call waits at most
    ``in_all`` seconds (:data:`MAX_WAITING_S`) between its attempts in all; the first call to spend
    that gives up, and with it the client: until one of its calls succeeds again, a call that fails
    is not retried. ``say`` (None: silent) hears one line for a wait of :data:`WAIT_NOTICE_S` or
    more, or cut short of the server's ask (not for the waits other calls begin meanwhile), and one
    line on giving up; ``who`` names the server and model in them."""

    def __init__(
        self,
        who: str = "server",
        *,
        longest: float = MAX_RETRY_AFTER_S,
        in_all: float = MAX_WAITING_S,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.who, self.longest, self.in_all, self.say = who, longest, in_all, say
        self.given_up = False
        self._said_until = 0.0  # time.monotonic() when the last wait said ends

    @property
    def gave_up_note(self) -> str:
        """What a call that is not retried says of it."""
        return f"given up after {_seconds(self.in_all)} s of waits, MAX_WAITING_S"

    def succeeded(self) -> None:
        """A call succeeded: the server answers, failing calls are retried again."""
        self.given_up = False

    def next(self, wanted: float, waited: float, asked: float | None, reason: object) -> float | None:
        """The wait before a call's next attempt: ``wanted`` seconds (the server's ``asked``, cut to
        :attr:`longest`, or the backoff) within what is left of :attr:`in_all` after the ``waited``
        seconds the call has waited so far; None when the call gives up."""
        left = self.in_all - waited
        if self.given_up or left <= 0:
            if not self.given_up:
                self.given_up = True
                self._tell(
                    f"{self.who}: {reason}; giving up after {_seconds(self.in_all)} s of waits (MAX_WAITING_S): "
                    "its failing calls are not retried until one succeeds"
                )
            return None
        wait = min(wanted, left)
        cut = asked is not None and asked > wait
        now = time.monotonic()
        if (wait >= WAIT_NOTICE_S or cut) and (
            now >= self._said_until or now + wait >= self._said_until + WAIT_NOTICE_S
        ):
            self._said_until = max(self._said_until, now + wait)
            asked_note = f" (asked for {_seconds(asked)} s)" if cut and asked is not None else ""
            self._tell(
                f"{self.who}: {reason}; retrying in {_seconds(wait)} s{asked_note}, giving up after "
                f"{_seconds(self.in_all)} s of waits"
            )
        return wait

    def _tell(self, line: str) -> None:
        if self.say is not None:
            self.say(line)


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    retries: int,
    backoff: tuple[float, float, float],
    classify: Classifier,
    on_retry: Callable[[], None] = lambda: None,
    ready_elsewhere: Callable[[], bool] = lambda: False,
    waits: Waits | None = None,
) -> T:
    """Await ``call()`` until it succeeds, retrying what ``classify`` (or the call itself) calls a
    :class:`TransientError` up to ``retries`` times.

    The wait is the server's ``Retry-After`` if given (cut to ``waits.longest``), else ``first *
    factor**attempt`` jittered down by up to half; both capped at ``cap`` (``backoff = (first,
    factor, cap)``); none when ``ready_elsewhere()`` (another replica can take the retry at once);
    all the call's waits within ``waits.in_all`` (:class:`Waits`, the client's; default: a silent
    one of the module's limits). Raises :class:`ServerRefusedError` on a refusal (401/403/404) and
    :class:`CallFailedError` on any other failure or when giving up; exceptions ``classify`` does
    not know propagate unchanged.
    """
    first, factor, cap = backoff
    waits = waits if waits is not None else Waits()
    waited = 0.0
    for attempt in range(retries + 1):
        try:
            result = await call()
        except (ServerRefusedError, CallFailedError):
            raise
        except Exception as exc:
            verdict = exc if isinstance(exc, TransientError) else classify(exc)
            if verdict is None:
                raise
            if not isinstance(verdict, TransientError):
                raise verdict from None
            failure: Exception = exc
        else:
            waits.succeeded()
            return result
        if attempt == retries:  # the verdict's text: the server's reason where the SDK's own text lacks it
            raise CallFailedError(f"{type(failure).__name__} after {attempt + 1} attempts: {verdict}")
        wait = 0.0 if ready_elsewhere() else retry_after(failure, waits.longest)
        if wait is None:
            wait = min(cap, first * factor**attempt) * random.uniform(0.5, 1.0)
        granted = waits.next(min(wait, cap), waited, asked_wait(failure), verdict)
        if granted is None:
            raise CallFailedError(
                f"{type(failure).__name__} after {attempt + 1} attempts: {verdict} ({waits.gave_up_note})"
            )
        on_retry()
        waited += granted
        await asyncio.sleep(granted)
    raise AssertionError("unreachable")


@dataclass
class CallStats:
    """Counters of one client's work; users subclass it to add theirs and name the reporting order."""

    requests: int = 0
    retries: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_time_s: float = 0.0

    def count_usage(self, usage: Any) -> None:
        """Add a reply's token usage (a decoded ``usage`` dict or the SDK's usage object; None: nothing).

        A count that is not a non-negative integer (``"10"``, ``NaN``, ``-3``, ``true``: the server's
        accounting, not the answer) is left out rather than breaking the run or the summary's JSON.
        """
        if usage is None:
            return
        get = usage.get if isinstance(usage, Mapping) else lambda name: getattr(usage, name, 0)
        self.prompt_tokens += _token_count(get("prompt_tokens"))
        self.completion_tokens += _token_count(get("completion_tokens"))

    def add(self, counts: Mapping[str, Any]) -> None:
        """Add ``counts`` (counter name -> number, as :meth:`as_dict` gives them) to these counters."""
        for name, value in counts.items():
            setattr(self, name, getattr(self, name) + value)

    def as_dict(self, order: Sequence[str]) -> dict[str, Any]:
        """The counters in ``order`` (every field), times and other fractional counts rounded to thousandths."""
        stats = asdict(self)
        if set(order) != set(stats):
            raise ValueError(f"reporting order {list(order)} does not name the counters {list(stats)}")
        return {name: round(stats[name], 3) if isinstance(stats[name], float) else stats[name] for name in order}


class ReplicaPool:
    """The replicas of one server (:func:`split_replicas`) and which to send the next attempt to:
    among those not resting after a failure (all of them, when every one rests: the first to wake
    first), the one with the fewest attempts in flight, the least recently chosen on a tie."""

    def __init__(self, urls: Sequence[str | None], cooldown: float = REPLICA_COOLDOWN_S) -> None:
        self.urls = list(urls)
        self.cooldown = cooldown
        self.in_flight = [0] * len(self.urls)
        self._rest_until = [0.0] * len(self.urls)
        self._chosen = [0] * len(self.urls)
        self._turn = 0

    def __len__(self) -> int:
        return len(self.urls)

    def _ready(self) -> list[int]:
        now = time.monotonic()
        return [i for i, until in enumerate(self._rest_until) if until <= now]

    def acquire(self) -> int:
        """The replica for the next attempt, counted in flight until :meth:`release`."""
        ready = self._ready() or [min(range(len(self)), key=self._rest_until.__getitem__)]
        index = min(ready, key=lambda i: (self.in_flight[i], self._chosen[i]))
        self._turn += 1
        self._chosen[index] = self._turn
        self.in_flight[index] += 1
        return index

    def release(self, index: int) -> None:
        self.in_flight[index] -= 1

    def fail(self, index: int, rest: float | None = None) -> None:
        """Replica ``index`` failed an attempt: pass it over for :attr:`cooldown` s, or the ``rest``
        its server asked for (``Retry-After``) when longer, up to ten cooldowns."""
        self._rest_until[index] = time.monotonic() + min(max(self.cooldown, rest or 0.0), 10 * self.cooldown)

    def ready_elsewhere(self) -> bool:
        """Whether, among several replicas, one is ready now (a retry need not wait)."""
        return len(self) > 1 and bool(self._ready())


def placeholder_key(role: str, env: str, base_url: str | None) -> None:
    """An API key that is not credential-shaped (:func:`odu.io.scrub.credential_shaped`: ``x``,
    ``EMPTY``, ``null``): it is not scrubbed by value (replacing it everywhere would rewrite the
    outputs). For a provider's own server (no ``base_url``), which never takes one, a
    :class:`ValueError` naming ``role``; for a ``base_url`` (a local server takes any key), a
    :class:`~odu.io.scrub.PlaceholderKeyWarning` naming the variable only, one cause however many
    clients (model, judge, ASR, preflight) read it. The key is not shown."""
    said = (
        f"{env} holds a placeholder, not a credential (a key has {MIN_CREDENTIAL_CHARS}+ characters of two "
        "kinds, no spaces or quotes: CREDENTIAL_RULE, docs/harness.md)"
    )
    if base_url is None:
        raise ValueError(
            f"{role} API key: {said}; no provider's server takes it: set the key, or give the base_url of a local server"
        )
    warnings.warn(
        f"API key: {said}: it is sent, but not scrubbed from outputs by value", PlaceholderKeyWarning, stacklevel=3
    )


def _token_count(value: Any) -> int:
    """``value`` if it is a token count (a non-negative ``int``, not a ``bool``), else 0."""
    return value if type(value) is int and value >= 0 else 0


class ApiClient:
    """One model or judge server as a part of the toolkit talks to it; see the module docstring.

    ``role`` names the user in messages ("judge", "model", "ASR"), ``url_option`` the setting that
    holds the server URL (shown in the refusal message), ``unavailable`` the error raised when the
    server refuses every call. ``api_key_env`` is one variable or several, the first set one
    winning. Raises :class:`ValueError` when no key variable is set and no ``base_url`` (a local
    server) is given, unless built for a dry run (:func:`sending_nothing`). Subclasses hold one SDK:
    its accessors and :meth:`classify`.
    """

    #: The server the SDK talks to when no ``base_url`` is given (shown in messages).
    default_server: ClassVar[str] = ""

    def __init__(
        self,
        role: str,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | Sequence[str] = API_KEY_ENV,
        timeout: float,
        retries: int = RETRIES,
        backoff: tuple[float, float, float] = BACKOFF,
        stats: CallStats | None = None,
        url_option: str = "base_url",
        unavailable: type[ServerUnavailableError] = ServerUnavailableError,
    ) -> None:
        envs = (api_key_env,) if isinstance(api_key_env, str) else tuple(api_key_env)
        if not all(KEY_ENV_NAME.fullmatch(env) for env in envs):
            raise ValueError(
                f"{role} API key: the key's environment variable must be named by its NAME (upper-case letters, "
                "digits and _, e.g. OPENAI_API_KEY), never by the key itself, which is not shown here"
            )
        for url in split_replicas(base_url) if base_url is not None else ():
            check_url(url or "", url_option)
            sdk_base(url)
        found = next((env for env in envs if os.environ.get(env)), None)
        #: Why a real run stops here (no key variable set, and no local server), else None.
        self.missing_key = (
            f"{role} API key: environment variable {' or '.join(envs)} is not set"
            if found is None and base_url is None
            else None
        )
        if self.missing_key and not _SENDING_NOTHING.get():
            raise ValueError(self.missing_key)
        key = os.environ[found] if found else None
        self._api_key = key or LOCAL_SERVER_KEY
        if key and not register_secret(key):  # a credential is never written or printed, however a server echoes it
            placeholder_key(role, str(found), base_url)
        for secret in url_credentials(base_url):
            register_secret(secret)
        self.role, self.model, self.base_url, self.api_key_env = role, model, base_url, found or envs[0]
        self.replicas = ReplicaPool(split_replicas(base_url))
        # the replica of the attempt under way in this task (read by the SDK's request hook)
        self._replica: contextvars.ContextVar[int | None] = contextvars.ContextVar(f"odu-{role}-replica", default=None)
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.url_option, self.unavailable = url_option, unavailable
        self.stats = stats if stats is not None else CallStats()
        self.waits = Waits(
            f"{role} server {self.server} (model {model!r})",
            longest=seconds_setting(MAX_RETRY_AFTER_ENV, MAX_RETRY_AFTER_S),
            in_all=seconds_setting(MAX_WAITING_ENV, MAX_WAITING_S),
            say=self._say,
        )

    @property
    def public_base_url(self) -> str | None:
        """The server URL as it may be shown or written (:func:`odu.io.scrub.scrub_urls`; None: the
        SDK's default server)."""
        return scrub_urls(self.base_url) if self.base_url is not None else None

    @property
    def server(self) -> str:
        """The server as messages name it: :attr:`public_base_url`, else :attr:`default_server`."""
        return self.public_base_url or self.default_server

    def scrub(self, text: str) -> str:
        """``text`` with every URL scrubbed and every registered secret (this client's key and URL
        credentials among them) replaced by ``***`` (:func:`odu.io.scrub.scrub_text`)."""
        return scrub_text(text)

    def classify(self, exc: Exception) -> Exception | None:
        """The retry policy's reading of an exception of this client's SDK (a :data:`Classifier`);
        the base knows no SDK, so only the policy's own exceptions count."""
        return None

    # --- calls ------------------------------------------------------------------------------------

    async def call(self, send: Callable[[], Awaitable[T]], *, gate: asyncio.Semaphore | None = None) -> T:
        """``await send()`` under the retry policy, each retry counted; raises
        :class:`CallFailedError` when it fails for good and :attr:`unavailable` on a refusal.

        Each attempt holds ``gate`` (if given; not while waiting to retry), goes to one replica
        (:class:`ReplicaPool`) and must end within :attr:`timeout` seconds in all."""

        async def attempt() -> T:
            async with gate if gate is not None else contextlib.nullcontext():
                return await self._attempt(send)

        try:
            return await with_retries(
                attempt,
                retries=self.retries,
                backoff=self.backoff,
                classify=self.classify,
                on_retry=self._count_retry,
                ready_elsewhere=self.replicas.ready_elsewhere,
                waits=self.waits,
            )
        except ServerRefusedError as exc:
            raise self.unavailable(
                self.scrub(
                    f"{self.role} server {self.server} refused model {self.model!r} with "
                    f"HTTP {exc.status} (check {self.api_key_env}, the model name and {self.url_option}): {exc.message}"
                )
            ) from None

    async def _attempt(self, send: Callable[[], Awaitable[T]]) -> T:
        """One attempt on the chosen replica under the total deadline; a replica that fails it
        with a transient failure rests (:meth:`ReplicaPool.fail`)."""
        index = self.replicas.acquire()
        token = self._replica.set(index)
        try:
            return await _before(send(), self.timeout)
        except Exception as exc:
            verdict = exc if isinstance(exc, TransientError) else self.classify(exc)
            if isinstance(verdict, TransientError):
                self.replicas.fail(index, retry_after(exc, self.waits.longest))
            raise
        finally:
            self._replica.reset(token)
            self.replicas.release(index)

    def _count_retry(self) -> None:
        self.stats.retries += 1

    def _say(self, line: str) -> None:
        """One console line about this client's waits, scrubbed, above any progress bar."""
        tqdm.write(self.scrub(line), file=sys.stderr)

    def run(self, batch: Callable[[], Awaitable[T]]) -> T:
        """Run the coroutine ``batch()`` to its end from synchronous code, its wall time counted:
        on a new event loop, or, when called inside a running loop, on a private loop in a worker thread."""
        started = time.perf_counter()
        try:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(_awaited(batch))
            with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"odu-{self.role.lower()}") as pool:
                return pool.submit(asyncio.run, _awaited(batch)).result()
        finally:
            self.stats.wall_time_s += time.perf_counter() - started

    @staticmethod
    async def gather(calls: Iterable[Awaitable[T]]) -> list[T]:
        """Await all ``calls`` concurrently, results in order; if one raises, the others are
        cancelled (and awaited) before the exception propagates."""
        tasks = [asyncio.ensure_future(c) for c in calls]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise


class OpenAIClient(ApiClient):
    """An OpenAI-compatible server (chat, transcriptions, the Realtime WebSocket) through the
    ``openai`` SDK; see the module docstring."""

    default_server = "api.openai.com"

    def classify(self, exc: Exception) -> Exception | None:
        """The ``openai`` SDK's failures: statuses by :func:`status_failure`; connection errors and
        undecodable bodies (``ValueError``; ``RecursionError``: JSON nested deeper than Python's
        stack) retried."""
        import openai

        if isinstance(exc, openai.APIStatusError):
            return status_failure(exc.status_code, sdk_status_message(exc.message, exc.body), exc.response)
        if isinstance(exc, (openai.APIConnectionError, openai.APIResponseValidationError, ValueError, RecursionError)):
            return TransientError(str(exc))
        return None

    # --- SDK accessors: the only places the ``openai`` SDK is touched ----------------------------

    def async_sdk(self) -> openai.AsyncOpenAI:
        """A fresh async SDK client for one batch (close it when done): its own retries off, the
        SDK's timeouts per connect and read, uncompressed replies capped at
        :data:`MAX_RESPONSE_BYTES`, each request sent to the replica of its attempt (httpx event
        hooks on the SDK's default HTTP client)."""
        import openai

        timeout = openai.Timeout(self.timeout, connect=min(CONNECT_TIMEOUT_S, self.timeout))
        http = openai.DefaultAsyncHttpxClient(
            timeout=timeout, event_hooks={"request": [self._route], "response": [_cap_reply]}
        )
        base_url, query = sdk_base(self.replicas.urls[0])
        return openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=base_url,
            default_query=query or None,
            max_retries=0,
            timeout=timeout,
            http_client=http,
            default_headers={"Accept-Encoding": "identity"},  # a compressed body could not be capped
        )

    async def _route(self, request: Any) -> None:
        """httpx request hook: send a request of an attempt bound to replica ``i > 0`` there, with
        that replica's query (the SDK builds every URL on the first replica, :func:`sdk_base`)."""
        index = self._replica.get()
        if not index:
            return
        import httpx2

        (first, first_query), (chosen, chosen_query) = (
            sdk_base(u) for u in (self.replicas.urls[0], self.replicas.urls[index])
        )
        first, chosen = (str(httpx2.URL(u or "")).rstrip("/") + "/" for u in (first, chosen))
        url = request.url.copy_with(query=None)
        if str(url).startswith(first):
            params = [(k, v) for k, v in request.url.params.multi_items() if k not in first_query]
            request.url = httpx2.URL(chosen + str(url)[len(first) :], params=[*params, *chosen_query.items()])
            request.headers["Host"] = request.url.netloc.decode("ascii")

    async def fetch_models(self, timeout: float) -> list[dict[str, Any]]:
        """``GET /models`` once (no retries, at most ``timeout`` seconds in all), from inside an
        event loop: the listed models as dicts. The one reader of a server's model list (the
        preflight's, :mod:`odu.transport.server_check`, and ``provider=auto``'s, :meth:`list_models`).
        Raises :class:`ModelListError` (scrubbed; the SDK's exception as its cause) when the server
        does not answer with a list in time."""
        sdk = self.async_sdk()
        try:
            data = (await asyncio.wait_for(sdk.models.list(), timeout)).data
            if not isinstance(data, list):
                raise ValueError("GET /models answered no model list")
        except Exception as exc:
            status = getattr(exc, "status_code", None)
            raise ModelListError(self.scrub(f"{type(exc).__name__}: {exc}"), status) from exc
        finally:
            await sdk.close()
        return [m.model_dump() if hasattr(m, "model_dump") else dict(m) for m in data]

    def list_models(self, timeout: float) -> list[dict[str, Any]]:
        """:meth:`fetch_models` from plain code; any failure is a :class:`ModelListError`."""
        return self._probe(lambda: self.fetch_models(timeout))

    def get_json(self, path: str, timeout: float) -> Any:
        """``GET path`` on the server's root (``base_url`` without a trailing ``/v1``: where vLLM answers
        ``/version``) once, as :meth:`list_models` asks: the decoded JSON, or :class:`ModelListError`
        (a :class:`LookupError`)."""
        root = str(sdk_base(self.replicas.urls[0])[0] or "").rstrip("/").removesuffix("/v1")

        async def fetched() -> Any:
            sdk = self.async_sdk()
            try:
                return await asyncio.wait_for(sdk.get(root + path, cast_to=object), timeout)
            finally:
                await sdk.close()

        return self._probe(fetched)

    def _probe(self, ask: Callable[[], Awaitable[T]]) -> T:
        """One best-effort request run from plain code: its answer, or a :class:`ModelListError`
        with the scrubbed reason."""
        try:
            return self.run(ask)
        except ModelListError:
            raise
        except Exception as exc:  # a best-effort probe: whatever it meets is its answer, said by the caller
            raise ModelListError(self.scrub(f"{type(exc).__name__}: {exc}")) from None

    def realtime(self) -> RealtimeSocket:
        """A Realtime WebSocket session with :attr:`model` (``async with``; one per scene)."""
        return RealtimeSocket(self)


class RealtimeSocket:
    """One Realtime session through ``openai.AsyncOpenAI().realtime.connect``: send an event (a dict),
    receive the next one (a dict), close. Failures of the connection come out as the retry policy's
    exceptions: a refused handshake through :func:`status_failure`, a dropped or unreachable socket
    as a :class:`TransientError` (the ``websockets`` package is the SDK's optional transport)."""

    def __init__(self, client: OpenAIClient) -> None:
        self._client = client
        self._sdk: Any = None
        self._manager: Any = None
        self._connection: Any = None

    async def __aenter__(self) -> RealtimeSocket:
        self._sdk = self._client.async_sdk()
        self._manager = self._sdk.realtime.connect(
            model=self._client.model,
            # the SDK reads messages of any size unless told: the same cap as an HTTP reply
            websocket_connection_options={"open_timeout": self._client.timeout, "max_size": MAX_RESPONSE_BYTES},
        )
        try:
            self._connection = await self._manager.__aenter__()
        except BaseException as exc:
            await self._sdk.close()
            raise _socket_failure(exc) from None
        return self

    async def send(self, event: Mapping[str, Any]) -> None:
        try:
            await self._connection.send(dict(event))
        except Exception as exc:
            raise _socket_failure(exc) from None

    async def recv(self) -> dict[str, Any]:
        try:
            event: dict[str, Any] = json.loads(await self._connection.recv_bytes())
        except Exception as exc:
            raise _socket_failure(exc) from None
        return event

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self._manager.__aexit__(None, None, None)
        except Exception:
            pass  # closing a socket the server already closed
        await self._sdk.close()


def _socket_failure(exc: BaseException) -> BaseException:
    """The retry policy's exception for a failure of the WebSocket layer (others unchanged)."""
    from openai import WebSocketConnectionClosedError
    from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

    if isinstance(exc, InvalidStatus):
        response = exc.response
        body = (response.body or b"").decode(errors="replace")[:300]
        return status_failure(response.status_code, f"WebSocket handshake refused: {body}", response)
    if isinstance(exc, (ConnectionClosed, WebSocketConnectionClosedError)):
        cause = exc if isinstance(exc, ConnectionClosed) else exc.__cause__
        if getattr(getattr(cause, "sent", None), "code", None) == 1009:  # RFC 6455 §7.4.1: message too big
            return ResponseTooLargeError(MAX_RESPONSE_BYTES)
        return TransientError(f"connection closed by the server ({exc})")
    if isinstance(exc, (WebSocketException, OSError, asyncio.TimeoutError, EOFError)):
        return TransientError(f"{type(exc).__name__}: {exc}")
    return exc


@functools.cache
def _capped_stream_type() -> type:
    """An httpx ``AsyncByteStream`` wrapping a reply body that fails once it passes
    :data:`MAX_RESPONSE_BYTES` (made on first use: the module imports no HTTP library)."""
    import httpx2

    class CappedStream(httpx2.AsyncByteStream):
        def __init__(self, stream: Any) -> None:
            self._stream = stream

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self._stream:
                seen += len(chunk)
                if seen > MAX_RESPONSE_BYTES:
                    raise ResponseTooLargeError(MAX_RESPONSE_BYTES)
                yield chunk

        async def aclose(self) -> None:
            await self._stream.aclose()

    return CappedStream


async def _cap_reply(response: Any) -> None:
    """httpx response hook: refuse a reply announced larger than :data:`MAX_RESPONSE_BYTES` or
    compressed (its decoded size could not be bounded), and cut off one that grows past the cap."""
    size = response.headers.get("content-length", "")
    if size.isdigit() and int(size) > MAX_RESPONSE_BYTES:
        raise ResponseTooLargeError(MAX_RESPONSE_BYTES)
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise CallFailedError(f"reply compressed ({encoding}) although an uncompressed one was asked for")

    response.stream = _capped_stream_type()(response.stream)


async def _before(work: Awaitable[T], seconds: float) -> T:
    """``await work`` (in a task of its own, bound to the caller's context), cancelled after
    ``seconds`` in all as a :class:`TransientError`; a timeout raised inside ``work`` stays its own."""
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except BaseException:  # the caller was cancelled: so is the work
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    if not done:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise TransientError(f"no complete reply within {seconds:g} s (the request's deadline)")
    return task.result()


async def _awaited(batch: Callable[[], Awaitable[T]]) -> T:
    return await batch()


__all__ = [
    "MAX_REASON_CHARS",
    "API_KEY_ENV",
    "BACKOFF",
    "FATAL_STATUSES",
    "LOCAL_SERVER_KEY",
    "KEY_ENV_NAME",
    "RETRIES",
    "RETRY_STATUSES",
    "CONNECT_TIMEOUT_S",
    "MAX_RESPONSE_BYTES",
    "MAX_RETRY_AFTER_ENV",
    "MAX_RETRY_AFTER_S",
    "MAX_WAITING_ENV",
    "MAX_WAITING_S",
    "REPLICA_COOLDOWN_S",
    "WAIT_NOTICE_S",
    "REPLICA_SEPARATOR",
    "ApiClient",
    "CallFailedError",
    "CallStats",
    "Classifier",
    "OpenAIClient",
    "RealtimeSocket",
    "ReplicaPool",
    "ModelListError",
    "ResponseTooLargeError",
    "ServerRefusedError",
    "ServerUnavailableError",
    "TransientError",
    "Waits",
    "asked_wait",
    "retry_after",
    "placeholder_key",
    "sdk_base",
    "sending_nothing",
    "sdk_status_message",
    "seconds_setting",
    "split_replicas",
    "status_failure",
    "with_retries",
]
