"""Lazy media decoding for ODU-Bench clips: PyAV for containers, soundfile for WAV/FLAC, no torch.

A clip is read in three depths, each only when asked for:

* :func:`probe` reads container and stream headers (plus the packet index of MP4/MOV) and gives a
  :class:`MediaInfo` with the duration, without decoding media;
* :func:`decode_frames` decodes video frames sampled at a requested rate (App D.1 feeds models
  frames at a given fps), sequentially or by keyframe seeks, whichever the packet index says
  costs less (rule: :data:`FRAME_SEEK_COST_FRAMES` below);
* :func:`decode_audio` gives the mono float32 waveform at a requested sample rate.

:class:`LazyClip` bundles the three around the bytes or path of one clip. Every failure raises
:class:`MediaError` whose message says what failed and on which source; callers add scene and clip.
"""

from __future__ import annotations

import hashlib
import io
import math
import struct
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import IO, Literal

import av
import av.error
import numpy as np
import soundfile as sf

from ..io.files import open_regular, read_bounded

#: Sample rate (Hz) of decoded audio unless asked otherwise; 16 kHz is what omni audio encoders take.
DEFAULT_AUDIO_SAMPLE_RATE = 16_000
#: Our rule, measured by ``benchmarks/bench_media.py``: frame sampling seeks to keyframes only when
#: the packet index says that decodes fewer frames than reading straight through, counting each
#: seek (demuxer reposition, decoder flush, frame-thread refill) as this many decoded frames ...
FRAME_SEEK_COST_FRAMES = 6.0
#: ... and only when that saves at least this fraction of the straight read's frames (smaller
#: predicted savings were within run-to-run noise, or lost, in the benchmark).
FRAME_SEEK_MIN_SAVING = 0.1

#: Our rule: a sampling instant may lie at most this many seconds past the end of the last decoded
#: frame (its start plus one frame interval); a stream that ends earlier than its header says is
#: truncated, and sampling it raises :class:`MediaError` instead of repeating its last frame. The
#: value is the release's duration tolerance (``odu.data.release.MEDIA_DURATION_TOLERANCE_S``).
FRAME_END_TOLERANCE_S = 0.1

#: What the media functions accept: a file path or the file's bytes.
MediaSource = str | Path | bytes
#: The largest media file read whole (2 GiB: what one value of an Arrow ``binary`` column, a
#: prepared dataset's media cell, can hold); a larger one is refused.
MAX_MEDIA_BYTES = 2**31 - 1
#: Seconds a media file may take to be read whole (a clip of the release, by ``prepare`` and
#: ``view``); a file that trickles slower (a stalled network share) is refused, never waited on.
MEDIA_READ_TIMEOUT_S = 120.0

#: Frame times within this many seconds of a sampling instant count as "at" the instant.
_TIME_EPS_S = 1e-4
_HASH_CHUNK = 1 << 20
#: Errors PyAV and libsndfile raise on unreadable input (PyAV raises a bare IndexError on some
#: tiny inputs).
_READ_ERRORS = (av.error.FFmpegError, sf.LibsndfileError, OSError, ValueError, IndexError, EOFError)


class MediaError(Exception):
    """A clip cannot be read: missing, empty, corrupt, truncated, or lacking the asked-for track."""


@dataclass(frozen=True, slots=True)
class MediaInfo:
    """Header facts about one media file (no media decoded to get them)."""

    duration_s: float
    has_video: bool
    has_audio: bool
    width: int | None = None
    height: int | None = None
    fps: float | None = None
    sample_rate: int | None = None
    n_channels: int | None = None
    video_codec: str | None = None
    audio_codec: str | None = None
    container: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class VideoFrames:
    """Decoded RGB frames: ``frames`` is uint8 (N, H, W, 3); ``timestamps`` are the frames'
    presentation times in seconds from the start of the video stream."""

    frames: np.ndarray
    timestamps: np.ndarray

    def __len__(self) -> int:
        return len(self.frames)


