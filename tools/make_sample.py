"""Build the bundled offline sample: a small synthetic ODU-Bench release we write ourselves.

21 scenes in the release schema (``odu/data/sample/scenes.jsonl`` + ``media/``): audio-visual and
audio-only, English and Mandarin, positives and negatives (every invalidation reason and signal
type of App B.3), multi-turn scenes with assistant replies, multi-segment scenes, generated and
human-recorded-style sources, all six taxonomy axes, key points with evidence sources and tiers,
and both ``annotations.en`` and ``annotations.zh``. Scene ids are in the 9xxxxx range so they can
never be mistaken for real benchmark ids. The data is ours and synthetic: the speech is
``espeak-ng``, the "video" is drawn shapes; it exercises the toolkit, it measures nothing.

The scenes are data, in ``sample_spec.yaml`` beside this file (:func:`load_spec`). Every spoken
line is synthesised, trimmed of silence and placed in its clip; the reference segments'
``start_ms``/``end_ms`` are the placed lines' measured bounds, so the annotations match the media.
Build tooling, outside the runtime package (which only locates the result:
:mod:`odu.data.sample`). Regenerating needs Debian's ``espeak-ng`` (voices ``en`` and ``cmn``)::

    python tools/make_sample.py --out odu/data/sample
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import numpy as np
import soundfile as sf
import yaml
from synth import Shape, VideoSettings, draw_frame, encode_mp4, person, write_audio_file

from odu.core.constants import AUDIO_ONLY, AUDIO_VISUAL
from odu.data.media import DEFAULT_AUDIO_SAMPLE_RATE, decode_audio
from odu.data.sample import sample_dir
from odu.report.taxonomy import CHALLENGE_CATEGORIES

SAMPLE_RATE = DEFAULT_AUDIO_SAMPLE_RATE
VIDEO = VideoSettings()  # 192x108, 8 fps, small H.264 + 32 kb/s AAC
#: espeak-ng words per minute: its default for English; Mandarin reads one syllable per "word",
#: so it runs faster to sound like ordinary speech.
SPEECH_WPM = {"en": 175, "cmn": 220}
SILENCE_THRESHOLD = 0.01
DEFAULT_SEED = 0
#: Sample scene numbers are offset into the 9xxxxx range, unused by the real benchmark.
SCENE_NUMBER_BASE = 900_000
#: Provenance file written next to ``scenes.jsonl``.
MANIFEST = "MANIFEST.json"
#: The scenes, as data.
SPEC_FILE = Path(__file__).resolve().parent / "sample_spec.yaml"

# --- scene specification ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One spoken line: ``at_ms`` from the clip start, or ``gap_ms`` after the previous line.
    ``kind``: "user" (near-field), "other" (another person, further away) or "media" (a TV or
    radio: band-limited and quieter)."""

    text: str
    voice: str
    at_ms: int | None = None
    gap_ms: int = 700
    kind: str = "user"
    gain: float = 0.8


@dataclass(frozen=True)
class Sound:
    """A non-speech event: "beep", "doorbell", "music" or "noise", from ``start_ms`` for ``ms``
    (``ms=None``: until the clip ends)."""

    kind: str
    start_ms: int = 0
    ms: int | None = None


@dataclass(frozen=True)
class ClipSpec:
    lines: tuple[Line, ...]
    replies: tuple[str, ...] = ()
    sounds: tuple[Sound, ...] = ()
    tail_ms: int = 1200


@dataclass(frozen=True)
class Context:
    type: str
    en: str
    zh: str
    why_en: str
    why_zh: str


@dataclass(frozen=True)
class Point:
    source: str  # "intent" or "required_context.<type>"
    en: str
    zh: str

    @property
    def tiers(self) -> list[str]:
        return ["T1"] if self.source == "intent" else ["T1", "T2"]


@dataclass(frozen=True)
class Demand:
    """A reference segment over lines ``lines`` (indices into the final clip's lines)."""

    lines: tuple[int, ...]
    intent_en: str
    intent_zh: str
    gender: str
    context: tuple[Context, ...] = ()
    points: tuple[Point, ...] = ()
    age: str = "adult"
    in_frame: bool | None = None


