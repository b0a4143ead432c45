"""The bundled sample (odu/data/sample, built by tools/make_sample.py) and synthetic media for release
records (tools/synth.py)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from make_sample import MANIFEST, build_sample, espeak_version, generator_versions
from synth import synthesize_media

from odu.core.constants import AUDIO_ONLY, AUDIO_VISUAL
from odu.core.schema import Scene, load_scenes, scene_to_dict
from odu.data.media import decode_audio, decode_frames, probe
from odu.data.release import MEDIA_DURATION_TOLERANCE_S
from odu.data.sample import sample_dir
from odu.report.taxonomy import NEGATIVE_REASONS, NEGATIVE_SIGNALS

SAMPLE = sample_dir()
ID_PATTERN = re.compile(r"^(av|ao)(p|n)_(gen|hr)_9\d{5}$")


@pytest.fixture(scope="module")
def scenes() -> list[Scene]:
    return load_scenes(SAMPLE / "scenes.jsonl")


def test_sample_loads_with_the_schema(scenes: list[Scene]) -> None:
    assert 16 <= len(scenes) <= 24
    records = [json.loads(line) for line in (SAMPLE / "scenes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [scene_to_dict(s) for s in scenes] == records  # nothing dropped or reshaped on the way in
    for s in scenes:
        kind, label, source = ID_PATTERN.match(s.scene_id).groups()  # type: ignore[union-attr]
        assert (kind, label, source) == (
            "av" if s.modality == AUDIO_VISUAL else "ao",
            "p" if s.is_positive else "n",
            "hr" if s.source == "human-recorded" else "gen",
        )


def test_media_lasts_the_recorded_duration(scenes: list[Scene]) -> None:
    for s in scenes:
        for clip in s.clips:
            assert clip.src == f"media/{s.scene_id}__clip_{clip.id}{Path(clip.src).suffix}"
            info = probe(SAMPLE / clip.src)
            assert abs(info.duration_s - clip.duration) <= MEDIA_DURATION_TOLERANCE_S, (s.scene_id, clip.id)
            assert info.has_audio and info.has_video == (s.modality == AUDIO_VISUAL), (s.scene_id, clip.id)


def _peak(audio: np.ndarray, start: int, end: int) -> float:
    return float(np.abs(audio[max(0, start) : end]).max())


def test_segments_lie_in_the_final_clip_on_speech(scenes: list[Scene]) -> None:
    """Annotated spans sit inside the final clip and on the synthesised speech: the audio at each
    span's edges is louder than just outside it."""
    for s in scenes:
        final = s.final_clip
        audio = decode_audio(SAMPLE / final.src)
        en, zh = s.annotation("en").segments, s.annotation("zh").segments
        assert [(g.start_ms, g.end_ms, g.transcript, [k.qid for k in g.key_points]) for g in en] == [
            (g.start_ms, g.end_ms, g.transcript, [k.qid for k in g.key_points]) for g in zh
        ]
        for g in en:
            assert 0 <= g.start_ms < g.end_ms <= final.duration * 1000, s.scene_id
            i, j = g.start_ms * 16, g.end_ms * 16  # samples at 16 kHz
            assert _peak(audio, i, i + 800) > _peak(audio, i - 1600, i - 160), (s.scene_id, "start")
            assert _peak(audio, j - 800, j) > _peak(audio, j + 160, j + 1600), (s.scene_id, "end")


def test_video_is_drawn(scenes: list[Scene]) -> None:
    s = next(s for s in scenes if s.modality == AUDIO_VISUAL)
    frames = decode_frames(SAMPLE / s.final_clip.src, fps=1)
    assert len(frames) == int(np.ceil(s.final_clip.duration))
    assert frames.frames.std() > 10  # shapes, not a flat colour


