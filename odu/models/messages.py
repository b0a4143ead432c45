"""Chat parts (:mod:`odu.core.prompts`) -> the ``messages`` list of OpenAI-style chat APIs and processors.

Two layouts of the dialogue history (App D.1: "preceding assistant replies supplied as text between
turns"):

* ``inline`` (default): one user message holding, in order, the turn labels, the clips and each
  assistant reply as text after its App D.2 label ``[Turn k · agent reply]`` — the layout of the
  paper's templates;
* ``roles``: the replies become ``assistant`` messages between user messages, for servers whose
  chat template should see real turns.

Media parts come from a callback, so the same layout feeds an HTTP server (data URLs) and a local
processor (file paths).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.prompts import ChatInput, ClipRef, Part
from ..data.media import LazyClip, MediaError
from .base import ClipLoader, SceneRequest

HISTORY_LAYOUTS: tuple[str, ...] = ("inline", "roles")

#: Media content parts for one clip part of the chat.
MediaParts = Callable[[Part], list[dict[str, Any]]]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _flush(messages: list[dict[str, Any]], content: list[dict[str, Any]], plain_text: bool) -> None:
    if not content:
        return
    if plain_text:
        messages.append({"role": "user", "content": "\n\n".join(c["text"] for c in content)})
    else:
        messages.append({"role": "user", "content": list(content)})
    content.clear()


def chat_messages(chat: ChatInput, media: MediaParts, history: str = "inline") -> list[dict[str, Any]]:
    """The ``messages`` for ``chat``: system instruction, then the user turn(s) in order.

    Text-only inputs (App D.2) become plain string contents, which every chat server accepts;
    native inputs keep a list of content parts with the media where the clips stand.

    >>> from odu.core.prompts import ClipRef, Turn, build_chat
    >>> chat = build_chat([Turn(ClipRef(0, "v1", "0" * 64, 1000), ("Done.",)), Turn(ClipRef(1, "v2", "1" * 64, 900))],
    ...                   "audio-only")
    >>> msgs = chat_messages(chat, lambda p: [{"type": "input_audio", "clip": p.clip.id}], history="roles")
    >>> [(m["role"], [c.get("clip") or c["text"][:10] for c in m["content"]] if isinstance(m["content"], list)
    ...   else m["content"][:10]) for m in msgs]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('system', 'You are th'), ('user', ['You will r', '[Turn 1 · ', 'v1']), ('assistant', 'Done.'),
     ('user', ['[Turn 2 · ', 'v2', 'Annotate o'])]
    """
    if history not in HISTORY_LAYOUTS:
        raise ValueError(f"history layout must be one of {HISTORY_LAYOUTS}, got {history!r}")
    messages: list[dict[str, Any]] = [{"role": "system", "content": chat.system}]
    content: list[dict[str, Any]] = []
    for part in chat.parts:
        if part.role == "system":
            continue
        if part.role == "assistant":
            if history == "inline":
                content.append(_text(f"{part.label} {part.text}"))
            else:
                _flush(messages, content, chat.text_only)
                messages.append({"role": "assistant", "content": part.text})
        elif part.clip is not None:
            content.extend(media(part))
        else:
            content.append(_text(part.text))
    _flush(messages, content, chat.text_only)
    return messages


def parts_only(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with every content a list of parts (a plain string becomes one text part), as
    processors' chat templates and lmms-eval's message format take them.

    >>> parts_only([{"role": "system", "content": "Hi"}])
    [{'role': 'system', 'content': [{'type': 'text', 'text': 'Hi'}]}]
    """
    return [
        {"role": m["role"], "content": m["content"] if isinstance(m["content"], list) else [_text(m["content"])]}
        for m in messages
    ]


def scene_messages(
    request: SceneRequest,
    load_clip: ClipLoader | None,
    encode: Callable[[ClipRef, LazyClip], list[dict[str, Any]]],
    history: str = "inline",
) -> list[dict[str, Any]]:
    """:func:`chat_messages` of ``request``: each clip loaded by ``load_clip`` and turned into
    content parts by ``encode``; :class:`MediaError` when a clip is needed and there is no loader."""

    def media(part: Part) -> list[dict[str, Any]]:
        assert part.clip is not None
        if load_clip is None:
            raise MediaError(f"scene {request.scene_id} clip {part.clip.id}: no media source given")
        return encode(part.clip, load_clip(request, part.clip))

    return chat_messages(request.chat(), media, history)


def role_turns(
    request: SceneRequest, load_clip: ClipLoader | None, encode: Callable[[ClipRef, LazyClip], Any]
) -> tuple[str, list[tuple[str, list[Any]]]]:
    """``request`` in the ``roles`` layout as ``(system instruction, turns)``, for APIs with their
    own content types: each turn is its role and its items in order, a text as a string and a clip
    as what ``encode`` made of it (:class:`MediaError` as for :func:`scene_messages`)."""
    messages = scene_messages(
        request, load_clip, lambda ref, clip: [{"type": "clip", "media": encode(ref, clip)}], "roles"
    )
    turns = []
    for message in messages[1:]:
        content = message["content"]
        if isinstance(content, str):
            turns.append((message["role"], [content]))
        else:
            turns.append((message["role"], [c["text"] if c["type"] == "text" else c["media"] for c in content]))
    return messages[0]["content"], turns


__all__ = ["HISTORY_LAYOUTS", "MediaParts", "chat_messages", "parts_only", "role_turns", "scene_messages"]
