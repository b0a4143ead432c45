"""Omni models behind any OpenAI-compatible chat server (vLLM, SGLang, DashScope, Gemini's
OpenAI endpoint, OpenAI, ...), through the toolkit's one OpenAI client (:mod:`odu.transport.openai_client`).

One chat call per scene, built from :func:`odu.core.prompts.build_chat` (App F.1 / F.2 instruction,
App D.1 turn layout; App D.2 ASR text for the text-only baseline) by :func:`.messages.scene_messages`:

* video as ``video_url`` (a ``data:`` URL; ``file://`` with ``media_url="file"`` for servers that
  read local paths, e.g. vLLM with ``--allowed-local-media-path``; ``http://`` from the run's own clip
  server with ``media_url="http"``, :mod:`.clip_server`, for servers that take video by URL only,
  e.g. ``transformers serve``), audio as ``input_audio`` (WAV/MP3 base64; other codecs are decoded
  and sent as 16-bit WAV);
* servers that drop the audio track of a video: ``audio_in_video="separate"`` adds the track as an
  ``input_audio`` part right after the video (extracted with :mod:`odu.data.media`);
* servers that take images only: ``video_mode="frames"`` sends JPEG frames sampled at ``fps``
  (at most ``max_frames`` per clip), with the audio as a separate part;
* greedy decoding (temperature 0, no stop sequence unless the task sets one), the output-token
  limit from the task's ``max_gen_toks``; ``extra_body`` passes server-specific fields;
* the request shape of the server behind ``base_url`` for the model's family and the server's
  version (:mod:`.providers`, ``provider=auto`` by default; the rules and their sources:
  :mod:`.provider_rules`): the token-limit field (``max_completion_tokens`` for OpenAI), sampling
  parameters and stop sequences left out where refused (OpenAI reasoning models, Ark), streaming
  (DashScope), data-URL forms and the audio part's type (``audio_url`` on SGLang and Ark), media
  limits (a scene beyond them is an inference error naming the limit, checked before any media is
  read), a video's audio (Qwen-Omni and Nemotron on vLLM: ``mm_processor_kwargs.use_audio_in_video``
  with the track inside the video; elsewhere the track as a separate part) and a thinking switch in
  the prompt (Ming). The profile and its pitfalls are printed on the console before the first scene;
  ``--dry-run`` runs the same checks without a request (:meth:`OpenAIOmni.dry_check`);
* servers that may drop audio without an error or answer past ``max_tokens`` (``transformers serve``,
  vLLM) are checked first (:mod:`.hearing`): one that does not hear audio stops the run before the first
  scene, one that ignores the limit is a console pitfall;
* a vLLM that refuses the profile's ``mm_processor_kwargs`` (0.31.0 and later, started without
  ``--trust-request-mm-kwargs``) refuses every request alike: the run stops at the first refusal with one
  line naming the flag (``trust_request_mm_kwargs=false`` sends each video's track as a separate part).

Media is read only when a scene is actually sent (:class:`.remote.RemoteBackend`: concurrency,
inference errors). 429, 5xx, timeouts and connection errors are retried with exponential backoff
(``Retry-After`` honoured; the client's retry policy); 401 / 403 / 404 (wrong key, model or URL)
stop the run at once. The API key is read from an environment variable, sent only in the request
header and scrubbed from every message.
"""

from __future__ import annotations

import base64
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeVar

from ..core.constants import AUDIO_ONLY, AUDIO_VISUAL
from ..core.prompts import ClipRef
from ..data.media import DEFAULT_AUDIO_SAMPLE_RATE, LazyClip, MediaError
from ..io.console import inert
from ..io.scrub import register_body
from ..transport.openai_client import CallFailedError, OpenAIClient
from .base import MODEL_FRAMES_FPS, MODEL_MAX_TOKENS, ClipLoader, Decoding, Generation, SceneBatch, SceneRequest
from .clip_server import ClipServer, serving_host
from .clips import joined_wav_bytes, media_cache, media_type, spool_clip, wav_bytes
from .hearing import PROBE_MAX_TOKENS, TONE_S, Hearing, probe_messages, token_count
from .messages import HISTORY_LAYOUTS, scene_messages
from .providers import (
    AUDIO_PARTS,
    PROBE_TIMEOUT_S,
    PROVIDERS,
    QWEN_OMNI,
    TRANSFORMERS_FRAMES_FIELD,
    VERSION_PATHS,
    VLLM_MM_KWARGS_REFUSAL,
    Profile,
    detect,
    detect_offline,
    profile,
)
from .remote import ModelStats, ModelUnavailableError, RemoteBackend

T = TypeVar("T")

MEDIA_URLS = ("data", "file", "http")
VIDEO_MODES = ("video", "frames")
AUDIO_IN_VIDEO = ("native", "separate", "none")

