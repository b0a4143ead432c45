"""How the remote backends (:mod:`.openai_omni`, :mod:`.gemini`, :mod:`.realtime`) answer a batch of
scenes: concurrently up to a limit, in order, with a progress bar, on the batch runner of their
client (:meth:`odu.openai_client.ApiClient.run` / :meth:`~odu.openai_client.ApiClient.gather`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from tqdm.auto import tqdm

from ..openai_client import ApiClient
from .base import Generation, OnDone, SceneRequest


async def gather_scenes(
    client: ApiClient,
    requests: Sequence[SceneRequest],
    answer: Callable[[SceneRequest], Awaitable[Generation]],
    *,
    concurrency: int,
    progress: bool,
    on_done: OnDone | None = None,
) -> list[Generation]:
    """``answer`` every request with at most ``concurrency`` in flight, results in order; a progress
    bar (``model <name>``) counts scenes and inference errors, ``on_done(index, generation)`` runs as
    each finishes. Any exception (e.g. a refused key) cancels the rest and propagates."""
    gate = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(requests), desc=f"model {client.model}", unit="scene", disable=not progress)
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

    try:
        return await client.gather(one(i, r) for i, r in enumerate(requests))
    finally:
        bar.close()


__all__ = ["gather_scenes"]
