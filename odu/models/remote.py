"""What the backends on a model server share (:mod:`.openai_omni`, :mod:`.gemini`, :mod:`.realtime`):
their server options, the toolkit's client (:mod:`odu.transport.openai_client`: key, scrubbing, retry policy,
batch runner), and answering a batch of scenes.

A batch is answered concurrently (at most ``concurrency`` scenes in flight, results in order, a
progress bar counting scenes and inference errors). Each scene's media is read and encoded only
when the scene is sent, inside the concurrency gate, so memory holds at most ``concurrency``
scenes' media. A scene whose media cannot be read, or whose call still fails after the client's
retries, gets an inference error (:class:`.base.Generation`), never an empty answer; a refused
key, model or URL stops the run (:class:`ModelUnavailableError`).

Every remote backend takes the :class:`ServerOptions` as model arguments besides its own; its
signature (``inspect.signature``, what :func:`odu.models.make_backend` checks ``--model-args``
against) lists both.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

from tqdm.auto import tqdm

from ..data.media import MediaError
from ..io.scrub import scrub_secrets
from ..transport.openai_client import (
    API_KEY_ENV,
    BACKOFF,
    RETRIES,
    ApiClient,
    CallFailedError,
    CallStats,
    OpenAIClient,
    ServerUnavailableError,
)
from .base import Backend, ClipLoader, Generation, SceneBatch, SceneRequest

#: Model calls in flight at once (``concurrency=`` model argument).
MODEL_CONCURRENCY = 4
#: Seconds before one model HTTP request is abandoned and retried; omni prefill of long video is slow.
MODEL_TIMEOUT_S = 600.0


#: The answer being produced in this task was cut at the output-token limit: a cell per scene,
#: set around :meth:`RemoteBackend.send` (a context variable: scenes are answered concurrently).
_CUT: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("odu_answer_cut", default=None)


class ModelUnavailableError(ServerUnavailableError):
    """The model server refuses every call (wrong key, model or URL); the message says which."""


@dataclass
class ModelStats(CallStats):
    """A remote backend's counters: the client's, plus scenes asked, answers cut at the output-token
    limit and media bytes sent."""

    scenes: int = 0
    truncated: int = 0
    media_bytes: int = 0

    #: Order of the counters in the run card's ``stats``.
    ORDER: ClassVar[tuple[str, ...]] = tuple(
        "scenes requests retries errors truncated prompt_tokens completion_tokens media_bytes wall_time_s".split()
    )

    @classmethod
    def order_with(cls, **after: str) -> tuple[str, ...]:
        """:attr:`ORDER` with a subclass's counters: each keyword's names (space-separated) right after
        the counter it names (a name placed nowhere fails :meth:`as_dict`).

        >>> ModelStats.order_with(requests="file_requests", media_bytes="inline_bytes uploaded_bytes")[1:4]
        ('requests', 'file_requests', 'retries')
        """
        return tuple(name for counter in cls.ORDER for name in (counter, *after.get(counter, "").split()))


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """The model arguments of every remote backend besides ``model`` and its own: the server
    (``base_url``; None: the provider's), the key variable (None: the backend's default), calls in
    flight, seconds per request, retries and their backoff, and the progress bar."""

    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int = MODEL_CONCURRENCY
    timeout: float = MODEL_TIMEOUT_S
    retries: int = RETRIES
    progress: bool = True
    backoff: tuple[float, float, float] = BACKOFF

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.retries < 0 or self.timeout <= 0:
            raise ValueError("concurrency >= 1; retries >= 0; timeout > 0")


class RemoteBackend(Backend):
    """A backend on a model server; see the module docstring.

    Subclasses take their own arguments and ``**server`` (the :class:`ServerOptions`), and
    implement :meth:`encode` (one scene's request body, media loaded; no network) and
    :meth:`send` (one scene's call through :attr:`client`); :meth:`session` opens what a batch
    shares (an SDK client).
    """

    #: The client (its SDK), the server's role in messages, the key variable(s) by default, and the
    #: server the run card names when no ``base_url`` is given.
    client_type: ClassVar[type[ApiClient]] = OpenAIClient
    role: ClassVar[str] = "model"
    key_envs: ClassVar[tuple[str, ...]] = (API_KEY_ENV,)
    default_url: ClassVar[str | None] = None
    #: The API's name of the output-token limit, and what to do about cut answers (run-card pitfalls).
    limit_name: ClassVar[str] = "max_tokens"
    truncation_advice: ClassVar[str] = ""
    #: Whether ``base_url`` may list replicas (:data:`odu.transport.openai_client.REPLICA_SEPARATOR`): only
    #: backends whose requests go through the client's HTTP routing.
    replicable: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """The subclass's signature: its own arguments, then the :class:`ServerOptions` (PEP 362's
        ``__signature__``, read by ``inspect.signature``)."""
        super().__init_subclass__(**kwargs)
        own = list(inspect.signature(cls.__init__).parameters.values())[1:]
        server = [
            inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.type)
            for f in fields(ServerOptions)
        ]
        params = [p for p in own if p.kind is not inspect.Parameter.VAR_KEYWORD] + server
        cls.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]

    def __init__(self, model: str, stats: ModelStats, **server: Any) -> None:
        if not model:
            raise ValueError(f"the {self.name} backend needs a model name (model=...)")
        options = ServerOptions(**server)
        self.model, self.concurrency, self.progress = model, options.concurrency, options.progress
        self._stats = stats
        self.client = self.client_type(
            self.role,
            model,
            base_url=options.base_url,
            api_key_env=options.api_key_env or self.key_envs,
            timeout=options.timeout,
            retries=options.retries,
            backoff=options.backoff,
            stats=stats,
            unavailable=ModelUnavailableError,
        )
        if len(self.client.replicas) > 1 and not self.replicable:
            raise ValueError(f"the {self.name} backend talks to one server: base_url may not list replicas")

    # --- what a backend implements ----------------------------------------------------------------

    def prepare(self, batch: SceneBatch) -> None:
        """Read the batch's generation settings (and refuse a batch the backend cannot answer)."""

    def encode(self, request: SceneRequest, load_clip: ClipLoader | None) -> Any:
        """What :meth:`send` sends for ``request``, media loaded (raises :class:`MediaError`)."""
        raise NotImplementedError

    async def send(self, sdk: Any, encoded: Any) -> Generation:
        """One scene's call (raises the client's :class:`CallFailedError` when it fails for good)."""
        raise NotImplementedError

    def output_limit(self) -> int | str:
        """The output-token limit of the last batch, as sent."""
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[Any]:
        """What the calls of one batch share, closed at its end (by default nothing)."""
        yield None

    # --- the batch --------------------------------------------------------------------------------

    def generate_batch(self, batch: SceneBatch) -> list[Generation]:
        self.prepare(batch)
        return self.client.run(lambda: self._answer_all(batch))

    def dry_check(self, requests: Sequence[SceneRequest]) -> list[str]:
        """The batch checks of :meth:`prepare` (no request is sent by them)."""
        self.prepare(SceneBatch(list(requests), None, {}, None))
        return []

    def pitfalls(self) -> list[str]:
        """Answers cut at the output-token limit (subclasses add their own pitfalls)."""
        if not self._stats.truncated:
            return []
        cut = f"{self._stats.truncated} answer(s) stopped at {self.limit_name}={self.output_limit()}"
        return [cut + self.truncation_advice]

    def add_counts(self, counts: Mapping[str, Any]) -> None:
        self._stats.add(counts)

    def server_info(self) -> dict[str, Any]:
        """The run card's first fields: backend, model, server (without credentials), key variable,
        concurrency, timeout, retries."""
        return {
            "backend": self.name,
            "model": self.model,
            "base_url": self.client.public_base_url or self.default_url,
            "api_key_env": self.client.api_key_env,
            "concurrency": self.concurrency,
            "timeout_s": self.client.timeout,
            "retries": self.client.retries,
        }

    def count_truncated(self) -> None:
        """The answer of the scene being sent stopped at the output-token limit: counted in the
        stats, and its :class:`.base.Generation` is marked ``truncated``."""
        self._stats.truncated += 1
        if (cell := _CUT.get()) is not None:
            cell.append(True)

    def in_flight(self) -> int:
        """Scenes sent at once: :attr:`concurrency`, unless the server takes fewer (a backend's own cap)."""
        return self.concurrency

    def count_media(self, data: bytes) -> bytes:
        """``data``, counted as media sent."""
        self._stats.media_bytes += len(data)
        return data

    async def _answer_all(self, batch: SceneBatch) -> list[Generation]:
        """Every request of ``batch`` with at most :attr:`concurrency` in flight, results in order,
        on the client's runner; a progress bar counts scenes and inference errors, ``on_done`` runs
        as each finishes. Any exception (e.g. a refused key) cancels the rest and propagates."""
        gate = asyncio.Semaphore(await asyncio.to_thread(self.in_flight))
        bar = tqdm(total=len(batch.requests), desc=f"model {self.model}", unit="scene", disable=not self.progress)
        errors = 0

        async def one(sdk: Any, index: int, request: SceneRequest) -> Generation:
            nonlocal errors
            async with gate:
                generation = await self._answer(sdk, request, batch.load_clip)
            if batch.on_done is not None:
                batch.on_done(index, generation)
            bar.update(1)
            if generation.error is not None:
                errors += 1
                bar.set_postfix(errors=errors, refresh=False)
            return generation

        try:
            async with self.session() as sdk:
                return await self.client.gather(one(sdk, i, r) for i, r in enumerate(batch.requests))
        finally:
            bar.close()

    async def _answer(self, sdk: Any, request: SceneRequest, load_clip: ClipLoader | None) -> Generation:
        self._stats.scenes += 1
        try:
            encoded = await asyncio.to_thread(self.encode, request, load_clip)
        except MediaError as exc:
            generation = Generation.failed(f"media: {exc}")
        else:
            cut: list[bool] = []
            token = _CUT.set(cut)
            try:
                generation = await self.send(sdk, encoded)
            except CallFailedError as exc:
                generation = Generation.failed(self.client.scrub(f"model call failed: {exc}"))
            finally:
                _CUT.reset(token)
            if cut and generation.error is None:
                generation = replace(generation, truncated=True)
        if generation.text:  # a server echoing the key or a URL's password: never written anywhere
            generation = replace(generation, text=scrub_secrets(generation.text))
        if generation.error is not None:
            self._stats.errors += 1
        return generation


__all__ = [
    "MODEL_CONCURRENCY",
    "MODEL_TIMEOUT_S",
    "ModelStats",
    "ModelUnavailableError",
    "RemoteBackend",
    "ServerOptions",
]
