"""Preflight of a run's servers: before the first scene, the OpenAI-compatible judge and model
servers are asked whether the run can work at all, so that a dead or misnamed server stops the run
within seconds instead of costing each scene its retries (about 44 s a scene with the default
retry policy: hours on the full benchmark).

For each server (the judge first, so that a dead judge wastes no inference run):

1. it is reachable: ``GET /models`` answers within :data:`PREFLIGHT_TIMEOUT_S` (each replica of a
   ``base_url`` listing several);
2. the model is listed there (servers without ``/models``, answering 404/405, skip this step);
3. one minimal request in the run's own request shape (the backend's or judge's body, at most
   :data:`PROBE_MAX_TOKENS` output tokens, no retries) is accepted.

Otherwise :class:`PreflightError` names the server (credentials removed, :mod:`odu.io.scrub`), the
model and the cause. ``odu-bench eval --no-preflight`` / the model argument ``preflight=false``
skip it (:mod:`odu.harness.models` runs it when lm-eval builds a model). The check's requests are
not counted in the run's statistics. Not to be confused with :mod:`odu.harness.preflight`, which
checks lm-eval's task/model pairing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from ..io.scrub import scrub_url, scrub_urls
from .openai_client import (
    ApiClient,
    CallFailedError,
    ModelListError,
    OpenAIClient,
    ServerUnavailableError,
    sdk_status_message,
)

#: Seconds the whole preflight of one server may take before the run stops (a silent host).
PREFLIGHT_TIMEOUT_S = 20.0
#: Output-token limit of the probe request: it needs an accepted answer, not a useful one.
PROBE_MAX_TOKENS = 8
#: The probe request's user message.
PROBE_TEXT = 'Reply with the word "ok".'
#: ``GET /models`` statuses meaning the server has no model list (the listing step is skipped).
NO_MODEL_LIST = frozenset({404, 405, 501})
#: What a preflight failure suggests besides fixing the server.
SKIP_HINT = "(--no-preflight / preflight=false skips this check)"


class PreflightError(RuntimeError):
    """A server the run needs failed its preflight; the message names it and the cause."""


def server_name(client: ApiClient) -> str:
    """The server as preflight messages name it: its URL without credentials, else the SDK's default."""
    return scrub_urls(client.base_url) if client.base_url else client.default_server


def _cause(exc: BaseException) -> str:
    """What went wrong at the socket: the deepest ``OSError`` of the exception chain (``Connection
    refused``, a failed name lookup), else the SDK's underlying error, else the exception itself."""
    chain: list[BaseException] = [exc]
    while (nxt := chain[-1].__cause__ or chain[-1].__context__) is not None and nxt not in chain:
        chain.append(nxt)
    found = [e for e in chain if isinstance(e, OSError) and str(e)]
    inner = found[-1] if found else chain[1] if len(chain) > 1 and exc.__cause__ is not None else exc
    return f"{type(inner).__name__}: {inner}" if str(inner) else type(inner).__name__


@contextlib.contextmanager
def _quick(client: ApiClient) -> Iterator[None]:
    """The client with no retries and the preflight's timeout; its statistics restored after."""
    saved = client.timeout, client.retries, dict(vars(client.stats))
    client.timeout, client.retries = PREFLIGHT_TIMEOUT_S, 0
    try:
        yield
    finally:
        client.timeout, client.retries = saved[0], saved[1]
        vars(client.stats).update(saved[2])


async def _listed(client: OpenAIClient) -> str:
    """Step 1-2: the server answers ``GET /models`` (:meth:`OpenAIClient.fetch_models`, the one
    reader) and lists the model; the step's outcome."""
    try:
        models = await client.fetch_models(PREFLIGHT_TIMEOUT_S)
    except ModelListError as exc:
        if exc.status in NO_MODEL_LIST:
            return "no model list"
        if exc.status is None:
            raise PreflightError(f"cannot reach the server ({_cause(exc)})") from None
        cause = exc.__cause__
        said = sdk_status_message(getattr(cause, "message", str(exc)), getattr(cause, "body", None))
        raise PreflightError(f"GET /models answered HTTP {exc.status}: {said}") from None
    ids = [str(m.get("id", "")) for m in models]
    if not any(i == client.model or i.removeprefix("models/") == client.model for i in ids):
        shown = ", ".join(ids[:8]) + (f" (+{len(ids) - 8} more)" if len(ids) > 8 else "")
        raise PreflightError(f"model {client.model!r} is not among the models it serves: {shown or 'none'}")
    return "model listed"


