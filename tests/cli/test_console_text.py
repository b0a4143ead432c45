"""Issue 37 item 2: text from outside is data, never terminal control (``CONSOLE_TEXT_RULE``,
docs/harness.md "Text from outside on the console"). A server's ``/version``, its model ids and
error messages, model output and the names of files reach the console with every character a
terminal obeys escaped (``odu.io.console.inert``), in every command; an error of several problems
keeps one line per problem. Each command runs against a hostile loopback server or hostile files."""

from __future__ import annotations

import json
import logging
import re
import sys
import warnings
from pathlib import Path

import pytest
from support.cli import argv
from support.omni_fakes import FakeOmni
from support.openai_server import Reply
from support.provider_fakes import VllmFake, vllm_error
from support.provider_runs import eval_sample
from support.sample_runs import prepared_sample, scored_sample_run  # noqa: F401  (fixture)

from odu.cli import main
from odu.data.release import ReleaseError, ReleaseProblem
from odu.io.console import PROBLEMS_SHOWN, OduWarning, ProblemsError, error_text, inert, inert_stream, our_voice
from odu.io.scrub import scrubbed_console

#: What a hostile server sends: clear the screen, set the window title, return to the line's start,
#: forge a line of ours, turn the rest around (U+202E), a C1 control sequence introducer and a lone surrogate.
HOSTILE = "0.32.0\x1b[2J\x1b]0;pwned\x07\r\nodu-bench eval: model OK \u202eKO\x9b31m\ud83d"
#: Every character the rule escapes, as one class (the newline of a console line is ours: checked per line).
OBEYED = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)
MODEL = "Qwen/Qwen3-Omni-30B-A3B-Instruct"


def assert_inert(console: str) -> list[str]:
    """The console's lines, after checking that none holds a character a terminal obeys (a carriage
    return aside: the progress bars' own; the hostile one is checked escaped where it is said) and that
    no line was forged (each mention of the hostile text's forged line sits inside another line)."""
    found = OBEYED.search(console.replace("\r", ""))
    assert found is None, repr(found)
    lines = console.split("\n")
    assert not any(line.startswith("odu-bench eval: model OK") for line in lines), console[-3000:]
    return lines


# --- the rule, character by character -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x1b", "\\x1b"),  # ESC: every ANSI sequence starts with it
        ("\r", "\\r"),
        ("\n", "\\n"),
        ("\t", "\\t"),
        ("\x00", "\\x00"),
        ("\x07", "\\x07"),  # BEL ends an OSC (window title) sequence
        ("\x7f", "\\x7f"),
        ("\x85", "\\x85"),  # NEL: a C1 newline
        ("\x9b", "\\x9b"),  # CSI: a one-byte ANSI introducer
        ("\u202e", "\\u202e"),  # right-to-left override
        ("\u202a", "\\u202a"),
        ("\u2066", "\\u2066"),  # isolates
        ("\u2069", "\\u2069"),
        ("\u200f", "\\u200f"),  # right-to-left mark
        ("\u061c", "\\u061c"),  # Arabic letter mark
        ("\u2028", "\\u2028"),  # line separator
        ("\u2029", "\\u2029"),
        ("\ud83d", "\\ud83d"),  # a lone surrogate: no UTF-8 console can write it
    ],
)
def test_each_character_a_terminal_obeys_is_escaped_as_python_writes_it(char: str, shown: str) -> None:
    assert inert(f"a{char}b") == f"a{shown}b"


@pytest.mark.parametrize(
    "text", ["Qwen/Qwen2.5-Omni-7B", "déjà vu 中文 ✓ 🎧", "C:\\runs\\a", "50% | 3/5", "\u00a0\u200b\ufeff"]
)
def test_printable_text_is_shown_as_it_is(text: str) -> None:
    assert inert(text) == text


def test_inert_is_idempotent_and_one_line() -> None:
    once = inert(HOSTILE)
    assert inert(once) == once and "\n" not in once and OBEYED.search(once) is None
    assert once.startswith("0.32.0\\x1b[2J\\x1b]0;pwned\\x07\\r\\nodu-bench eval: model OK \\u202eKO")


def test_a_console_write_keeps_its_newlines_tabs_and_a_leading_carriage_return_only() -> None:
    """A progress bar redraws its line with a carriage return at the start of a write; one inside a
    write is text from outside overwriting the line."""
    assert inert_stream("\r 40%|####  | 2/5\n") == "\r 40%|####  | 2/5\n"
    assert inert_stream("a\tb\nc\n") == "a\tb\nc\n"
    assert inert_stream("ok\rFAKE\x1b[1A\u202e\n") == "ok\\rFAKE\\x1b[1A\\u202e\n"


# --- errors, warnings, log records -----------------------------------------------------------------------------------