# --- sources ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Source:
    """A media source checked to exist and be non-empty, with a label for messages."""

    path: Path | None
    data: bytes | None
    size: int
    label: str

    @classmethod
    def of(cls, source: MediaSource) -> _Source:
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            src = cls(None, data, len(data), f"<{len(data)} bytes of media>")
        elif isinstance(source, (str, Path)):
            path = Path(source)
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                raise MediaError(f"{path}: file not found") from None
            except OSError as exc:
                raise MediaError(f"{path}: cannot access ({exc.strerror or exc})") from None
            if not path.is_file():
                raise MediaError(f"{path}: not a regular file")
            src = cls(path, None, size, str(path))
        else:
            raise TypeError(f"media source must be a path or bytes, not {type(source).__name__}")
        if src.size == 0:
            raise MediaError(f"{src.label}: empty media (0 bytes)")
        return src

    def open(self) -> IO[bytes]:
        if self.data is not None:
            return io.BytesIO(self.data)
        assert self.path is not None
        try:
            return open_regular(self.path)
        except OSError as exc:
            raise MediaError(f"{self.label}: cannot open ({exc.strerror or exc})") from None

    def head(self, n: int) -> bytes:
        with self.open() as fh:
            return fh.read(n)

    def soundfile_format(self) -> str | None:
        """ "WAV" or "FLAC" when the magic bytes say so (libsndfile reads these); else None."""
        head = self.head(12)
        if head[:4] in (b"RIFF", b"RF64") and head[8:12] == b"WAVE":
            return "WAV"
        if head[:4] == b"fLaC":
            return "FLAC"
        return None


def read_media(path: str | Path) -> bytes:
    """The bytes of a media file: a regular file only (never a FIFO or a device, which would block
    or never end), at most :data:`MAX_MEDIA_BYTES`, read within :data:`MEDIA_READ_TIMEOUT_S`;
    :class:`MediaError` naming it otherwise."""
    try:
        return read_bounded(path, MAX_MEDIA_BYTES, MEDIA_READ_TIMEOUT_S, "media")
    except OSError as exc:
        raise MediaError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _as_float(value: Fraction | int | None) -> float | None:
    return float(value) if value else None


# --- PyAV containers -------------------------------------------------------------------------------


def _open_container(src: _Source) -> av.container.InputContainer:
    target: str | IO[bytes] = str(src.path) if src.path is not None else src.open()
    try:
        return av.open(target, "r", metadata_errors="ignore")
    except _READ_ERRORS as exc:
        reason = getattr(exc, "strerror", None) or exc  # FFmpeg's own text repeats the path
        raise MediaError(f"{src.label}: cannot open media (corrupt, truncated or not audio/video): {reason}") from None


def _main_streams(container: av.container.InputContainer) -> tuple[av.VideoStream | None, av.AudioStream | None]:
    """The first real video stream (cover-art pictures skipped) and the first audio stream."""
    video = next((s for s in container.streams.video if not s.disposition & av.stream.Disposition.attached_pic), None)
    audio = container.streams.audio[0] if container.streams.audio else None
    return video, audio


def _check_complete(src: _Source, streams: Sequence[av.stream.Stream]) -> None:
    """Raise when the packet index points past the end of the data (a cut-off file whose header
    survived, e.g. an MP4 with its index at the front)."""
    for stream in streams:
        entries = stream.index_entries
        if len(entries):
            last = entries[len(entries) - 1]
            end = last.pos + last.size
            if last.pos >= 0 and end > src.size:
                raise MediaError(
                    f"{src.label}: truncated media: its {stream.type} index needs {end} bytes, only {src.size} present"
                )


def _stream_duration(stream: av.stream.Stream) -> float | None:
    if stream.duration and stream.time_base:
        return float(stream.duration * stream.time_base)
    return None


def _container_duration(container: av.container.InputContainer, streams: Sequence[av.stream.Stream]) -> float | None:
    if container.duration and container.duration > 0:
        return container.duration / av.time_base
    durations = [d for d in map(_stream_duration, streams) if d]
    return max(durations) if durations else None


def _scan_duration(src: _Source, streams: Sequence[av.stream.Stream], container: av.container.InputContainer) -> float:
    """Duration from packet timestamps (demux only, no decoding): for headers without one."""
    end = 0.0
    try:
        for packet in container.demux(list(streams)):
            if packet.pts is not None and packet.time_base:
                end = max(end, float((packet.pts + (packet.duration or 0)) * packet.time_base))
    except _READ_ERRORS as exc:
        raise MediaError(f"{src.label}: cannot read packets: {exc}") from None
    return end


