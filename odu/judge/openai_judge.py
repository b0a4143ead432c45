"""The paper's key-point judge (App D.3 / F.4) on any OpenAI-compatible chat server.

vLLM, SGLang, Ollama, DashScope, OpenAI, ...: anything serving ``/v1/chat/completions``. Each
matched reference segment is one call (App A.3 Eq. 2) with the App F.4 instruction
(:mod:`.prompt`), at temperature 0. The whole batch of a run is judged concurrently through the
``openai`` SDK's async client, with at most ``concurrency`` calls in flight.

Never silently wrong:

* 429, 5xx, timeouts, connection errors and undecodable bodies are retried with exponential
  backoff (``Retry-After`` / ``retry-after-ms`` honoured); the SDK's own retries are off so each
  retry is counted.
* A reply that is not a valid verdict array (:func:`.prompt.parse_verdicts`) is asked again, a
  bounded number of times, then the segment gets a judge error (:meth:`JudgeVerdict.failed`),
  which the scorer reports apart from misses.
* 401 / 403 / 404 mean a wrong key, model or URL for every call: :class:`JudgeUnavailableError`
  stops the run at once (verdicts already cached are kept).

Verdicts are cached on disk (:mod:`.cache`) before anything else is asked, so a rerun costs
nothing and a killed run resumes. The API key is read from an environment variable
(``OPENAI_API_KEY`` by default), sent only in the request header, and scrubbed from every message
this module produces; it is never stored in results, caches or logs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..constants import (
    JUDGE_API_KEY_ENV,
    JUDGE_BACKOFF_FACTOR,
    JUDGE_BACKOFF_MAX_S,
    JUDGE_BACKOFF_S,
    JUDGE_CONCURRENCY,
    JUDGE_MAX_TOKENS,
    JUDGE_REASKS,
    JUDGE_RETRIES,
    JUDGE_TIMEOUT_S,
)
from ..openai_transport import CallFailedError, ServerRefusedError, public_url, with_retries
from .base import Judge, JudgeRequest, JudgeVerdict
from .cache import VerdictCache, cache_key
from .prompt import JUDGE_PROMPT_VERSION, VerdictParseError, build_messages, parse_verdicts, reask_messages


class JudgeUnavailableError(RuntimeError):
    """The judge server refuses every call (wrong key, model or URL); the message says which."""


@dataclass
class _Stats:
    segments: int = 0
    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_time_s: float = 0.0


def _reply(data: Any) -> tuple[str | None, dict[str, Any]]:
    """(message content, usage) of a decoded chat completion; ``ValueError`` if it is not one."""
    try:
        message = data["choices"][0]["message"]
        text = message.get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ValueError(f"not a chat completion: {str(data)[:80]!r}") from None
    if text is not None and not isinstance(text, str):
        raise ValueError(f"message content is {type(text).__name__}, not text")
    usage = data.get("usage")
    return text, usage if isinstance(usage, dict) else {}


def _complete_list(verdicts: list[JudgeVerdict | None]) -> list[JudgeVerdict]:
    missing = [i for i, v in enumerate(verdicts) if v is None]
    if missing:  # every request is answered above; anything else is a bug, never a silent gap
        raise RuntimeError(f"judge produced no verdict for request(s) {missing[:5]}")
    return [v for v in verdicts if v is not None]


class OpenAIJudge(Judge):
    """App F.4 judge on an OpenAI-compatible server; see the module docstring for the guarantees."""

    name = "openai"
    approximate = False
    prompt_version = JUDGE_PROMPT_VERSION

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = JUDGE_API_KEY_ENV,
        concurrency: int = JUDGE_CONCURRENCY,
        max_tokens: int = JUDGE_MAX_TOKENS,
        timeout: float = JUDGE_TIMEOUT_S,
        extra_body: Mapping[str, Any] | None = None,
        retries: int = JUDGE_RETRIES,
        reasks: int = JUDGE_REASKS,
        cache_path: str | Path | None = None,
        no_cache: bool = False,
        progress: bool = True,
        backoff: tuple[float, float, float] = (JUDGE_BACKOFF_S, JUDGE_BACKOFF_FACTOR, JUDGE_BACKOFF_MAX_S),
    ) -> None:
        if not model:
            raise ValueError("the judge needs a model name (openai:MODEL)")
        if extra_body and {"model", "messages", "temperature"} & set(extra_body):
            raise ValueError("the judge's extra request body may not set model, messages or temperature")
        if concurrency < 1 or retries < 0 or reasks < 0 or timeout <= 0 or max_tokens < 0:
            raise ValueError("judge concurrency must be >= 1, retries/reasks/max tokens >= 0, timeout > 0")
        key = os.environ.get(api_key_env)
        if not key and base_url is None:
            raise ValueError(f"judge API key: environment variable {api_key_env} is not set")
        self._secret = key or ""  # what must never leave the request header
        self._api_key = key or "EMPTY"  # local servers (vLLM, SGLang, Ollama) accept any key
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.extra_body = dict(extra_body or {})
        self.retries = retries
        self.reasks = reasks
        self.progress = progress
        self.backoff = backoff
        self.cache = None if no_cache else VerdictCache(cache_path)
        self._stats = _Stats()

    # --- public interface -----------------------------------------------------------------------

    def judge(self, requests: Sequence[JudgeRequest]) -> list[JudgeVerdict]:
        """One verdict per request, in order; the batch runs concurrently.

        Works from plain code (its own event loop) and from code already running inside an event
        loop (e.g. a notebook, or a harness calling metrics from a coroutine): then the batch runs
        on a private loop in a worker thread.
        """
        requests = list(requests)
        if not requests:
            return []
        started = time.perf_counter()
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            verdicts = asyncio.run(self._judge_all(requests))
        else:
            with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="odu-judge") as pool:
                verdicts = pool.submit(asyncio.run, self._judge_all(requests)).result()
        finally:
            self._stats.wall_time_s += time.perf_counter() - started
        return verdicts

    def accounting(self) -> dict[str, Any]:
        """Settings and counters for summary.json's ``"judge"`` block (never the key itself)."""
        stats = asdict(self._stats)
        stats["wall_time_s"] = round(stats["wall_time_s"], 3)
        return {
            "base_url": public_url(self.base_url),
            "api_key_env": self.api_key_env,
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "extra_body": self.extra_body,
            "concurrency": self.concurrency,
            "cache": str(self.cache.path) if self.cache else None,
            **stats,
        }

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={public_url(self.base_url)!r})"

    # --- internals --------------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    def _key(self, request: JudgeRequest) -> str:
        settings = {"extra_body": self.extra_body} if self.extra_body else {}
        return cache_key(self.model, JUDGE_PROMPT_VERSION, request.candidate, request.key_points, settings)

    async def _judge_all(self, requests: list[JudgeRequest]) -> list[JudgeVerdict]:
        from openai import AsyncOpenAI

        self._stats.segments += len(requests)
        keys = [self._key(r) for r in requests]
        stored = self.cache.get_many(keys) if self.cache else {}
        verdicts: list[JudgeVerdict | None] = [None] * len(requests)
        pending: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            if key in stored:
                verdicts[i] = JudgeVerdict(*stored[key])
                self._stats.cache_hits += 1
            else:
                pending.setdefault(key, []).append(i)
        bar = tqdm(
            total=len(requests), initial=len(requests) - sum(map(len, pending.values())),
            desc=f"judge {self.model}", unit="seg", disable=not self.progress,
        )
        bar.set_postfix(cached=self._stats.cache_hits, errors=self._stats.errors)
        if not pending:
            bar.close()
            return _complete_list(verdicts)
        client = AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout)
        gate = asyncio.Semaphore(self.concurrency)

        async def judge_group(key: str, indices: list[int]) -> None:
            verdict = await self._judge_one(client, gate, requests[indices[0]])
            if verdict.error is None and self.cache is not None:
                self.cache.put(key, self.model, JUDGE_PROMPT_VERSION, verdict.hits or {}, verdict.reasons)
            for i in indices:
                verdicts[i] = verdict
            bar.update(len(indices))
            bar.set_postfix(cached=self._stats.cache_hits, errors=self._stats.errors, refresh=False)

        tasks = [asyncio.ensure_future(judge_group(k, idx)) for k, idx in pending.items()]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            bar.close()
            await client.close()
        return _complete_list(verdicts)

    async def _judge_one(self, client: Any, gate: asyncio.Semaphore, request: JudgeRequest) -> JudgeVerdict:
        base = build_messages(request.candidate, request.key_points)
        messages = base
        problem = ""
        for attempt in range(self.reasks + 1):
            try:
                reply = await self._complete(client, gate, messages)
            except CallFailedError as exc:
                self._stats.errors += 1
                return JudgeVerdict.failed(self._scrub(f"judge call failed: {exc}"))
            try:
                hits, reasons = parse_verdicts(reply, request.key_points)
            except VerdictParseError as exc:
                problem = str(exc)
                if attempt < self.reasks:
                    self._stats.reasks += 1
                    messages = reask_messages(base, reply, problem, request.key_points)
                continue
            return JudgeVerdict(hits, reasons)
        self._stats.errors += 1
        return JudgeVerdict.failed(self._scrub(f"no valid verdicts after {self.reasks + 1} replies: {problem}"))

    async def _complete(self, client: Any, gate: asyncio.Semaphore, messages: list[dict[str, str]]) -> str | None:
        """The reply text of one chat call, retrying transient failures; :class:`CallFailedError` else."""
        # The SDK's generic ``post`` (its documented way to send any body) with ``cast_to=object``
        # returns the decoded JSON: the typed ``chat.completions.create`` would spend more CPU per
        # call on request transforms and response models than a 32-way batch can afford, for the
        # three fields read here. Status errors, timeouts and auth are still the SDK's.
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
        if self.max_tokens:
            body["max_tokens"] = self.max_tokens
        body.update(self.extra_body)

        async def post() -> str | None:
            async with gate:
                self._stats.requests += 1
                data = await client.post("/chat/completions", body=body, cast_to=object)
            text, usage = _reply(data)
            self._stats.prompt_tokens += usage.get("prompt_tokens") or 0
            self._stats.completion_tokens += usage.get("completion_tokens") or 0
            return text

        try:
            return await with_retries(post, retries=self.retries, backoff=self.backoff, on_retry=self._count_retry)
        except ServerRefusedError as exc:
            raise JudgeUnavailableError(
                self._scrub(
                    f"judge server {public_url(self.base_url) or 'api.openai.com'} refused model "
                    f"{self.model!r} with HTTP {exc.status} (check {self.api_key_env}, the model "
                    f"name and --judge-base-url): {exc.message}"
                )
            ) from None

    def _count_retry(self) -> None:
        self._stats.retries += 1
