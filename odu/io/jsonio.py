"""JSON and JSONL files as the toolkit writes and reads them: one rule for lines, text and numbers.

* **Lines.** A JSONL file is split on ``"\\n"`` only, never on the other characters
  :meth:`str.splitlines` breaks at (U+2028, U+2029, U+0085, ``\\x1c``-``\\x1e``, ...), which may
  stand unescaped inside a JSON string; a ``"\\r"`` before the ``"\\n"`` is whitespace; blank lines
  are skipped; a UTF-8 byte-order mark at the start is ignored.
* **Text.** Files are UTF-8, and every Unicode string written is read back unchanged. A lone
  surrogate (half of a UTF-16 pair, e.g. ``"\\ud83d"`` from a JSON escape cut in half) is not a
  character and has no UTF-8 form: :data:`SURROGATE_RULE` says what is written instead. A secret
  the process knows (an API key, a URL password: :mod:`odu.io.scrub`) is written as ``***`` inside
  the string values of a JSON file (:func:`json_text`), never in a key or the structure, and
  anywhere in another text (:func:`encode`); a request body (``extra_body``) in a JSON file is
  written by its rule (free strings as ``***``). Nothing else is altered.
* **Numbers.** NaN and ±Infinity are not JSON: :data:`NON_FINITE_RULE` when written; read as
  Python reads them, for the reader of each file to judge (a release record's field names its
  scene, :mod:`odu.core.schema`; a run's scene row, :func:`odu.runs.contract.row_problem`).
* **Size.** Every input is a regular file (:func:`odu.io.files.open_regular`: a FIFO or a device
  is refused before it is read, so nothing blocks on one), each JSONL line or JSON-array element at most :data:`MAX_LINE_BYTES`,
  a JSON file read whole at most :data:`MAX_JSON_FILE_BYTES` and :data:`MAX_JSON_VALUES` values,
  counted before any is built (:func:`value_bound`); past a limit the read stops with
  :class:`JsonFileError`.
* **Nesting.** A value nested deeper than :data:`MAX_RECORD_DEPTH` arrays / objects is refused
  (:class:`JsonFileError`): the decoder stops itself at its recursion limit (far deeper), and the
  value it decoded is checked by a walk without recursion (:func:`too_deep`), so a hostile file
  exhausts neither the decoder's recursion nor that of anything walking the value.
* **Time.** Every read is linear in the size of what is read: the decoder runs first (it stops at
  the first fault), and :func:`too_deep` visits only the arrays and objects the decoder built, so a
  hostile line (cut short, thousands of escaped quotes, brackets by the million) costs about what
  ``json.loads`` costs (``benchmarks/bench_hostile.py``, docs/performance.md).

Records are read one at a time (:func:`iter_records`), from a JSONL file or from a JSON array,
which is streamed too, so a file's records are never all in memory unless the caller keeps them.
"""

from __future__ import annotations

import codecs
import gc
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import IO, Any

from .files import open_regular, replace_file
from .scrub import needs_scrub, scrub_secrets, scrub_value

#: What a writer does with a lone surrogate (documented in docs/scoring.md, "Files of a run").
SURROGATE_RULE = (
    "a lone surrogate is written as U+FFFD (the replacement character); two surrogates forming a "
    "UTF-16 pair are written as the character they encode"
)
#: What a writer does with NaN and ±Infinity.
NON_FINITE_RULE = "NaN and ±Infinity are written as null"

#: Arrays / objects may nest at most this deep in a file's value or record (a release record
#: nests 9 deep: record, annotations, language, evaluation_targets, segments, segment,
#: key_points, key point, tiers); deeper is refused before decoding.
MAX_RECORD_DEPTH = 64
#: The longest JSONL line, or element of a JSON-array file, read (64 MiB: a line may hold a model
#: reply of up to ``odu.transport.openai_client.MAX_RESPONSE_BYTES`` = 16 MiB, escaped); a longer one is
#: refused once this much is read, so a line without end (``/dev/zero``) cannot exhaust memory.
MAX_LINE_BYTES = 64 * 2**20
#: The largest JSON file read whole (``summary.json``, a run card, ``results.json``, a manifest).
MAX_JSON_FILE_BYTES = 256 * 2**20
#: The most values (arrays, objects, keys, strings, numbers, literals) a JSON file read whole may
#: hold, bounded before decoding (:func:`value_bound`): a file within :data:`MAX_JSON_FILE_BYTES`
#: can still decode to 20 times its size in Python objects (``[{},{},...]``: 72 bytes an object
#: for 3 bytes of text), so 180 MB of empty objects took more than 4 GB; a value takes at most
#: about 64 bytes, so this bounds what a file builds to about 64 MB beside its text. A
#: ``summary.json`` holds a few hundred values, a site's manifest a few tens of thousands.
MAX_JSON_VALUES = 1_000_000