def test_an_error_of_several_problems_keeps_one_line_per_problem() -> None:
    problems = [ReleaseProblem(f"s{i}\nforged: line\x1b[2J", None, "bad\r") for i in range(PROBLEMS_SHOWN + 3)]
    lines = error_text(ReleaseError(problems)).split("\n  ")
    assert lines[0] == f"{PROBLEMS_SHOWN + 3} problem(s) in the release:"
    assert lines[1] == "scene s0\\nforged: line\\x1b[2J: bad\\r"
    assert len(lines) == 1 + PROBLEMS_SHOWN + 1 and lines[-1] == "... and 3 more"
    for extra, counted in (
        (0, []),
        (1, ["... and 1 more"]),
    ):  # at the cap every problem is shown; one past it is counted
        shown = str(ProblemsError("head", [f"p{i}" for i in range(PROBLEMS_SHOWN + extra)])).split("\n  ")
        assert shown[1:] == [f"p{i}" for i in range(PROBLEMS_SHOWN)] + counted
    assert error_text(ValueError("one\nline\x1b")) == "one\\nline\\x1b"
    assert str(ProblemsError("head\n", ["p"])) == "head\\n\n  p"


def test_our_warning_from_outside_text_is_one_inert_line() -> None:
    with our_voice("odu-bench eval"):
        said = warnings.formatwarning("stale repo org/x\x1b[2J\nodu-bench eval: model OK", OduWarning, "hub.py", 7)
    assert said == "odu-bench eval: warning: stale repo org/x\\x1b[2J\\nodu-bench eval: model OK\n"


def test_a_command_s_console_and_log_records_escape_terminal_controls(capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger("odu-test-console")
    handler = logging.StreamHandler(sys.stderr)
    logger.addHandler(handler)
    try:
        with scrubbed_console():
            print("model said \x1b]0;title\x07 \u202edone")
            logger.warning("server said %s", "\x1b[2Jcleared\rOK")
    finally:
        logger.removeHandler(handler)
    out, err = capsys.readouterr()
    assert out == "model said \\x1b]0;title\\x07 \\u202edone\n"
    assert err == "server said \\x1b[2Jcleared\\rOK\n"


# --- commands against hostile servers and files ----------------------------------------------------------------------


def test_eval_shows_a_hostile_server_version_inert(prepared_sample: Path, tmp_path: Path, capsys, openai_key) -> None:  # noqa: F811
    """The profile line of ``provider=auto`` names the version ``GET /version`` answered."""
    with VllmFake(FakeOmni(prepared_sample), models=(MODEL,), trust_request_mm_kwargs=True) as server:
        server.route("GET", "/version", lambda req: Reply(body={"version": HOSTILE}))
        code = eval_sample(f"model={MODEL},base_url={server.base_url}", tmp_path / "out", tasks="odu_ao", limit=1)
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    lines = assert_inert(out + err)
    [profile] = [line for line in lines if line.startswith(f"model {MODEL}: provider vllm")]
    assert "0.32.0\\x1b[2J\\x1b]0;pwned\\x07\\r\\nodu-bench eval: model OK \\u202eKO" in profile


@pytest.mark.parametrize("preflight", [True, False])
def test_eval_shows_a_hostile_error_message_inert(
    prepared_sample: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    openai_key: str,
    preflight: bool,
) -> None:
    """A server refusing every request with a message built to forge a line: with the preflight, the
    run stops in one error line; without it, each scene's inference error is said inert."""
    with VllmFake(lambda body: vllm_error(HOSTILE), models=(MODEL,), trust_request_mm_kwargs=True) as server:
        code = eval_sample(
            f"model={MODEL},base_url={server.base_url},retries=0,hearing_check=false",
            tmp_path / "out",
            tasks="odu_ao",
            limit=1,
            no_preflight=not preflight,
        )
    out, err = capsys.readouterr()
    assert code == (2 if preflight else 1), err[-3000:]
    lines = assert_inert(out + err)
    said = [line for line in lines if "model OK \\u202eKO" in line]
    assert said and all("error" in line and "\\r\\nodu-bench eval: model OK" in line for line in said), err[-3000:]
    if not preflight:  # the dataset line names the dataset's reason, not the last inference error's
        assert [line for line in lines if line.startswith("dataset: ")][0].endswith("(--sample)")


def test_score_report_and_export_show_hostile_names_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run folder's name (a file name is text from outside) in ``score``'s and ``report``'s tables;
    a run that does not read in ``report``'s and ``export``'s error line."""
    name = "sys\x1b[2J\u202e\nodu-bench eval: model OK"
    run = scored_sample_run(tmp_path / name)
    assert main(argv("report", run, out=tmp_path / "report", no_plots=True, resamples=10)) == 0
    out, err = capsys.readouterr()
    table = [line for line in assert_inert(out + err) if line.startswith("| sys")]
    assert table and table[0].startswith("| sys\\x1b[2J\\u202e\\nodu-bench eval: model OK")
    (run / "summary.json").write_text(json.dumps({"bad\nodu-bench eval: model OK\x1b[2J": 1}), encoding="utf-8")
    for command in (
        argv("report", run, out=tmp_path / "report-2"),
        argv("export", run, format="eee", out=tmp_path / "e"),
    ):
        assert main(command) == 2
        assert_inert("".join(capsys.readouterr()))
