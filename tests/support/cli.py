"""Command lines for ``odu-bench`` in the tests, written as keyword options."""

from __future__ import annotations


def argv(command: str, *positional: object, **options: object) -> list[str]:
    """``command``, the positional arguments, then ``--name value`` per option (``_`` becomes ``-``,
    ``True`` is a bare flag, ``None`` and ``False`` leave the option out).

    >>> argv("score", scenes="s.jsonl", out="run", no_progress=True, judge=None)
    ['score', '--scenes', 's.jsonl', '--out', 'run', '--no-progress']
    """
    args = [command, *map(str, positional)]
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is not None and value is not False:
            args += [flag, str(value)]
    return args
