"""Bounded reads (``odu/io/files.py``, ``odu/io/jsonio.py``, ``odu.data.media.read_media``), each
limit at its edge: only regular files are opened (never blocking on a FIFO), a whole file up to
its size and within its deadline, a JSONL line or JSON-array element up to ``MAX_LINE_BYTES``, a
JSON file up to ``MAX_JSON_FILE_BYTES`` and ``MAX_JSON_VALUES``."""

from __future__ import annotations

import concurrent.futures
import errno
import os
from pathlib import Path

import pytest

import odu.io.jsonio as jsonio
from odu.data.media import MediaError, read_media
from odu.io.files import InputFileError, open_regular, read_bounded
from odu.io.jsonio import JsonFileError, iter_jsonl, iter_records, read_json


def _within(seconds: float, call, *args):
    """``call(*args)`` in a thread: its result or exception, or TimeoutError after ``seconds``."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(call, *args).result(timeout=seconds)
    finally:
        pool.shutdown(wait=False)


def _fifo(path: Path) -> Path:
    """A FIFO nobody writes to: a blocking open waits for ever. Opened for writing at the end of
    the test, so that such an open (a fault) ends and the test process can exit."""
    os.mkfifo(path)
    return path


@pytest.fixture(autouse=True)
def _unblock_fifos(tmp_path: Path):
    yield
    for fifo in tmp_path.iterdir():
        if fifo.is_fifo():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader blocked on it
                pass


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "fifo")
    with pytest.raises(InputFileError, match="not a regular file") as refused:
        _within(10, open_regular, fifo)
    assert refused.value.errno == errno.EINVAL and refused.value.filename == str(fifo)


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused(path: str) -> None:
    with pytest.raises(InputFileError, match="not a regular file"):
        open_regular(path)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        open_regular(tmp_path)


def test_a_regular_file_reads_in_full_up_to_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 3_000_000)
    assert read_bounded(path, 3_000_000, 60) == b"x" * 3_000_000
    with pytest.raises(InputFileError, match="larger than 2,999,999 bytes") as refused:
        read_bounded(path, 2_999_999, 60, "media")
    assert refused.value.errno == errno.EFBIG


def test_a_read_past_its_deadline_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 3_000_000)
    with pytest.raises(InputFileError, match="not read within 0 s"):
        read_bounded(path, 10**9, 0.0)


def test_read_media_refuses_a_fifo_and_names_it(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "clip.wav")
    with pytest.raises(MediaError, match=f"{fifo}: cannot read \\(not a regular file"):
        _within(10, read_media, fifo)


def test_read_media_of_a_file_past_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import odu.data.media as media

    monkeypatch.setattr(media, "MAX_MEDIA_BYTES", 10)
    (tmp_path / "a.wav").write_bytes(b"x" * 11)
    with pytest.raises(MediaError, match="media larger than 10 bytes"):
        read_media(tmp_path / "a.wav")


# --- JSON and JSONL ----------------------------------------------------------------------------------------


def test_a_line_up_to_the_limit_is_read_one_past_it_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonio, "MAX_LINE_BYTES", 20)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": "' + b"y" * 11 + b'"}\n')  # 21 bytes with its newline
    with pytest.raises(JsonFileError, match=f"{path}:1: a line longer than MAX_LINE_BYTES = 20 bytes"):
        list(iter_jsonl(path))
    path.write_bytes(b'{"a": "' + b"y" * 10 + b'"}\n')  # 20 bytes
    assert list(iter_jsonl(path)) == [(1, {"a": "y" * 10})]


def test_a_json_array_element_past_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonio, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(jsonio, "_CHUNK", 64)  # the element spans several reads
    path = tmp_path / "x.json"
    path.write_text('[{"a": 1}, {"b": "' + "z" * 5000 + '"}]')
    with pytest.raises(JsonFileError, match="an element longer than MAX_LINE_BYTES = 1,000"):
        list(iter_records(path))


def test_a_json_file_past_its_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonio, "MAX_JSON_FILE_BYTES", 8)
    path = tmp_path / "s.json"
    path.write_text('{"a": 12}')  # 9 bytes
    with pytest.raises(JsonFileError, match="larger than MAX_JSON_FILE_BYTES = 8 bytes"):
        read_json(path)
    path.write_text('{"a": 1}')
    assert read_json(path) == {"a": 1}


def test_a_json_file_of_more_values_than_its_limit_is_refused_before_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37: 180 MB of ``{}`` in a summary.json decoded to more than 4 GB of objects. The values
    are counted first (one per ``,`` ``:`` ``[`` ``{``), so nothing is built past the limit."""
    monkeypatch.setattr(jsonio, "MAX_JSON_VALUES", 9)
    path = tmp_path / "summary.json"
    path.write_text('{"a": [1, {"x": 0}], "b": ""}')  # 9: {...}, "a", [...], 1, {...}, "x", 0, "b", ""
    assert read_json(path) == {"a": [1, {"x": 0}], "b": ""}
    path.write_text('{"a": [1, {"x": 0}, 2], "b": ""}')  # one more
    decoded = []
    monkeypatch.setattr(jsonio, "_loads", lambda text, where: decoded.append(where))
    with pytest.raises(JsonFileError, match=f"{path}: more than MAX_JSON_VALUES = 9 values"):
        read_json(path)
    assert decoded == []


def test_jsonl_and_json_inputs_are_regular_files_only(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "p.jsonl")
    with pytest.raises(InputFileError):
        _within(10, lambda: list(iter_records(fifo)))
    with pytest.raises(InputFileError):
        _within(10, read_json, fifo)


def test_a_line_without_end_is_never_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``/dev/zero`` did: a stream with no newline ever. At most ``MAX_LINE_BYTES`` + 1 bytes
    are asked for, then the line is refused (a read without a limit would take all memory)."""
    monkeypatch.setattr(jsonio, "MAX_LINE_BYTES", 1000)

    class Endless:
        asked: list[int] = []

        def readline(self, size: int = -1) -> bytes:
            if size is None or size < 0:
                raise AssertionError("a line read without a limit")
            self.asked.append(size)
            return b"x" * size

    with pytest.raises(JsonFileError, match="a line longer than MAX_LINE_BYTES = 1,000 bytes"):
        list(jsonio.bounded_lines(Endless(), tmp_path / "endless"))  # type: ignore[arg-type]
    assert Endless.asked == [1001]
