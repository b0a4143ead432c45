"""Mutation check: do the tests catch deliberate one-line faults in the core?

Each fault replaces one exact piece of source text (found exactly once in its file) by a wrong
one, the kind of slip a change could make: a threshold off by one step, a comparison flipped, a
check dropped, the wrong denominator. The faults are data, one TOML file per group in
``scripts/mutation/`` (:data:`GROUPS` gives the order); each file also names the test files that
pin its part of the core. Every fault is applied, one at a time, to a temporary copy of the
repository (never to the working tree), and the test files of its group run against that copy
(``pytest -x``, with a per-fault timeout). A fault is *killed* when a test fails (or the run times
out), *survived* when every test passes. The kill rate is killed / (faults run), equivalent faults
(which change no observable behaviour; each says why) left out.

It is slow (minutes), so neither the test suite nor CI runs it; ``tests/project/test_mutation_faults.py``
only checks that the fault files read and that every fault still applies cleanly. Run::

    python scripts/mutation.py                        # every group
    python scripts/mutation.py --group match --group metrics
    python scripts/mutation.py --exclude-group transport --json mutation.json --min-rate 0.95
    python scripts/mutation.py --list                 # the faults, nothing run

Exit status: 0, or 1 when the kill rate is below ``--min-rate`` (or a fault file is malformed), 2
when the unmutated copy already fails its tests. The figure is quoted in ``docs/performance.md``
("Mutation check").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency on Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
#: The fault files, ``<group>.toml`` each.
FAULTS_DIR = ROOT / "scripts" / "mutation"
#: The groups, in the order their faults are listed and run: one fault file each.
GROUPS = tuple(
    """
    match metrics text parse scoring schema constants tables report judge transport
    scrub containment shards estimate rundirs outfolders clipserve pairing lmmshooks contentcache
    preflight replicas viewer judgecache bounds vllm keyshape linearread urlrule cardyaml export newcomer2
    bodies
    console
    p4runs p4shards p4export p4clips p4hearing p4depth
    p4secrets p4replicas p4owner p4errors
    p4match p4parse p4judge p4viewer
    """.split()
)
#: The keys of a fault file, and of each of its ``[[fault]]`` tables (all but ``equivalent`` required).
GROUP_KEYS = ("description", "tests", "fault")
FAULT_KEYS = ("name", "path", "old", "new", "equivalent")

#: Seconds one fault's test run may take before it counts as killed (a hang is a caught fault).
FAULT_TIMEOUT_S = 600


@dataclass(frozen=True)
class Fault:
    """Replace ``old`` (exactly once in ``path``) by ``new``. ``equivalent`` explains why a fault
    changes no observable behaviour; such faults are listed but not run or counted."""

    name: str
    group: str
    path: str
    old: str
    new: str
    equivalent: str = ""


@dataclass(frozen=True)
class Group:
    """One fault file: what the group pins, the test files its faults run against, its faults."""

    name: str
    description: str
    tests: tuple[str, ...]
    faults: tuple[Fault, ...]


class FaultFileError(ValueError):
    """A fault file the runner cannot read as one; the message names the file and the fault."""


def _shown(path: Path) -> Path:
    """``path`` as messages name it: relative to the repository where it lies inside."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def _strings(value: Any) -> bool:
    """Whether ``value`` is a non-empty list of non-empty strings."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v for v in value)


def read_group(path: Path) -> Group:
    """The group of the fault file ``path`` (its name is the file's stem)."""
    where = _shown(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise FaultFileError(f"{where}: {exc}") from None
    unknown = sorted(set(data) - set(GROUP_KEYS))
    if unknown:
        raise FaultFileError(f"{where}: unknown key(s) {unknown}; a group holds {', '.join(GROUP_KEYS)}")
    description, tests, faults = data.get("description"), data.get("tests"), data.get("fault")
    if not isinstance(description, str) or not description or "\n" in description:
        raise FaultFileError(f"{where}: description must be one line of text")
    if not _strings(tests):
        raise FaultFileError(f"{where}: tests must be a list of test files")
    if not isinstance(faults, list) or not faults:
        raise FaultFileError(f"{where}: no [[fault]] table")
    read: list[Fault] = []
    for n, table in enumerate(faults, 1):
        if not isinstance(table, dict):
            raise FaultFileError(f"{where}: fault {n}: not a [[fault]] table")
        name = table.get("name")
        which = f"fault {name!r}" if isinstance(name, str) and name else f"fault {n}"
        problems = []
        if unknown := sorted(set(table) - set(FAULT_KEYS)):
            problems.append(f"unknown key(s) {unknown}")
        if missing := [k for k in FAULT_KEYS if k not in table and k != "equivalent"]:
            problems.append(f"missing key(s) {missing}")
        if wrong := [k for k, v in table.items() if k in FAULT_KEYS and not isinstance(v, str)]:
            problems.append(f"not text: {wrong}")
        if empty := [k for k in ("name", "path", "old", "equivalent") if table.get(k) == ""]:
            problems.append(f"empty: {empty}")  # only ``new`` may be: the fault deletes ``old``
        if any(f.name == name for f in read):
            problems.append("named twice in the file")
        if problems:
            raise FaultFileError(f"{where}: {which}: {'; '.join(problems)}")
        read.append(Fault(group=path.stem, **table))
    return Group(path.stem, description, tuple(tests), tuple(read))


def read_groups(folder: Path, names: Sequence[str]) -> dict[str, Group]:
    """The groups ``names``, in that order, read from their files in ``folder``; a fault file not
    named, or a fault name used by two groups, is an error."""
    stray = sorted(p.name for p in folder.glob("*.toml") if p.stem not in names)
    if stray:
        raise FaultFileError(f"{_shown(folder)}: fault file(s) of no group in GROUPS: {stray}")
    groups: dict[str, Group] = {}
    owner: dict[str, str] = {}
    for name in names:
        group = read_group(folder / f"{name}.toml")
        for fault in group.faults:
            if fault.name in owner:
                raise FaultFileError(
                    f"{_shown(folder / f'{name}.toml')}: fault {fault.name!r}: named in {owner[fault.name]} too"
                )
            owner[fault.name] = f"{name}.toml"
        groups[name] = group
    return groups


@dataclass
class Outcome:
    name: str
    group: str
    status: str  # killed | survived | timeout | equivalent | not-applied
    seconds: float
    detail: str = ""


def apply(text: str, fault: Fault) -> str:
    """``text`` with the fault applied; ``ValueError`` unless its original occurs exactly once."""
    count = text.count(fault.old)
    if count != 1:
        raise ValueError(f"{fault.name}: original text found {count} times in {fault.path}")
    return text.replace(fault.old, fault.new)


def copy_repo(dest: Path) -> Path:
    """The repository's tracked and untracked-but-not-ignored files (the working tree as it is),
    copied to ``dest``; no bytecode, no ``.git``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        src = ROOT / os.fsdecode(name)
        if not src.is_file():  # deleted but still in the index
            continue
        target = dest / os.fsdecode(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)
    return dest


def pytest_run(copy: Path, tests: Sequence[str], timeout: float) -> tuple[str, str]:
    """("passed" | "failed" | "timeout", last lines) of the tests, run on ``copy``'s sources."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    present = [t for t in tests if (copy / t).exists()]
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *present]
    try:
        done = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"no result after {timeout:.0f} s"
    tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-2:])
    return ("passed" if done.returncode == 0 else "failed"), tail[-300:]