def test_sample_covers_the_required_variety(scenes: list[Scene]) -> None:
    cells = Counter((s.modality, s.language, s.label) for s in scenes)
    for modality in (AUDIO_VISUAL, AUDIO_ONLY):
        for language in ("en", "zh"):
            assert cells[(modality, language, "positive")] >= 1, (modality, language)
        assert sum(cells[(modality, lang, "negative")] for lang in ("en", "zh")) >= 2, modality
    negatives = [s for s in scenes if not s.is_positive]
    assert {s.negative_reason for s in negatives} >= set(NEGATIVE_REASONS)
    assert {s.negative_signal for s in negatives} >= set(NEGATIVE_SIGNALS)
    assert any(s.source == "human-recorded" and not s.negative_reason for s in negatives)  # as in the release
    assert {s.source for s in scenes} == {"generated", "human-recorded"}
    for modality in (AUDIO_VISUAL, AUDIO_ONLY):
        mine = [s for s in scenes if s.modality == modality]
        assert any(len(s.clips) > 1 and all(c.replies for c in s.clips[:-1]) for s in mine), modality
        assert any(len(s.annotation().segments) > 1 for s in mine), modality
        assert {Path(c.src).suffix for s in mine for c in s.clips} <= (
            {".mp4"} if modality == AUDIO_VISUAL else {".wav", ".flac"}
        )
    assert any(len(s.clips) >= 3 for s in scenes)
    points = [k for s in scenes for g in s.annotation().segments for k in g.key_points]
    assert {k.source for k in points} >= {
        "intent",
        "required_context.visual",
        "required_context.audio",
        "required_context.dialogue_history",
        "required_context.user_emotion",
        "required_context.user_activity",
        "required_context.scene_condition",
    }
    assert {k.tiers for k in points} == {("T1",), ("T1", "T2")}
    assert {g.user_gender for s in scenes for g in s.annotation().segments} == {"male", "female", "unknown"}
    assert {g.user_in_frame for s in scenes for g in s.annotation().segments if s.modality == AUDIO_VISUAL} == {
        True,
        False,
    }
    for s in scenes:
        assert set(s.annotations) == {"en", "zh"}
        assert [a.axis for a in s.axes] == [f"axis{i}" for i in range(1, 7)]
        if s.is_positive:
            assert all(a.code for a in s.axes) and [a.axis for a in s.taxonomy_axes] == [
                "axis1",
                "axis2",
                "axis3",
                "axis4",
            ]
            assert all(
                g.required_context or all(k.source == "intent" for k in g.key_points) for g in s.annotation().segments
            )
        else:
            assert s.taxonomy_axes == () and s.axis_code("axis4") and s.axis_code("axis6")
    assert {s.axis_code("axis1") for s in scenes if s.modality == AUDIO_ONLY and s.is_positive} == {"1.1", "1.2"}


def test_manifest_matches_the_files() -> None:
    manifest = json.loads((SAMPLE / MANIFEST).read_text())
    files = {p.relative_to(SAMPLE).as_posix() for p in SAMPLE.rglob("*") if p.is_file() and p.name != MANIFEST}
    assert set(manifest["sha256"]) == files
    for name, digest in manifest["sha256"].items():
        assert hashlib.sha256((SAMPLE / name).read_bytes()).hexdigest() == digest, name
    media_bytes = sum((SAMPLE / n).stat().st_size for n in files if n.startswith("media/"))
    assert media_bytes <= 4_000_000