def _probe_container(src: _Source) -> MediaInfo:
    with _open_container(src) as container:
        video, audio = _main_streams(container)
        streams = [s for s in (video, audio) if s is not None]
        if not streams:
            raise MediaError(f"{src.label}: no audio or video stream")
        _check_complete(src, streams)
        duration = _container_duration(container, streams) or _scan_duration(src, streams, container)
        if not duration > 0:
            raise MediaError(f"{src.label}: media has no duration (no packets)")
        return MediaInfo(
            duration_s=duration,
            has_video=video is not None,
            has_audio=audio is not None,
            width=video.codec_context.width if video else None,
            height=video.codec_context.height if video else None,
            fps=_as_float(video.guessed_rate or video.average_rate) if video else None,
            sample_rate=audio.codec_context.sample_rate if audio else None,
            n_channels=audio.codec_context.channels if audio else None,
            video_codec=video.codec_context.name if video else None,
            audio_codec=audio.codec_context.name if audio else None,
            container=container.format.name,
        )


# --- soundfile (WAV / FLAC) ------------------------------------------------------------------------


def _check_riff_size(src: _Source) -> None:
    """libsndfile silently shortens a cut-off WAV; its RIFF header still says how long it was."""
    head = src.head(8)
    if head[:4] != b"RIFF":
        return  # RF64 keeps the real size elsewhere
    declared = struct.unpack("<I", head[4:8])[0] + 8
    if declared not in (8, 0xFFFFFFFF + 8) and declared > src.size:  # 0 / max: streamed, size unknown
        raise MediaError(f"{src.label}: truncated WAV: header declares {declared} bytes, only {src.size} present")


def _probe_soundfile(src: _Source, fmt: str) -> MediaInfo:
    if fmt == "WAV":
        _check_riff_size(src)
    try:
        with src.open() as fh, sf.SoundFile(fh) as snd:
            frames, rate, channels, subtype = snd.frames, snd.samplerate, snd.channels, snd.subtype
            if frames > 0:  # reading the last samples is cheap and fails on a cut-off FLAC
                snd.seek(max(0, frames - 16))
                snd.read(16, dtype="float32")
    except _READ_ERRORS as exc:
        raise MediaError(f"{src.label}: cannot read {fmt} (corrupt or truncated): {exc}") from None
    if frames <= 0 or rate <= 0:
        raise MediaError(f"{src.label}: {fmt} holds no samples")
    return MediaInfo(
        duration_s=frames / rate,
        has_video=False,
        has_audio=True,
        sample_rate=rate,
        n_channels=channels,
        audio_codec=(subtype or "").lower() or None,
        container=fmt.lower(),
    )


def probe(source: MediaSource) -> MediaInfo:
    """Duration and stream facts of ``source`` from its headers, without decoding media.

    Raises :class:`MediaError` for missing, empty, corrupt or truncated media.
    """
    src = _Source.of(source)
    fmt = src.soundfile_format()
    return _probe_soundfile(src, fmt) if fmt else _probe_container(src)


# --- video frames ----------------------------------------------------------------------------------


def sample_times(duration_s: float, fps: float | None = None, max_frames: int | None = None) -> list[float] | None:
    """Sampling instants (seconds) for a clip of ``duration_s``.

    ``fps`` gives the instants ``k / fps`` inside the clip; when there would be more than
    ``max_frames`` they are replaced by ``max_frames`` instants spread evenly over the clip
    (``k * duration / max_frames``). ``None`` means every frame (``fps`` and ``max_frames`` unset).

    >>> sample_times(3.0, fps=1)
    [0.0, 1.0, 2.0]
    >>> sample_times(3.2, fps=2, max_frames=4)
    [0.0, 0.8, 1.6, 2.4000000000000004]
    """
    if fps is not None and not fps > 0:
        raise ValueError(f"fps must be positive, got {fps!r}")
    if max_frames is not None and max_frames < 1:
        raise ValueError(f"max_frames must be at least 1, got {max_frames!r}")
    if fps is None:
        if max_frames is None:
            return None
        return [k * duration_s / max_frames for k in range(max_frames)]
    count = max(1, math.ceil(duration_s * fps - 1e-9))
    if max_frames is not None and count > max_frames:
        return [k * duration_s / max_frames for k in range(max_frames)]
    return [k / fps for k in range(count)]


