"""Provider profiles of the OpenAI-compatible omni backend (:mod:`.openai_omni`): the request shape
each server documents, and how ``provider=auto`` finds the server behind a ``base_url``.

A :class:`Profile` holds what differs between servers that all speak "OpenAI chat completions":
the name of the output-token limit, whether sampling parameters may be sent, whether the server
only streams, how media travel (data-URL forms), per-item and per-request media limits, and how
the audio track of a video reaches the model. Each rule cites the provider's documentation (or,
where the docs are silent, the issue that shows the behaviour):

* ``openai`` — reasoning models (gpt-5*, o1/o3/o4...) answer HTTP 400 to ``max_tokens`` ("Use
  'max_completion_tokens' instead", ``max_tokens`` is deprecated in the Chat Completions reference,
  https://platform.openai.com/docs/api-reference/chat/create) and to any temperature but the default
  ("Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value
  is supported", openai/openai-python#2046, langgenius/dify#24307, autohandai/code-cli#77 for
  gpt-5.4). Every OpenAI chat model takes ``max_completion_tokens``, so the profile always sends it;
  temperature and top_p are left out for the reasoning models. Chat content parts are text,
  image_url, input_audio and file (same reference): audio-visual scenes go as frames
  (``video_mode=frames``), else the run stops before its first request.
* ``dashscope`` — Alibaba Model Studio's Qwen-Omni (https://help.aliyun.com/zh/model-studio/qwen-omni,
  "Qwen-Omni"): "stream 必须设置为 True，否则会报错" (streaming only); local files as Base64 data URLs
  ``data:;base64,...`` in ``input_audio.data`` and ``video_url.url`` ("输入 Base64 编码的本地文件");
  one non-text modality per user message ("content 数组可以包含文本和一种其他模态"), so a video's
  audio is read from the video itself ("视频文件形式（可理解视频中的音频）"); one video file / one
  audio file per request ("仅支持输入一个视频文件" / "仅支持输入一个音频文件"); 10 MB per Base64 item
  (images: "单个图片文件的大小不超过10 MB"; Alibaba's own Model Studio CLI checks Omni Base64
  payloads against 10 MB, modelstudioai/cli ``reference-audio.ts``).
* ``vllm`` serving Qwen-Omni — the audio track of a ``video_url`` reaches the model only with the
  per-request ``mm_processor_kwargs: {"use_audio_in_video": true}``; without it the audio is
  dropped without an error (vllm-project/vllm#47788; the vLLM-Omni example client sends it per
  request, vllm-project/vllm-omni#1198). Other models on vLLM get the track as a separate
  ``input_audio`` part: vLLM's video loader reads frames only.
* ``sglang`` — its HTTP API does not forward ``use_audio_in_video`` to the Qwen-Omni processor, so
  the track is dropped silently whatever the request says (sgl-project/sglang-omni#708, open;
  sgl-project/sglang#16996 closed unmerged): every model gets the track as a separate
  ``input_audio`` part.
* ``ark`` — Volcengine Ark (``https://ark.<region>.volces.com/api/v3``) takes the OpenAI chat shape;
  some endpoints refuse ``audio_url`` parts and take only ``input_audio``
  (JimLiu/doubao-multimodal-skill ``.env.example``), which is what this backend sends.
* ``transformers`` — Hugging Face's ``transformers serve`` (``transformers/cli/serving/``, read at
  transformers 5.24, checked against the running server by the real lane, docs/real-lane.md): a video
  is taken only by ``http(s)://`` URL or a path on the server's own disk (``video_utils.load_video``:
  a ``data:`` URL is refused, "Incorrect format used for video"; ``file://`` is not opened), so the
  backend serves the run's clips over HTTP itself (``media_url=http``, :mod:`.clip_server`); frames
  are sampled by the processor from ``chat_template_kwargs`` (``chat_completion.py`` sets
  ``num_frames: 32`` for every video, refused beside ``fps`` "mutually exclusive" and by clips with
  fewer frames, so the request clears it with ``num_frames: null`` and asks ``fps``, the rate
  Qwen-Omni's processor also times its position ids by); ``load_audio_from_video`` is set by the
  server for models it classes as multimodal LMs and may not be sent; fields outside its request
  type are refused with HTTP 422 (``utils.py`` ``_validate_request``: no ``mm_processor_kwargs``).
  A video's audio goes as a separate ``input_audio`` part after the video served without its sound
  track: the server's own interleaving reaches Qwen-Omni's ``generate`` with ``use_audio_in_video``
  left false, which flattens the video+audio block's TMRoPE positions
  (``modeling_qwen2_5_omni.py`` ``get_rope_index``). Audio parts reach only models the server classes
  as multimodal LMs (``get_model_modality``, ``get_processor_inputs_from_messages``); an image-text
  model gets them dropped without an error, and the published Qwen2.5-Omni layout answers up to 1024
  tokens whatever ``max_tokens`` says (``thinker_max_new_tokens``): the backend's server check
  (:attr:`Profile.checks_hearing`, :mod:`.hearing`) measures both before the first scene.
* ``generic`` — the plain OpenAI chat shape (``max_tokens``, temperature 0), nothing assumed.

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

from ..constants import AUDIO_VISUAL

PROVIDERS: tuple[str, ...] = ("auto", "vllm", "sglang", "dashscope", "openai", "ark", "transformers", "generic")

#: DashScope: largest Base64 payload of one media item (characters of the Base64 text), see the module docstring.
DASHSCOPE_MAX_ITEM_B64 = 10 * 1024 * 1024
#: DashScope Qwen-Omni: video files and audio files one request may carry (one each).
DASHSCOPE_MAX_VIDEOS = 1
DASHSCOPE_MAX_AUDIOS = 1
#: Seconds the ``GET /models`` probe of ``provider=auto`` waits (one attempt; a failure falls back
#: to the model-name rule and is said on the console).
PROBE_TIMEOUT_S = 10.0

#: OpenAI's model names (gpt-4.1, gpt-5.4, o3, chatgpt-4o ...; not the open-weight gpt-oss served elsewhere).
OPENAI_MODEL = re.compile(r"^(?:openai/)?(?:gpt-(?!oss)|chatgpt-|o[1-9])", re.IGNORECASE)
#: OpenAI reasoning models: no ``max_tokens``, no temperature but the default.
OPENAI_REASONING = re.compile(r"^(?:openai/)?(?:gpt-5|o[1-9])", re.IGNORECASE)
#: Qwen-Omni models (Qwen2.5-Omni, Qwen3-Omni, Qwen3.5-Omni ...), whose processors take ``use_audio_in_video``.
QWEN_OMNI = re.compile(r"qwen[\d.]*-omni", re.IGNORECASE)
#: vLLM / SGLang per-request processor argument that feeds a Qwen-Omni video's audio track.
USE_AUDIO_IN_VIDEO: dict[str, Any] = {"mm_processor_kwargs": {"use_audio_in_video": True}}

#: ``transformers serve``: per-request ``chat_template_kwargs`` that clear the server's 32-frame default
#: so the processor samples every video at the backend's ``fps`` (module docstring).
TRANSFORMERS_FRAMES_FIELD = "chat_template_kwargs"

DASHSCOPE_DOC = "https://help.aliyun.com/zh/model-studio/qwen-omni"
OPENAI_DOC = "https://platform.openai.com/docs/api-reference/chat/create"
VLLM_DOC = "vllm-project/vllm#47788"
SGLANG_DOC = "sgl-project/sglang-omni#708"
TRANSFORMERS_DOC = "transformers/cli/serving (transformers 5.24)"


@dataclass(frozen=True)
class Profile:
    """The documented request shape of one provider for one model (see the module docstring)."""

    provider: str
    #: Name of the output-token limit in the request body.
    limit_field: str = "max_tokens"
    #: Whether temperature / top_p / stop may be sent (False: the model's defaults).
    sampling: bool = True
    #: Whether the server answers only streamed requests.
    stream: bool = False
    #: ``input_audio.data`` as a data URL ``data:;base64,...`` rather than bare Base64.
    audio_data_url: bool = False
    #: Whether ``video_url`` parts are taken at all (False: frames mode or the text-only tasks).
    takes_video: bool = True
    #: Prefix of a video's data URL (None: ``data:<mime>;base64,``).
    video_data_prefix: str | None = None
    #: How a video's audio reaches the model by default (``native``: inside the video; ``separate``).
    audio_in_video: str = "native"
    #: Why ``separate`` is the default, said on the console.
    separate_reason: str = "the server reads video frames only"
    #: Fields every request carries (the user's ``extra_body`` wins).
    extra_body: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: Largest Base64 payload of one media item, in characters (None: no documented limit).
    max_item_b64: int | None = None
    #: Video files / audio parts one request may carry (None: no documented limit).
    max_videos: int | None = None
    max_audios: int | None = None
    #: Whether a user message may hold only one non-text modality.
    one_modality_per_message: bool = False
    #: How video travels when ``media_url`` is left unset (``data``: data URLs; ``http``: the run's clip server).
    media_url: str = "data"
    #: Whether the frame rate is asked per request (``chat_template_kwargs``: ``num_frames`` cleared, ``fps`` set).
    fps_in_request: bool = False
    #: Whether the server may drop audio parts without an error, so the backend checks it hears one
    #: (prompt tokens with and without a short tone) before the first scene with media.
    checks_hearing: bool = False
    #: Where the rules come from.
    source: str = ""

    def refusal(self, video_mode: str, audio_in_video: str, stream: bool) -> str | None:
        """Why these backend settings cannot work on this provider (None: they can)."""
        if self.stream and not stream:
            return f"{self.provider} answers streamed requests only ({self.source}): leave stream unset"
        if self.one_modality_per_message and (video_mode == "frames" or audio_in_video == "separate"):
            return (
                f"{self.provider} takes one non-text modality per user message ({self.source}): audio-visual "
                "clips go as video files with their own audio (video_mode=video, audio_in_video=native)"
            )
        return None

    def refuses_video(self, video_mode: str, modalities: Sequence[str]) -> str | None:
        """Why audio-visual scenes cannot go as ``video_url`` parts here (None: they can)."""
        if self.takes_video or video_mode != "video" or AUDIO_VISUAL not in modalities:
            return None
        return (
            f"{self.provider} chat takes no video_url parts ({self.source}): use video_mode=frames "
            "(images + the audio track as input_audio) or the text-only tasks (odu_av_text)"
        )

    def notes(self, model: str, modalities: Sequence[str]) -> list[str]:
        """What this profile changes in the request, said on the console at start."""
        out = []
        if self.limit_field != "max_tokens":
            out.append(f"output-token limit sent as {self.limit_field}")
        if not self.sampling:
            out.append(f"temperature/top_p/stop not sent: {model} takes only the defaults ({self.source})")
        if self.stream:
            out.append("requests streamed (the server answers nothing else)")
        if self.media_url == "http":
            out.append(
                "video sent by URL from the run's own loopback clip server (the server takes no data: video URLs)"
            )
        if self.fps_in_request:
            out.append("frames sampled by the server at the backend's fps (chat_template_kwargs num_frames=null, fps)")
        if AUDIO_VISUAL in modalities:
            if self.extra_body.get("mm_processor_kwargs", {}).get("use_audio_in_video"):
                out.append(f"video audio fed with mm_processor_kwargs.use_audio_in_video=true ({self.source})")
            elif self.audio_in_video == "separate":
                out.append(f"video audio sent as a separate input_audio part ({self.separate_reason})")
        limits = [
            f"{what} {n}" for what, n in (("video file(s)", self.max_videos), ("audio part(s)", self.max_audios)) if n
        ]
        if self.max_item_b64:
            limits.append(f"{self.max_item_b64 / 2**20:g} MB Base64 per item")
        if limits:
            out.append(f"media limits per request: {', '.join(limits)} ({self.source})")
        return out


def profile(provider: str, model: str) -> Profile:
    """The profile of ``provider`` (not ``auto``) for ``model``.

    >>> profile("openai", "gpt-5.4").limit_field, profile("openai", "gpt-5.4").sampling
    ('max_completion_tokens', False)
    >>> profile("vllm", "Qwen/Qwen3-Omni-30B-A3B-Instruct").extra_body
    {'mm_processor_kwargs': {'use_audio_in_video': True}}
    >>> profile("vllm", "openbmb/MiniCPM-o-4_5").audio_in_video
    'separate'
    """
    if provider == "openai":
        reasoning = bool(OPENAI_REASONING.match(model))
        return Profile(
            "openai", limit_field="max_completion_tokens", sampling=not reasoning, takes_video=False, source=OPENAI_DOC
        )
    if provider == "dashscope":
        return Profile(
            "dashscope",
            stream=True,
            audio_data_url=True,
            video_data_prefix="data:;base64,",
            max_item_b64=DASHSCOPE_MAX_ITEM_B64,
            max_videos=DASHSCOPE_MAX_VIDEOS,
            max_audios=DASHSCOPE_MAX_AUDIOS,
            one_modality_per_message=True,
            source=DASHSCOPE_DOC,
        )
    if provider == "vllm":
        if QWEN_OMNI.search(model):
            return Profile("vllm", extra_body=USE_AUDIO_IN_VIDEO, source=VLLM_DOC)
        return Profile("vllm", audio_in_video="separate", source=VLLM_DOC)
    if provider == "sglang":
        return Profile("sglang", audio_in_video="separate", source=SGLANG_DOC)
    if provider == "transformers":
        return Profile(
            "transformers",
            audio_in_video="separate",
            separate_reason="the video served without its sound track: the server's own interleaving flattens "
            "Qwen-Omni's TMRoPE positions",
            media_url="http",
            fps_in_request=True,
            checks_hearing=True,
            source=TRANSFORMERS_DOC,
        )
    if provider in ("ark", "generic"):
        return Profile(provider)
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


__all__ = [
    "DASHSCOPE_MAX_AUDIOS",
    "DASHSCOPE_MAX_ITEM_B64",
    "DASHSCOPE_MAX_VIDEOS",
    "OPENAI_MODEL",
    "OPENAI_REASONING",
    "PROBE_TIMEOUT_S",
    "PROVIDERS",
    "QWEN_OMNI",
    "TRANSFORMERS_FRAMES_FIELD",
    "USE_AUDIO_IN_VIDEO",
    "Profile",
    "detect",
    "profile",
    "provider_of_host",
    "provider_of_listing",
]