@dataclass(frozen=True)
class Picture:
    """What the camera sees: static shapes, and the user (and a companion) when in frame."""

    background: tuple[int, int, int]
    shapes: tuple[Shape, ...] = ()
    user_x: float | None = None  # the user is drawn here (mouth moves while the user speaks)
    user_shirt: tuple[int, int, int] = (60, 90, 160)
    other_x: float | None = None  # a second person, talking on "other" lines


@dataclass(frozen=True)
class SceneSpec:
    number: int
    language: str
    modality: str
    source: str  # "generated" | "human-recorded"
    title: str
    axes: tuple[str, str, str, str, str, str]  # codes; "" = not assigned
    clips: tuple[ClipSpec, ...]
    demands: tuple[Demand, ...] = ()
    negative: tuple[str, str, str] | None = None  # reason, signal, explanation ("", "" for none)
    picture: Picture | None = None
    summary: str = ""

    @property
    def scene_id(self) -> str:
        kind = "av" if self.modality == AUDIO_VISUAL else "ao"
        label = "n" if self.negative is not None else "p"
        src = "hr" if self.source == "human-recorded" else "gen"
        return f"{kind}{label}_{src}_{SCENE_NUMBER_BASE + self.number:06d}"


# --- the spec -------------------------------------------------------------------------------------

#: Audio-only Axis 1 codes in the audio-visual vocabulary used by ``taxonomy_axes``.
AO_AXIS1_AS_AV = {"1.1": "1.1", "1.2": "1.3"}


def _picture(raw: dict[str, Any]) -> Picture:
    shapes = tuple(Shape(**{**s, "color": tuple(s["color"])}) for s in raw.get("shapes", ()))
    colors = {k: tuple(raw[k]) for k in ("background", "user_shirt") if k in raw}
    return Picture(**{**raw, **colors, "shapes": shapes})


def _clip(raw: dict[str, Any]) -> ClipSpec:
    return ClipSpec(
        **{
            **raw,
            "lines": tuple(Line(**line) for line in raw["lines"]),
            "replies": tuple(raw.get("replies", ())),
            "sounds": tuple(Sound(**x) for x in raw.get("sounds", ())),
        }
    )


def _demand(raw: dict[str, Any]) -> Demand:
    return Demand(
        **{
            **raw,
            "lines": tuple(raw["lines"]),
            "context": tuple(Context(**c) for c in raw.get("context", ())),
            "points": tuple(Point(**p) for p in raw.get("points", ())),
        }
    )


def _scene(raw: dict[str, Any]) -> SceneSpec:
    fields: dict[str, Any] = {
        **raw,
        "axes": tuple(raw["axes"]),
        "clips": tuple(_clip(c) for c in raw["clips"]),
        "demands": tuple(_demand(d) for d in raw.get("demands", ())),
    }
    if "negative" in raw:
        fields["negative"] = (raw["negative"]["reason"], raw["negative"]["signal"], raw["negative"]["explanation"])
    if "picture" in raw:
        fields["picture"] = _picture(raw["picture"])
    return SceneSpec(**fields)


def load_spec(path: Path = SPEC_FILE) -> tuple[tuple[SceneSpec, ...], dict[int, dict[str, str]]]:
    """The scenes of the spec file and the category names of taxonomy axes 5 and 6 (App B.2)."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    return tuple(_scene(s) for s in raw["scenes"]), {5: raw["axis5"], 6: raw["axis6"]}


SCENES, AXIS_NAMES = load_spec()


def _axis_name(modality: str, axis: int, code: str) -> str:
    if not code:
        return "Not assigned"
    if axis == 5:
        return (
            "Acoustic Perception and Recognition" if modality == AUDIO_ONLY and code == "5.2" else AXIS_NAMES[5][code]
        )
    if axis == 6:
        return AXIS_NAMES[6][code]
    return CHALLENGE_CATEGORIES.get(modality, {}).get(code) or CHALLENGE_CATEGORIES[""][code]


# --- speech and sounds -----------------------------------------------------------------------------


def _espeak_exe() -> str:
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise RuntimeError("regenerating the sample needs espeak-ng (Debian: apt-get install espeak-ng)")
    return exe


def espeak_version() -> str | None:
    """``"eSpeak NG text-to-speech: 1.51"``, or None when espeak-ng is not installed."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        return None
    out = subprocess.run([exe, "--version"], check=True, capture_output=True, text=True).stdout
    return out.split("Data at:")[0].strip()


