"""``provider=auto`` from ``GET /models`` (docs/providers.md, "Provider profiles"): the server is told by
the entry of the model asked for (any listed one when it is not listed), its ``owned_by`` (``"vllm"`` /
``"sglang"``), else a ``status`` object ``{"value": "loaded" | "unloaded"}`` on each entry
(``transformers serve``) unless ``owned_by`` is llama.cpp's ``"llamacpp"``; the host comes first."""

from __future__ import annotations

from typing import Any

import pytest
from support.openai_server import OpenAIServer, Reply

from odu.models.openai_omni import OpenAIOmni
from odu.models.providers import detect, provider_of_listing

LOCAL = "http://10.0.0.5:8000/v1"


def entry(model: str, owner: str = "local", **more: Any) -> dict[str, Any]:
    """One ``GET /models`` entry as the servers list it."""
    return {"id": model, "object": "model", "created": 0, "owned_by": owner, **more}


def test_the_owner_of_the_model_asked_for_not_of_another() -> None:
    listing = [entry("judge", "sglang"), entry("m", "vllm")]  # one gateway in front of two servers
    assert provider_of_listing(listing, "m") == "vllm"
    assert provider_of_listing(listing, "judge") == "sglang"
    assert provider_of_listing(listing[::-1], "judge") == "sglang"
    assert detect(LOCAL, "judge", lambda: listing) == ("sglang", 'GET /models owned_by "sglang"')


def test_a_model_is_its_whole_id_not_a_part_of_it() -> None:
    listing = [entry("m-large", "vllm"), entry("m", "sglang"), entry("org/m", "vllm")]
    assert provider_of_listing(listing, "m") == "sglang"


def test_a_model_not_listed_is_told_by_the_listed_ones() -> None:
    assert provider_of_listing([entry("other", "vllm")], "m") == "vllm"
    assert provider_of_listing([entry("other", "sglang")], "m") == "sglang"


@pytest.mark.parametrize(("owner", "provider"), [("VLLM", "vllm"), ("vLLM", "vllm"), ("SGLang", "sglang")])
def test_the_owner_in_any_case_of_letters(owner: str, provider: str) -> None:
    assert provider_of_listing([entry("m", owner)], "m") == provider


@pytest.mark.parametrize("owner", ["system", "openai", "library", "local", ""])
def test_another_owner_tells_nothing(owner: str) -> None:
    assert provider_of_listing([entry("m", owner)], "m") is None


@pytest.mark.parametrize("value", ["loaded", "unloaded"])
def test_a_status_object_on_each_entry_is_transformers_serve(value: str) -> None:
    listing = [entry("/ckpt", status={"value": value}), entry("other", status={"value": "loaded"})]
    assert provider_of_listing(listing, "/ckpt") == "transformers"
    assert detect(LOCAL, "/ckpt", lambda: listing) == ("transformers", "GET /models status object (transformers serve)")


def test_llamacpps_router_lists_a_status_too_and_is_not_transformers() -> None:
    assert provider_of_listing([entry("m", "llamacpp", status={"value": "loaded"})], "m") is None


@pytest.mark.parametrize(
    "statuses",
    [
        [{"value": "loaded"}, None],  # not on each entry
        ["loaded"],  # not an object
        [{"value": "ready"}],  # not transformers serve's values
        [{"state": "loaded"}],
    ],
)
def test_a_status_that_is_not_transformers_serves_tells_nothing(statuses: list[Any]) -> None:
    listing = [entry(f"x{i}", status=st) if st is not None else entry(f"x{i}") for i, st in enumerate(statuses)]
    assert provider_of_listing(listing, "m") is None


def test_an_empty_listing_tells_nothing() -> None:
    assert provider_of_listing([], "m") is None
    assert detect(LOCAL, "m", list) == ("generic", "GET /models names no vllm/sglang owner nor transformers serve")


def test_the_host_comes_before_the_listing() -> None:
    def never() -> list[dict[str, Any]]:
        raise AssertionError("GET /models asked although the host tells the provider")

    assert detect("https://api.openai.com/v1", "m", never) == ("openai", "host of base_url")
    assert detect("https://dashscope.aliyuncs.com/compatible-mode/v1", "m", never)[0] == "dashscope"


def test_auto_on_a_server_listing_several_owners_picks_the_models(openai_key: str) -> None:
    """Through the backend: ``GET /models`` listing the judge (SGLang) before the model (vLLM)."""
    with OpenAIServer(models=("judge", "m")) as server:
        listing = {"object": "list", "data": [entry("judge", "sglang"), entry("m", "vllm")]}
        server.route("GET", "/v1/models", lambda _: Reply(body=listing))
        resolved = OpenAIOmni("m", base_url=server.base_url).resolve()
    assert resolved.provider == "vllm"