def check_imports_copy(copy: Path) -> None:
    """Make sure the tests import ``odu`` from the copy, not from the editable install."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    where = subprocess.run(
        [sys.executable, "-c", "import odu; print(odu.__file__)"], cwd=copy, env=env, capture_output=True, text=True
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"mutation: the copy's tests import odu from {where}, not from {copy}")


def run_fault(copy: Path, fault: Fault, tests: Sequence[str], timeout: float) -> Outcome:
    if fault.equivalent:
        return Outcome(fault.name, fault.group, "equivalent", 0.0, fault.equivalent)
    path = copy / fault.path
    original = path.read_text(encoding="utf-8")
    try:
        mutated = apply(original, fault)
    except ValueError as exc:
        return Outcome(fault.name, fault.group, "not-applied", 0.0, str(exc))
    start = time.perf_counter()
    path.write_text(mutated, encoding="utf-8")
    try:
        result, tail = pytest_run(copy, tests, timeout)
    finally:
        path.write_text(original, encoding="utf-8")
    status = {"passed": "survived", "failed": "killed", "timeout": "timeout"}[result]
    return Outcome(fault.name, fault.group, status, time.perf_counter() - start, tail)


def select(read: dict[str, Group], groups: Sequence[str], excluded: Sequence[str], names: Sequence[str]) -> list[Fault]:
    """The faults of ``read`` in ``groups`` (all when empty), not in ``excluded``, named ``names`` (all when empty)."""
    unknown = (set(groups) | set(excluded)) - set(read)
    if unknown:
        raise SystemExit(f"mutation: unknown group(s) {sorted(unknown)}; groups: {sorted(read)}")
    every = [f for group in read.values() for f in group.faults]
    chosen = [
        f
        for f in every
        if (not groups or f.group in groups) and f.group not in excluded and (not names or f.name in names)
    ]
    missing = set(names) - {f.name for f in every}
    if missing:
        raise SystemExit(f"mutation: unknown fault(s) {sorted(missing)}")
    return chosen


def summary(outcomes: Sequence[Outcome]) -> dict:
    counted = [o for o in outcomes if o.status in ("killed", "survived", "timeout")]
    killed = [o for o in counted if o.status != "survived"]
    return {
        "faults": len(outcomes),
        "run": len(counted),
        "killed": len(killed),
        "survived": [o.name for o in counted if o.status == "survived"],
        "equivalent": [o.name for o in outcomes if o.status == "equivalent"],
        "not_applied": [o.name for o in outcomes if o.status == "not-applied"],
        "kill_rate": len(killed) / len(counted) if counted else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", action="append", default=[], help="only this group (repeatable)")
    parser.add_argument("--exclude-group", action="append", default=[], help="leave this group out (repeatable)")
    parser.add_argument("--fault", action="append", default=[], help="only this fault (repeatable)")
    parser.add_argument("--json", type=Path, help="write every outcome and the summary here")
    parser.add_argument("--min-rate", type=float, default=0.0, help="exit 1 when the kill rate is below this")
    parser.add_argument("--timeout", type=float, default=FAULT_TIMEOUT_S, help="seconds per fault's test run")
    parser.add_argument("--jobs", type=int, default=1, help="faults run at once, each in its own copy")
    parser.add_argument("--no-baseline", action="store_true", help="skip running the unmutated tests first")
    parser.add_argument("--list", action="store_true", help="list the faults and exit")
    args = parser.parse_args(argv)
    try:
        read = read_groups(FAULTS_DIR, GROUPS)
    except FaultFileError as exc:
        raise SystemExit(f"mutation: {exc}") from None
    faults = select(read, args.group, args.exclude_group, args.fault)
    if args.list:
        for f in faults:
            print(f"{f.group:10} {f.name:45} {f.path}" + (f"  (equivalent: {f.equivalent})" if f.equivalent else ""))
        return 0
    with tempfile.TemporaryDirectory(prefix="odu-mutation-") as tmp:
        copies = [copy_repo(Path(tmp) / f"copy{k}") for k in range(max(1, args.jobs))]
        check_imports_copy(copies[0])
        if not args.no_baseline:
            for group in dict.fromkeys(f.group for f in faults):
                result, tail = pytest_run(copies[0], read[group].tests, args.timeout)
                print(f"baseline {group}: {result}", flush=True)
                if result != "passed":
                    print(f"mutation: the unmutated tests of group {group} do not pass: {tail}", file=sys.stderr)
                    return 2
        outcomes: list[Outcome] = []

        def work(k: int) -> None:
            for fault in faults[k :: len(copies)]:
                outcome = run_fault(copies[k], fault, read[fault.group].tests, args.timeout)
                outcomes.append(outcome)
                print(f"{outcome.status:11} {fault.group:10} {fault.name:45} {outcome.seconds:6.1f} s", flush=True)

        with ThreadPoolExecutor(len(copies)) as pool:
            list(pool.map(work, range(len(copies))))
    order = {f.name: i for i, f in enumerate(faults)}
    outcomes.sort(key=lambda o: order[o.name])
    result = summary(outcomes)
    rate = result["kill_rate"]
    print(
        f"\nkilled {result['killed']} of {result['run']} faults run"
        + (f" ({100 * rate:.1f} %)" if rate is not None else "")
        + f"; equivalent (not run): {len(result['equivalent'])}; survived: {', '.join(result['survived']) or 'none'}"
    )
    if result["not_applied"]:
        print(f"not applied (original text changed): {', '.join(result['not_applied'])}")
    if args.json:
        payload = {
            "summary": result,
            "groups": sorted({f.group for f in faults}),
            "outcomes": [asdict(o) for o in outcomes],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if rate is not None and rate < args.min_rate else 0


if __name__ == "__main__":
    sys.exit(main())