async def _replicas_listed(client: OpenAIClient) -> None:
    """Steps 1-2 on every replica of ``client``'s ``base_url`` (one short-lived client each)."""
    urls = list(getattr(getattr(client, "replicas", None), "urls", None) or [client.base_url])
    for url in urls:
        one = OpenAIClient(
            client.role,
            client.model,
            base_url=url,
            api_key_env=client.api_key_env,
            timeout=PREFLIGHT_TIMEOUT_S,
            retries=0,
        )
        try:
            await _listed(one)
        except PreflightError as exc:
            raise PreflightError(f"replica {scrub_url(url or '')}: {exc}" if len(urls) > 1 else str(exc)) from None


async def _check(client: OpenAIClient, probe: Callable[[Any], Awaitable[Any]]) -> None:
    await _replicas_listed(client)
    sdk = client.async_sdk()
    try:
        try:
            result = await probe(sdk)
        except (CallFailedError, ServerUnavailableError) as exc:
            raise PreflightError(f"a minimal request was refused ({exc})") from None
        error = getattr(result, "error", None)
        if error:
            raise PreflightError(f"a minimal request failed ({error})")
    finally:
        await sdk.close()


def check_server(client: OpenAIClient, probe: Callable[[Any], Awaitable[Any]], what: str) -> None:
    """Preflight of one server (module docstring): ``probe(sdk)`` sends the minimal request;
    ``what`` names the server's role in the message. Raises :class:`PreflightError`."""
    where = f"{what} server {server_name(client)} (model {client.model!r})"

    async def bounded() -> None:
        await asyncio.wait_for(_check(client, probe), PREFLIGHT_TIMEOUT_S)

    with _quick(client):
        try:
            client.run(bounded)
        except PreflightError as exc:
            raise PreflightError(client.scrub(f"preflight: {where}: {exc} {SKIP_HINT}")) from None
        except (asyncio.TimeoutError, TimeoutError):
            raise PreflightError(
                f"preflight: {where}: no answer within {PREFLIGHT_TIMEOUT_S:g} s {SKIP_HINT}"
            ) from None


def check_model(backend: Any) -> bool:
    """Preflight of a model backend on an OpenAI-compatible server (one with ``probe``, e.g.
    :class:`odu.models.openai_omni.OpenAIOmni`); False when the backend has no such server."""
    client = getattr(backend, "client", None)
    if not isinstance(client, OpenAIClient) or not hasattr(backend, "probe"):
        return False

    async def probe(sdk: Any) -> Any:
        return await backend.probe(sdk, PROBE_TEXT, PROBE_MAX_TOKENS)

    check_server(client, probe, "model")
    return True


def check_judge(judge: Any) -> bool:
    """Preflight of an LLM judge on an OpenAI-compatible server (:class:`odu.judge.openai_judge.OpenAIJudge`);
    False for a judge without a server (lexical, stored verdicts)."""
    client = getattr(judge, "client", None)
    if not isinstance(client, OpenAIClient) or not hasattr(judge, "request_body"):
        return False
    body = judge.request_body([{"role": "user", "content": PROBE_TEXT}], PROBE_MAX_TOKENS)

    async def probe(sdk: Any) -> Any:
        async def post() -> Any:
            return await sdk.post("/chat/completions", body=body, cast_to=object)

        return await client.call(post)

    check_server(client, probe, "judge")
    return True


__all__ = [
    "NO_MODEL_LIST",
    "PREFLIGHT_TIMEOUT_S",
    "PROBE_MAX_TOKENS",
    "PROBE_TEXT",
    "PreflightError",
    "check_judge",
    "check_model",
    "check_server",
    "server_name",
]
