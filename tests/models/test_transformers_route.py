"""The client side of the ``transformers`` profile without torch: the clip server, the request shape,
the server check (hearing, ``max_tokens``) against the loopback server. The real ``transformers serve``
answering these requests is the real lane's (tests/real/, docs/real-lane.md)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support.backend_media import FAST_BACKOFF, GREEDY, loader, request
from support.openai_server import OpenAIServer, Reply, chat_completion

from odu.core.prompts import AsrSentence
from odu.data.media import probe, video_track_only
from odu.models.clip_server import LOOPBACK, ClipServer, serving_host
from odu.models.hearing import PROBE_MAX_TOKENS, TONE_S, Hearing
from odu.models.openai_omni import OpenAIOmni
from odu.models.providers import detect

MODEL = "Qwen/Qwen2.5-Omni-7B"
ANSWER = '{"has_demand": false, "segments": []}'


def fetch(url: str, method: str = "GET") -> tuple[int, bytes, dict[str, str]]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as reply:
            return reply.status, reply.read(), dict(reply.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, b"", {}


def test_clip_server_serves_registered_files_only(tmp_path: Path) -> None:
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"\x00" * 1000)
    (tmp_path / "other.mp4").write_bytes(b"secret")
    server = ClipServer(tmp_path)
    try:
        url = server.url(clip, "video/mp4")
        assert url.startswith(f"http://{LOOPBACK}:") and "/odu-clips/" in url
        status, body, headers = fetch(url)
        assert (status, body, headers["Content-Type"], headers["Content-Length"]) == (
            200,
            clip.read_bytes(),
            "video/mp4",
            "1000",
        )
        assert fetch(url, "HEAD")[:2] == (200, b"")
        for guess in (
            url.replace("clip.mp4", "other.mp4"),
            url.rsplit("/", 2)[0] + "/x/clip.mp4",
            url + "/../other.mp4",
        ):
            assert fetch(guess)[0] == 404, guess
        assert fetch(url, "POST")[0] == 501  # GET and HEAD only
    finally:
        server.close()
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)
    server.close()  # idempotent


def test_clip_server_serves_only_regular_files_inside_its_cache(tmp_path: Path) -> None:
    """Issue 30 item 7: a link planted in the media cache (named as a spooled clip) that points
    outside it, or a file registered from outside it, is never served: paths are resolved first."""
    cache, outside = tmp_path / "media", tmp_path / "home"
    cache.mkdir()
    outside.mkdir()
    secret = outside / "id_ed25519"
    secret.write_bytes(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    (cache / f"{'a' * 64}.video.mp4").symlink_to(secret)
    (cache / "fifo.mp4").unlink(missing_ok=True)
    os.mkfifo(cache / "fifo.mp4")
    (cache / f"{'b' * 64}.mp4").write_bytes(b"clip bytes")
    server = ClipServer(cache)
    try:
        for path in (cache / f"{'a' * 64}.video.mp4", secret, cache / "fifo.mp4", cache / "nested"):
            status, body, _ = fetch(server.url(path, "video/mp4"))
            assert status == 404 and b"OPENSSH" not in body, path
        assert fetch(server.url(cache / f"{'b' * 64}.mp4", "video/mp4"))[:2] == (200, b"clip bytes")
    finally:
        server.close()


def test_a_link_in_the_media_cache_is_replaced_by_the_spooled_clip(tmp_path: Path, media) -> None:
    from odu.models.clips import spool_clip

    cache, secret = tmp_path / "media", tmp_path / "secret"
    cache.mkdir()
    secret.write_bytes(b"not a clip")
    sha = "c" * 64
    (cache / f"{sha}.video.mp4").symlink_to(secret)
    path = spool_clip(media["v1"], sha, cache, video_only=True)
    assert not path.is_symlink() and path.read_bytes() == video_track_only(media["v1"].bytes)
    assert secret.read_bytes() == b"not a clip"


def test_serving_host_is_loopback_for_a_local_server() -> None:
    for url in ("http://localhost:8000/v1", "http://127.0.0.1:8000/v1", "http://[::1]:8000/v1", None):
        assert serving_host(url) == LOOPBACK
    assert serving_host("http://192.0.2.7:8000/v1") != ""  # the interface that routes there (no packet sent)


def test_auto_finds_transformers_serve_from_its_model_list() -> None:
    listing = [{"id": "/ckpt", "object": "model", "owned_by": "local", "created": 0, "status": {"value": "loaded"}}]
    assert detect("http://127.0.0.1:8000/v1", "/ckpt", lambda: listing) == (
        "transformers",
        "GET /models status object (transformers serve)",
    )
    llama = [{**listing[0], "owned_by": "llamacpp"}]
    assert detect("http://127.0.0.1:8000/v1", "/ckpt", lambda: llama)[0] == "generic"


class ServeLike:
    """A responder shaped like ``transformers serve`` where the client side can tell: it fetches every
    video URL (as ``load_video`` does), counts prompt tokens as 10 per text part and 25 per second of
    audio when it ``hears``, and answers ``completion`` tokens (None: as asked)."""

    def __init__(self, hears: bool = True, completion: int | None = None, usage: bool = True) -> None:
        self.hears, self.completion, self.usage = hears, completion, usage
        self.videos: list[bytes] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        tokens = 0
        for message in body["messages"]:
            parts = message["content"] if isinstance(message["content"], list) else [{"type": "text"}]
            for part in parts:
                if part["type"] == "video_url":
                    status, data, _ = fetch(part["video_url"]["url"])
                    assert status == 200
                    self.videos.append(data)
                    tokens += 100
                elif part["type"] == "input_audio":
                    tokens += 25 if self.hears else 0
                else:
                    tokens += 10
        reply = chat_completion(body, ANSWER)
        asked = body.get("max_tokens", 1)
        reply["usage"] = {
            "prompt_tokens": tokens,
            "completion_tokens": self.completion or asked,
            "total_tokens": tokens,
        }
        if not self.usage:
            del reply["usage"]
        return Reply(body=reply)


def transformers_omni(server: OpenAIServer, **options: Any) -> OpenAIOmni:
    server.models = [*server.models, MODEL]
    server.extra_fields = {"chat_template_kwargs"}
    return OpenAIOmni(
        MODEL,
        base_url=server.base_url,
        provider="transformers",
        progress=False,
        backoff=FAST_BACKOFF,
        retries=0,
        **options,
    )


@pytest.mark.usefixtures("openai_key")
def test_video_goes_by_url_without_its_track_and_the_track_as_audio(openai_server: OpenAIServer, media) -> None:
    serve = ServeLike()
    openai_server.responder = serve
    omni = transformers_omni(openai_server)
    try:
        [generation] = omni.generate([request(media, ["v1"])], loader(media), GREEDY)
    finally:
        omni.close()
    assert generation.text == ANSWER and omni.hearing == Hearing(10, 35, PROBE_MAX_TOKENS)
    body = [r.json for r in openai_server.requests if r.path == "/v1/chat/completions"][-1]
    assert body["chat_template_kwargs"] == {"num_frames": None, "fps": 2.0}
    parts = [p["type"] for m in body["messages"] if isinstance(m["content"], list) for p in m["content"]]
    assert parts[-3:-1] == ["video_url", "input_audio"]
    assert serve.videos[-1] == video_track_only(media["v1"].bytes)
    assert not probe(serve.videos[-1]).has_audio and probe(media["v1"].bytes).has_audio


@pytest.mark.usefixtures("openai_key")
def test_a_server_that_drops_audio_stops_the_run(openai_server: OpenAIServer, media) -> None:
    openai_server.responder = ServeLike(hears=False)
    omni = transformers_omni(openai_server)
    with pytest.raises(ValueError, match=rf"dropped an input_audio part.*{TONE_S:g} s tone.*hearing_check=false"):
        omni.generate([request(media, ["v1"])], loader(media), GREEDY)
    assert openai_server.count() == 2  # the two check requests, no scene sent
    deaf = transformers_omni(openai_server, hearing_check=False)
    [generation] = deaf.generate([request(media, ["v1"])], loader(media), GREEDY)
    assert generation.text == ANSWER and deaf.hearing is None


@pytest.mark.usefixtures("openai_key")
def test_the_server_check_reports_an_ignored_limit_and_missing_usage(
    openai_server: OpenAIServer, media, capsys: pytest.CaptureFixture
) -> None:
    openai_server.responder = ServeLike(completion=1024)
    omni = transformers_omni(openai_server)
    omni.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    assert omni.hearing is not None and omni.hearing.ignores_limit
    assert any("ignores max_tokens: it answered 1024 tokens" in p for p in omni.pitfalls())
    assert json.dumps(omni.info()["hearing_check"]) and omni.info()["hearing_check"]["ignores_max_tokens"] is True
    openai_server.responder = ServeLike(usage=False)
    quiet = transformers_omni(openai_server)
    quiet.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    assert quiet.hearing is not None and quiet.hearing.heard is None
    assert "audio arrival not verified" in capsys.readouterr().err


@pytest.mark.usefixtures("openai_key")
def test_text_only_requests_skip_the_server_check(openai_server: OpenAIServer, media) -> None:
    openai_server.responder = ServeLike(hears=False)
    omni = transformers_omni(openai_server)
    scene = request(media, ["v1"])
    heard = tuple(replace(t, asr=(AsrSentence(0, 500, "hello"),)) for t in scene.turns)
    [generation] = omni.generate([replace(scene, turns=heard, text_only=True)], loader(media), GREEDY)
    assert generation.text == ANSWER and omni.hearing is None and openai_server.count() == 1


@pytest.mark.usefixtures("openai_key")
def test_negative_token_counts_are_no_hearing(openai_server: OpenAIServer, media) -> None:
    """Issue 30 item 7: usage with negative counts (-20 without, -5 with the tone: "more with") is not
    taken as hearing; the run stops with one line naming the count and the way out."""

    def negative(body: dict[str, Any]) -> Reply:
        reply = chat_completion(body, ANSWER)
        heard = any(p.get("type") == "input_audio" for m in body["messages"] for p in m["content"])
        reply["usage"] = {"prompt_tokens": -5 if heard else -20, "completion_tokens": 1, "total_tokens": 1}
        return Reply(body=reply)

    openai_server.responder = negative
    omni = transformers_omni(openai_server)
    with pytest.raises(ValueError, match=r"prompt_tokens.*-20.*not a token count.*hearing_check=false") as caught:
        omni.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    assert len(str(caught.value).splitlines()) == 1 and omni.hearing is None


def _counted(prompt: tuple[Any, Any], completion: Any = 1) -> Callable[[dict[str, Any]], Reply]:
    """A responder answering the probe with ``prompt`` tokens (without, with the tone) and ``completion``."""

    def reply(body: dict[str, Any]) -> Reply:
        answer = chat_completion(body, ANSWER)
        heard = any(p.get("type") == "input_audio" for m in body["messages"] for p in m["content"])
        answer["usage"] = {"prompt_tokens": prompt[heard], "completion_tokens": completion, "total_tokens": 1}
        return Reply(body=answer)

    return reply


@pytest.mark.usefixtures("openai_key")
@pytest.mark.parametrize(
    ("prompt", "completion", "said"),
    [
        ((20.5, 35.5), 1, "prompt_tokens without audio = 20.5"),
        ((20, 35.5), 1, "prompt_tokens with audio = 35.5"),
        ((20, 35), 1.5, "completion_tokens = 1.5"),
    ],
    ids=["fractions", "a-fraction-with-the-tone", "fractional-completion"],
)
def test_a_server_whose_counts_are_not_integers_stops_the_run_in_one_line(
    prompt: tuple[Any, Any], completion: Any, said: str, openai_server: OpenAIServer, media
) -> None:
    """The SDK reads ``20.0`` as 20 and ``true`` as 1 (its models' lax integers) before the check sees
    them; a fraction it passes on as it came."""
    openai_server.responder = _counted(prompt, completion)
    omni = transformers_omni(openai_server)
    with pytest.raises(ValueError, match="not a token count") as caught:
        omni.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    assert said in str(caught.value) and len(str(caught.value).splitlines()) == 1
    assert omni.hearing is None and openai_server.count() == 2  # the two check requests, no scene sent


@pytest.mark.usefixtures("openai_key")
def test_a_slow_hearing_probe_is_one_clear_line(openai_server: OpenAIServer, media) -> None:
    """Issue 30 item 7: a probe that outlasts the timeout stops the run with a ValueError naming the
    check, the server's failure and the way out (the commands print it as one line, exit 2), never
    the client's CallFailedError."""
    openai_server.responder = lambda body: Reply(body=chat_completion(body, ANSWER), delay=3.0)
    omni = transformers_omni(openai_server, timeout=0.5)
    with pytest.raises(ValueError, match=r"server check.*hearing_check=false") as caught:
        omni.generate([request(media, ["a1"], "audio-only")], loader(media), GREEDY)
    assert len(str(caught.value).splitlines()) == 1