#: The codec error handler of :data:`SURROGATE_RULE` (``open(..., errors=SURROGATE_ERRORS)``).
SURROGATE_ERRORS = "odu-surrogates"
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20  # characters read at a time when streaming a JSON array


_DECODER = json.JSONDecoder()
_SPACE = frozenset(" \t\r\n")
_FOLLOWERS = _SPACE | {",", "]"}
_CONTAINERS = frozenset({list, tuple, dict})  # what too_deep descends into (exact types, as decoded)


class JsonFileError(ValueError):
    """A file that is not the JSON / JSONL it should be; the message names the file and line."""


def _replace_surrogates(exc: UnicodeError) -> tuple[bytes, int]:
    """UTF-8 encoding error handler of :data:`SURROGATE_RULE`: pairs joined, lone halves -> U+FFFD
    (returned as bytes: the UTF-8 encoder takes only ASCII text from a handler)."""
    if not isinstance(exc, UnicodeEncodeError) or exc.encoding not in ("utf-8", "utf8"):
        raise exc
    run = exc.object[exc.start : exc.end]
    return run.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8"), exc.end


codecs.register_error(SURROGATE_ERRORS, _replace_surrogates)


def encode(text: str) -> bytes:
    """``text`` (a report, a YAML file: not JSON, :func:`json_text` is for that) as UTF-8, lone
    surrogates replaced by :data:`SURROGATE_RULE`, registered secrets (API keys, URL credentials:
    :func:`odu.io.scrub.scrub_secrets`) by ``***``; never raises."""
    return utf8(scrub_secrets(text))


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, lone surrogates replaced by :data:`SURROGATE_RULE`; nothing else altered
    (for JSON text from :func:`json_text`, already scrubbed); never raises."""
    return text.encode("utf-8", SURROGATE_ERRORS)


def clean_text(text: str) -> str:
    """``text`` with :data:`SURROGATE_RULE` applied (the same string when it has no surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return encode(text).decode("utf-8")
    return text


def _finite(value: Any) -> Any:
    """``value`` with every NaN / ±Infinity float replaced by None (:data:`NON_FINITE_RULE`)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
#: JSON text of a string, exactly as :func:`dumps` writes it (non-ASCII kept as is).
dumps_str: Callable[[str], str] = json.encoder.encode_basestring


def dumps(value: Any, indent: int | None = None, default: Callable[[Any], Any] | None = None) -> str:
    """JSON text of ``value`` (non-ASCII kept as is; :data:`NON_FINITE_RULE`); one line unless ``indent``."""
    if indent is None and default is None:
        try:
            return _ENCODER.encode(value)
        except ValueError:  # NaN or Infinity somewhere (a circular reference fails again below)
            return _ENCODER.encode(_finite(value))
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent, default=default)
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, indent=indent, default=default)


def json_text(value: Any, indent: int | None = None, default: Callable[[Any], Any] | None = None) -> str:
    """:func:`dumps` of ``value`` as it is written: each registered secret (:mod:`odu.io.scrub`) replaced
    by ``***`` inside string values only, never in a key or the structure, so the text is the JSON
    of ``value`` whatever the secret (``OPENAI_API_KEY=true`` cannot rewrite ``true``); a request
    body (``extra_body``) at any depth stored by its rule (:func:`odu.io.scrub.stored_body`)."""
    text = dumps(value, indent=indent, default=default)
    if needs_scrub(text):  # rare: scrub the value, not its text
        text = dumps(scrub_value(value, urls=False), indent=indent, default=default)
    return text


def dump_line(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """One JSONL line of ``value``, encoded (:func:`json_text`, :func:`utf8`), ending in ``"\\n"``."""
    return utf8(json_text(value, default=default)) + b"\n"


def write_json(path: str | Path, value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Write ``value`` as an indented JSON file (:func:`json_text`, :func:`replace_file`); returns the bytes written."""
    data = utf8(json_text(value, indent=2, default=default)) + b"\n"
    replace_file(path, data)
    return data


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around CPU-bound work over many small acyclic objects
    (a decoded line, scoring): its passes over them cost more than the work itself. Reference
    counting still frees everything; results do not change."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def too_deep(value: Any, limit: int = MAX_RECORD_DEPTH) -> bool:
    """Whether the JSON-like ``value`` (what the decoder builds: lists, dicts; tuples too) nests
    more than ``limit`` of them deep. No recursion: one level at a time, the items of all its lists
    and dicts gathered and their kinds found at C speed (``chain``, ``set(map(type, ...))``), the
    items picked one by one only when some but not all of them are lists or dicts.

    >>> too_deep(json.loads('[[["[[[["]]]'), limit=3), too_deep([[[[1]]]], limit=3), too_deep([], limit=0)
    (False, True, True)
    """
    if type(value) not in _CONTAINERS:
        return False
    level: list[Any] = [value]
    kinds: set[type] = {type(value)}
    with gc_paused():
        for _ in range(limit):
            if dict not in kinds:
                nested: Iterable[Any] = level
            elif kinds == {dict}:
                nested = map(dict.values, level)
            else:
                nested = (node.values() if type(node) is dict else node for node in level)
            level = list(chain.from_iterable(nested))
            kinds = set(map(type, level))
            if kinds.isdisjoint(_CONTAINERS):
                return False
            if not kinds <= _CONTAINERS:
                level = [item for item in level if type(item) in _CONTAINERS]
                kinds &= _CONTAINERS
    return True


def nests_too_deep(value: Any, text: str, start: int = 0, end: int | None = None) -> bool:
    """:func:`too_deep` past :data:`MAX_RECORD_DEPTH` for ``value`` decoded from ``text[start:end]``,
    walked only when that text has more ``[`` and ``{`` than the limit: a value holds no more lists
    and dicts than its text has opening brackets (its strings may hold more), so most records are
    passed by two ``str.count`` at C speed (``bench_scoring.py``: the walk cost a third of decoding).

    >>> nests_too_deep([[1]], "[[1]]"), nests_too_deep(json.loads("[" * 65 + "]" * 65), "[" * 65 + "]" * 65)
    (False, True)
    """
    end = len(text) if end is None else end
    brackets = text.count("[", start, end) + text.count("{", start, end)
    return brackets > MAX_RECORD_DEPTH and too_deep(value, MAX_RECORD_DEPTH)


def _loads(text: str, where: str) -> Any:
    """``json.loads`` of one file's or line's text, refusing nesting past :data:`MAX_RECORD_DEPTH`
    (decoded first: the decoder stops at the first fault, so a broken line costs no more than that)."""
    try:
        with gc_paused():  # a line may hold millions of small acyclic objects
            value = json.loads(text)
    except RecursionError:  # the decoder's own guard, far past MAX_RECORD_DEPTH
        raise JsonFileError(f"{where}: nested deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}") from None
    except json.JSONDecodeError as exc:
        raise JsonFileError(f"{where}: not valid JSON ({exc})") from None
    if nests_too_deep(value, text):
        raise JsonFileError(f"{where}: nested deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}")
    return value


def value_bound(data: bytes) -> int:
    """At least the number of values JSON text ``data`` decodes to: each value but the first
    follows a ``,``, ``:``, ``[`` or ``{`` (strings holding them make the bound looser, never too
    small); counted at C speed, before anything is built.

    >>> value_bound(b'{"a": [1, 2], "b": {}}'), value_bound(b"[{},{},{}]"), value_bound(b'"x"')
    (8, 7, 1)
    """
    return 1 + sum(map(data.count, (b",", b":", b"[", b"{")))


def read_json(path: str | Path) -> Any:
    """The value of a JSON file (:class:`JsonFileError` naming it when it is not one, is larger
    than :data:`MAX_JSON_FILE_BYTES` or holds more than :data:`MAX_JSON_VALUES` values;
    :class:`odu.io.files.InputFileError` when it is no regular file)."""
    path = Path(path)
    with open_regular(path) as fh:
        data = fh.read(MAX_JSON_FILE_BYTES + 1)
    if len(data) > MAX_JSON_FILE_BYTES:
        raise JsonFileError(f"{path}: larger than MAX_JSON_FILE_BYTES = {MAX_JSON_FILE_BYTES:,} bytes")
    if value_bound(data) > MAX_JSON_VALUES:
        raise JsonFileError(
            f"{path}: more than MAX_JSON_VALUES = {MAX_JSON_VALUES:,} values (arrays, objects, keys, strings, "
            "numbers), refused before decoding"
        )
    return _loads(_text(data, path), str(path))


def _text(data: bytes, path: Path, line: int | None = None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"{path}:{line}" if line else str(path)
        raise JsonFileError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def bounded_lines(fh: IO[bytes], path: Path) -> Iterator[bytes]:
    """The lines of a file opened in binary mode (split on ``"\\n"`` only), each at most
    :data:`MAX_LINE_BYTES` (:class:`JsonFileError` naming the line past it)."""
    number = 0
    while line := fh.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise JsonFileError(f"{path}:{number}: a line longer than MAX_LINE_BYTES = {MAX_LINE_BYTES:,} bytes")
        yield line


def iter_lines(lines: Iterable[bytes], path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of JSONL ``lines`` (:func:`bounded_lines` of a
    file opened in binary mode); ``path`` names the file in errors."""
    for number, raw in enumerate(lines, 1):
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if raw.isspace() or not raw:
            continue
        yield number, _loads(_text(raw, path, number), f"{path}:{number}")


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each record of a JSONL file, read one line at a time."""
    path = Path(path)
    with open_regular(path) as fh:
        yield from iter_lines(bounded_lines(fh, path), path)


def _iter_array(fh: IO[str], path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each element of a JSON array file, decoded as the file is read."""
    buf, pos = "", 0
    mark, line = 0, 1  # line is the number of the line holding buf[mark]

    def line_at(at: int) -> int:
        nonlocal mark, line
        line += buf.count("\n", mark, at)
        mark = at
        return line

    def more() -> bool:
        """Drop what is consumed (before ``pos``) and read the next chunk; False at the end."""
        nonlocal buf, pos, mark
        chunk = fh.read(_CHUNK)
        if not chunk:
            return False
        line_at(pos)
        buf, pos, mark = buf[pos:] + chunk, 0, 0
        return True

    def skip_space() -> str:
        """Advance past whitespace; the next character, "" at the end of the file."""
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos] in _SPACE:
                pos += 1
            if pos < len(buf):
                return buf[pos]
            if not more():
                return ""

    def fail(message: str, at: int) -> JsonFileError:
        return JsonFileError(f"{path}:{line_at(max(at, mark))}: not a valid JSON array ({message})")

    more()
    if buf.startswith("\ufeff"):
        pos = 1
    if skip_space() != "[":
        raise fail("expected '['", pos)
    pos += 1
    if skip_space() == "]":
        pos += 1
    else:
        while True:
            while True:
                try:
                    value, end = _DECODER.raw_decode(buf, pos)
                except RecursionError:  # the decoder's own guard, far past MAX_RECORD_DEPTH
                    raise fail(f"nested deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}", pos) from None
                except json.JSONDecodeError as exc:
                    if len(buf) - pos > MAX_LINE_BYTES:
                        raise fail(f"an element longer than MAX_LINE_BYTES = {MAX_LINE_BYTES:,}", pos) from None
                    if more():
                        continue
                    raise fail(exc.msg, exc.pos) from None
                # a value must be followed by a separator; a number cut at the buffer's end ("1." of
                # "1.5") decodes, so read on before taking it
                if (end < len(buf) and buf[end] in _FOLLOWERS) or not more():
                    break
            if nests_too_deep(value, buf, pos, end):
                raise fail(f"nested deeper than MAX_RECORD_DEPTH = {MAX_RECORD_DEPTH}", pos)
            yield line_at(pos), value
            pos = end
            separator = skip_space()
            pos += 1
            if separator == "]":
                break
            if separator != ",":
                raise fail("expected ',' or ']'" if separator else "the array is not closed", pos - 1)
            if skip_space() == "]":
                raise fail("trailing comma", pos)
    if skip_space():
        raise fail("extra data after the array", pos)


def iter_records(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each record of a JSON array file or a JSONL file, streamed.

    A file whose first non-blank character is ``[`` is a JSON array; anything else is JSONL.
    Raises :class:`JsonFileError` naming the file and line of anything unreadable, and
    :class:`OSError` when the file cannot be opened.
    """
    path = Path(path)
    with open_regular(path) as probe:
        head = probe.read(4096).removeprefix(_BOM).lstrip()
        skipped = 0
        while not head and skipped < MAX_LINE_BYTES and (chunk := probe.read(4096)):
            head, skipped = chunk.lstrip(), skipped + len(chunk)
    if head.startswith(b"["):
        with open_regular(path) as raw, io.TextIOWrapper(raw, encoding="utf-8", newline="") as fh:
            try:
                yield from _iter_array(fh, path)
            except UnicodeDecodeError as exc:
                raise JsonFileError(f"{path}: not UTF-8 ({exc.reason})") from None
    else:
        yield from iter_jsonl(path)


__all__ = [
    "MAX_JSON_FILE_BYTES",
    "MAX_JSON_VALUES",
    "MAX_LINE_BYTES",
    "MAX_RECORD_DEPTH",
    "NON_FINITE_RULE",
    "SURROGATE_ERRORS",
    "SURROGATE_RULE",
    "JsonFileError",
    "clean_text",
    "dump_line",
    "dumps",
    "nests_too_deep",
    "dumps_str",
    "encode",
    "gc_paused",
    "iter_jsonl",
    "iter_lines",
    "bounded_lines",
    "iter_records",
    "json_text",
    "read_json",
    "too_deep",
    "utf8",
    "value_bound",
    "write_json",
]
