"""What the native-SDK backends (:mod:`.gemini`, :mod:`.realtime`) share: running a batch of
scenes concurrently with a progress bar, and sorting a provider SDK's failures into the one retry
policy of :mod:`odu.openai_transport`.

:func:`odu.openai_transport.with_retries` retries ``ValueError`` besides the ``openai`` SDK's
transient errors; :class:`TransientCallError` is such a ``ValueError``, so the Gemini and Realtime
calls are retried, counted and backed off exactly like the OpenAI-compatible ones, honouring a
``Retry-After`` header when the failure carried a response. Wrong keys, models or URLs raise
:class:`~odu.openai_transport.ServerRefusedError` (the run stops), other refusals
:class:`~odu.openai_transport.CallFailedError` (the scene gets an inference error).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from tqdm.auto import tqdm

from ..openai_transport import FATAL_STATUSES, RETRY_STATUSES, CallFailedError, ServerRefusedError, with_retries
from .base import Generation, OnDone, SceneRequest
from .openai_omni import ModelUnavailableError

T = TypeVar("T")


class TransientCallError(ValueError):
    """A failure worth retrying (5xx, 408/409/429, timeout, dropped connection).

    A ``ValueError`` so that :func:`odu.openai_transport.with_retries` retries it; ``response``
    (when the failure had one) lets it honour the server's ``Retry-After``.
    """

    def __init__(self, message: str, response: Any = None) -> None:
        super().__init__(message)
        self.response = response


def status_failure(status: int, message: str, response: Any = None) -> Exception:
    """The exception the retry policy expects for an HTTP-like ``status``.

    >>> type(status_failure(401, "bad key")).__name__, type(status_failure(503, "busy")).__name__
    ('ServerRefusedError', 'TransientCallError')
    >>> str(status_failure(400, "bad request"))
    'HTTP 400: bad request'
    """
    if status in FATAL_STATUSES:
        return ServerRefusedError(status, message)
    if status >= 500 or status in RETRY_STATUSES:
        return TransientCallError(f"HTTP {status}: {message}", response)
    return CallFailedError(f"HTTP {status}: {message}")


async def retried(call: Callable[[], Awaitable[T]], *, retries: int, backoff: tuple[float, float, float],
                  on_retry: Callable[[], None], server: str, model: str, key_env: str,
                  scrub: Callable[[str], str]) -> T:
    """:func:`~odu.openai_transport.with_retries`, a refused key, model or URL turned into
    :class:`~.openai_omni.ModelUnavailableError` naming ``server`` (the run stops)."""
    try:
        return await with_retries(call, retries=retries, backoff=backoff, on_retry=on_retry)
    except ServerRefusedError as exc:
        raise ModelUnavailableError(scrub(
            f"{server} refused model {model!r} with {exc.status} (check {key_env}, the model name and base_url): "
            f"{exc.message}")) from None


def run_async(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``factory()`` to completion, in a worker thread when a loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="odu-model") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


async def gather_scenes(
    requests: Sequence[SceneRequest],
    answer: Callable[[SceneRequest], Awaitable[Generation]],
    *,
    concurrency: int,
    desc: str,
    progress: bool,
    on_done: OnDone | None = None,
) -> list[Generation]:
    """``answer`` every request with at most ``concurrency`` in flight, in order; a progress bar
    counts scenes and inference errors, ``on_done(index, generation)`` runs as each finishes.
    Any exception (e.g. a refused key) cancels the rest and propagates."""
    gate = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(requests), desc=desc, unit="scene", disable=not progress)
    errors = 0

    async def one(index: int, request: SceneRequest) -> Generation:
        nonlocal errors
        async with gate:
            generation = await answer(request)
        if on_done is not None:
            on_done(index, generation)
        bar.update(1)
        if generation.error is not None:
            errors += 1
            bar.set_postfix(errors=errors, refresh=False)
        return generation

    tasks = [asyncio.ensure_future(one(i, r)) for i, r in enumerate(requests)]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        bar.close()


__all__ = ["TransientCallError", "gather_scenes", "retried", "run_async", "status_failure"]