def generator_versions() -> dict[str, str | None]:
    """What the sample's bytes depend on besides this module and the seed."""
    return {
        "espeak_ng": espeak_version(),
        "av": av.__version__,
        "libavcodec": ".".join(map(str, av.library_versions["libavcodec"])),
        "soundfile": sf.__version__,
        "libsndfile": sf.__libsndfile_version__,
    }


def _espeak(text: str, voice: str, workdir: Path) -> np.ndarray:
    """``text`` spoken by espeak-ng, at 16 kHz mono, leading and trailing silence removed."""
    exe = _espeak_exe()
    wav = workdir / "line.wav"
    speed = SPEECH_WPM["cmn" if voice.startswith("cmn") else "en"]
    subprocess.run([exe, "-v", voice, "-s", str(speed), "-w", str(wav), text], check=True, capture_output=True)
    audio = decode_audio(wav, SAMPLE_RATE)
    voiced = np.flatnonzero(np.abs(audio) > SILENCE_THRESHOLD)
    if not len(voiced):
        raise RuntimeError(f"espeak-ng produced silence for {text!r}")
    return audio[voiced[0] : voiced[-1] + 1] / max(1e-6, float(np.abs(audio).max()))


def _media_voice(audio: np.ndarray) -> np.ndarray:
    """A TV/radio loudspeaker: high-passed (no bass) and low-passed (about 3 kHz)."""
    high = np.diff(audio, prepend=audio[:1])
    kernel = np.ones(3, dtype=np.float32) / 3
    return np.convolve(high, kernel, mode="same") * 2.0


