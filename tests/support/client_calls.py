"""Calls through the toolkit's one client (:class:`odu.transport.openai_client.OpenAIClient`) for the
transport tests: one chat completion, with the client's retry policy and its own SDK client."""

from __future__ import annotations

from odu.transport.openai_client import OpenAIClient


def one_chat_call(client: OpenAIClient) -> None:
    """One chat completion through ``client`` (its retry policy, its own SDK client for the batch);
    raises what the client raises."""

    async def batch() -> None:
        sdk = client.async_sdk()
        try:
            await client.call(
                lambda: sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            )
        finally:
            await sdk.close()

    client.run(batch)