#: Set by ``.ci/run`` once it has installed espeak-ng: the rebuild below must then run, not skip.
REBUILD_REQUIRED = os.environ.get("ODU_REQUIRE_SAMPLE_REBUILD") == "1"


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The sample rebuilt by ``python tools/make_sample.py`` with the committed manifest's seed, and
    that manifest. Needs espeak-ng at the manifest's version (the speech, hence every duration and
    segment time, is its output); without it the tests skip, or fail under ODU_REQUIRE_SAMPLE_REBUILD=1."""
    manifest = json.loads((SAMPLE / MANIFEST).read_text())
    version = espeak_version()
    missing = (
        "espeak-ng not installed (Debian: apt-get install espeak-ng)"
        if version is None
        else f"espeak-ng is {version!r}, the sample was made with {manifest['versions']['espeak_ng']!r}"
        if version != manifest["versions"]["espeak_ng"]
        else None
    )
    if missing and REBUILD_REQUIRED:
        pytest.fail(f"ODU_REQUIRE_SAMPLE_REBUILD=1 but the sample cannot be rebuilt: {missing}")
    if missing:
        pytest.skip(missing)
    out = tmp_path_factory.mktemp("rebuilt-sample")
    build_sample(out, seed=manifest["seed"])
    return out, manifest


def test_regenerating_reproduces_the_sample_records(rebuilt: tuple[Path, dict]) -> None:
    """The rebuilt ``scenes.jsonl`` is the committed one byte for byte and the same files are made:
    what the records say (durations, segment times, transcripts) comes from the generator, not from
    the manifest it writes."""
    out, manifest = rebuilt
    assert (out / "scenes.jsonl").read_bytes() == (SAMPLE / "scenes.jsonl").read_bytes()
    committed = sorted(p.relative_to(SAMPLE).as_posix() for p in SAMPLE.rglob("*") if p.is_file())
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == committed
    assert sorted(json.loads((out / MANIFEST).read_text())["sha256"]) == sorted(manifest["sha256"])


def test_regenerating_reproduces_the_sample_bytes(rebuilt: tuple[Path, dict]) -> None:
    """Every rebuilt file equals the committed one, compared file by file (not through the manifest),
    when the media libraries are the manifest's versions too (their encoders shape the bytes)."""
    out, manifest = rebuilt
    if generator_versions() != manifest["versions"]:
        pytest.skip(
            f"media library versions differ from the manifest's: {generator_versions()} vs {manifest['versions']}"
        )
    differing = sorted(
        p.relative_to(SAMPLE).as_posix()
        for p in SAMPLE.rglob("*")
        if p.is_file() and p.name != MANIFEST and (out / p.relative_to(SAMPLE)).read_bytes() != p.read_bytes()
    )
    assert not differing, f"files that differ from the committed sample: {differing}"
    assert json.loads((out / MANIFEST).read_text()) == manifest


# --- synthesize_media ------------------------------------------------------------------------------


def test_synthesized_media_for_the_demo_records(demo_release: Path) -> None:
    """The session fixture gave the 27 real demo records media; every clip lasts its duration."""
    scenes = load_scenes(demo_release / "scenes.json")
    assert len(scenes) == 27
    for s in scenes:
        for clip in s.clips:
            info = probe(demo_release / clip.src)
            assert abs(info.duration_s - clip.duration) <= 0.002, (s.scene_id, clip.id)
            assert info.has_video == (s.modality == AUDIO_VISUAL) and info.has_audio
    ao = next(s for s in scenes if s.modality == AUDIO_ONLY)
    assert len(decode_audio(demo_release / ao.final_clip.src, 24_000)) == round(ao.final_clip.duration * 24_000)


def test_synthesize_media_is_deterministic_and_safe(tmp_path: Path) -> None:
    record = {
        "scene_id": "avp_gen_999999",
        "modality": AUDIO_VISUAL,
        "language": "en",
        "clips": [
            {"id": "v1", "src": "media/a.mp4", "duration": 1.234},
            {"id": "v2", "src": "media/b.m4a", "duration": 0.8},
            {"id": "v3", "src": "media/c.flac", "duration": 2.0},
        ],
        "annotations": {
            "en": {"evaluation_targets": {"has_demand": True, "segments": [{"start_ms": 200, "end_ms": 1500}]}}
        },
    }
    first = synthesize_media([record], tmp_path / "one")
    second = synthesize_media([record], tmp_path / "two")
    assert [p.read_bytes() for p in first.values()] == [p.read_bytes() for p in second.values()]
    assert [round(probe(p).duration_s, 3) for p in first.values()] == [1.234, 0.8, 2.0]
    assert not probe(first[("avp_gen_999999", "v2")]).has_video
    for src, message in (
        ("../escape.mp4", "leaves the output folder"),
        ("media/x.avi", "suffix '.avi'"),
        ("", "no 'src'"),
    ):
        bad = {**record, "clips": [{"id": "v1", "src": src, "duration": 1.0}]}
        with pytest.raises(ValueError, match=message):
            synthesize_media([bad], tmp_path / "bad")