#: Frames mode (servers that take images only): at most this many frames per clip (spread evenly).
MODEL_MAX_FRAMES = 64
#: JPEG quality (2 = best .. 31) of frames sent as images (FFmpeg ``qscale``).
MODEL_FRAME_JPEG_QSCALE = 3
#: Silence between a scene's clips joined into one audio part, and the stand-in part each clip leaves until then.
JOINED_AUDIO_GAP_S = 0.5
JOINED_AUDIO_MARK = "joined_audio_clip"
#: Text of the hearing check's two requests (:mod:`.hearing`).
HEARING_PROBE_TEXT = "Is there any sound?"


def merged(base: Mapping[str, Any], mine: Mapping[str, Any]) -> dict[str, Any]:
    """``mine`` over ``base``, objects merged one level down (a user's ``mm_processor_kwargs`` adds to
    the profile's rather than replacing it).

    >>> merged({"mm_processor_kwargs": {"use_audio_in_video": True}}, {"mm_processor_kwargs": {"fps": 2}, "top_k": 1})
    {'mm_processor_kwargs': {'use_audio_in_video': True, 'fps': 2}, 'top_k': 1}
    """
    out = dict(base)
    for key, value in mine.items():
        both = isinstance(value, Mapping) and isinstance(out.get(key), Mapping)
        out[key] = {**out[key], **value} if both else value
    return out


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def jpeg_bytes(frame: Any, qscale: int = MODEL_FRAME_JPEG_QSCALE) -> bytes:
    """One RGB uint8 frame (H, W, 3) as JPEG, encoded with PyAV's MJPEG encoder."""
    import av

    height, width = frame.shape[:2]
    codec = av.CodecContext.create("mjpeg", "w")
    codec.width, codec.height = width - width % 2, height - height % 2
    codec.pix_fmt = "yuvj420p"
    codec.time_base = Fraction(1, 1)
    codec.options = {"qscale": str(qscale)}
    codec.flags |= av.codec.context.Flags.qscale
    picture = av.VideoFrame.from_ndarray(frame[: codec.height, : codec.width], format="rgb24")
    packets = codec.encode(picture.reformat(format="yuvj420p")) + codec.encode(None)
    return b"".join(bytes(p) for p in packets)


