"""What a run will cost before it is run (``odu-bench eval --dry-run``): requests, media seconds,
estimated input/output tokens per provider and, given prices per million tokens, money.

Nothing is sent and no media is decoded: the numbers come from the scenes (clip durations, the
App D.1 / F.1 prompt text, the reference segments) and the documented token rates below, which are
the only place these rates live. They are estimates: text is counted at :data:`CHARS_PER_TOKEN`,
frames at :data:`ASSUMED_FRAME_SIZE`, outputs at fixed per-request figures, and the judge count is
an upper bound (one request per reference segment; App A.3 Eq. 2 asks only for matched ones).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.constants import AUDIO_ONLY, AUDIO_VISUAL
from ..core.prompts import ClipRef, Turn, build_chat
from ..core.schema import Scene

#: Characters per text token, the providers' rule of thumb ("a token is about 4 characters":
#: Gemini, https://ai.google.dev/gemini-api/docs/tokens; OpenAI's tokenizer guide says the same).
CHARS_PER_TOKEN = 4.0
#: Frame size assumed where a rate depends on it (Qwen's 28x28-pixel patches, OpenAI's 512-px tiles).
ASSUMED_FRAME_SIZE = (640, 360)
#: Tokens of ASR transcript per second of speech (text-only tasks: App D.2), about 2.5 words/s.
TRANSCRIPT_TOKENS_PER_S = 3.5
#: Output tokens assumed per model answer (the App F.1 JSON of one scene).
MODEL_OUTPUT_TOKENS = 400
#: Output tokens assumed per key point in a judge reply (the App F.4 verdict with its reason).
JUDGE_OUTPUT_TOKENS_PER_POINT = 40


@dataclass(frozen=True)
class TokenRates:
    """How one provider's models count media input tokens, and where that is documented."""

    name: str
    audio_per_s: float
    frames_per_s: float
    tokens_per_frame: float
    max_frames: int | None
    source: str


def _patches(size: tuple[int, int], patch: int) -> int:
    return math.ceil(size[0] / patch) * math.ceil(size[1] / patch)


#: The providers of Table 3's systems (rows of the dry-run table).
PROVIDER_RATES: tuple[TokenRates, ...] = (
    TokenRates(
        "qwen3-omni",
        audio_per_s=12.5,  # AuT audio encoder: 12.5 Hz token rate (Qwen3-Omni Technical Report, Sec. 2.2)
        frames_per_s=2.0,  # qwen-omni-utils default FPS = 2.0
        tokens_per_frame=_patches(ASSUMED_FRAME_SIZE, 28) / 2,  # 28x28 px per token, 2 frames per temporal patch
        max_frames=None,
        source="Qwen3-Omni Technical Report (AuT 12.5 Hz); qwen-omni-utils (2 fps, 28x28-px patches, temporal patch 2)",
    ),
    TokenRates(
        "qwen2.5-omni",
        audio_per_s=25.0,  # one audio token per 40 ms (Qwen2.5-Omni config: position_id_per_seconds = 25)
        frames_per_s=2.0,
        tokens_per_frame=_patches(ASSUMED_FRAME_SIZE, 28) / 2,
        max_frames=None,
        source="Qwen2.5-Omni Technical Report / HF config (25 audio tokens/s); qwen-omni-utils (video as above)",
    ),
    TokenRates(
        "gemini",
        audio_per_s=32.0,  # "each second of audio as 32 tokens"
        frames_per_s=1.0,  # video sampled at 1 frame per second
        tokens_per_frame=258.0,  # 258 tokens per frame at the default media resolution
        max_frames=None,
        source="https://ai.google.dev/gemini-api/docs/tokens (audio 32 tokens/s; video 1 fps, 258 tokens/frame)",
    ),
    TokenRates(
        "openai",
        audio_per_s=10.0,  # "1 token per 100 ms of audio" in user messages
        frames_per_s=2.0,  # no video input: frames mode (odu.models.base.MODEL_FRAMES_FPS)
        tokens_per_frame=85 + 170 * _patches(ASSUMED_FRAME_SIZE, 512),  # detail auto: 85 + 170 per 512-px tile
        max_frames=64,  # odu.models.openai_omni.MODEL_MAX_FRAMES per clip
        source="https://developers.openai.com/api/docs/guides/realtime-costs (audio); OpenAI vision guide (tiles)",
    ),
)


