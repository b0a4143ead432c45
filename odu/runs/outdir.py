"""Output folders: the one rule for every command that writes a folder (``score``, ``eval``,
``merge``, ``view``, ``report``, ``prepare``).

* **Written whole.** A command writes into a fresh hidden work folder beside the target
  (``.NAME.partial-PID-XXXXXXXX``, made by :func:`work_dir`; nothing in it is a link) and renames
  it into place once complete (:func:`swap_in`); the folder it replaces is renamed aside
  (``.NAME.replaced-PID-...``) and deleted only after the swap. A killed command leaves its work
  folder; the next command into the same place deletes those of processes no longer running
  (:func:`remove_leftovers`).
* **Only what the command wrote, as it wrote it.** Every output folder carries a manifest written
  by the command that made it, listing each file it wrote with its SHA-256: a run's
  ``summary.json`` (its ``files``, :data:`odu.runs.contract.RUN`), the view site's, report's and prepared
  dataset's :data:`MANIFEST_NAME` (:class:`ManifestKind`: :data:`odu.report.view.site.VIEW_SITE`,
  :data:`odu.report.REPORT`, :data:`odu.data.prepare.PREPARED`; written by :func:`writing`). An
  existing target is replaced only when it is empty or everything in it is listed there and
  still has the listed hash (:func:`unwritten`, checked before anything is deleted): a file the
  manifest does not list (whatever its name), a file changed since it was written, a link or a
  special file, or a folder without a readable manifest of the same kind makes
  :class:`OutDirError` name it, ``--overwrite`` or not, and nothing is deleted. A target that is
  itself a link is refused: no command writes through a link it did not make.
* **Adding files** (``export``, which adds each run's files to a folder that may hold others'):
  nothing on the way to a file may be a link (:func:`check_no_link`), and each file is replaced,
  never written through (:func:`odu.io.files.replace_file`).
* **Apart from the inputs.** ``--out`` may never be, contain, or lie inside an input of the same
  command (:func:`check_apart`; paths compared with links resolved).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..io.files import is_sha256, sha256_file
from ..io.jsonio import JsonFileError, read_json, write_json

#: How many names a message lists before "(+N more)".
SHOWN_NAMES = 4
#: Hidden work folders beside a target ``NAME``: ``.NAME.partial-PID-...`` (being written) and
#: ``.NAME.replaced-PID-...`` (the copy being replaced), PID the writing process.
_WORK_DIR = re.compile(r"\.(?P<name>.+)\.(?:partial|replaced)-(?P<pid>\d+)-[^/]*")
#: The manifest a :class:`ManifestKind` output carries: what wrote it, its folders, and every
#: file it wrote with its SHA-256 (relative POSIX paths).
MANIFEST_NAME = ".odu-written.json"
MANIFEST_FORMAT = "odu-bench-written/1"


class OutDirError(ValueError):
    """A target folder that cannot take the output: the message names it, what it holds and the fix."""


def shown(names: Sequence[str], limit: int = SHOWN_NAMES) -> str:
    """``names`` for a message: the first ``limit``, then how many more."""
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


class FolderKind(Protocol):
    """What a command writes: ``what`` names it in messages; :meth:`foreign` lists the entries of
    an existing folder (relative POSIX paths) that are not an earlier output's own."""

    @property
    def what(self) -> str: ...

    def foreign(self, folder: Path) -> list[str]: ...


def _entries(folder: Path, prefix: str = "") -> Iterator[tuple[str, Path]]:
    """(relative path, path) of every entry under ``folder``, recursively, links not followed."""
    for entry in sorted(folder.iterdir()):
        rel = f"{prefix}{entry.name}"
        yield rel, entry
        if _folder(entry):
            yield from _entries(entry, f"{rel}/")


