"""What every model backend shares: the scene request, the generation result, inference errors.

A :class:`SceneRequest` names what one scene asks of a model (App D.1): the modality, the clips in
order by content hash, the assistant replies between them, and (text-only baseline, App D.2) each
clip's ASR sentences. Its JSON form (:meth:`SceneRequest.to_context`) is the "prompt" string the
lm-eval tasks hand to our models: small, deterministic, free of media bytes, so lm-eval's
``--use_cache`` keys on it cheaply and a changed clip or prompt version is a new key. A backend
expands it with :func:`odu.core.prompts.build_chat` and loads media only when it actually sends.

A backend answers each request with a :class:`Generation`: the raw text, or an inference error
after its retries. An error is never an empty answer: through lm-eval it travels as a marked
string (:func:`encode_output`) that the scorer counts as an inference error and scores as "no
output" (docs/harness.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..core.prompts import PROMPT_VERSION, ChatInput, ClipRef, Turn, build_chat

#: Kind tag of the request JSON; bump when its layout changes.
REQUEST_KIND = "odu-scene-request/1"
#: Marks a backend failure inside lm-eval's string responses (never produced by a model).
INFERENCE_ERROR_MARK = "<<odu-bench:inference-error>> "
#: Marks an answer the server cut at the output-token limit (``finish_reason: length``) inside
#: lm-eval's string responses and its ``--use_cache`` database, so a rerun from the cache knows it.
TRUNCATED_MARK = "<<odu-bench:truncated>> "
#: The parse issue of such an answer: what happened and what to change.
TRUNCATED_ISSUE = "answer cut at the output-token limit (finish_reason: length): raise it (max_gen_toks) and rerun"

#: Output-token room per scene (task ``max_gen_toks``): the demand JSON of a few segments takes well
#: under 1,000 tokens; the rest is headroom so that no answer is cut mid-JSON (thinking models:
#: raise it with ``--gen_kwargs max_gen_toks=...``).
MODEL_MAX_TOKENS = 4096
#: Output-token limits below this are flagged in the run card as likely to cut the JSON.
MODEL_MIN_SAFE_MAX_TOKENS = 1024
#: Frames per second sampled from each clip where a backend sends frames (OpenAI frames mode, the
#: local Qwen-Omni processor).
MODEL_FRAMES_FPS = 2.0


@dataclass(frozen=True, slots=True)
class SceneRequest:
    """One scene's input by reference (no media bytes)."""

    scene_id: str
    modality: str
    turns: tuple[Turn, ...]
    text_only: bool = False
    prompt_version: str = PROMPT_VERSION

    def chat(self) -> ChatInput:
        """The ordered chat parts (App D.1, or App D.2 when ``text_only``)."""
        return build_chat(self.turns, self.modality, self.text_only)

    @property
    def final_clip(self) -> ClipRef:
        return self.turns[-1].clip

    def to_context(self) -> str:
        """Compact, key-sorted JSON: the lm-eval prompt string and cache key of this request."""
        clips = []
        for t in self.turns:
            clip: dict[str, Any] = {
                "id": t.clip.id,
                "sha256": t.clip.sha256,
                "duration_ms": t.clip.duration_ms,
                "replies": list(t.replies),
            }
            if t.asr is not None:
                clip["asr"] = [
                    {"start_ms": s.start_ms, "end_ms": s.end_ms, "text": s.text, "speaker": s.speaker} for s in t.asr
                ]
            clips.append(clip)
        body = {
            "kind": REQUEST_KIND,
            "prompt_version": self.prompt_version,
            "scene_id": self.scene_id,
            "modality": self.modality,
            "text_only": self.text_only,
            "clips": clips,
        }
        return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Generation:
    """A backend's answer to one request: ``text``, or ``error`` when inference failed for good;
    ``truncated`` when the server stopped the answer at the output-token limit."""

    text: str | None
    error: str | None = None
    truncated: bool = False

    @classmethod
    def failed(cls, error: str) -> Generation:
        return cls(None, error)


