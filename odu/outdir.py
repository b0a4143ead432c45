"""Output folders: the one rule for every command that writes a folder (``score``, ``eval``,
``merge``, ``view``, ``report``, ``prepare``).

* **Written whole.** A command writes into a fresh hidden work folder beside the target
  (``.NAME.partial-PID-XXXXXXXX``, made by :func:`work_dir`; nothing in it is a link) and renames
  it into place once complete (:func:`swap_in`); the folder it replaces is renamed aside
  (``.NAME.replaced-PID-...``) and deleted only after the swap. A killed command leaves its work
  folder; the next command into the same place deletes those of processes no longer running
  (:func:`remove_leftovers`).
* **Only an earlier output is replaced.** An existing target is replaced only when it is empty or
  everything in it is an earlier output of the same kind (a :class:`FolderKind`, defined beside
  its writer: :data:`odu.run.RUN` and :data:`odu.run.RUNS`, :data:`odu.report.view.site.VIEW_SITE`,
  :data:`odu.data.prepare.PREPARED`, :data:`odu.report.REPORT`): otherwise :class:`OutDirError`
  names what replacing it would delete, ``--overwrite`` or not. Links and special files inside it are never
  an output's own (nothing is followed), and a target that is itself a link is refused: no
  command writes through a link it did not make.
* **Adding files** (``export``, which adds each run's files to a folder that may hold others'):
  nothing on the way to a file may be a link (:func:`check_no_link`), and each file is replaced,
  never written through (:func:`odu.files.replace_file`).
* **Apart from the inputs.** ``--out`` may never be, contain, or lie inside an input of the same
  command (:func:`check_apart`; paths compared with links resolved).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Protocol

#: How many names a message lists before "(+N more)".
SHOWN_NAMES = 4
#: Hidden work folders beside a target ``NAME``: ``.NAME.partial-PID-...`` (being written) and
#: ``.NAME.replaced-PID-...`` (the copy being replaced), PID the writing process.
_WORK_DIR = re.compile(r"\.(?P<name>.+)\.(?:partial|replaced)-(?P<pid>\d+)-[^/]*")


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
        if entry.is_dir() and not entry.is_symlink():
            yield from _entries(entry, f"{rel}/")


def _regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


@dataclass(frozen=True)
class PatternKind:
    """An output recognised by its ``marker`` file and the paths it writes (``patterns``: relative
    POSIX paths, ``fnmatch`` per path part). Without the marker nothing in the folder is its own."""

    what: str
    marker: str
    patterns: tuple[str, ...]

    def _own(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for pattern in self.patterns:
            wanted = pattern.split("/")
            if is_dir:
                wanted = wanted[: len(parts)] if len(wanted) > len(parts) else []
            if len(wanted) == len(parts) and all(fnmatchcase(p, w) for p, w in zip(parts, wanted)):
                return True
        return False

    def foreign(self, folder: Path) -> list[str]:
        if not _regular(folder / self.marker):
            return [rel for rel, _ in _entries(folder) if "/" not in rel]
        found = []
        for rel, path in _entries(folder):
            is_dir = path.is_dir() and not path.is_symlink()
            if not (is_dir or _regular(path)) or not self._own(rel, is_dir):
                found.append(rel)
        return [rel for rel in found if not any(rel.startswith(f"{f}/") for f in found)]


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
            f"{option} {target}: holds files that are not part of {kind.what} ({shown(foreign)}); replacing it "
            "would delete them, so it is never replaced: choose a new folder"
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
    rather than replace it whole; the file itself is replaced, link or not: :func:`odu.files.replace_file`)."""
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
    kind: FolderKind,
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    overwrite: bool = True,
    option: str = "--out",
) -> Iterator[Path]:
    """Check ``target`` (:func:`check_target`), give a work folder to write into, and swap it in
    when the block ends normally; on any exception (Ctrl-C included) the work folder is removed
    and the target is left as it was."""
    check_target(target, kind, inputs=inputs, overwrite=overwrite, option=option)
    work = work_dir(target, option)
    try:
        yield work
        swap_in(work, target, kind, option)
    finally:
        shutil.rmtree(work, ignore_errors=True)


__all__ = [
    "FolderKind",
    "OutDirError",
    "PatternKind",
    "check_apart",
    "check_no_link",
    "check_target",
    "clear",
    "remove_leftovers",
    "shown",
    "swap_in",
    "work_dir",
    "writing",
]