def _regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def unwritten(
    folder: Path, files: Mapping[str, str], folders: Collection[str] = (), manifest: str = MANIFEST_NAME
) -> list[str]:
    """The entries of ``folder`` (relative POSIX paths, outermost only) that its manifest does not
    vouch for: anything not listed in ``files`` (path -> SHA-256) or ``folders``, a listed file whose
    bytes no longer have the listed hash, a link or a special file. ``manifest`` (the file holding
    the list) is its own."""

    def walk(at: Path, prefix: str) -> Iterator[str]:
        for entry in sorted(at.iterdir()):
            rel = f"{prefix}{entry.name}"
            if _folder(entry) and rel in folders:
                yield from walk(entry, f"{rel}/")
            elif not _regular(entry) or (rel != manifest and files.get(rel) != sha256_file(entry)):
                yield rel

    return list(walk(folder, ""))


def manifest_object(path: Path) -> dict[str, Any] | None:
    """The JSON object a manifest file holds (a run's ``summary.json``, :data:`MANIFEST_NAME`); None
    when ``path`` is missing, a link or special file, unreadable, or holds no object."""
    if not _regular(path):
        return None
    try:
        held = read_json(path)
    except (JsonFileError, OSError):
        return None
    return held if isinstance(held, dict) else None


@dataclass(frozen=True)
class ManifestKind:
    """An output that carries its manifest (:data:`MANIFEST_NAME`, written by :func:`writing`):
    every file in it must be listed there with its hash, and the manifest must name ``what``.
    Without a readable manifest of the same kind nothing in the folder is its own."""

    what: str

    def foreign(self, folder: Path) -> list[str]:
        listed = self.manifest(folder)
        if listed is None:
            return [e.name for e in sorted(folder.iterdir())]
        files, folders = listed
        return unwritten(folder, files, folders)

    def manifest(self, folder: Path) -> tuple[dict[str, str], set[str]] | None:
        """``(files, folders)`` of the manifest in ``folder``; None unless it is a regular file, JSON,
        of :data:`MANIFEST_FORMAT`, written by this kind, every hash a SHA-256."""
        held = manifest_object(folder / MANIFEST_NAME)
        if held is None or held.get("format") != MANIFEST_FORMAT or held.get("what") != self.what:
            return None
        files, folders = held.get("files"), held.get("folders")
        if not isinstance(files, dict) or not all(is_sha256(h) for h in files.values()):
            return None
        if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
            return None
        return files, set(folders)

    def seal(self, folder: Path) -> None:
        """Write the manifest of everything in ``folder`` (the finished work folder)."""
        files = {rel: sha256_file(path) for rel, path in _entries(folder) if _regular(path)}
        folders = [rel for rel, path in _entries(folder) if _folder(path)]
        write_json(
            folder / MANIFEST_NAME, {"format": MANIFEST_FORMAT, "what": self.what, "folders": folders, "files": files}
        )


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


def check_apart(
    out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str] | None], option: str = "--out"
) -> None:
    """:class:`OutDirError` when ``out`` is, contains or lies inside one of ``inputs`` (those that
    exist; links resolved)."""
    target = _real(out)
    for given in inputs:
        if given is None or not os.path.lexists(given):
            continue
        source = _real(given)
        if source == target:
            how = "is"
        elif target in source.parents:
            how = "contains"
        elif source in target.parents:
            how = "lies inside"
        else:
            continue
        raise OutDirError(
            f"{option} {out} {how} the input {given}: writing there could delete or change what this "
            "command reads; choose a folder apart from its inputs"
        )


def check_target(
    out: str | os.PathLike[str],
    kind: FolderKind,
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    overwrite: bool = True,
    option: str = "--out",
) -> bool:
    """Refuse (:class:`OutDirError`) a target that cannot take a new output of ``kind`` (module
    docstring); ``overwrite=False`` refuses an earlier output too. True when the target holds an
    earlier output that the new one will replace."""
    check_apart(out, inputs, option)
    target = Path(out)
    if target.is_symlink():
        raise OutDirError(f"{option} {target}: is a symbolic link; nothing is written through it: name a real folder")
    if not target.exists():
        return False
    if not target.is_dir():
        raise OutDirError(f"{option} {target}: exists and is not a directory")
    if not any(target.iterdir()):
        return False
    foreign = kind.foreign(target)
    if foreign:
        raise OutDirError(
            f"{option} {target}: holds files that are not part of {kind.what} ({shown(foreign)}): not written by "
            "it, or changed since; replacing it would delete them, so it is never replaced: choose a new folder"
        )
    if not overwrite:
        held = [e.name for e in sorted(target.iterdir())]
        raise OutDirError(
            f"{option} {target}: holds {kind.what} ({shown(held)}); pass --overwrite to replace it, "
            "or choose a new folder"
        )
    return True