def encode_output(generation: Generation) -> str:
    """The string lm-eval stores for ``generation`` (errors carry :data:`INFERENCE_ERROR_MARK`).

    >>> encode_output(Generation.failed("HTTP 500"))
    '<<odu-bench:inference-error>> HTTP 500'
    >>> decode_output(encode_output(Generation("{}")))
    Generation(text='{}', error=None, truncated=False)
    >>> decode_output(encode_output(Generation('{"has_dem', truncated=True)))
    Generation(text='{"has_dem', error=None, truncated=True)
    """
    if generation.error is not None:
        return INFERENCE_ERROR_MARK + generation.error
    return (TRUNCATED_MARK if generation.truncated else "") + (generation.text or "")


def decode_output(text: str | None) -> Generation:
    """Inverse of :func:`encode_output`."""
    if text is not None and text.startswith(INFERENCE_ERROR_MARK):
        return Generation.failed(text[len(INFERENCE_ERROR_MARK) :] or "inference error")
    if text is not None and text.startswith(TRUNCATED_MARK):
        return Generation(text[len(TRUNCATED_MARK) :], truncated=True)
    return Generation(text)


@dataclass(frozen=True, slots=True)
class Decoding:
    """A task's generation settings as the backends apply them: greedy unless ``do_sample``; lm-eval's
    ``max_gen_toks`` (else ``max_tokens``, else the backend's default); ``top_p`` only when sampling;
    ``until`` as stop sequences.

    >>> d = Decoding.of({"until": ["END"], "max_gen_toks": 512}, 4096)
    >>> d.fields("max_output_tokens", "stop_sequences")
    {'temperature': 0.0, 'max_output_tokens': 512, 'stop_sequences': ['END']}
    >>> d.pitfalls("max_output_tokens")
    ["stop sequences ['END'] may cut the JSON answer", 'max_output_tokens=512 may cut the JSON answer']
    """

    temperature: float
    max_tokens: int
    top_p: float | None = None
    stop: tuple[str, ...] = ()

    @classmethod
    def of(cls, gen_kwargs: Mapping[str, Any], max_tokens: int) -> Decoding:
        sampling = bool(gen_kwargs.get("do_sample", False))
        until = gen_kwargs.get("until") or []
        return cls(
            temperature=float(gen_kwargs.get("temperature", 0.0)) if sampling else 0.0,
            max_tokens=int(gen_kwargs.get("max_gen_toks", gen_kwargs.get("max_tokens", max_tokens))),
            top_p=float(gen_kwargs["top_p"]) if sampling and "top_p" in gen_kwargs else None,
            stop=(until,) if isinstance(until, str) else tuple(s for s in until if s),
        )

    def with_max_tokens(self, max_tokens: int | None) -> Decoding:
        """These settings with ``max_tokens`` when given (a backend setting that overrides the task's)."""
        return replace(self, max_tokens=max_tokens) if max_tokens else self

    def fields(self, max_tokens: str, stop: str) -> dict[str, Any]:
        """The settings under an API's names for the token limit and the stop sequences (``top_p``
        and the stop sequences only when set)."""
        out: dict[str, Any] = {"temperature": self.temperature, max_tokens: self.max_tokens}
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.stop:
            out[stop] = list(self.stop)
        return out

    def pitfalls(self, max_tokens: str) -> list[str]:
        """Run-card warnings: sampling, stop sequences, a token limit that may cut the JSON answer
        (``max_tokens``: the API's name of the limit)."""
        out = []
        if self.temperature > 0 or (self.top_p or 1.0) < 1:
            out.append(
                f"sampling on (temperature={self.temperature}, top_p={self.top_p or 1.0}): "
                "outputs are not greedy, reruns differ"
            )
        if self.stop:
            out.append(f"stop sequences {list(self.stop)!r} may cut the JSON answer")
        if self.max_tokens < MODEL_MIN_SAFE_MAX_TOKENS:
            out.append(f"{max_tokens}={self.max_tokens} may cut the JSON answer")
        return out


