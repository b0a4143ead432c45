"""The one OpenAI-compatible client of the toolkit, and the only module of ``odu`` that imports the
``openai`` SDK.

vLLM, SGLang, Ollama, DashScope, Gemini's OpenAI endpoint, OpenAI, ...: the key-point judge
(:mod:`odu.judge.openai_judge`), the omni model backend (:mod:`odu.models.openai_omni`) and the
ASR of the text-only tasks (:mod:`odu.harness.asr`) all talk to their server through an
:class:`OpenAIClient`, which gives them the same:

* credentials: the API key is read from an environment variable (``OPENAI_API_KEY`` by default),
  sent only in the request header, and :data:`LOCAL_SERVER_KEY` stands in for it when a local
  server (``base_url`` given) needs none; :meth:`OpenAIClient.scrub` removes the key and the
  server URL's user info and query values from every message, and :func:`public_url` shows a
  URL without them;
* retry policy (:meth:`OpenAIClient.call`): 429, 408, 409, 5xx, timeouts, connection errors and
  undecodable bodies are retried with exponential backoff (``Retry-After`` / ``retry-after-ms``
  honoured); the SDK's own retries are off, so every retry is counted; 401 / 403 / 404 (a wrong
  key, model or URL, which no retry can mend) stop the run at once with a
  :class:`ServerUnavailableError` naming the server, the model and what to check;
* batch runner (:meth:`OpenAIClient.run`): a batch of async calls runs from plain code on its own
  event loop, and from code already inside a running loop (a notebook, a harness) on a private
  loop in a worker thread; :meth:`OpenAIClient.gather` cancels a batch's other calls when one
  fails for good;
* accounting (:class:`CallStats`): requests, retries, errors, tokens and wall time.

Anything that needs more of the SDK gets it through an accessor of :class:`OpenAIClient` (today
:meth:`~OpenAIClient.async_sdk`; e.g. a Realtime connection belongs next to it), so that no other
module imports ``openai``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import os
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

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
#: URL parts shorter than this are not scrubbed on their own (the API key always is).
MIN_SECRET_CHARS = 4
#: Statuses that cannot succeed on any call of the run (wrong key, model or URL): stop at once.
FATAL_STATUSES = frozenset({401, 403, 404})
#: Statuses worth retrying besides 5xx.
RETRY_STATUSES = frozenset({408, 409, 429})


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


def public_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment (they may carry credentials).

    >>> public_url("https://user:secret@api.example.com:8443/v1?key=abc")
    'https://api.example.com:8443/v1'
    """
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def url_secrets(url: str | None) -> list[str]:
    """What of ``url`` may be a credential: its user info and query string, whole, and the password,
    each query value and the fragment alone when at least :data:`MIN_SECRET_CHARS` long (shorter
    ones, like ``v=1``, would blot out ordinary text and hide nothing).

    >>> url_secrets("https://bob:s3cret@host/v1?api-key=abcd1234&v=1")
    ['bob:s3cret', 's3cret', 'api-key=abcd1234&v=1', 'abcd1234']
    """
    if not url:
        return []
    parts = urlsplit(url)
    alone = [parts.password or "", *(value for _, value in parse_qsl(parts.query)), parts.fragment]
    found = [parts.netloc.rpartition("@")[0], alone[0], parts.query, *alone[1:]]
    return [s for s in dict.fromkeys(found) if s and (s not in alone or len(s) >= MIN_SECRET_CHARS)]


def retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    retries: int,
    backoff: tuple[float, float, float],
    on_retry: Callable[[], None] = lambda: None,
) -> T:
    """Await ``call()`` until it succeeds, retrying 429, 5xx, 408/409, timeouts, connection errors
    and undecodable bodies (``ValueError``) up to ``retries`` times.

    The wait is the server's ``Retry-After`` if given, else ``first * factor**attempt`` jittered
    down by up to half; both capped at ``cap`` (``backoff = (first, factor, cap)``). Raises
    :class:`ServerRefusedError` on 401/403/404 and :class:`CallFailedError` when giving up.
    """
    import openai

    first, factor, cap = backoff
    for attempt in range(retries + 1):
        try:
            return await call()
        except openai.APIStatusError as exc:
            if exc.status_code in FATAL_STATUSES:
                raise ServerRefusedError(exc.status_code, exc.message) from None
            if exc.status_code < 500 and exc.status_code not in RETRY_STATUSES:
                raise CallFailedError(f"HTTP {exc.status_code}: {exc.message}") from None
            failure: Exception = exc
        except (openai.APIConnectionError, openai.APIResponseValidationError, ValueError) as exc:
            failure = exc
        if attempt == retries:
            raise CallFailedError(f"{type(failure).__name__} after {attempt + 1} attempts: {failure}")
        on_retry()
        wait = retry_after(failure)
        if wait is None:
            wait = min(cap, first * factor**attempt) * random.uniform(0.5, 1.0)
        await asyncio.sleep(min(wait, cap))
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
        """Add a reply's token usage (a decoded ``usage`` dict or the SDK's usage object; None: nothing)."""
        if usage is None:
            return
        get = usage.get if isinstance(usage, Mapping) else lambda name: getattr(usage, name, 0)
        self.prompt_tokens += get("prompt_tokens") or 0
        self.completion_tokens += get("completion_tokens") or 0

    def as_dict(self, order: Sequence[str]) -> dict[str, Any]:
        """The counters in ``order`` (every field), wall time rounded to milliseconds."""
        stats = asdict(self)
        if set(order) != set(stats):
            raise ValueError(f"reporting order {list(order)} does not name the counters {list(stats)}")
        return {name: round(stats[name], 3) if name == "wall_time_s" else stats[name] for name in order}


class OpenAIClient:
    """One OpenAI-compatible server as a part of the toolkit talks to it; see the module docstring.

    ``role`` names the user in messages ("judge", "model", "ASR"), ``url_option`` the setting that
    holds the server URL (shown in the refusal message), ``unavailable`` the error raised when the
    server refuses every call. Raises :class:`ValueError` when the key variable is not set and no
    ``base_url`` (a local server) is given.
    """

    def __init__(
        self,
        role: str,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = API_KEY_ENV,
        timeout: float,
        retries: int = RETRIES,
        backoff: tuple[float, float, float] = BACKOFF,
        stats: CallStats | None = None,
        url_option: str = "base_url",
        unavailable: type[ServerUnavailableError] = ServerUnavailableError,
    ) -> None:
        key = os.environ.get(api_key_env)
        if not key and base_url is None:
            raise ValueError(f"{role} API key: environment variable {api_key_env} is not set")
        self._api_key = key or LOCAL_SERVER_KEY
        # longest first, so that a secret holding another one is replaced whole
        self._secrets = sorted({s for s in (key, *url_secrets(base_url)) if s}, key=len, reverse=True)
        self.role, self.model, self.base_url, self.api_key_env = role, model, base_url, api_key_env
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.url_option, self.unavailable = url_option, unavailable
        self.stats = stats if stats is not None else CallStats()

    @property
    def public_base_url(self) -> str | None:
        """The server URL without credentials (None: the SDK's default, api.openai.com)."""
        return public_url(self.base_url)

    def scrub(self, text: str) -> str:
        """``text`` with the API key and the URL's user info and query values replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    # --- SDK accessors: the only places the ``openai`` SDK is touched ----------------------------

    def async_sdk(self) -> openai.AsyncOpenAI:
        """A fresh async SDK client for one batch (its own retries off; close it when done)."""
        from openai import AsyncOpenAI

        return AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout)

    # --- calls ------------------------------------------------------------------------------------

    async def call(self, send: Callable[[], Awaitable[T]]) -> T:
        """``await send()`` under the retry policy, each retry counted; raises
        :class:`CallFailedError` when it fails for good and :attr:`unavailable` on a refusal."""
        try:
            return await with_retries(send, retries=self.retries, backoff=self.backoff, on_retry=self._count_retry)
        except ServerRefusedError as exc:
            raise self.unavailable(
                self.scrub(
                    f"{self.role} server {self.public_base_url or 'api.openai.com'} refused model {self.model!r} with "
                    f"HTTP {exc.status} (check {self.api_key_env}, the model name and {self.url_option}): {exc.message}"
                )
            ) from None

    def _count_retry(self) -> None:
        self.stats.retries += 1

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


async def _awaited(batch: Callable[[], Awaitable[T]]) -> T:
    return await batch()


__all__ = [
    "API_KEY_ENV",
    "BACKOFF",
    "FATAL_STATUSES",
    "LOCAL_SERVER_KEY",
    "MIN_SECRET_CHARS",
    "RETRIES",
    "RETRY_STATUSES",
    "CallFailedError",
    "CallStats",
    "OpenAIClient",
    "ServerRefusedError",
    "ServerUnavailableError",
    "public_url",
    "retry_after",
    "url_secrets",
    "with_retries",
]
