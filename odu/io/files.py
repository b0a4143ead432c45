"""Files as every command reads and writes them: the one opener of inputs and the one way to
replace an output file.

* **Regular files only.** :func:`open_regular` opens without blocking, then checks what it
  opened: a FIFO, a device (``/dev/zero``) or a socket is refused with :class:`InputFileError`
  before a byte is read, so no input can block a command forever or feed it without end.
* **Bounded reads.** :func:`read_bounded` reads a whole file up to a size limit and a deadline
  (media: :data:`odu.data.media.MAX_MEDIA_BYTES`, :data:`odu.data.media.MEDIA_READ_TIMEOUT_S`);
  JSON and JSONL have their own limits per file and per line (:mod:`odu.io.jsonio`).
* **Hashed as read.** :func:`sha256_file` is the one SHA-256 of a file's bytes (a run's files,
  an output folder's manifest, a prepared dataset's shards), read 1 MiB at a time.
* **Never through a link.** :func:`replace_file` writes a new file beside the target and renames
  it over the target: a link there is replaced, never followed, and no reader sees half a file.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import IO

_CHUNK = 1 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")


class InputFileError(OSError):
    """An input that is not a regular file, is larger than its limit, or took longer than its
    deadline to read: ``strerror`` says which (and the limit), ``filename`` names it."""

    def __init__(self, code: int, reason: str, path: str | os.PathLike[str]) -> None:
        super().__init__(code, reason, str(path))


def open_regular(path: str | os.PathLike[str]) -> IO[bytes]:
    """``path`` opened for binary reading if it is a regular file (:class:`InputFileError`
    otherwise; :class:`OSError` when it cannot be opened)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputFileError(errno.EINVAL, "not a regular file (a FIFO, a device or a socket is never read)", path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | os.PathLike[str], limit: int, deadline_s: float, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), refused with
    :class:`InputFileError` past ``limit`` bytes or ``deadline_s`` seconds (checked between reads
    of 1 MiB: a file that trickles, on a stalled network share, say)."""
    started = time.monotonic()
    chunks: list[bytes] = []
    size = 0
    with open_regular(path) as fh:
        while chunk := fh.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise InputFileError(errno.EFBIG, f"{what} larger than {limit:,} bytes", path)
            if time.monotonic() - started > deadline_s:
                raise InputFileError(errno.ETIMEDOUT, f"{what} not read within {deadline_s:g} s", path)
            chunks.append(chunk)
    return b"".join(chunks)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 (hex) of the regular file ``path`` (:func:`open_regular`), read 1 MiB at a time."""
    digest = hashlib.sha256()
    with open_regular(path) as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_sha256(value: object) -> bool:
    """Whether ``value`` is a SHA-256 as :func:`sha256_file` gives it (64 lowercase hex digits): the
    only hash a file may be named by or listed with (never a path like ``../x``)."""
    return isinstance(value, str) and _SHA256.fullmatch(value) is not None


def replace_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` as the file ``path``: into a new file beside it, then renamed over it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


__all__ = ["InputFileError", "is_sha256", "open_regular", "read_bounded", "replace_file", "sha256_file"]