class OpenAIOmni(RemoteBackend):
    """An omni model on an OpenAI-compatible chat server; see the module docstring."""

    name = "openai"
    client: OpenAIClient

    def __init__(
        self,
        model: str,
        *,
        provider: str = "auto",
        max_tokens: int | None = None,
        media_url: str | None = None,
        media_host: str | None = None,
        video_mode: str = "video",
        audio_in_video: str | None = None,
        fps: float = MODEL_FRAMES_FPS,
        max_frames: int = MODEL_MAX_FRAMES,
        audio_sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE,
        history: str = "inline",
        stream: bool | None = None,
        media_limits: bool = True,
        hearing_check: bool | None = None,
        audio_part: str | None = None,
        thinking: str | None = None,
        server_version: str | None = None,
        trust_request_mm_kwargs: bool | None = None,
        extra_body: Mapping[str, Any] | None = None,
        **server: Any,
    ) -> None:
        super().__init__(model, ModelStats(), **server)
        for value, allowed, what in (
            (provider, PROVIDERS, "provider"),
            (media_url or "data", MEDIA_URLS, "media_url"),
            (video_mode, VIDEO_MODES, "video_mode"),
            (audio_in_video or "native", AUDIO_IN_VIDEO, "audio_in_video"),
            (history, HISTORY_LAYOUTS, "history"),
            (audio_part or "input_audio", AUDIO_PARTS, "audio_part"),
            (thinking or "off", ("on", "off"), "thinking"),
        ):
            if value not in allowed:
                raise ValueError(f"{what} must be one of {allowed}, got {value!r}")
        if video_mode == "frames" and audio_in_video == "native":
            raise ValueError(
                "video_mode=frames sends images, which carry no audio: use audio_in_video=separate or none"
            )
        if (max_tokens is not None and max_tokens < 1) or fps <= 0 or max_frames < 1:
            raise ValueError("max_tokens, max_frames >= 1; fps > 0")
        self.provider = provider
        self.max_tokens = max_tokens
        self.media_url = media_url or "data"
        self.media_host = media_host
        self.video_mode = video_mode
        self.fps = fps
        self.max_frames = max_frames
        self.audio_sample_rate = audio_sample_rate
        self.history = history
        self.media_limits = media_limits
        # as asked; the profile fills what is left open (_apply)
        self._asked_audio_in_video, self._asked_stream, self._asked_media_url = audio_in_video, stream, media_url
        self._asked_hearing_check = hearing_check
        self._asked_audio_part, self.thinking, self.server_version = audio_part, thinking, server_version
        self.trust_request_mm_kwargs = trust_request_mm_kwargs  # how the server was started (None: not known)
        self._version_read = server_version is not None
        self._version_how = "server_version=" if server_version else ""
        self.audio_part = audio_part or "input_audio"
        self._extra_body = dict(extra_body or {})
        register_body(self._extra_body)  # no echo of its free strings is written or printed
        self.audio_in_video, self.stream, self.extra_body = audio_in_video, stream, dict(self._extra_body)
        self._decoding = Decoding.of({}, MODEL_MAX_TOKENS).with_max_tokens(max_tokens)
        self._clip_server: ClipServer | None = None
        self._clip_server_lock = threading.Lock()
        self.hearing: Hearing | None = None
        self._asked = False
        self._modalities: set[str] = set()
        self.profile: Profile | None = None
        self.detected_by = "provider=" + provider
        if provider != "auto":
            self._apply(self._profile(provider))

    # --- the provider profile ---------------------------------------------------------------------

    def _apply(self, chosen: Profile) -> None:
        """Adopt ``chosen``: the user's explicit settings win, unless the server cannot take them."""
        audio_in_video = self._asked_audio_in_video or (
            chosen.audio_in_video if self.video_mode == "video" else "separate"
        )
        stream = chosen.stream if self._asked_stream is None else self._asked_stream
        refused = chosen.refusal(self.video_mode, audio_in_video, stream, self._extra_body)
        if refused is None and self.thinking is not None and chosen.thinking_line is None:
            refused = (
                f"thinking= is the switch of families that take it in the prompt (Ming-Flash-Omni), not {chosen.family}"
            )
        if refused:
            raise ValueError(f"model {self.model!r}: {refused}")
        self.profile, self.audio_in_video, self.stream = chosen, audio_in_video, stream
        self.media_url = self._asked_media_url or chosen.media_url
        self.audio_part = self._asked_audio_part or chosen.audio_part
        base = dict(chosen.extra_body)
        if audio_in_video == "native":  # the switch that feeds a video's audio (vLLM), only where the track is inside
            base = merged(base, chosen.native_switch)
        if chosen.fps_in_request:  # the server's 32-frame default cleared, the processor samples at fps
            base = merged(base, {TRANSFORMERS_FRAMES_FIELD: {"num_frames": None, "fps": self.fps}})
        self.extra_body = merged(base, self._extra_body)

    def resolve(self) -> Profile:
        """The profile, found on first use for ``provider=auto`` (host, ``GET /models``, model name) and
        fitted to the server's version where the server reports it (:data:`.providers.VERSION_PATHS`)."""
        if self.profile is None:
            name, self.detected_by = detect(  # replicas serve one model: the first one speaks for all
                self.client.replicas.urls[0], self.model, lambda: self.client.list_models(self._probe_timeout)
            )
            self._apply(self._profile(name))
        assert self.profile is not None
        if not self._version_read:
            self._version_read = True
            self.server_version, how = self._read_version(self.profile.provider)
            self._version_how = how
            if self.server_version is not None:
                self.detected_by += f"; {how}"
                self._apply(self._profile(self.profile.provider, self.server_version))
        return self.profile

    def _profile(self, provider: str, version: str | None = None) -> Profile:
        """The profile of ``provider`` for this model on a server of ``version``, started as the settings say."""
        return profile(provider, self.model, version, self.trust_request_mm_kwargs)

    def _read_version(self, provider: str) -> tuple[str | None, str]:
        """The server's version from the first of its version paths that answers one (None: not reported)."""
        tried = []
        for path in VERSION_PATHS.get(provider, ()):
            try:
                answer = self.client.get_json(path, self._probe_timeout)
            except LookupError as exc:
                tried.append(f"GET {path} failed ({exc})")
                continue
            if isinstance(answer, Mapping) and isinstance(answer.get("version"), str):
                return answer["version"], f"GET {path} version {answer['version']}"
            tried.append(f"GET {path} holds no version")
        return None, "; ".join(tried)

    def resolve_offline(self) -> Profile | None:
        """The profile as far as it can be known without asking the server (``--dry-run``): given,
        or found from the host or model name; None when only the server could tell."""
        self._version_read = True  # the dry run asks the server nothing: server_version= or unknown
        if self.profile is None:
            found = detect_offline(self.client.replicas.urls[0], self.model)
            if found is None:
                return None
            self.detected_by = found[1]
            self._apply(self._profile(found[0], self.server_version))
        elif self.server_version is not None and self.profile.version != self.server_version:
            self._apply(self._profile(self.profile.provider, self.server_version))
        return self.profile

    @property
    def _probe_timeout(self) -> float:
        """Seconds the ``GET /models`` probe of ``provider=auto`` may take: :data:`.providers.PROBE_TIMEOUT_S`,
        or the request timeout when that is shorter."""
        return min(PROBE_TIMEOUT_S, self.client.timeout)

    def _announce(self) -> None:
        """The profile, what it changes and the settings' pitfalls, on the console before the first scene."""
        chosen = self.resolve()
        print(
            inert(f"model {self.model}: provider {chosen.provider} ({self.detected_by}), {chosen.describe()}"),
            file=sys.stderr,
        )
        if chosen.provider in VERSION_PATHS and chosen.version is None:
            print(
                f"  server version not reported ({self._version_how}): the newest {chosen.provider} rules apply",
                file=sys.stderr,
            )
        for note in chosen.notes(self.model, sorted(self._modalities), self.audio_in_video or "native"):
            print(f"  {inert(note)}", file=sys.stderr)
        if chosen.thinking_line is not None:
            print(
                f"  system prompt ends with '{self._thinking_line()}' (thinking={self.thinking or 'off'})",
                file=sys.stderr,
            )
        for pitfall in self.pitfalls():
            print(f"  pitfall: {inert(pitfall)}", file=sys.stderr)

    def _thinking_line(self) -> str | None:
        chosen = self.profile
        return (
            None
            if chosen is None or chosen.thinking_line is None
            else chosen.thinking_line.format(self.thinking or "off")
        )

    # --- public interface -------------------------------------------------------------------------

    def prepare(self, batch: SceneBatch) -> None:
        self._decoding = Decoding.of(batch.gen_kwargs, MODEL_MAX_TOKENS).with_max_tokens(self.max_tokens)
        first = not self._asked
        self._asked = True
        self._modalities.update(r.modality for r in batch.requests if not r.text_only)  # clips sent as media
        self._check_tasks(self.resolve())
        if first:
            self._announce()
        if self._modalities and self.hearing is None and self._checks_hearing:
            self._check_hearing()

    def _check_tasks(self, chosen: Profile) -> None:
        """Refuse scenes of the run's modalities that this server cannot take (``ValueError``)."""
        refused = chosen.refuses_tasks(self.video_mode, self.audio_in_video or "native", sorted(self._modalities))
        if refused:
            raise ValueError(f"model {self.model!r}: {refused}")

    def dry_check(self, requests: Sequence[SceneRequest]) -> list[str]:
        """What the real run would refuse of ``requests``, without asking the server (``--dry-run``):
        the setup refusals raise the real run's ``ValueError``; each scene beyond a media limit gives its
        real inference error. A provider only the server could name is said on the console."""
        chosen = self.resolve_offline()
        if chosen is None:
            print(
                f"model {inert(self.model)}: provider=auto is found from the server's GET /models at run time; give "
                "provider= (and server_version=) to check its rules in the dry run",
                file=sys.stderr,
            )
            return []
        self._modalities.update(r.modality for r in requests if not r.text_only)
        self._check_tasks(chosen)
        self._check_launch_flag(chosen)
        return [f"media: {problem}" for r in requests if (problem := self.limit_problem(r)) is not None]

    def _check_launch_flag(self, chosen: Profile) -> None:
        """``--dry-run``: requests that need a launch flag the client cannot see (vLLM's
        ``--trust-request-mm-kwargs``) are refused (``ValueError``) where the server's version is known and
        ``trust_request_mm_kwargs=`` says nothing; said on the console where the version is not known."""
        if not (chosen.launch_flag and chosen.flag_known is None and "mm_processor_kwargs" in self.extra_body):
            return
        if chosen.version is None:
            print(
                f"model {inert(self.model)}: {chosen.needs_flag()}: give server_version= to check it in the dry run",
                file=sys.stderr,
            )
            return
        raise ValueError(
            f"model {self.model!r}: {chosen.needs_flag()}, and these requests carry use_audio_in_video; the dry run "
            f"cannot see how the server was started: pass trust_request_mm_kwargs=true for one started with "
            f"{chosen.launch_flag}, or trust_request_mm_kwargs=false to send each video's track as a separate "
            "input_audio part"
        )

    @property
    def _checks_hearing(self) -> bool:
        """Whether the hearing check runs: ``hearing_check=`` as given, else the profile's rule."""
        asked = self._asked_hearing_check
        return self.resolve().checks_hearing if asked is None else bool(asked)

    def _check_hearing(self) -> None:
        """Ask the server whether it hears audio and keeps to ``max_tokens`` (:mod:`.hearing`): a server
        that drops the audio stops the run (``ValueError``); the outcome is said on the console."""
        saved = dict(vars(self._stats))

        def count(usage: Any, name: str) -> Any:
            """The count as the server reported it: :class:`Hearing` refuses one that is not a count."""
            return getattr(usage, name, None)

        async def ask() -> Hearing:
            sdk = self.client.async_sdk()
            try:
                usages = []
                for audio in (False, True):
                    options = self._options(probe_messages(HEARING_PROBE_TEXT, audio), max_tokens=PROBE_MAX_TOKENS)

                    async def create(options: dict[str, Any] = options) -> Any:
                        return await sdk.chat.completions.create(**options)

                    usages.append(getattr(await self._call(create), "usage", None))
                completions = [token_count("completion_tokens", count(u, "completion_tokens")) for u in usages]
                return Hearing(
                    count(usages[0], "prompt_tokens"),
                    count(usages[1], "prompt_tokens"),
                    max((c for c in completions if c is not None), default=None),
                )
            finally:
                await sdk.close()

        try:
            self.hearing = self.client.run(ask)
        except CallFailedError as exc:  # one line, as every refusal before the first scene
            raise ValueError(
                f"model {self.model!r}: the server check (hearing) failed: {self.client.scrub(str(exc))}; pass "
                "hearing_check=false to run without it"
            ) from None
        finally:
            vars(self._stats).update(saved)  # the check is not part of the run's counts
        heard = self.hearing
        if heard.heard is None:
            print("  server check: the server reports no prompt tokens; audio arrival not verified", file=sys.stderr)
        elif not heard.heard:
            raise ValueError(
                f"model {self.model!r}: the server dropped an input_audio part without an error (prompt tokens "
                f"{heard.without} with and without a {TONE_S:g} s tone): it does not hear audio, and every audio "
                "clip of the run would be lost; serve a model the server takes audio for (transformers serve: one "
                "it classes as a multimodal LM), or pass hearing_check=false to run it deaf anyway"
            )
        else:
            assert heard.with_audio is not None and heard.without is not None
            print(
                f"  server check: audio heard ({heard.with_audio - heard.without} prompt tokens for a {TONE_S:g} s tone)",
                file=sys.stderr,
            )
        for pitfall in self._server_pitfalls():
            print(f"  pitfall: {pitfall}", file=sys.stderr)

    def _server_pitfalls(self) -> list[str]:
        """What the server check found besides hearing."""
        if self.hearing is None or not self.hearing.ignores_limit:
            return []
        return [
            f"the server ignores max_tokens: it answered {self.hearing.completion} tokens to a request capped at "
            f"{PROBE_MAX_TOKENS} (transformers serve's published Qwen2.5-Omni layout: generate's "
            "thinker_max_new_tokens=1024 wins); answers it cuts read finish_reason=stop, not counted as truncated"
        ]

    def info(self) -> dict[str, Any]:
        chosen = self.profile
        generation = self._fields() if self._asked and chosen else None
        return {
            **self.server_info(),
            "provider": {
                "name": chosen.provider if chosen else self.provider,
                "detected_by": self.detected_by,
                "limit_field": chosen.limit_field if chosen else None,
                "sampling_sent": chosen.sampling if chosen else None,
                "family": chosen.family if chosen else None,
                "server_version": chosen.version if chosen else self.server_version,
                "trust_request_mm_kwargs": self.trust_request_mm_kwargs,
                "media_limits": self.media_limits,
                "source": chosen.source if chosen else None,
                "rules": list(chosen.rules) if chosen else [],
            },
            "media": {
                "media_url": self.media_url,
                "video_mode": self.video_mode,
                "audio_in_video": self.audio_in_video,
                "audio_part": self.audio_part,
                "fps": self.fps if self.video_mode == "frames" or (chosen and chosen.fps_in_request) else None,
                "max_frames": self.max_frames if self.video_mode == "frames" else None,
                "audio_sample_rate": self.audio_sample_rate,
            },
            "history": self.history,
            "thinking": self._thinking_line(),
            "stream": self.stream,
            "extra_body": self.extra_body,
            "generation": generation or {"temperature": 0.0, "max_tokens": self._decoding.max_tokens},
            "hearing_check": self.hearing.as_dict() if self.hearing else None,
            "stats": self._stats.as_dict(ModelStats.ORDER),
        }

    def pitfalls(self) -> list[str]:
        chosen = self.profile
        limit = chosen.limit_field if chosen else "max_tokens"
        out = self._decoding.pitfalls(limit) + super().pitfalls()
        if chosen is not None and not chosen.sampling and (self._decoding.temperature > 0 or self._decoding.stop):
            out.append(f"the task's sampling settings / stop sequences are not sent: {self.model} takes only defaults")
        elif chosen is not None and not chosen.sends_stop and self._decoding.stop:
            out.append(f"the task's stop sequences are not sent: {chosen.provider} refuses them (rule ark.no-stop)")
        out += self._server_pitfalls()
        if chosen is not None and not self.media_limits and (chosen.max_videos or chosen.max_item_b64):
            out.append(f"media_limits=false: scenes beyond {chosen.provider}'s documented media limits are sent anyway")
        if chosen is not None and AUDIO_VISUAL in self._modalities:  # only where a video is sent
            out += self._video_audio_pitfalls(chosen)
        return out

    def _video_audio_pitfalls(self, chosen: Profile) -> list[str]:
        """How the audio of the run's videos may be lost in these settings."""
        kwargs = self.extra_body.get("mm_processor_kwargs")
        fed = kwargs.get("use_audio_in_video") if isinstance(kwargs, Mapping) else None
        native = self.audio_in_video == "native"
        if self.audio_in_video == "none":
            return ["audio of audio-visual clips not sent (audio_in_video=none): the model sees video only"]
        if native and chosen.native_switch and not fed:
            return [
                f"use_audio_in_video is off on vllm: the audio track of every video is dropped "
                f"without an error ({chosen.source}); the model sees video only"
            ]
        if native and chosen.provider == "vllm" and not chosen.native_switch and not (fed and chosen.takes_user_switch):
            return [
                f"audio inside the video on vllm for {chosen.family}: the video loader reads frames only, so "
                "every video's audio is dropped without an error (rule vllm.separate-track); the default "
                "(separate) sends it"
            ]
        if native and chosen.provider == "sglang":
            return [
                "audio inside the video is left to sglang, whose older versions ignore use_audio_in_video and "
                "drop it without an error (rule sglang.audio-in-video); the default (separate) sends it"
            ]
        if native and chosen.provider == "transformers" and QWEN_OMNI.search(self.model):
            return [
                "audio_in_video=native on transformers serve: the server interleaves the video's audio but "
                "Qwen-Omni's generate gets use_audio_in_video=false, which flattens the TMRoPE positions of "
                f"the video+audio block ({chosen.source}); the default (separate) avoids it"
            ]
        if native and chosen.provider in ("generic", "ark") and fed is None:
            return [
                "audio inside the video is left to the server, and servers may drop it silently; "
                "use audio_in_video=separate (or the server's own switch in extra_body) when unsure"
            ]
        return []

    def messages(self, request: SceneRequest, load_clip: ClipLoader | None) -> list[dict[str, Any]]:
        """The chat ``messages`` of ``request``, media loaded and encoded (raises :class:`MediaError`); the
        model's thinking switch, where its family takes one in the prompt, ends the system message."""
        chosen = self.resolve()
        if chosen.joins_audio and request.modality == AUDIO_ONLY and len(request.turns) > 1:
            messages = self._joined_audio_messages(request, load_clip)
        else:
            messages = scene_messages(
                request, load_clip, lambda ref, clip: self._media_parts(request, ref, clip), self.history
            )
        line = self._thinking_line()
        if line is not None:
            messages[0] = {**messages[0], "content": f"{messages[0]['content']}\n\n{line}"}
        return messages

    def in_flight(self) -> int:
        """:attr:`concurrency`, or one where the profile sends scenes one at a time (:attr:`.Profile.serial`)."""
        return 1 if self.resolve().serial else self.concurrency

    def _joined_audio_messages(self, request: SceneRequest, load_clip: ClipLoader | None) -> list[dict[str, Any]]:
        """The messages of a scene whose clips go as one audio part (:attr:`.providers.Profile.joins_audio`): the
        clips one after another, :data:`JOINED_AUDIO_GAP_S` of silence between, where the last clip stands;
        the turn labels and replies stay in their places as text."""
        clips: list[LazyClip] = []

        def mark(ref: ClipRef, clip: LazyClip) -> list[dict[str, Any]]:
            clips.append(clip)
            return [{"type": JOINED_AUDIO_MARK}]

        messages = scene_messages(request, load_clip, mark, self.history)
        data = joined_wav_bytes(clips, self.audio_sample_rate, JOINED_AUDIO_GAP_S)
        part = self._audio_item(data, "wav", "audio/wav")
        left = len(clips)
        for message in messages:
            if isinstance(message["content"], list):
                kept = []
                for item in message["content"]:
                    if item["type"] == JOINED_AUDIO_MARK:
                        left -= 1
                        if left:
                            continue
                        item = part
                    kept.append(item)
                message["content"] = kept
        return messages

    def output_limit(self) -> int:
        return self._decoding.max_tokens

    # --- one scene ------------------------------------------------------------------------------

    def encode(self, request: SceneRequest, load_clip: ClipLoader | None) -> list[dict[str, Any]]:
        problem = self.limit_problem(request)  # before any media is read
        if problem is not None:
            raise MediaError(problem)
        return self.messages(request, load_clip)

    def media_counts(self, request: SceneRequest) -> tuple[int, int]:
        """``(video files, audio parts)`` that ``request`` sends in these settings (no media read)."""
        if request.text_only:
            return 0, 0
        clips = len(request.turns)
        if request.modality == AUDIO_ONLY:
            return 0, 1 if self.resolve().joins_audio else clips
        return clips * (self.video_mode == "video"), clips * (self.audio_in_video == "separate")

    def limit_problem(self, request: SceneRequest) -> str | None:
        """Why ``request`` goes beyond the profile's per-request media limits (None: it does not, or
        ``media_limits=false``); the same words in the real run and the dry run."""
        chosen = self.resolve()
        if not self.media_limits:
            return None
        videos, audios = self.media_counts(request)
        for kind, count, limit in (
            ("video file(s)", videos, chosen.max_videos),
            ("audio part(s)", audios, chosen.max_audios),
        ):
            if limit is not None and count > limit:
                return (
                    f"scene {request.scene_id}: {count} {kind} in one request, beyond {chosen.provider}'s limit of "
                    f"{limit} per request for {chosen.family} ({chosen.source}); media_limits=false sends it anyway"
                )
        return None

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[Any]:
        sdk = self.client.async_sdk()
        try:
            yield sdk
        finally:
            await sdk.close()

    async def probe(self, sdk: Any, text: str, max_tokens: int) -> Generation:
        """One text-only call in this backend's request shape, answering at most ``max_tokens``
        (:mod:`odu.transport.server_check`, before the first scene); the batch's settings are kept."""
        saved, self._decoding = self._decoding, Decoding.of({}, max_tokens)
        try:
            return await self.send(sdk, [{"role": "user", "content": text}])
        finally:
            self._decoding = saved

    async def send(self, sdk: Any, encoded: Any) -> Generation:
        return Generation(await self._complete(sdk, self._options(encoded)))

    def _options(self, messages: list[dict[str, Any]], max_tokens: int | None = None) -> dict[str, Any]:
        """One chat call's arguments: model, decoding settings (``max_tokens`` in place of the batch's
        limit when given), the profile's and user's ``extra_body``, ``messages``."""
        options: dict[str, Any] = {"model": self.model, **self._fields(max_tokens)}
        if self.extra_body:
            options["extra_body"] = self.extra_body
        return {**options, "messages": messages}

    def _fields(self, max_tokens: int | None = None) -> dict[str, Any]:
        """Decoding settings under the profile's names (sampling settings left out where refused)."""
        chosen = self.resolve()
        fields = self._decoding.with_max_tokens(max_tokens).fields(chosen.limit_field, "stop")
        if not chosen.sampling:
            fields = {chosen.limit_field: fields[chosen.limit_field]}
        elif not chosen.sends_stop:
            fields.pop("stop", None)
        return fields

    def _b64_item(self, data: bytes) -> str:
        """``data`` as Base64, counted as media; a :class:`MediaError` beyond the profile's item limit."""
        text = _b64(self.count_media(data))
        chosen = self.resolve()
        limit = chosen.max_item_b64
        if self.media_limits and limit is not None and len(text) > limit:
            raise MediaError(
                f"{len(text) / 2**20:.1f} MB of Base64, beyond {chosen.provider}'s limit of "
                f"{limit / 2**20:g} MB per item ({chosen.source}); media_limits=false sends it anyway"
            )
        return text

    def _media_parts(self, request: SceneRequest, ref: ClipRef, clip: LazyClip) -> list[dict[str, Any]]:
        where = f"scene {request.scene_id} clip {ref.id}"
        try:
            if request.modality == AUDIO_ONLY:
                return [self._audio_part(clip, ref, extract=False)]
            parts: list[dict[str, Any]] = []
            soundless = self.resolve().soundless_video
            if soundless and self.video_mode == "video" and self.audio_in_video == "native" and not clip.info.has_audio:
                raise MediaError(f"the video has no sound track: {soundless} (rule vllm.soundless-video)")
            if self.video_mode == "video":
                parts.append({"type": "video_url", "video_url": {"url": self._url(clip, ref)}})
            else:
                for frame in clip.frames(fps=self.fps, max_frames=self.max_frames).frames:
                    data = self._b64_item(jpeg_bytes(frame))
                    parts.append({"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + data}})
            if self.audio_in_video == "separate":
                parts.append(self._audio_part(clip, ref, extract=True))
            return parts
        except MediaError as exc:
            raise MediaError(f"{where}: {exc}") from None

    def _url(self, clip: LazyClip, ref: ClipRef) -> str:
        if self.media_url == "file":
            return spool_clip(clip, ref.sha256).resolve().as_uri()
        if self.media_url == "http":  # without its sound track when that goes separately (or not at all)
            path = spool_clip(clip, ref.sha256, video_only=self.audio_in_video != "native", in_cache=True)
            self._stats.media_bytes += path.stat().st_size
            return self._clips().url(path, media_type(clip)[0])
        prefix = self.resolve().video_data_prefix or f"data:{media_type(clip)[0]};base64,"
        return prefix + self._b64_item(clip.bytes)

    def _clips(self) -> ClipServer:
        """The run's clip server (started on first use, on :attr:`media_host` or the address the
        model server reaches this machine on)."""
        with self._clip_server_lock:  # scenes are encoded on worker threads
            if self._clip_server is None:
                host = self.media_host or serving_host(self.client.replicas.urls[0])
                self._clip_server = ClipServer(media_cache(), host)
            return self._clip_server

    def close(self) -> None:
        if self._clip_server is not None:
            self._clip_server.close()
            self._clip_server = None

    def _audio_part(self, clip: LazyClip, ref: ClipRef, extract: bool) -> dict[str, Any]:
        """The clip's audio (WAV/MP3 as they are; anything else, or a video's track, as 16-bit WAV) as
        the profile's audio part (:data:`.providers.AUDIO_PARTS`)."""
        if self.media_url == "file" and not extract:
            return {"type": "audio_url", "audio_url": {"url": spool_clip(clip, ref.sha256).resolve().as_uri()}}
        mime = media_type(clip)[0]
        if not extract and mime in ("audio/wav", "audio/mpeg"):
            data, fmt = clip.bytes, "wav" if mime == "audio/wav" else "mp3"
        else:
            data, fmt, mime = wav_bytes(clip, self.audio_sample_rate), "wav", "audio/wav"
        return self._audio_item(data, fmt, mime)

    def _audio_item(self, data: bytes, fmt: str, mime: str) -> dict[str, Any]:
        """Audio file bytes as the profile's audio part (:data:`.providers.AUDIO_PARTS`)."""
        encoded = self._b64_item(data)
        if self.audio_part == "audio_url":
            return {"type": "audio_url", "audio_url": {"url": f"data:{mime};base64,{encoded}"}}
        if self.audio_part == "input_audio_url":
            return {"type": "input_audio", "input_audio": {"url": f"data:{mime};base64,{encoded}"}}
        if self.resolve().audio_data_url:
            encoded = "data:;base64," + encoded
        return {"type": "input_audio", "input_audio": {"data": encoded, "format": fmt}}

    async def _complete(self, client: Any, options: dict[str, Any]) -> str:
        """The reply text of one chat call, retrying transient failures; :class:`CallFailedError` else."""

        async def send() -> str:
            self._stats.requests += 1
            return await (self._streamed(client, options) if self.stream else self._single(client, options))

        return await self._call(send)

    async def _call(self, send: Callable[[], Awaitable[T]]) -> T:
        """``send`` through the client; a server that refuses the profile's ``mm_processor_kwargs`` for want of
        its launch flag refuses every request alike, so that stops the run (:class:`ModelUnavailableError`,
        one line naming the flag) instead of failing each scene."""
        try:
            return await self.client.call(send)
        except CallFailedError as exc:
            chosen = self.profile
            if chosen is not None and chosen.launch_flag and VLLM_MM_KWARGS_REFUSAL in str(exc):
                raise ModelUnavailableError(chosen.flag_refusal(self.model)) from None
            raise

    async def _single(self, client: Any, options: dict[str, Any]) -> str:
        response = await client.chat.completions.create(**options)
        self._stats.count_usage(getattr(response, "usage", None))
        choices = getattr(response, "choices", None) or []
        self._count_finish(choices[0] if choices else None)
        return (choices[0].message.content or "") if choices else ""

    async def _streamed(self, client: Any, options: dict[str, Any]) -> str:
        stream = await client.chat.completions.create(**options, stream=True, stream_options={"include_usage": True})
        pieces = []
        async for chunk in stream:
            self._stats.count_usage(getattr(chunk, "usage", None))
            for choice in getattr(chunk, "choices", None) or []:
                self._count_finish(choice)
                if choice.delta is not None and choice.delta.content:
                    pieces.append(choice.delta.content)
        return "".join(pieces)

    def _count_finish(self, choice: Any) -> None:
        """An answer the server cut at ``max_tokens`` (``finish_reason: "length"``) is counted."""
        if getattr(choice, "finish_reason", None) == "length":
            self.count_truncated()


__all__ = [
    "AUDIO_IN_VIDEO",
    "MEDIA_URLS",
    "VIDEO_MODES",
    "OpenAIOmni",
    "jpeg_bytes",
    "merged",
]
