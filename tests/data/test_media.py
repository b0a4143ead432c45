"""odu.data.media: probing without decoding, sampled frames, audio at any rate, errors, LazyClip."""

from __future__ import annotations

import hashlib
import io
import math
from pathlib import Path

import av
import numpy as np
import pytest
from av.video.frame import PictureType
from synth import FAST_VIDEO, VideoSettings, encode_mp4, write_audio_file

import odu.data.media as media
from odu.data.media import LazyClip, MediaError, decode_audio, decode_frames, probe, sample_times
from odu.data.release import MEDIA_DURATION_TOLERANCE_S

FPS = 8
DURATION = 5.3  # 43 frames at 8 fps, the last one shown for 50 ms
N_FRAMES = math.ceil(DURATION * FPS)
SR = 16_000


def _index_frames():
    """Frame k is a flat colour encoding k in steps far above codec error (decoded frames say
    which one they are)."""
    k = 0
    while True:
        image = np.empty((FAST_VIDEO.height, FAST_VIDEO.width, 3), dtype=np.uint8)
        image[:] = (10 + 12 * (k % 20), 20 + 60 * (k // 20), 128)
        yield image
        k += 1


def _frame_index(image: np.ndarray) -> int:
    red, green = (float(image[..., c].mean()) for c in (0, 1))
    return round((red - 10) / 12) + 20 * round((green - 20) / 60)


def _tone(seconds: float, rate: int = SR, channels: int = 1) -> np.ndarray:
    """A 440 Hz tone; in stereo the right channel is the left one inverted (the mono mix is silent)."""
    t = np.arange(round(seconds * rate)) / rate
    tone = 0.3 * np.sin(2 * np.pi * 440 * t).astype(np.float32)
    return tone if channels == 1 else np.stack([tone, -tone])


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("media")
    exact = VideoSettings(
        width=FAST_VIDEO.width, height=FAST_VIDEO.height, fps=FPS, crf=10, preset="ultrafast", gop=250, aac_coder="fast"
    )
    dense = VideoSettings(
        width=FAST_VIDEO.width, height=FAST_VIDEO.height, fps=FPS, crf=10, preset="ultrafast", gop=2, aac_coder="fast"
    )
    b_frames = VideoSettings(
        width=FAST_VIDEO.width, height=FAST_VIDEO.height, fps=FPS, crf=10, preset="medium", gop=16, b_frames=3
    )
    return {
        "mp4": encode_mp4(root / "clip.mp4", _index_frames(), _tone(DURATION), DURATION, settings=exact),
        "mp4_bframes": encode_mp4(root / "bframes.mp4", _index_frames(), None, DURATION, settings=b_frames),
        "mp4_dense": encode_mp4(root / "dense.mp4", _index_frames(), _tone(DURATION), DURATION, settings=dense),
        "mp4_silent": encode_mp4(root / "silent.mp4", _index_frames(), None, 2.0, settings=exact),
        "m4a": encode_mp4(
            root / "speech.m4a",
            None,
            _tone(3.0, 44_100, 2),
            3.0,
            sample_rate=44_100,
            settings=VideoSettings(audio_bitrate=128_000),
        ),
        "wav": write_audio_file(root / "speech.wav", _tone(2.5)),
        "flac": write_audio_file(root / "speech.flac", _tone(2.5)),
        "wav_44k": write_audio_file(root / "speech44.wav", _tone(2.0, 44_100), 44_100),
    }


# --- probe -----------------------------------------------------------------------------------------


def test_probe_reads_stream_facts(clips: dict[str, Path]) -> None:
    info = probe(clips["mp4"])
    assert info.duration_s == pytest.approx(DURATION, abs=1e-3)
    assert (info.has_video, info.has_audio, info.width, info.height, info.fps) == (True, True, 160, 90, 8.0)
    assert (info.video_codec, info.audio_codec, info.sample_rate, info.n_channels) == ("h264", "aac", SR, 1)
    wav = probe(clips["wav"])
    assert (wav.duration_s, wav.has_video, wav.sample_rate, wav.container) == (2.5, False, SR, "wav")
    assert probe(clips["flac"]).duration_s == 2.5
    m4a = probe(clips["m4a"])
    assert (m4a.has_video, m4a.n_channels, m4a.sample_rate) == (False, 2, 44_100)
    assert m4a.duration_s == pytest.approx(3.0, abs=1e-3)


def test_probe_reads_headers_only(clips: dict[str, Path]) -> None:
    """Zeroing every media byte (the ``mdat`` payload) leaves probe working: it decoded nothing.
    Decoding the same bytes fails."""
    data = bytearray(clips["mp4"].read_bytes())
    at = data.find(b"mdat")
    size = int.from_bytes(data[at - 4 : at], "big")
    data[at + 4 : at - 4 + size] = bytes(size - 8)
    assert probe(bytes(data)).duration_s == pytest.approx(DURATION, abs=1e-3)
    with pytest.raises(MediaError, match="cannot decode video"):
        decode_frames(bytes(data), fps=1)


def test_probe_bytes_and_path_agree(clips: dict[str, Path]) -> None:
    for name in ("mp4", "wav", "flac", "m4a"):
        assert probe(clips[name].read_bytes()) == probe(clips[name])


# --- frames ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fps, expected", [(1, 6), (2, 11), (0.5, 3)])
def test_frames_at_fps(clips: dict[str, Path], fps: float, expected: int) -> None:
    got = decode_frames(clips["mp4"], fps=fps)
    assert got.frames.shape == (expected, 90, 160, 3) and got.frames.dtype == np.uint8
    np.testing.assert_allclose(got.timestamps, [k / fps for k in range(expected)], atol=1e-6)
    # the frame on screen at k / fps is frame round(k / fps * 8)
    assert [_frame_index(f) for f in got.frames] == [math.floor(k / fps * FPS + 1e-9) for k in range(expected)]


def test_frames_capped_spread_over_the_clip(clips: dict[str, Path]) -> None:
    got = decode_frames(clips["mp4"], fps=2, max_frames=4)
    times = [k * DURATION / 4 for k in range(4)]
    assert len(got) == 4
    assert [_frame_index(f) for f in got.frames] == [math.floor(t * FPS) for t in times]
    assert len(decode_frames(clips["mp4"], fps=1, max_frames=10)) == 6  # cap not reached


def test_frames_native_and_cap_only(clips: dict[str, Path]) -> None:
    every = decode_frames(clips["mp4"])
    assert len(every) == N_FRAMES
    assert [_frame_index(f) for f in every.frames] == list(range(N_FRAMES))
    np.testing.assert_allclose(np.diff(every.timestamps), 1 / FPS)
    assert len(decode_frames(clips["mp4"], max_frames=1000)) == N_FRAMES
    capped = decode_frames(clips["mp4"], max_frames=5)
    assert [_frame_index(f) for f in capped.frames] == [math.floor(k * DURATION / 5 * FPS) for k in range(5)]


def test_frames_above_native_rate_repeat(clips: dict[str, Path]) -> None:
    got = decode_frames(clips["mp4_silent"], fps=16)
    assert len(got) == 32
    assert [_frame_index(f) for f in got.frames] == [k // 2 for k in range(32)]


def test_sampling_skips_no_needed_b_frame(clips: dict[str, Path]) -> None:
    """Sampling leaves unused non-reference frames undecoded; the frames it returns are still
    exactly the ones on screen (same pixels as decoding everything)."""
    with av.open(str(clips["mp4_bframes"])) as container:
        assert PictureType.B in {PictureType(f.pict_type) for f in container.decode(video=0)}
    every = decode_frames(clips["mp4_bframes"])
    for fps in (1, 3, 7):
        for method in ("sequential", "seek"):
            got = decode_frames(clips["mp4_bframes"], fps=fps, method=method)
            index = [math.floor(t * FPS + 1e-6) for t in got.timestamps]
            assert index == [math.floor(k / fps * FPS + 1e-9) for k in range(len(got))]
            np.testing.assert_array_equal(got.frames, every.frames[index])


@pytest.mark.parametrize("name", ["mp4", "mp4_dense", "mp4_bframes"])
def test_seek_and_sequential_agree(clips: dict[str, Path], name: str) -> None:
    runs = [decode_frames(clips[name], fps=fps, method=m) for fps in (1, 3) for m in ("sequential", "seek", "auto")]
    for a, b in zip(runs, runs[1:]):
        if len(a) == len(b):
            np.testing.assert_array_equal(a.frames, b.frames)
            np.testing.assert_array_equal(a.timestamps, b.timestamps)


def test_auto_seeks_only_when_keyframes_are_dense(clips: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    seeks: list[float] = []
    original = media._FrameCursor.seek
    monkeypatch.setattr(media._FrameCursor, "seek", lambda self, t: (seeks.append(t), original(self, t)))
    decode_frames(clips["mp4"], fps=1)  # one keyframe: read straight through
    assert seeks == []
    decode_frames(clips["mp4_dense"], fps=1)  # keyframe every 2 frames, a sample every 8
    assert len(seeks) >= 4


def test_no_duration_in_the_headers() -> None:
    """Matroska written to a stream that cannot seek has no duration in its headers: probe and
    frame sampling take it from the packets' timestamps (demuxing only)."""

    class Sink:
        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, chunk: bytes) -> int:
            self.data += chunk
            return len(chunk)

    sink = Sink()
    with av.open(sink, "w", format="matroska") as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for k, image in zip(range(20), _index_frames()):
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image[:48, :64]), format="rgb24")
            frame.pts = k
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    data = bytes(sink.data)
    with av.open(io.BytesIO(data)) as container:
        assert container.duration is None and container.streams.video[0].duration is None
    assert probe(data).duration_s == pytest.approx(20 / FPS)
    got = decode_frames(data, fps=2)
    assert [_frame_index(f) for f in got.frames] == [0, 4, 8, 12, 16]


def test_frame_errors(clips: dict[str, Path]) -> None:
    with pytest.raises(MediaError, match="no video stream"):
        decode_frames(clips["wav"], fps=1)
    with pytest.raises(MediaError, match="no video stream"):
        decode_frames(clips["m4a"], fps=1)
    with pytest.raises(ValueError, match="fps"):
        decode_frames(clips["mp4"], fps=0)
    with pytest.raises(ValueError, match="max_frames"):
        decode_frames(clips["mp4"], max_frames=0)


def test_sample_times_rule() -> None:
    assert sample_times(10.0, fps=1) == [float(k) for k in range(10)]
    assert len(sample_times(10.0, fps=2)) == 20
    assert len(sample_times(10.01, fps=2)) == 21
    assert sample_times(0.2, fps=1) == [0.0]
    assert sample_times(10.0) is None


# --- audio -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, seconds", [("wav", 2.5), ("flac", 2.5), ("mp4", DURATION), ("m4a", 3.0), ("wav_44k", 2.0)]
)
@pytest.mark.parametrize("rate", [16_000, 24_000])
def test_audio_sample_counts(clips: dict[str, Path], name: str, seconds: float, rate: int) -> None:
    audio = decode_audio(clips[name], sample_rate=rate)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(len(audio) - seconds * rate) <= 1
    if name != "m4a":  # (its stereo channels cancel out in the mono mix)
        assert 0.1 < float(np.abs(audio).max()) <= 1.0