def _sound(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(n) / SAMPLE_RATE
    if kind == "beep":
        return (0.25 * np.sin(2 * np.pi * 2000 * t) * ((t % 0.3) < 0.15)).astype(np.float32)
    if kind == "doorbell":
        ding = np.sin(2 * np.pi * 659 * t) * np.exp(-3 * t) * (t < 0.5)
        later = np.clip(t - 0.5, 0, None)
        dong = np.sin(2 * np.pi * 523 * later) * np.exp(-2.5 * later) * (t >= 0.5)
        return (0.35 * (ding + dong)).astype(np.float32)
    if kind == "music":
        notes = np.array([262, 330, 392, 523, 392, 330])
        freq = notes[(t * 4).astype(int) % len(notes)]
        phase = 2 * np.pi * np.cumsum(freq) / SAMPLE_RATE
        return (0.08 * (np.sin(phase) + 0.3 * np.sin(2 * phase)) * (0.6 + 0.4 * np.cos(2 * np.pi * 4 * t))).astype(
            np.float32
        )
    if kind == "noise":
        white = rng.standard_normal(n)
        return (0.015 * np.convolve(white, np.ones(8) / 8, mode="same")).astype(np.float32)
    raise ValueError(f"unknown sound {kind!r}")


@dataclass
class _RenderedClip:
    audio: np.ndarray
    duration_s: float
    spans_ms: list[tuple[int, int]]  # per line, as placed
    kinds: list[str]  # per line: user / other / media


def _render_clip(spec: ClipSpec, speech: Sequence[np.ndarray], rng: np.random.Generator) -> _RenderedClip:
    spans, cursor = [], 0
    for line, voice in zip(spec.lines, speech):
        start = line.at_ms if line.at_ms is not None else cursor + line.gap_ms
        end = start + round(len(voice) * 1000 / SAMPLE_RATE)
        spans.append((start, end))
        cursor = end
    sound_end = max((s.start_ms + (s.ms or 0) for s in spec.sounds), default=0)
    duration_ms = max(cursor, sound_end) + spec.tail_ms
    n = round(duration_ms * SAMPLE_RATE / 1000)
    audio = np.zeros(n, dtype=np.float32)
    for sound in spec.sounds:
        i0 = round(sound.start_ms * SAMPLE_RATE / 1000)
        i1 = n if sound.ms is None else min(n, i0 + round(sound.ms * SAMPLE_RATE / 1000))
        audio[i0:i1] += _sound(sound.kind, i1 - i0, rng)
    for line, voice, (start, _) in zip(spec.lines, speech, spans):
        signal = _media_voice(voice) * 0.35 if line.kind == "media" else voice * line.gain
        i0 = round(start * SAMPLE_RATE / 1000)
        audio[i0 : i0 + len(signal)] += signal
    return _RenderedClip(np.clip(audio, -1, 1), duration_ms / 1000, spans, [line.kind for line in spec.lines])


def _frames(picture: Picture, rendered: _RenderedClip) -> Iterator[np.ndarray]:
    def speaking(t: float, kinds: set[str]) -> bool:
        return any(a <= t * 1000 < b for (a, b), k in zip(rendered.spans_ms, rendered.kinds) if k in kinds)

    k = 0
    while True:
        t = k / VIDEO.fps
        shapes = list(picture.shapes)
        if picture.user_x is not None:
            shapes += person(picture.user_x, picture.user_shirt, speaking(t, {"user"}))
        if picture.other_x is not None:
            shapes += person(picture.other_x, (120, 120, 60), speaking(t, {"other"}))
        yield draw_frame(VIDEO.width, VIDEO.height, picture.background, shapes, t)
        k += 1


# --- records ---------------------------------------------------------------------------------------


def _axes(spec: SceneSpec) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    axes = [
        {"axis": f"axis{i}", "code": code, "name": _axis_name(spec.modality, i, code)}
        for i, code in enumerate(spec.axes, 1)
    ]
    if spec.negative is not None:
        return axes, []
    taxonomy = []
    for i, code in enumerate(spec.axes[:4], 1):
        if i == 1 and spec.modality == AUDIO_ONLY:
            code = AO_AXIS1_AS_AV[code]
        taxonomy.append({"axis": f"axis{i}", "code": code, "name": _axis_name(AUDIO_VISUAL, i, code)})
    return axes, taxonomy


def _segment(
    spec: SceneSpec, demand: Demand, final: ClipSpec, spans: Sequence[tuple[int, int]], lang: str
) -> dict[str, Any]:
    zh = lang == "zh"
    joiner = "" if spec.language == "zh" else " "
    out: dict[str, Any] = {
        "start_ms": spans[demand.lines[0]][0],
        "end_ms": spans[demand.lines[-1]][1],
        "transcript": joiner.join(final.lines[i].text for i in demand.lines),
        "structured_intent": demand.intent_zh if zh else demand.intent_en,
        "required_context": [
            {"type": c.type, "description": c.zh if zh else c.en, "necessity": c.why_zh if zh else c.why_en}
            for c in demand.context
        ],
    }
    if spec.modality == AUDIO_VISUAL:
        out["user_in_frame"] = bool(demand.in_frame)
    out |= {
        "user_gender": demand.gender,
        "user_age_group": demand.age,
        "key_points": [
            {"qid": f"kp{i:02d}", "point": p.zh if zh else p.en, "source": p.source, "tiers": p.tiers}
            for i, p in enumerate(demand.points, 1)
        ],
    }
    return out


def _record(spec: SceneSpec, rendered: Sequence[_RenderedClip]) -> dict[str, Any]:
    sid = spec.scene_id
    # Audio-only clips are WAV as in the release; the human-recorded-style ones FLAC, so that both
    # soundfile formats go through the toolkit.
    suffix = ".mp4" if spec.modality == AUDIO_VISUAL else ".flac" if spec.source == "human-recorded" else ".wav"
    axes, taxonomy = _axes(spec)
    final, spans = spec.clips[-1], rendered[-1].spans_ms
    annotations = {
        lang: {
            "evaluation_targets": {
                "has_demand": bool(spec.demands),
                "segments": [_segment(spec, d, final, spans, lang) for d in spec.demands],
            }
        }
        for lang in ("en", "zh")
    }
    record: dict[str, Any] = {
        "scene_id": sid,
        "title": spec.title,
        "summary": spec.summary,
        "language": spec.language,
        "modality": spec.modality,
        "source": spec.source,
        "label": "negative" if spec.negative is not None else "positive",
        "axes": axes,
        "taxonomy_axes": taxonomy,
        "annotations": annotations,
        "clips": [
            {
                "id": f"v{i}",
                "src": f"media/{sid}__clip_v{i}{suffix}",
                "duration": r.duration_s,
                "replies": list(c.replies),
            }
            for i, (c, r) in enumerate(zip(spec.clips, rendered), 1)
        ],
        "negative_reason": spec.negative[0] if spec.negative else "",
        "negative_signal": spec.negative[1] if spec.negative else "",
    }
    if spec.negative is not None:
        spoken = ("" if spec.language == "zh" else " ").join(line.text for line in final.lines)
        record["negative_explanation"] = spec.negative[2]
        record["scene_transcripts"] = {"en": spoken, "zh": spoken}
    return record


def build_sample(out_dir: str | Path, seed: int = DEFAULT_SEED, progress: bool = False) -> list[dict[str, Any]]:
    """Synthesise the sample into ``out_dir``: ``scenes.jsonl``, ``media/`` and ``MANIFEST.json``
    (seed, tool versions, sha256 of every file); returns the records.

    Byte-for-byte deterministic for a given ``seed`` and the versions in the manifest. Needs
    ``espeak-ng``.
    """
    from tqdm import tqdm

    out_dir = Path(out_dir)
    (out_dir / "media").mkdir(parents=True, exist_ok=True)
    for stale in (out_dir / "media").glob("*__clip_v*.*"):  # clips of an earlier build
        stale.unlink()
    rng = np.random.default_rng(seed)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in tqdm(SCENES, desc="sample scenes", disable=not progress):
            rendered = []
            for clip in spec.clips:
                speech = [_espeak(line.text, line.voice, Path(tmp)) for line in clip.lines]
                rendered.append(_render_clip(clip, speech, rng))
            record = _record(spec, rendered)
            for clip, r in zip(record["clips"], rendered):
                path = out_dir / clip["src"]
                if spec.modality == AUDIO_VISUAL:
                    assert spec.picture is not None, spec.scene_id
                    encode_mp4(
                        path, _frames(spec.picture, r), r.audio, r.duration_s, sample_rate=SAMPLE_RATE, settings=VIDEO
                    )
                else:
                    write_audio_file(path, r.audio, SAMPLE_RATE)
            records.append(record)
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    (out_dir / "scenes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    files = sorted(p for p in out_dir.rglob("*") if p.is_file() and p.name != MANIFEST)
    manifest = {
        "seed": seed,
        "versions": generator_versions(),
        "sha256": {p.relative_to(out_dir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return records


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/make_sample.py", description="Regenerate the bundled ODU-Bench sample."
    )
    parser.add_argument("--out", type=Path, default=sample_dir(), help="output folder (default: the bundled one)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    records = build_sample(args.out, seed=args.seed, progress=True)
    size = sum(p.stat().st_size for p in (args.out / "media").iterdir())
    print(f"{len(records)} scenes, {size / 1e6:.2f} MB of media -> {args.out}")
    return 0


__all__ = ["MANIFEST", "SCENES", "build_sample", "espeak_version", "generator_versions", "load_spec"]

if __name__ == "__main__":
    raise SystemExit(main())
