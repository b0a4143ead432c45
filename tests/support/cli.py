"""Command lines for ``odu-bench`` in the tests, written as keyword options."""

from __future__ import annotations


def argv(command: str, *positional: object, **options: object) -> list[str]:
    """``command``, the positional arguments, then ``--name value`` per option (``_`` becomes ``-``,
    ``True`` is a bare flag, ``None`` and ``False`` leave the option out, a list or tuple gives
    several values).

    >>> argv("score", scenes="s.jsonl", out="run", no_progress=True, judge=None)
    ['score', '--scenes', 's.jsonl', '--out', 'run', '--no-progress']
    >>> argv("view", "run-a", "run-b", names=["A", "B"])
    ['view', 'run-a', 'run-b', '--names', 'A', 'B']
    """
    args = [command, *map(str, positional)]
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, *map(str, value)]
        elif value is not None and value is not False:
            args += [flag, str(value)]
    return args


def printed_table(out: str) -> tuple[list[list[str]], list[str]]:
    """The rows of a table ``odu-bench`` printed (cells; header and rule left out) and the caveat
    lines under it.

    >>> printed_table("| System | AV M1 |\\n|---|---|\\n| run * | 50.0 |\\n* run: 2 scenes\\n")
    ([['run *', '50.0']], ['* run: 2 scenes'])
    """
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines() if line.startswith("| ")]
    return rows[1:], [line for line in out.splitlines() if line.startswith("* ")]
