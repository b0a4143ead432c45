"""The paper's key-point judge (App D.3 / F.4) on any OpenAI-compatible chat server.

vLLM, SGLang, Ollama, DashScope, OpenAI, ...: anything serving ``/v1/chat/completions``. Each
matched reference segment is one call (App A.3 Eq. 2) with the App F.4 instruction
(:mod:`.prompt`), at temperature 0. The whole batch of a run is judged concurrently through the
toolkit's one OpenAI client (:mod:`odu.transport.openai_client`), with at most ``concurrency`` calls in flight.

Never silently wrong:

* 429, 5xx, timeouts, connection errors and undecodable bodies are retried with exponential
  backoff (``Retry-After`` / ``retry-after-ms`` honoured), each retry counted, a call's waits
  capped in all and the long ones said on the console (the client's retry policy).
* A reply that is not a valid verdict array (:func:`.prompt.parse_verdicts`) is asked again, a
  bounded number of times, then the segment gets a judge error (:meth:`JudgeVerdict.failed`),
  which the scorer reports apart from misses.
* 401 / 403 / 404 mean a wrong key, model or URL for every call: :class:`JudgeUnavailableError`
  stops the run at once (verdicts already cached are kept).

Verdicts are cached on disk (:mod:`.cache`) before anything else is asked, so a rerun costs
nothing and a killed run resumes. The API key is read from an environment variable
(``OPENAI_API_KEY`` by default), sent only in the request header, and scrubbed from every message
this module produces (the client's scrubber); it is never stored in results, caches or logs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..io.scrub import refuse_credentials, register_body, scrub_secrets
from ..transport.openai_client import (
    API_KEY_ENV,
    BACKOFF,
    RETRIES,
    CallFailedError,
    CallStats,
    OpenAIClient,
    ServerUnavailableError,
)
from .base import Judge, JudgeRequest, JudgeVerdict
from .cache import VerdictCache, cache_key
from .prompt import JUDGE_PROMPT_VERSION, VerdictParseError, build_messages, parse_verdicts, reask_messages

# Settings of the judge's transport are ours (docs/judges.md); retries, backoff and the key's
# variable are the client's (:mod:`odu.transport.openai_client`).

#: Judge calls in flight at once (``--judge-concurrency``).
JUDGE_CONCURRENCY = 8
#: Output-token limit per judge call; generous because a thinking judge (App D.3) reasons first.
JUDGE_MAX_TOKENS = 8192
#: Seconds before one judge HTTP request is abandoned and retried (``--judge-timeout``).
JUDGE_TIMEOUT_S = 120.0
#: Re-asks after a reply that is not a valid verdict array, before the segment is a judge error.
JUDGE_REASKS = 2


class JudgeUnavailableError(ServerUnavailableError):
    """The judge server refuses every call (wrong key, model or URL); the message says which."""


@dataclass
class JudgeStats(CallStats):
    """The judge's counters: the client's, plus segments asked, cache hits and re-asks."""

    segments: int = 0
    cache_hits: int = 0
    reasks: int = 0

    #: Order of the counters in summary.json's ``"judge"`` block.
    ORDER = (
        "segments",
        "requests",
        "cache_hits",
        "retries",
        "reasks",
        "errors",
        "prompt_tokens",
        "completion_tokens",
        "wall_time_s",
    )


def merge_judge_infos(infos: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One ``"judge"`` block from several (one per lm-eval task): the first one's settings, the
    :class:`JudgeStats` counters summed (``odu-bench eval``, and ``odu-bench view`` of lm-eval folders)."""
    if not infos:
        return {}
    merged = dict(infos[0])
    for key in JudgeStats.ORDER:
        if any(key in info for info in infos):
            merged[key] = sum(info.get(key, 0) for info in infos)
    return merged


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
    model: str
    approximate = False
    prompt_version = JUDGE_PROMPT_VERSION

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = API_KEY_ENV,
        concurrency: int = JUDGE_CONCURRENCY,
        max_tokens: int = JUDGE_MAX_TOKENS,
        timeout: float = JUDGE_TIMEOUT_S,
        extra_body: Mapping[str, Any] | None = None,
        retries: int = RETRIES,
        reasks: int = JUDGE_REASKS,
        cache_path: str | Path | None = None,
        no_cache: bool = False,
        progress: bool = True,
        backoff: tuple[float, float, float] = BACKOFF,
    ) -> None:
        if not model:
            raise ValueError("the judge needs a model name (openai:MODEL)")
        refuse_credentials(dict(extra_body or {}), "the judge's extra request body")
        register_body(extra_body)  # no echo of its free strings is written or printed
        if extra_body and {"model", "messages", "temperature"} & set(extra_body):
            raise ValueError("the judge's extra request body may not set model, messages or temperature")
        if concurrency < 1 or retries < 0 or reasks < 0 or timeout <= 0 or max_tokens < 0:
            raise ValueError("judge concurrency must be >= 1, retries/reasks/max tokens >= 0, timeout > 0")
        self._stats = JudgeStats()
        self.client = OpenAIClient(
            "judge",
            model,
            base_url=base_url,
            api_key_env=api_key_env,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            stats=self._stats,
            url_option="--judge-base-url",
            unavailable=JudgeUnavailableError,
        )
        self.model = model
        self.concurrency = concurrency
        self.max_tokens = max_tokens
        self.extra_body = dict(extra_body or {})
        self.reasks = reasks
        self.progress = progress
        self.cache = None if no_cache else VerdictCache(cache_path)
        if self.cache is not None:
            self.cache.check()  # a damaged file is named now, before any call is paid for

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
        return self.client.run(lambda: self._judge_all(requests))

    def accounting(self) -> dict[str, Any]:
        """Settings and counters for summary.json's ``"judge"`` block (never the key itself)."""
        return {
            "base_url": self.client.public_base_url,
            "api_key_env": self.client.api_key_env,
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "extra_body": self.extra_body,
            "concurrency": self.concurrency,
            "cache": str(self.cache.path) if self.cache else None,
            **self._stats.as_dict(JudgeStats.ORDER),
        }

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={self.client.public_base_url!r})"

    # --- internals --------------------------------------------------------------------------------

    def _key(self, request: JudgeRequest) -> str:
        settings = {"extra_body": self.extra_body} if self.extra_body else {}
        return cache_key(self.model, JUDGE_PROMPT_VERSION, request.candidate, request.key_points, settings)

    async def _judge_all(self, requests: list[JudgeRequest]) -> list[JudgeVerdict]:
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
            total=len(requests),
            initial=len(requests) - sum(map(len, pending.values())),
            desc=f"judge {self.model}",
            unit="seg",
            disable=not self.progress,
        )
        bar.set_postfix(cached=self._stats.cache_hits, errors=self._stats.errors)
        if not pending:
            bar.close()
            return _complete_list(verdicts)
        client = self.client.async_sdk()
        gate = asyncio.Semaphore(self.concurrency)

        async def judge_group(key: str, indices: list[int]) -> None:
            verdict = await self._judge_one(client, gate, requests[indices[0]])
            if verdict.error is None and self.cache is not None:
                self.cache.put(key, self.model, JUDGE_PROMPT_VERSION, verdict.hits or {}, verdict.reasons)
            for i in indices:
                verdicts[i] = verdict
            bar.update(len(indices))
            bar.set_postfix(cached=self._stats.cache_hits, errors=self._stats.errors, refresh=False)

        try:
            await self.client.gather(judge_group(k, idx) for k, idx in pending.items())
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
                return JudgeVerdict.failed(self.client.scrub(f"judge call failed: {exc}"))
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
        return JudgeVerdict.failed(self.client.scrub(f"no valid verdicts after {self.reasks + 1} replies: {problem}"))

    def request_body(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> dict[str, Any]:
        """The body of one judge call (``max_tokens``: instead of the judge's own limit, when given)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
        if max_tokens or self.max_tokens:
            body["max_tokens"] = max_tokens or self.max_tokens
        body.update(self.extra_body)
        return body

    async def _complete(self, client: Any, gate: asyncio.Semaphore, messages: list[dict[str, str]]) -> str | None:
        """The reply text of one chat call, retrying transient failures; :class:`CallFailedError` else."""
        # The SDK's generic ``post`` (its documented way to send any body) with ``cast_to=object``
        # returns the decoded JSON: the typed ``chat.completions.create`` would spend more CPU per
        # call on request transforms and response models than a 32-way batch can afford, for the
        # three fields read here. Status errors, timeouts and auth are still the SDK's.
        body = self.request_body(messages)

        async def post() -> str | None:
            self._stats.requests += 1
            data = await client.post("/chat/completions", body=body, cast_to=object)
            text, usage = _reply(data)
            self._stats.count_usage(usage)
            return scrub_secrets(text) if text else text  # a reply echoing the key is neither parsed nor cached

        return await self.client.call(post, gate=gate)
