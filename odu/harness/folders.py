"""Where the shipped task folders lie, and the task names a folder defines.

Standard library only: the start-up bridge (``odu_lm_eval_bridge``) imports this module when
lm-eval's or lmms-eval's task manager is first imported, and nothing else of ``odu`` then.
The folders are found from this package, not from the bridge's own location, so a checkout's
``odu`` tested where the package is also installed from a wheel reads the checkout's tasks.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

#: The lm-eval task folder relative to this package folder: inside it (a wheel), else the
#: source tree's top-level ``lm_eval_tasks`` (a checkout, an editable install).
TASK_DIRS = ("lm_eval_tasks", os.path.join("..", "..", "lm_eval_tasks"))
#: The same for the lmms-eval task folder.
LMMS_TASK_DIRS = ("lmms_eval_tasks", os.path.join("..", "..", "lmms_eval_tasks"))

_HERE = Path(__file__).resolve().parent
#: A task, group or tag name in a task YAML, read as text (no YAML parser).
_NAME_LINE = re.compile(r"^(?:task|group|tag):[ \t]*([^\s#\[]+)[ \t]*$", re.M)


def find_task_dir(relatives: Sequence[str], here: Path = _HERE) -> Path:
    """The first of ``relatives`` (folders relative to ``here``) that holds an ``odu`` task folder."""
    for relative in relatives:
        path = (here / relative).resolve()
        if (path / "odu" / "utils.py").is_file():
            return path
    raise FileNotFoundError(f"the odu task folder is not installed next to {here} ({relatives[0]}/odu)")


def task_dir() -> Path:
    """The folder holding the ``odu`` task YAMLs (lm-eval's ``--include_path``)."""
    return find_task_dir(TASK_DIRS)


def lmms_task_dir() -> Path:
    """The folder holding the lmms-eval ``odu`` task YAMLs."""
    return find_task_dir(LMMS_TASK_DIRS)


def task_names(folder: str | os.PathLike[str]) -> set[str]:
    """The task, group and tag names the YAML files under ``folder`` define."""
    names: set[str] = set()
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith((".yaml", ".yml")):
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as fh:
                    names.update(_NAME_LINE.findall(fh.read()))
    return names


__all__ = ["LMMS_TASK_DIRS", "TASK_DIRS", "find_task_dir", "lmms_task_dir", "task_dir", "task_names"]