def test_audio_values(clips: dict[str, Path]) -> None:
    np.testing.assert_allclose(decode_audio(clips["wav"]), _tone(2.5), atol=1e-4)  # 16-bit PCM, same rate
    stereo = decode_audio(clips["m4a"], 44_100)  # channels averaged: tone + inverted tone = silence
    assert float(np.abs(stereo[5000:-5000]).max()) < 0.03
    resampled = decode_audio(clips["wav_44k"], SR)
    np.testing.assert_allclose(resampled[1000:-1000], _tone(2.0)[1000:-1000], atol=0.02)


def test_audio_errors(clips: dict[str, Path]) -> None:
    with pytest.raises(MediaError, match="no audio track"):
        decode_audio(clips["mp4_silent"])
    with pytest.raises(ValueError, match="sample_rate"):
        decode_audio(clips["wav"], sample_rate=0)


# --- bad media -------------------------------------------------------------------------------------


def test_missing_and_empty(tmp_path: Path) -> None:
    missing = tmp_path / "nope.mp4"
    for fn in (probe, decode_audio, lambda s: decode_frames(s, fps=1)):
        with pytest.raises(MediaError, match=r"nope\.mp4: file not found"):
            fn(missing)
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    with pytest.raises(MediaError, match=r"empty\.wav: empty media \(0 bytes\)"):
        probe(empty)
    with pytest.raises(MediaError, match="empty media"):
        decode_audio(b"")
    with pytest.raises(MediaError, match="not a regular file"):
        probe(tmp_path)