@dataclass
class Tally:
    """Requests and tokens of one side of a run (the model on one provider, or the judge)."""

    requests: int = 0
    input_tokens: float = 0.0
    output_tokens: float = 0.0

    def cost(self, price_in: float | None, price_out: float | None) -> float | None:
        """Money at ``price_in`` / ``price_out`` per million tokens (None without prices)."""
        if price_in is None and price_out is None:
            return None
        return (self.input_tokens * (price_in or 0.0) + self.output_tokens * (price_out or 0.0)) / 1e6


@dataclass
class Estimate:
    """The dry run of a set of scenes (:func:`estimate`)."""

    scenes: int = 0
    model_requests: int = 0
    audio_s: float = 0.0  # seconds of audio-only clips
    video_s: float = 0.0  # seconds of audio-visual clips (their audio track included)
    text_only_s: float = 0.0  # seconds of speech sent as ASR text
    text_tokens: float = 0.0  # prompt text per request, summed
    providers: dict[str, Tally] = field(default_factory=dict)
    judge: Tally = field(default_factory=Tally)

    def as_dict(self, price_in: float | None = None, price_out: float | None = None, **judge_prices: Any) -> dict:
        """The estimate as JSON-ready data (costs when prices are given)."""
        jin, jout = judge_prices.get("judge_price_in", price_in), judge_prices.get("judge_price_out", price_out)
        return {
            "scenes": self.scenes,
            "model_requests": self.model_requests,
            "media_seconds": {
                "audio_only": round(self.audio_s, 3),
                "audio_visual": round(self.video_s, 3),
                "text_only_speech": round(self.text_only_s, 3),
            },
            "providers": {
                name: {
                    "requests": t.requests,
                    "input_tokens": round(t.input_tokens),
                    "output_tokens": round(t.output_tokens),
                    "cost": _rounded(t.cost(price_in, price_out)),
                }
                for name, t in self.providers.items()
            },
            "judge": {
                "requests_at_most": self.judge.requests,
                "input_tokens": round(self.judge.input_tokens),
                "output_tokens": round(self.judge.output_tokens),
                "cost": _rounded(self.judge.cost(jin, jout)),
            },
            "prices_per_million": {
                "model": {"in": price_in, "out": price_out},
                "judge": {"in": jin, "out": jout},
            },
            "rates": {
                r.name: {
                    "audio_tokens_per_s": r.audio_per_s,
                    "frames_per_s": r.frames_per_s,
                    "tokens_per_frame": r.tokens_per_frame,
                    "source": r.source,
                }
                for r in PROVIDER_RATES
            },
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _frames(duration: float, rates: TokenRates) -> float:
    frames = math.ceil(duration * rates.frames_per_s)
    return min(frames, rates.max_frames) if rates.max_frames else frames


def _prompt_chars(scene: Scene) -> int:
    """Characters of the request's text parts (App F.1/F.2 instruction, D.1 labels, replies)."""
    turns = [Turn(ClipRef(i, c.id, "0" * 64, int(c.duration * 1000)), c.replies) for i, c in enumerate(scene.clips)]
    return sum(len(p.text or "") for p in build_chat(turns, scene.modality).parts if p.clip is None)


def _judge_chars(scene: Scene, annotation_language: str) -> Iterable[tuple[int, int]]:
    """(characters, key points) of each judge request the scene may need (one per reference segment)."""
    from ..judge.prompt import build_messages

    if not scene.is_positive:
        return []
    out = []
    for segment in scene.annotation(annotation_language).segments:
        if segment.key_points:  # the candidate is unknown before inference: the reference stands in
            messages = build_messages(f"{segment.transcript}\n{segment.structured_intent}", segment.key_points)
            out.append((sum(len(m["content"]) for m in messages), len(segment.key_points)))
    return out


def estimate(
    scenes: Iterable[tuple[Scene, bool]],
    models: int = 1,
    judge_runs: int = 1,
    annotation_language: str = "scene",
    rates: Sequence[TokenRates] = PROVIDER_RATES,
) -> Estimate:
    """The dry run of ``scenes`` (``(scene, text_only)`` per request of one model; a scene in two
    tasks counts twice) sent to ``models`` remote models, whose outputs (and those of any other
    model of the run: ``judge_runs`` in all, 0 without an LLM judge) an LLM judge reads."""
    out = Estimate(providers={r.name: Tally() for r in rates})
    judged: set[str] = set()
    for scene, text_only in scenes:
        out.scenes += 1
        out.model_requests += models
        seconds = sum(c.duration for c in scene.clips)
        text = _prompt_chars(scene) / CHARS_PER_TOKEN
        out.text_tokens += text * models
        if text_only:
            out.text_only_s += seconds
        elif scene.modality == AUDIO_VISUAL:
            out.video_s += seconds
        elif scene.modality == AUDIO_ONLY:
            out.audio_s += seconds
        for r in rates:
            tally = out.providers[r.name]
            media = seconds * TRANSCRIPT_TOKENS_PER_S if text_only else seconds * r.audio_per_s
            if scene.modality == AUDIO_VISUAL and not text_only:
                media += sum(_frames(c.duration, r) for c in scene.clips) * r.tokens_per_frame
            tally.requests += models
            tally.input_tokens += (text + media) * models
            tally.output_tokens += MODEL_OUTPUT_TOKENS * models
        if judge_runs and scene.scene_id not in judged:  # the judge caches: one request per segment and text
            for chars, points in _judge_chars(scene, annotation_language):
                out.judge.requests += judge_runs
                out.judge.input_tokens += chars / CHARS_PER_TOKEN * judge_runs
                out.judge.output_tokens += points * JUDGE_OUTPUT_TOKENS_PER_POINT * judge_runs
        judged.add(scene.scene_id)
    return out


def render(est: Mapping[str, Any]) -> str:
    """The dry run as text for people (``est``: :meth:`Estimate.as_dict`)."""
    media = est["media_seconds"]
    lines = [
        f"dry run: nothing sent. {est['scenes']} scene(s) per model, {est['model_requests']} model request(s) in all",
        f"media: {media['audio_visual']:.1f} s audio-visual, {media['audio_only']:.1f} s audio-only, "
        f"{media['text_only_speech']:.1f} s as ASR text",
        "",
        f"{'provider':<14}{'audio tok/s':>12}{'tok/frame':>10}{'fps':>5}{'requests':>10}"
        f"{'input tokens':>15}{'output tokens':>15}{'cost':>12}",
    ]
    for name, p in est["providers"].items():
        r = est["rates"][name]
        lines.append(
            f"{name:<14}{r['audio_tokens_per_s']:>12g}{r['tokens_per_frame']:>10g}{r['frames_per_s']:>5g}"
            f"{p['requests']:>10}{p['input_tokens']:>15,}{p['output_tokens']:>15,}{_money(p['cost']):>12}"
        )
    j = est["judge"]
    lines.append(
        f"{'judge':<14}{'':>12}{'':>10}{'':>5}{j['requests_at_most']:>10}"
        f"{j['input_tokens']:>15,}{j['output_tokens']:>15,}{_money(j['cost']):>12}"
    )
    priced = j["cost"] is not None or any(p["cost"] is not None for p in est["providers"].values())
    lines.append("")
    lines.append(
        "judge requests are an upper bound (one per reference segment); tokens are estimates "
        "(docs/harness.md#preflight-dry-run-shards-credentials); "
        + (
            "cost at the prices given, per million tokens"
            if priced
            else "cost needs --price-in/--price-out (per million tokens)"
        )
    )
    return "\n".join(lines)


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:,.4f}"


__all__ = [
    "ASSUMED_FRAME_SIZE",
    "CHARS_PER_TOKEN",
    "JUDGE_OUTPUT_TOKENS_PER_POINT",
    "MODEL_OUTPUT_TOKENS",
    "PROVIDER_RATES",
    "TRANSCRIPT_TOKENS_PER_S",
    "Estimate",
    "Tally",
    "TokenRates",
    "estimate",
    "render",
]
