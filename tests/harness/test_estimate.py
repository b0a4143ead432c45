"""The dry run's arithmetic (``odu/runs/estimate.py``), term by term as docs/harness.md states it: one
request per scene and remote model, text at ``CHARS_PER_TOKEN``, audio at each provider's rate,
frames (rounded up, capped per clip) only for audio-visual clips sent as media, ASR text at
``TRANSCRIPT_TOKENS_PER_S`` instead of media for text-only scenes, one judge request per
reference segment with key points of each positive scene (once per scene, for every judged
model), and money per million tokens."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from support.cli import argv

from odu.cli import main
from odu.core.schema import Scene, scene_from_dict
from odu.data.sample import sample_dir
from odu.runs.estimate import (
    CHARS_PER_TOKEN,
    JUDGE_OUTPUT_TOKENS_PER_POINT,
    MODEL_OUTPUT_TOKENS,
    PROVIDER_RATES,
    TRANSCRIPT_TOKENS_PER_S,
    Tally,
    TokenRates,
    _judge_chars,
    _prompt_chars,
    estimate,
)

RECORDS = [json.loads(line) for line in (sample_dir() / "scenes.jsonl").read_text(encoding="utf-8").splitlines()]
#: One provider with round numbers: 10 audio tokens/s, 2 frames/s of 100 tokens, at most 5 frames a clip.
RATES = (TokenRates("p", audio_per_s=10.0, frames_per_s=2.0, tokens_per_frame=100.0, max_frames=5, source="test"),)


def scene(modality: str, label: str, durations: tuple[float, ...]) -> Scene:
    record = next(r for r in RECORDS if r["modality"] == modality and r["label"] == label)
    base = scene_from_dict(record)
    clips = tuple(dataclasses.replace(c, duration=d) for c, d in zip(base.clips, durations))
    assert len(clips) == len(durations), "the sample scene has fewer clips than asked"
    return dataclasses.replace(base, clips=clips)


AO = scene("audio-only", "positive", (2.0,))
AV = scene("audio-visual", "negative", (1.3,))  # 2.6 frames at 2 fps: 3 frames


def test_an_audio_only_request_is_text_and_audio_at_the_providers_rate() -> None:
    est = estimate([(AO, False)], models=3, judge_runs=0, rates=RATES)
    tally = est.providers["p"]
    text = _prompt_chars(AO) / CHARS_PER_TOKEN
    assert tally.requests == 3 and est.model_requests == 3 and est.scenes == 1
    assert tally.input_tokens == pytest.approx(3 * (text + 2.0 * 10.0))
    assert tally.output_tokens == 3 * MODEL_OUTPUT_TOKENS
    assert (est.audio_s, est.video_s, est.text_only_s) == (2.0, 0.0, 0.0)
    assert est.text_tokens == pytest.approx(3 * text)


def test_frames_are_rounded_up_per_clip_and_added_for_audio_visual_clips() -> None:
    est = estimate([(AV, False)], models=1, judge_runs=0, rates=RATES)
    text = _prompt_chars(AV) / CHARS_PER_TOKEN
    assert est.providers["p"].input_tokens == pytest.approx(text + 1.3 * 10.0 + math.ceil(1.3 * 2.0) * 100.0)
    assert (est.audio_s, est.video_s) == (0.0, 1.3)


def test_frames_are_capped_per_clip() -> None:
    long = dataclasses.replace(AV, clips=(dataclasses.replace(AV.clips[0], duration=30.0),))
    est = estimate([(long, False)], models=1, judge_runs=0, rates=RATES)
    text = _prompt_chars(long) / CHARS_PER_TOKEN
    assert est.providers["p"].input_tokens == pytest.approx(text + 30.0 * 10.0 + 5 * 100.0)
    uncapped = (dataclasses.replace(RATES[0], max_frames=None),)
    assert estimate([(long, False)], rates=uncapped, judge_runs=0).providers["p"].input_tokens == pytest.approx(
        text + 30.0 * 10.0 + 60 * 100.0
    )


def test_a_text_only_scene_sends_asr_text_instead_of_media_and_no_frames() -> None:
    est = estimate([(AV, True)], models=1, judge_runs=0, rates=RATES)
    text = _prompt_chars(AV) / CHARS_PER_TOKEN
    assert est.providers["p"].input_tokens == pytest.approx(text + 1.3 * TRANSCRIPT_TOKENS_PER_S)
    assert (est.audio_s, est.video_s, est.text_only_s) == (0.0, 0.0, 1.3)


def test_the_judge_asks_once_per_segment_with_key_points_of_each_positive_scene() -> None:
    segments = [s for s in AO.annotation().segments if s.key_points]
    est = estimate([(AO, False), (AO, True), (AV, False)], models=1, judge_runs=2, rates=RATES)
    assert est.judge.requests == 2 * len(segments)  # the repeated scene is cached; the negative asks nothing
    assert est.judge.output_tokens == 2 * JUDGE_OUTPUT_TOKENS_PER_POINT * sum(len(s.key_points) for s in segments)
    chars = sum(c for c, _ in _judge_chars(AO, "scene"))
    assert est.judge.input_tokens == pytest.approx(2 * chars / CHARS_PER_TOKEN)
    assert estimate([(AO, False)], judge_runs=0, rates=RATES).judge.requests == 0


def test_segments_without_key_points_need_no_judge() -> None:
    bare = dataclasses.replace(
        AO,
        annotations={
            k: dataclasses.replace(a, segments=tuple(dataclasses.replace(s, key_points=()) for s in a.segments))
            for k, a in AO.annotations.items()
        },
    )
    assert list(_judge_chars(bare, "scene")) == []


def test_cost_is_per_million_tokens_and_none_without_prices() -> None:
    tally = Tally(requests=1, input_tokens=2_000_000, output_tokens=500_000)
    assert tally.cost(None, None) is None
    assert tally.cost(3.0, None) == pytest.approx(6.0)
    assert tally.cost(None, 10.0) == pytest.approx(5.0)
    assert tally.cost(3.0, 10.0) == pytest.approx(11.0)


def test_judge_prices_default_to_the_models() -> None:
    est = estimate([(AO, False)], judge_runs=1, rates=RATES)
    data = est.as_dict(2.0, 8.0)
    assert data["prices_per_million"]["judge"] == {"in": 2.0, "out": 8.0}
    expected = (est.judge.input_tokens * 2.0 + est.judge.output_tokens * 8.0) / 1e6
    assert data["judge"]["cost"] == pytest.approx(expected, abs=1e-6)  # rounded to 6 decimals
    assert est.as_dict(2.0, 8.0, judge_price_in=0.5)["prices_per_million"]["judge"] == {"in": 0.5, "out": 8.0}


def test_the_table_rows_are_the_documented_providers() -> None:
    assert [r.name for r in PROVIDER_RATES] == ["qwen3-omni", "qwen2.5-omni", "gemini", "openai"]
    assert {r.name: r.audio_per_s for r in PROVIDER_RATES} == {
        "qwen3-omni": 12.5,
        "qwen2.5-omni": 25.0,
        "gemini": 32.0,
        "openai": 10.0,
    }


def test_eval_dry_run_counts_remote_models_and_judges_every_model(capsys, tmp_path) -> None:
    """``--model openai,never``: one remote model sends requests, the judge reads both models'
    outputs; ``--limit`` counts the first N scenes of each task."""
    args = argv(
        "eval",
        sample=True,
        model="openai,never",
        tasks="odu_ao",
        model_args="model=m,base_url=http://127.0.0.1:9/v1",
        judge="openai:j",
        judge_base_url="http://127.0.0.1:9/v1",
        limit=3,
        dry_run=True,
        json=True,
        price_in=1.0,
        out=tmp_path / "o",
    )
    assert main(args) == 0
    est = json.loads(capsys.readouterr().out)
    ao = [r for r in RECORDS if r["modality"] == "audio-only"][:3]
    assert est["scenes"] == 3 and est["model_requests"] == 3
    segments = sum(
        1
        for r in ao
        if r["label"] == "positive"
        for s in r["annotations"][r["language"]]["evaluation_targets"]["segments"]
        if s["key_points"]
    )
    assert est["judge"]["requests_at_most"] == 2 * segments
    assert est["prices_per_million"]["judge"] == {"in": 1.0, "out": None}
    assert not (tmp_path / "o").exists()


def test_a_dry_run_needs_no_api_key_and_says_the_real_run_does(capsys, tmp_path, monkeypatch) -> None:
    """docs/harness.md's dry run (OpenAI's own server, no ``base_url``) with no key set: the estimate, the
    checks, a line naming the key the real run needs, exit 0; the real run still stops at once without it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model_args = "model=gpt-4o-audio-preview,video_mode=frames,audio_in_video=separate"
    args = dict(sample=True, model="openai", model_args=model_args, tasks="odu_ao", out=tmp_path / "o")
    assert main(argv("eval", judge="openai:gpt-5.4-mini", dry_run=True, price_in=2.5, price_out=10.0, **args)) == 0
    out, err = capsys.readouterr()
    assert out.startswith("dry run: nothing sent. 9 scene(s) per model, 9 model request(s) in all")
    assert err.splitlines()[-1] == (
        "odu-bench eval: gpt-4o-audio-preview: model API key: environment variable OPENAI_API_KEY is not set: "
        "the real run needs it"
    )
    assert main(argv("eval", limit=1, **args)) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "odu-bench eval: error: model API key: environment variable OPENAI_API_KEY is not set"
    )
    assert not (tmp_path / "o").exists()