def check_no_link(root: str | os.PathLike[str], path: str | os.PathLike[str], option: str = "--out") -> None:
    """:class:`OutDirError` when ``root`` or a folder between it and the file ``path`` is a symbolic
    link: the file would land where the link points (for commands that add files to a folder
    rather than replace it whole; the file itself is replaced, link or not: :func:`odu.io.files.replace_file`)."""
    root, step = Path(root), Path(root)
    for part in ("", *Path(path).relative_to(root).parts[:-1]):
        step = step / part if part else step
        if step.is_symlink():
            raise OutDirError(f"{option} {root}: {step} is a symbolic link; nothing is written through it")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (our own and another user's count)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_leftovers(target: str | os.PathLike[str]) -> list[Path]:
    """Delete the work folders of ``target`` left by processes that no longer run (a killed
    command); those of a live process are left alone. Returns those deleted."""
    target = Path(target).absolute()
    removed: list[Path] = []
    if os.name != "posix" or not target.parent.is_dir():
        return removed
    for path in target.parent.iterdir():
        match = _WORK_DIR.fullmatch(path.name)
        if match and match["name"] == target.name and path.is_dir() and not path.is_symlink():
            if not _alive(int(match["pid"])):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def work_dir(target: str | os.PathLike[str], option: str = "--out") -> Path:
    """A fresh hidden work folder beside ``target`` (its parent made if needed; leftovers of killed
    commands removed first)."""
    target = Path(target).absolute()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(target)
        return Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-{os.getpid()}-", dir=target.parent))
    except OSError as exc:
        raise OutDirError(f"{option} {target}: cannot create the folder ({exc.strerror or exc})") from None


def _moved_aside(target: Path) -> Path:
    """``target`` renamed to a fresh hidden name beside it (``.NAME.replaced-PID-...``)."""
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.replaced-{os.getpid()}-", dir=target.absolute().parent))
    aside.rmdir()
    os.rename(target, aside)
    return aside


def swap_in(work: Path, target: str | os.PathLike[str], kind: FolderKind, option: str = "--out") -> Path:
    """Move the finished ``work`` folder into place at ``target``, replacing what is there (checked
    again: an earlier output of ``kind`` only), so that readers see the old folder or the new one,
    never half of one. Returns ``target``."""
    target = Path(target)
    if check_target(target, kind, option=option):
        aside = _moved_aside(target)
        os.rename(work, target)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        if target.is_dir():
            target.rmdir()
        os.rename(work, target)
    return target


def clear(target: str | os.PathLike[str], kind: FolderKind, option: str = "--out") -> None:
    """Delete an earlier output of ``kind`` at ``target`` (checked again first; nothing else is ever
    deleted): renamed aside at once, then removed."""
    target = Path(target)
    if check_target(target, kind, option=option):
        shutil.rmtree(_moved_aside(target), ignore_errors=True)


@contextlib.contextmanager
def writing(
    target: str | os.PathLike[str],
    kind: ManifestKind,
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    overwrite: bool = True,
    option: str = "--out",
) -> Iterator[Path]:
    """Check ``target`` (:func:`check_target`), give a work folder to write into, and, when the
    block ends normally, write its manifest (:meth:`ManifestKind.seal`) and swap it in; on any
    exception (Ctrl-C included) the work folder is removed and the target is left as it was."""
    check_target(target, kind, inputs=inputs, overwrite=overwrite, option=option)
    work = work_dir(target, option)
    try:
        yield work
        kind.seal(work)
        swap_in(work, target, kind, option)
    finally:
        shutil.rmtree(work, ignore_errors=True)


__all__ = [
    "MANIFEST_NAME",
    "FolderKind",
    "ManifestKind",
    "OutDirError",
    "check_apart",
    "check_no_link",
    "check_target",
    "clear",
    "manifest_object",
    "remove_leftovers",
    "shown",
    "swap_in",
    "unwritten",
    "work_dir",
    "writing",
]
