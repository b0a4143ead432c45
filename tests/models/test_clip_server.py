"""The clip server's two walls, as ``odu/models/clip_server.py`` and docs/real-lane.md promise:
only registered files that, links resolved, lie inside the media cache (a sibling folder whose name
starts with the cache's, ``clips-other`` beside ``clips``, is outside), and only under the random
per-run token (unguessable, its own for each run), so another local user who finds the port cannot
fetch the run's clips."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from odu.models.clip_server import ClipServer

#: The token is ``secrets.token_urlsafe(16)``: 128 random bits, 22 URL-safe characters.
TOKEN_CHARS = 22


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """The media cache of the tests: ``<tmp>/clips``."""
    folder = tmp_path / "clips"
    folder.mkdir()
    return folder


def test_a_sibling_folder_sharing_the_caches_name_as_prefix_is_outside(cache: Path) -> None:
    sibling = cache.parent / f"{cache.name}-other"
    sibling.mkdir()
    (sibling / "clip.mp4").write_bytes(b"not the run's")
    (cache / "clip.mp4").write_bytes(b"the run's")
    server = ClipServer(cache)
    try:
        assert fetch(server.url(sibling / "clip.mp4", "video/mp4")) == (404, b"")
        assert fetch(server.url(cache / "clip.mp4", "video/mp4")) == (200, b"the run's")
    finally:
        server.close()


def test_a_link_to_the_sibling_folder_is_outside_too(cache: Path) -> None:
    sibling = cache.parent / f"{cache.name}2"
    sibling.mkdir()
    (sibling / "secret.mp4").write_bytes(b"not the run's")
    (cache / "clip.mp4").symlink_to(sibling / "secret.mp4")
    server = ClipServer(cache)
    try:
        assert fetch(server.url(cache / "clip.mp4", "video/mp4")) == (404, b"")
    finally:
        server.close()


def test_a_file_in_a_folder_of_the_cache_is_inside(cache: Path) -> None:
    (cache / "spool").mkdir()
    (cache / "spool" / "clip.mp4").write_bytes(b"nested")
    server = ClipServer(cache)
    try:
        assert fetch(server.url(cache / "spool" / "clip.mp4", "video/mp4")) == (200, b"nested")
    finally:
        server.close()


def test_a_cache_given_through_a_link_serves_its_files(cache: Path) -> None:
    (cache / "clip.mp4").write_bytes(b"clip")
    link = cache.parent / "cache-link"
    link.symlink_to(cache)
    server = ClipServer(link)
    try:
        assert fetch(server.url(link / "clip.mp4", "video/mp4")) == (200, b"clip")
    finally:
        server.close()


def test_a_file_named_with_url_characters_is_served(cache: Path) -> None:
    clip = cache / "a b#1?.mp4"
    clip.write_bytes(b"odd name")
    server = ClipServer(cache)
    try:
        assert fetch(server.url(clip, "video/mp4")) == (200, b"odd name")
    finally:
        server.close()


def _token(url: str) -> str:
    prefix, token, name = urlsplit(url).path.strip("/").split("/")
    assert f"/{prefix}" == ClipServer.PREFIX and name
    return token


def test_every_clip_is_served_only_under_the_runs_own_random_token(cache: Path) -> None:
    (cache / "clip.mp4").write_bytes(b"clip")
    first, second = ClipServer(cache), ClipServer(cache)
    try:
        assert first.address[0] == "127.0.0.1"  # docs/real-lane.md: on 127.0.0.1 for a local server
        url, other = first.url(cache / "clip.mp4", "video/mp4"), second.url(cache / "clip.mp4", "video/mp4")
        token = _token(url)
        assert len(token) >= TOKEN_CHARS and token != _token(other)  # its own for each run
        assert fetch(url) == (200, b"clip")
        origin = url.split(ClipServer.PREFIX)[0]
        wrong = "A" * len(token) if token != "A" * len(token) else "B" * len(token)
        for guess in (
            f"{origin}{ClipServer.PREFIX}/clip.mp4",  # no token
            f"{origin}{ClipServer.PREFIX}/{wrong}/clip.mp4",  # a wrong one of the same length
            f"{origin}{ClipServer.PREFIX}/{_token(other)}/clip.mp4",  # another run's
            f"{origin}{ClipServer.PREFIX}/{token[:-1]}/clip.mp4",  # one character short
            f"{origin}{ClipServer.PREFIX}/{token.swapcase()}/clip.mp4",
            f"{origin}/clip.mp4",
        ):
            assert fetch(guess) == (404, b""), guess
    finally:
        first.close()
        second.close()