class _FrameCursor:
    """Walks the decoded frames of one stream in presentation order; ``at(t)`` is the frame on
    screen at time ``t`` (the last frame starting at or before it). ``seek`` jumps to the keyframe
    at or before a time.

    With ``keep`` (the pts of the frames that will be asked for), frames that nothing else is
    predicted from and that are not kept are not decoded at all (FFmpeg ``skip_frame=NONREF``):
    in streams with B-frames that halves the decoding work of sampling.
    """

    def __init__(
        self,
        container: av.container.InputContainer,
        stream: av.VideoStream,
        start_s: float,
        keep: frozenset[int] | None = None,
    ) -> None:
        self._container, self._stream, self._start, self._keep = container, stream, start_s, keep
        self._frames: Iterator[av.VideoFrame] = self._decode()
        self._current: tuple[float, av.VideoFrame] | None = None
        self._lookahead: tuple[float, av.VideoFrame] | None = None
        self._count = 0
        self._rate = float(stream.guessed_rate or stream.average_rate or 1)
        self.ended = False  # the stream has no frame after the current one

    @property
    def frame_interval(self) -> float:
        """Seconds between frames at the stream's (guessed) rate."""
        return 1 / self._rate

    def _decode(self) -> Iterator[av.VideoFrame]:
        if self._keep is None:
            yield from self._container.decode(self._stream)
            return
        context = self._stream.codec_context
        for packet in self._container.demux(self._stream):
            # read by the decoder when the packet is sent (also by FFmpeg's frame threads)
            context.skip_frame = "DEFAULT" if packet.pts is None or packet.pts in self._keep else "NONREF"
            yield from packet.decode()

    def seek(self, t: float) -> None:
        assert self._stream.time_base is not None
        offset = int((t + self._start) / self._stream.time_base)
        self._container.seek(offset, stream=self._stream, backward=True)
        self._frames = self._decode()
        self._current = self._lookahead = None
        self.ended = False

    def advance(self) -> tuple[float, av.VideoFrame] | None:
        """The next decoded frame with its time, or None at the end of the stream."""
        frame = next(self._frames, None)
        if frame is None:
            return None
        self._count += 1
        t = frame.time - self._start if frame.time is not None else (self._count - 1) / self._rate
        return t, frame

    def at(self, t: float) -> tuple[float, av.VideoFrame] | None:
        while True:
            if self._lookahead is None:
                self._lookahead = self.advance()
                if self._lookahead is None:
                    self.ended = True
                    return self._current
            if self._current is not None and self._lookahead[0] > t + _TIME_EPS_S:
                return self._current
            self._current, self._lookahead = self._lookahead, None


def _shown_pts(src: _Source, start_s: float, times: Sequence[float]) -> frozenset[int] | None:
    """The pts of the frames on screen at ``times``, from one demux pass (packet headers only, no
    decoding); None when packets carry no pts."""
    with _open_container(src) as container:
        video, _ = _main_streams(container)
        assert video is not None
        tb = video.time_base
        pts = sorted(p.pts for p in container.demux(video) if p.pts is not None and p.size)
    if not pts or tb is None:
        return None
    stamps = [float(p * tb) - start_s for p in pts]
    return frozenset(pts[max(0, bisect_right(stamps, t + _TIME_EPS_S) - 1)] for t in times)


def _seek_plan(
    stream: av.VideoStream, start_s: float, times: Sequence[float], seek_cost: float
) -> tuple[list[bool], float, int] | None:
    """Where to seek when sampling ``times``, from the packet index (nothing decoded): per instant,
    seek when its keyframe lies ahead and decoding from it plus ``seek_cost`` frames beats decoding
    forward. Returns (seek before each instant, estimated cost in decoded frames, frames a straight
    read decodes), or None without an index."""
    entries = stream.index_entries
    tb = stream.time_base
    if not len(entries) or tb is None:
        return None
    stamps = [float(e.timestamp * tb) - start_s for e in entries]
    keyframes = [i for i, e in enumerate(entries) if e.is_keyframe]
    if not keyframes:
        return None
    seeks: list[bool] = []
    position, cost = -1, 0.0  # index of the last decoded frame; frames decoded so far
    for t in times:
        frame = max(0, bisect_right(stamps, t + _TIME_EPS_S) - 1)
        key = keyframes[max(0, bisect_right(keyframes, frame) - 1)]
        jump = key > position + 1 and frame - key + 1 + seek_cost < frame - position
        seeks.append(jump)
        if jump:
            cost += frame - key + 1 + seek_cost
        elif frame > position:
            cost += frame - position
        position = max(position, frame)
    return seeks, cost, position + 1


