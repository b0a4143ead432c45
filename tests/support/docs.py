"""What the docs' checks read of a Markdown file: fenced code blocks, the simple commands of its
shell blocks, one section of it (``tests/project/test_docs.py``, ``tests/doors/test_wheel_route.py``)."""

from __future__ import annotations

import re
import shlex

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
CONTROL_OPERATORS = {"&&", "||", ";", "|", "&"}


def readme_section(text: str, heading: str) -> str:
    """The text of the section whose ``## `` heading starts with ``heading``, up to the next one."""
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def shell_blocks(text: str) -> list[str]:
    """The bodies of ``text``'s shell code blocks, stripped."""
    return [body.strip() for language, body in FENCE.findall(text) if language.strip() in SHELL_LANGUAGES]


def shell_commands(text: str) -> list[list[str]]:
    """The simple commands of a file's shell code blocks, as argument lists (``\\`` continuations
    joined, ``#`` comments and a ``$`` prompt dropped, split at ``&&``, ``;``, ``|``)."""
    commands = []
    for language, body in FENCE.findall(text):
        if language.strip() not in SHELL_LANGUAGES:
            continue
        for line in re.sub(r"\\\n", " ", body).splitlines():
            lexer = shlex.shlex(line.strip().removeprefix("$ "), posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            command: list[str] = []
            for token in [*lexer, ";"]:
                if token in CONTROL_OPERATORS:
                    if command:
                        commands.append(command)
                    command = []
                else:
                    command.append(token)
    return commands
