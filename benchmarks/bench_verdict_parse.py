"""Verdict parsing on a hostile judge reply: the lazy-regex ``<think>`` stripping the parser used
before (``re.sub(r"<think>.*?</think>", ...)``, quadratic in the number of unclosed tags) against
:func:`odu.judge.prompt.strip_thinking` (one pass over the tags).

Both sides get the same replies and must give the same text (or both call the reply unterminated):

* ``hostile``: a 157 KB reply opening 8,192 ``<think>`` blocks and closing none (issue 12 item 5);
* ``thinking``: a realistic reply, 64 closed ``<think>`` blocks of prose, then the verdict array.

Run: ``python benchmarks/bench_verdict_parse.py [--tags 8192] [--bytes 157000] [--repeats 3]``.
Prints CPU seconds per parse for each side.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_of  # noqa: E402

from odu.judge.prompt import VerdictParseError, strip_thinking  # noqa: E402

_LAZY = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def lazy_regex(text: str) -> str:
    """The parser's former stripping, with its check for a block left open."""
    body = _LAZY.sub("", text)
    if re.search(r"<think>", body, re.IGNORECASE):
        raise VerdictParseError("unterminated <think> block (reply cut off?)")
    return body


def outcome(strip: object, text: str) -> str:
    try:
        return strip(text)  # type: ignore[operator]
    except VerdictParseError as exc:
        return f"error: {exc}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tags", type=int, default=8192)
    parser.add_argument("--bytes", type=int, default=157_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    verdicts = json.dumps([{"qid": "kp01", "hit": True, "reason": "said"}])
    replies = {
        "hostile": "<think>" * args.tags + "x" * max(0, args.bytes - 7 * args.tags),
        "thinking": "".join(f"<think>step {i}: the user wants the chime muted.</think>\n" for i in range(64))
        + verdicts,
    }
    print(f"{'reply':10} {'chars':>8} {'lazy regex s':>13} {'one pass s':>11}")
    for name, text in replies.items():
        same = outcome(lazy_regex, text) == outcome(strip_thinking, text)
        assert same, f"{name}: the two strippings disagree"
        old = best_of(args.repeats, lambda text=text: outcome(lazy_regex, text), clock=time.process_time)
        new = best_of(args.repeats, lambda text=text: outcome(strip_thinking, text), clock=time.process_time)
        print(f"{name:10} {len(text):8d} {old:13.4f} {new:11.5f}")


if __name__ == "__main__":
    main()