def _seeking_pays(plan: tuple[list[bool], float, int]) -> bool:
    seeks, cost, straight = plan
    return any(seeks) and cost <= (1 - FRAME_SEEK_MIN_SAVING) * straight


def decode_frames(
    source: MediaSource,
    fps: float | None = None,
    max_frames: int | None = None,
    *,
    method: Literal["auto", "sequential", "seek"] = "auto",
) -> VideoFrames:
    """RGB frames of the video track sampled at ``fps`` (see :func:`sample_times`; every frame when
    both ``fps`` and ``max_frames`` are None, or when ``max_frames`` alone already covers them).
    A sampling instant gets the frame on screen at that time, so a rate above the native one
    repeats frames.

    ``method="auto"`` reads straight through unless the packet index says keyframe seeks decode
    at least ``FRAME_SEEK_MIN_SAVING`` less, counting each seek as ``FRAME_SEEK_COST_FRAMES``
    frames (the rule measured by ``benchmarks/bench_media.py``); ``"sequential"`` and ``"seek"``
    force one way. Either way, frames that are neither sampled nor referenced by other frames
    (most B-frames) are not decoded.
    """
    src = _Source.of(source)
    if src.soundfile_format():
        raise MediaError(f"{src.label}: no video stream (audio file)")
    with _open_container(src) as container:
        video, _ = _main_streams(container)
        if video is None:
            raise MediaError(f"{src.label}: no video stream")
        video.thread_type = "AUTO"
        start_s = float(video.start_time * video.time_base) if video.start_time and video.time_base else 0.0
        if fps is None and (max_frames is None or 0 < video.frames <= max_frames):
            times = None
        else:
            duration = _stream_duration(video) or _container_duration(container, [video])
            if duration is None:  # e.g. streamed Matroska: the packets' timestamps tell
                with _open_container(src) as scan:
                    scan_video = _main_streams(scan)[0]
                    assert scan_video is not None  # the same file: its video stream was found above
                    duration = _scan_duration(src, [scan_video], scan) - start_s
            if not duration > 0:
                raise MediaError(f"{src.label}: video stream has no duration to sample over")
            times = sample_times(duration, fps, max_frames)
        try:
            if times is None:
                return _all_frames(src, _FrameCursor(container, video, start_s))
            seeks = None
            if method != "sequential":
                plan = _seek_plan(video, start_s, times, 0.0 if method == "seek" else FRAME_SEEK_COST_FRAMES)
                if plan is not None and (method == "seek" or _seeking_pays(plan)):
                    seeks = plan[0]
            cursor = _FrameCursor(container, video, start_s, _shown_pts(src, start_s, times))
            return _sampled_frames(src, cursor, times, seeks)
        except _READ_ERRORS as exc:
            raise MediaError(f"{src.label}: cannot decode video: {exc}") from None


def _all_frames(src: _Source, cursor: _FrameCursor) -> VideoFrames:
    arrays, stamps = [], []
    while (item := cursor.advance()) is not None:
        stamps.append(item[0])
        arrays.append(item[1].to_ndarray(format="rgb24"))
    if not arrays:
        raise MediaError(f"{src.label}: video stream has no decodable frames")
    return VideoFrames(np.stack(arrays), np.asarray(stamps, dtype=np.float64))


