"""Secret scrubbing at its edges, from the promises of docs/harness.md ("Credentials") and
``odu/io/scrub.py``: the credential rule's boundary (``CREDENTIAL_RULE``) in every case of letters,
several known secrets at once in every JSON write, query names in any case, and the credentials of
every URL of a replica list, not only the first's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odu.io.jsonio import dump_line, json_text, write_json
from odu.io.scrub import (
    CREDENTIAL_RULE,
    MIN_CREDENTIAL_CHARS,
    REDACTED,
    credential_shaped,
    register_secret,
    scrub_file,
    scrub_secrets,
    scrub_text,
    scrub_url,
    url_credentials,
)

#: Credential-shaped: at least MIN_CREDENTIAL_CHARS printable ASCII characters of two kinds or more.
SHAPED = [
    "abcd1234",  # lower-case, digits: exactly MIN_CREDENTIAL_CHARS
    "ABCD1234",  # upper-case, digits
    "abcdEFGH",  # lower-case, upper-case
    "abcd-efg",  # lower-case, another
    "ABCD_EFG",  # upper-case, another
    "1234-56x",  # digits, another, a letter
    "x1e10000",  # a letter that is no exponent
    "sk-proj-4fA9",
    "ab!c#d$1",
    "ab|c~d^1",
    "ab@c=d?1",
    "ab;c<d>1",
    "a%b&c(1)",
    "a*b+c/d.e`1",
]
#: Not credential-shaped: placeholders, one kind, a number, or a character the rule leaves out.
UNSHAPED = [
    "abc1234",  # one character short
    "ABC-123",
    "abcdefgh",  # one kind, in every case of letters
    "ABCDEFGH",
    "changeme",
    "CHANGEME",
    "12345678",
    "--------",
    "1e100000",  # numbers, exponent in either case
    "1E100000",
    "-1.5E+10",
    "1234-567",  # only characters of a number (digits, e, E, '.', '+', '-')
    "12.5e-30",
    "abcd 1234",  # white space
    "abcd\t1234",
    'abcd"1234',  # a double quote, a backslash
    "abcd\\1234",
    "ab,cd1234",  # JSON punctuation
    "ab:cd1234",
    "ab[cd1234",
    "ab]cd1234",
    "ab{cd1234",
    "ab}cd1234",
    "abcdé1234",  # not ASCII
    "x",
    "null",
    "true",
    "EMPTY",
    "",
]


def test_the_credential_rule_states_its_constants() -> None:
    assert (
        f"at least {MIN_CREDENTIAL_CHARS} printable ASCII characters" in CREDENTIAL_RULE and MIN_CREDENTIAL_CHARS == 8
    )


@pytest.mark.parametrize("value", SHAPED)
def test_a_credential_shaped_value_is_registered_and_scrubbed(value: str) -> None:
    assert credential_shaped(value) and register_secret(value)
    assert scrub_secrets(f"sent {value}.") == f"sent {REDACTED}."


@pytest.mark.parametrize("value", UNSHAPED)
def test_a_value_outside_the_rule_is_never_registered(value: str) -> None:
    assert not credential_shaped(value) and not register_secret(value)
    text = json.dumps({"max_tokens": 8, "v": f"{value} and {value}", "ok": True}, ensure_ascii=False)
    assert scrub_secrets(text) == text and json_text(json.loads(text)) == text


# --- several secrets at once, every JSON write ---------------------------------------------------------

KEY = "sk-AAAA-1111"  # an API key
LONGER = "sk-AAAA-1111-tail-2222"  # a URL's token holding the key
OTHER = "pw-BBBB-3333"  # a replica's password
VALUE = {
    "run_id": "r1",
    "model": {"name": "m", "note": f"answered with {LONGER}"},
    "samples": [{"resps": [f"Bearer {KEY}"]}, {"resps": [f"user:{OTHER}"]}],
    f"{OTHER}": "a key is a name, never scrubbed",
}


@pytest.fixture
def three_secrets() -> None:
    for secret in (KEY, OTHER, LONGER):
        assert register_secret(secret)


def _no_secret(text: str) -> None:
    for secret in (KEY, OTHER, LONGER, "tail-2222"):
        assert secret not in text.replace(f'"{OTHER}"', ""), secret


def test_every_json_write_scrubs_every_secret(three_secrets: None, tmp_path: Path) -> None:
    expected = {
        "run_id": "r1",
        "model": {"name": "m", "note": f"answered with {REDACTED}"},
        "samples": [{"resps": [f"Bearer {REDACTED}"]}, {"resps": [f"user:{REDACTED}"]}],
        f"{OTHER}": "a key is a name, never scrubbed",
    }
    for text in (json_text(VALUE), json_text(VALUE, indent=2), dump_line(VALUE).decode()):
        _no_secret(text)
        assert json.loads(text) == expected
    write_json(tmp_path / "summary.json", VALUE)
    assert json.loads((tmp_path / "summary.json").read_text(encoding="utf-8")) == expected


@pytest.mark.parametrize("only", [KEY, OTHER, LONGER])
def test_a_value_holding_any_one_of_them_is_scrubbed(three_secrets: None, only: str) -> None:
    value = {"a": 1, "b": {"c": [f"x {only} y"]}}
    for text in (json_text(value), json_text(value, indent=2)):
        assert only not in text and json.loads(text) == {"a": 1, "b": {"c": [f"x {REDACTED} y"]}}


def test_files_written_by_others_lose_every_secret(three_secrets: None, tmp_path: Path) -> None:
    """lm-eval's ``results.json`` and sample logs, scrubbed in place (``scrub_file``)."""
    results = tmp_path / "results.json"
    results.write_text(json.dumps(VALUE, indent=2), encoding="utf-8")
    samples = tmp_path / "samples_odu_av.jsonl"
    samples.write_text("".join(json.dumps(s) + "\n" for s in VALUE["samples"]), encoding="utf-8")
    assert scrub_file(results) and scrub_file(samples)
    _no_secret(results.read_text(encoding="utf-8"))
    _no_secret(samples.read_text(encoding="utf-8"))
    assert [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()][1] == {
        "resps": [f"user:{REDACTED}"]
    }


# --- URLs: query names in any case, every replica --------------------------------------------------


def test_query_names_are_read_in_any_case_of_letters() -> None:
    url = "http://h/v1?API_TOKEN=T1&Api-Version=2024-06-01&API_VERSION=2025-01-01&Key=K2&SIG=S3"
    assert scrub_url(url) == "http://h/v1?API_TOKEN=***&Api-Version=2024-06-01&API_VERSION=2025-01-01&Key=***&SIG=***"
    assert url_credentials(url) == ["T1", "K2", "S3"]


def test_a_scheme_in_any_case_is_a_url_in_a_text() -> None:
    text = "failed: HTTP://u:pw@h/v1?k=K1 then Https://g/v1#F2 and wss://h?token=T3"
    assert scrub_text(text) == "failed: HTTP://h/v1?k=*** then Https://g/v1#*** and wss://h?token=***"


def test_the_credentials_of_every_replica_are_known() -> None:
    replicas = "http://u:first-pw-1@a/v1|HTTP://v:second-pw-2@b/v1?token=third-tok-3|c/v1#fourth-frag-4"
    found = url_credentials(replicas)
    for secret in ("first-pw-1", "second-pw-2", "third-tok-3", "fourth-frag-4"):
        assert secret in found
    for secret in found:
        register_secret(secret)
    assert scrub_secrets("first-pw-1 second-pw-2 third-tok-3 fourth-frag-4") == " ".join([REDACTED] * 4)