@pytest.mark.parametrize("data", [b"\x00" * 100, b"not a media file at all" * 50, b"RIFF\x10\x00\x00\x00WAVEjunk"])
def test_corrupt(data: bytes) -> None:
    with pytest.raises(MediaError, match="cannot|truncated"):
        probe(data)


def test_truncated(clips: dict[str, Path], tmp_path: Path) -> None:
    mp4 = clips["mp4"].read_bytes()
    with pytest.raises(MediaError, match=r"truncated media: its (video|audio) index needs \d+ bytes, only \d+ present"):
        probe(mp4[: len(mp4) // 2])
    with pytest.raises(MediaError, match="cannot open media"):
        probe(mp4[:600])  # the header itself is cut
    cut = tmp_path / "cut.wav"
    cut.write_bytes(clips["wav"].read_bytes()[:30_000])
    with pytest.raises(MediaError, match=r"cut\.wav: truncated WAV: header declares 80044 bytes, only 30000 present"):
        probe(cut)
    with pytest.raises(MediaError, match="truncated WAV"):
        decode_audio(cut)
    flac = clips["flac"].read_bytes()
    with pytest.raises(MediaError, match="FLAC"):
        probe(flac[: len(flac) // 2])


# --- LazyClip --------------------------------------------------------------------------------------


def test_lazy_clip_decodes_only_on_access(clips: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    for name in ("probe", "decode_frames", "decode_audio"):
        real = getattr(media, name)
        monkeypatch.setattr(media, name, lambda *a, _n=name, _f=real, **k: (calls.append(_n), _f(*a, **k))[1])
    data = clips["mp4"].read_bytes()
    clip = LazyClip(data, duration=DURATION)
    assert clip.duration == DURATION and calls == []  # known duration: nothing read
    assert clip.bytes is data and clip.path is None
    assert len(clip.frames(fps=2)) == 11 and calls == ["decode_frames"]
    assert len(clip.audio(sample_rate=24_000)) == round(DURATION * 24_000)
    assert calls == ["decode_frames", "decode_audio"]
    unknown = LazyClip(clips["wav"])
    assert unknown.duration == 2.5 and unknown.info.sample_rate == SR
    assert calls.count("probe") == 1  # info is probed once and kept


def test_lazy_clip_is_cheap_and_errors_late(tmp_path: Path) -> None:
    ghost = LazyClip(tmp_path / "later.mp4", duration=3.0)  # nothing is opened at creation
    assert ghost.duration == 3.0 and "later.mp4" in repr(ghost)
    with pytest.raises(MediaError, match="file not found"):
        _ = ghost.info
    broken = LazyClip(b"garbage" * 10)
    with pytest.raises(MediaError, match="cannot open media"):
        broken.frames(fps=1)
    with pytest.raises(TypeError):
        LazyClip(42)  # type: ignore[arg-type]


def test_lazy_clip_bytes_and_hash(clips: dict[str, Path]) -> None:
    path_clip, data = LazyClip(str(clips["flac"])), clips["flac"].read_bytes()
    assert path_clip.path == clips["flac"] and path_clip.bytes == data
    assert path_clip.sha256 == hashlib.sha256(data).hexdigest() == LazyClip(data).sha256
    assert abs(path_clip.duration - 2.5) <= MEDIA_DURATION_TOLERANCE_S


@pytest.mark.parametrize("method", ["sequential", "seek"])
def test_frames_of_truncated_video_raise(clips: dict[str, Path], method: str) -> None:
    """Issue 12 item 12: a clip cut short (its header still promising 5.3 s) raises instead of
    repeating its last frame at every later instant."""
    data = clips["mp4"].read_bytes()
    cut = LazyClip(data[: len(data) * 3 // 4], duration=DURATION)
    with pytest.raises(MediaError, match=r"truncated video: its frames end at [\d.]+ s, a frame was asked for at"):
        cut.frames(fps=2)
    with pytest.raises(MediaError, match="truncated video"):
        decode_frames(data[: len(data) * 3 // 4], fps=2, method=method)
    whole = decode_frames(data, fps=4 * FPS, method=method)  # up to the last frame's end: no error
    assert whole.timestamps[-1] == pytest.approx((N_FRAMES - 1) / FPS)
    assert whole.timestamps[-1] + 1 / FPS + media.FRAME_END_TOLERANCE_S > DURATION