def _sampled_frames(
    src: _Source, cursor: _FrameCursor, times: Sequence[float], seeks: Sequence[bool] | None
) -> VideoFrames:
    out: np.ndarray | None = None
    stamps = np.empty(len(times), dtype=np.float64)
    last: tuple[av.VideoFrame, np.ndarray] | None = None
    for i, t in enumerate(times):
        if seeks is not None and seeks[i]:
            cursor.seek(t)
        hit = cursor.at(t)
        if hit is None:
            raise MediaError(f"{src.label}: video stream has no decodable frames")
        stamp, frame = hit
        if cursor.ended and t > stamp + cursor.frame_interval + FRAME_END_TOLERANCE_S:
            raise MediaError(
                f"{src.label}: truncated video: its frames end at {stamp + cursor.frame_interval:.3f} s, "
                f"a frame was asked for at {t:.3f} s (tolerance FRAME_END_TOLERANCE_S = {FRAME_END_TOLERANCE_S} s)"
            )
        if last is None or last[0] is not frame:
            last = (frame, frame.to_ndarray(format="rgb24"))
        if out is None:
            out = np.empty((len(times), *last[1].shape), dtype=np.uint8)
        out[i] = last[1]
        stamps[i] = stamp
    assert out is not None
    return VideoFrames(out, stamps)


# --- audio -----------------------------------------------------------------------------------------