#: Loads one clip of a request: ``(request, clip) -> odu.data.media.LazyClip``.
ClipLoader = Callable[[SceneRequest, ClipRef], Any]
#: Called with ``(index, generation)`` as each request finishes (e.g. to cache it at once).
OnDone = Callable[[int, "Generation"], None]


@dataclass(frozen=True, slots=True)
class SceneBatch:
    """One :meth:`Backend.generate` call: the requests (at least one), how to load their clips, the
    task's generation settings (lm-eval's ``gen_kwargs``) and what to call as each request finishes."""

    requests: list[SceneRequest]
    load_clip: ClipLoader | None
    gen_kwargs: Mapping[str, Any]
    on_done: OnDone | None


class Backend:
    """Turns scene requests into generations. Implementations never raise for one bad scene.

    A backend implements :meth:`generate_batch` or, when it answers each scene from the request
    alone (no media, no generation settings, nothing slow: the floor baselines, replayed outputs),
    only :meth:`answer`.
    """

    #: Short name recorded in run cards ("openai", "replay", "never", ...).
    name: str = "backend"

    def generate(
        self,
        requests: Sequence[SceneRequest],
        load_clip: ClipLoader | None = None,
        gen_kwargs: Mapping[str, Any] | None = None,
        on_done: OnDone | None = None,
    ) -> list[Generation]:
        """One generation per request, in order.

        ``load_clip`` fetches media when it is needed; ``gen_kwargs`` are the task's generation
        settings in lm-eval's vocabulary (``max_gen_toks``, ``temperature``, ``do_sample``,
        ``until``), applied by backends that generate; slow backends call ``on_done`` as each
        request finishes, so that a killed run keeps what was done. Backends implement
        :meth:`generate_batch`, or :meth:`answer` alone.
        """
        batch = SceneBatch(list(requests), load_clip, gen_kwargs or {}, on_done)
        return self.generate_batch(batch) if batch.requests else []

    def generate_batch(self, batch: SceneBatch) -> list[Generation]:
        """:meth:`generate` of a batch of at least one request; by default :meth:`answer` per request."""
        return [self.answer(r) for r in batch.requests]

    def answer(self, request: SceneRequest) -> Generation:
        """The answer to one request from the request alone (backends that need nothing else)."""
        raise NotImplementedError(f"{type(self).__name__} implements neither generate() nor answer()")

    def info(self) -> dict[str, Any]:
        """Settings for the run card (server, model, media handling, generation); never secrets."""
        return {"backend": self.name}

    def dry_check(self, requests: Sequence[SceneRequest]) -> list[str]:
        """What the real run would refuse of ``requests``, found without sending anything
        (``--dry-run``): a setup it refuses raises the real run's ``ValueError``; each scene it would
        refuse gives its real inference error. By default nothing."""
        return []

    def pitfalls(self) -> list[str]:
        """Known ways these settings make results incomparable with Table 3 (run card)."""
        return []

    def add_counts(self, counts: Mapping[str, Any]) -> None:
        """Add the counters of another process's share of the run (its :meth:`info` ``"stats"``) to
        this backend's, so that :meth:`info` and :meth:`pitfalls` speak for the whole run (one backend
        per rank under ``torchrun``). By default nothing: a backend that counts nothing."""

    def close(self) -> None:
        """Release clients, models, files."""


__all__ = [
    "INFERENCE_ERROR_MARK",
    "MODEL_FRAMES_FPS",
    "MODEL_MAX_TOKENS",
    "MODEL_MIN_SAFE_MAX_TOKENS",
    "TRUNCATED_ISSUE",
    "TRUNCATED_MARK",
    "Backend",
    "ClipLoader",
    "Decoding",
    "Generation",
    "OnDone",
    "SceneBatch",
    "SceneRequest",
    "decode_output",
    "encode_output",
]
