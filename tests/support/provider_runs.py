"""What the provider tests share (``tests/models/test_providers.py``, ``test_provider_rules.py``): the
backend on a strict fake, the chat bodies it received, their media parts, a direct client of the fake."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from odu.models.openai_omni import HEARING_PROBE_TEXT, OpenAIOmni

from .backend_media import FAST_BACKOFF
from .openai_rules import API_KEY

QWEN3_OMNI = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
#: A valid empty prediction, the fakes' answer where the content does not matter.
ANSWER = '{"has_demand": false, "segments": []}'


@pytest.fixture(autouse=True)
def strict_fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key the strict fakes want, in the backend's default variable (import into a test module)."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)


def omni(server: Any, model: str, **options: object) -> OpenAIOmni:
    """The OpenAI-compatible backend on ``server``: no progress bar, no retries."""
    return OpenAIOmni(model, base_url=server.base_url, progress=False, backoff=FAST_BACKOFF, retries=0, **options)


def chat_bodies(server: Any) -> list[dict]:
    """The chat requests of the scenes (the server check's probes left out: :func:`probe_bodies`)."""
    return [body for body in _chats(server) if not _is_probe(body)]


def probe_bodies(server: Any) -> list[dict]:
    """The server check's requests (:mod:`odu.models.hearing`: the probe text, alone then with a tone)."""
    return [body for body in _chats(server) if _is_probe(body)]


def _chats(server: Any) -> list[dict]:
    return [r.json for r in server.requests if r.path == "/v1/chat/completions"]


def _is_probe(body: dict) -> bool:
    content = body["messages"][0]["content"]
    return isinstance(content, list) and content[:1] == [{"type": "text", "text": HEARING_PROBE_TEXT}]


def media_types(body: dict) -> list[str]:
    """The types of a chat body's non-text parts, in order."""
    return [
        p["type"]
        for m in body["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] != "text"
    ]


def first_part(body: dict, kind: str) -> dict:
    return next(
        p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"] if p["type"] == kind
    )


def client_of(fake: Any) -> Any:
    """An ``openai`` client of ``fake`` (no retries), for requests the backend would not send."""
    import openai

    return openai.OpenAI(base_url=fake.base_url, api_key=API_KEY, max_retries=0)


def user(*parts: dict) -> list[dict]:
    """One user message: a text part and ``parts``."""
    return [{"role": "user", "content": [{"type": "text", "text": "hi"}, *parts]}]


def eval_sample(model_args: str, out: Path | None = None, **options: Any) -> int:
    """``odu-bench eval --sample --model openai --model-args MODEL_ARGS`` (``--out OUT``, other flags as
    keyword arguments, e.g. ``tasks=``, ``dry_run=True``)."""
    from odu.cli import main

    from .cli import argv

    return main(argv("eval", sample=True, model="openai", model_args=model_args, out=out, **options))


def summary_of(out: Path, name: str = "summary.json") -> dict:
    """A file of the one run folder under ``out``."""
    [folder] = out.iterdir()
    return json.loads((folder / name).read_text(encoding="utf-8"))