def _resample(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Resample a mono float32 signal with libswresample (PyAV's ``AudioResampler``)."""
    if rate == target or samples.size == 0:
        return samples
    frame = av.AudioFrame.from_ndarray(samples[None, :], format="flt", layout="mono")
    frame.sample_rate = rate
    resampler = av.AudioResampler(format="flt", layout="mono", rate=target)
    parts = [f.to_ndarray()[0] for f in resampler.resample(frame)]
    parts += [f.to_ndarray()[0] for f in resampler.resample(None)]
    return np.concatenate(parts).astype(np.float32, copy=False) if parts else np.zeros(0, np.float32)


def _soundfile_audio(src: _Source, fmt: str, sample_rate: int) -> np.ndarray:
    if fmt == "WAV":
        _check_riff_size(src)
    try:
        with src.open() as fh:
            data, rate = sf.read(fh, dtype="float32", always_2d=True)
    except _READ_ERRORS as exc:
        raise MediaError(f"{src.label}: cannot decode {fmt} audio: {exc}") from None
    mono = data.mean(axis=1, dtype=np.float32) if data.shape[1] > 1 else data[:, 0]
    return _resample(np.ascontiguousarray(mono), rate, sample_rate)


def _container_audio(src: _Source, sample_rate: int) -> np.ndarray:
    with _open_container(src) as container:
        _, audio = _main_streams(container)
        if audio is None:
            raise MediaError(f"{src.label}: no audio track")
        resampler = av.AudioResampler(format="fltp", rate=sample_rate)  # keeps channels; mean below
        parts: list[np.ndarray] = []
        try:
            for frame in container.decode(audio):
                parts.extend(f.to_ndarray().mean(axis=0, dtype=np.float32) for f in resampler.resample(frame))
            parts.extend(f.to_ndarray().mean(axis=0, dtype=np.float32) for f in resampler.resample(None))
        except _READ_ERRORS as exc:
            raise MediaError(f"{src.label}: cannot decode audio: {exc}") from None
        samples = np.concatenate(parts) if parts else np.zeros(0, np.float32)
        # Encoders pad the last frame; the stream's duration (edit list) says where the audio ends.
        length = _stream_duration(audio)
        if length is not None:
            samples = samples[: round(length * sample_rate)]
        return np.ascontiguousarray(samples, dtype=np.float32)


def decode_audio(source: MediaSource, sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE) -> np.ndarray:
    """The audio track as mono float32 in [-1, 1] at ``sample_rate`` Hz (channels averaged).

    WAV and FLAC are read with soundfile; anything else (the audio track of MP4/M4A, ...) with
    PyAV. Resampling uses libswresample through PyAV's ``AudioResampler``.
    """
    if not isinstance(sample_rate, int) or sample_rate <= 0:
        raise ValueError(f"sample_rate must be a positive integer, got {sample_rate!r}")
    src = _Source.of(source)
    fmt = src.soundfile_format()
    return _soundfile_audio(src, fmt, sample_rate) if fmt else _container_audio(src, sample_rate)


# --- remux ---------------------------------------------------------------------------------------

#: Output container of :func:`video_track_only` for each input container family (PyAV format names).
_REMUX_FORMATS = {"mp4": "mp4", "mov": "mp4", "webm": "webm", "matroska": "matroska"}


def video_track_only(source: MediaSource) -> bytes:
    """The clip's video stream alone, its packets copied (no re-encoding) into a new file of the same
    container family: for servers that would hear the sound track twice when it also travels as a
    separate audio part (``audio_in_video=separate`` on ``transformers serve``). Raises
    :class:`MediaError` for a clip without video or an unreadable one."""
    src = _Source.of(source)
    with _open_container(src) as container:
        video, _ = _main_streams(container)
        if video is None:
            raise MediaError(f"{src.label}: no video stream")
        family = next((f for f in container.format.name.split(",") if f in _REMUX_FORMATS), "mp4")
        out = io.BytesIO()
        try:
            with av.open(out, "w", format=_REMUX_FORMATS[family]) as muxed:
                stream = muxed.add_stream_from_template(video)
                for packet in container.demux(video):
                    if packet.dts is None:  # the demuxer's flush packet
                        continue
                    packet.stream = stream
                    muxed.mux(packet)
        except _READ_ERRORS as exc:
            raise MediaError(f"{src.label}: cannot copy the video stream: {exc}") from None
    return out.getvalue()


# --- lazy clips ------------------------------------------------------------------------------------


class LazyClip:
    """One clip's media, decoded only when asked for.

    Creating one reads nothing; ``duration`` needs no decoding at all when the record's duration
    is given, and otherwise reads headers only. Decoded frames and audio are not cached, so
    iterating over many clips keeps memory flat.
    """

    __slots__ = ("_source", "_known_duration", "_info", "_sha256")

    def __init__(self, source: MediaSource, duration: float | None = None) -> None:
        if isinstance(source, (bytearray, memoryview)):
            source = bytes(source)
        elif isinstance(source, str):
            source = Path(source)
        elif not isinstance(source, (bytes, Path)):
            raise TypeError(f"LazyClip needs a path or bytes, not {type(source).__name__}")
        self._source: bytes | Path = source
        self._known_duration = float(duration) if duration is not None else None
        self._info: MediaInfo | None = None
        self._sha256: str | None = None

    @property
    def path(self) -> Path | None:
        """The file behind the clip, or None for in-memory bytes."""
        return self._source if isinstance(self._source, Path) else None

    @property
    def duration(self) -> float:
        """Seconds: the known duration when given, else from the headers (no decoding)."""
        return self._known_duration if self._known_duration is not None else self.info.duration_s

    @property
    def info(self) -> MediaInfo:
        """Header facts (probed once, then kept)."""
        if self._info is None:
            self._info = probe(self._source)
        return self._info

    def frames(self, fps: float | None = None, max_frames: int | None = None) -> VideoFrames:
        """Decoded RGB frames; see :func:`decode_frames`."""
        return decode_frames(self._source, fps=fps, max_frames=max_frames)

    def audio(self, sample_rate: int = DEFAULT_AUDIO_SAMPLE_RATE) -> np.ndarray:
        """Mono float32 audio; see :func:`decode_audio`."""
        return decode_audio(self._source, sample_rate=sample_rate)

    @property
    def bytes(self) -> bytes:
        """The encoded file (read from disk for a path clip)."""
        if isinstance(self._source, bytes):
            return self._source
        with _Source.of(self._source).open() as fh:
            return fh.read()

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the encoded file (computed once)."""
        if self._sha256 is None:
            digest = hashlib.sha256()
            if isinstance(self._source, bytes):
                digest.update(self._source)
            else:
                with _Source.of(self._source).open() as fh:
                    while chunk := fh.read(_HASH_CHUNK):
                        digest.update(chunk)
            self._sha256 = digest.hexdigest()
        return self._sha256

    def __repr__(self) -> str:
        where = str(self._source) if isinstance(self._source, Path) else f"<{len(self._source)} bytes>"
        known = f", duration={self._known_duration:g}" if self._known_duration is not None else ""
        return f"LazyClip({where}{known})"


__all__ = [
    "MAX_MEDIA_BYTES",
    "MEDIA_READ_TIMEOUT_S",
    "LazyClip",
    "MediaError",
    "MediaInfo",
    "MediaSource",
    "VideoFrames",
    "decode_audio",
    "decode_frames",
    "probe",
    "read_media",
    "sample_times",
    "video_track_only",
]
