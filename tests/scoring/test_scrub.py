"""What ``odu/io/scrub.py`` promises, one promise per test: the URL rule (user info gone, every query
value but the allow-list's and the fragment redacted, every replica, the ambiguous case, URLs
without a scheme, URL values whole), the registry of known secrets (credential-shaped values only,
every byte written or printed, JSON keys and structure never touched), request bodies by type at
every depth (issue 37), keys refused on the command line, and the console, log and file scrubbers."""

from __future__ import annotations

import base64
import io
import json
import logging
import sys
from pathlib import Path

import pytest

from odu.io.jsonio import dump_line, encode, write_json
from odu.io.scrub import (
    MIN_CREDENTIAL_CHARS,
    REDACTED,
    PlaceholderKeyWarning,
    ScrubbedStream,
    ScrubFilter,
    check_url,
    credential_shaped,
    refuse_credentials,
    register_body,
    register_secret,
    scrub_command,
    scrub_file,
    scrub_secrets,
    scrub_text,
    scrub_url,
    scrub_urls,
    scrub_value,
    scrubbed_console,
    split_url_list,
    stored_body,
    unstored_paths,
    url_credentials,
)
from odu.transport.openai_client import OpenAIClient

PW = "pw-0123-secret"


# --- the URL rule -------------------------------------------------------------------------------------


def test_user_info_goes_and_the_host_path_and_port_stay() -> None:
    assert scrub_url(f"https://bob:{PW}@api.example.com:8443/v1/x") == "https://api.example.com:8443/v1/x"
    assert scrub_url(f"HTTP://bob:{PW}@h/v1") == "HTTP://h/v1"  # the scheme's case changes nothing
    assert scrub_url(f"http://{PW}@h/v1") == "http://h/v1"  # a user alone


def test_a_password_holding_an_at_sign_goes_whole() -> None:
    assert scrub_url("http://u:p@ss-secret@h:9/v1") == "http://h:9/v1"


@pytest.mark.parametrize("mark", ["#", "/", "?"])
def test_a_password_that_cannot_be_told_from_the_path_takes_all_up_to_the_last_at(mark: str) -> None:
    shown = scrub_url(f"http://user:se{mark}cret-pw@host:8000/v1")
    assert shown == "http://***@host:8000/v1" and "cret-pw" not in shown and "se" not in shown.split("@")[0][7:]


def test_every_query_value_is_redacted_but_the_allow_lists() -> None:
    url = "http://h/v1?api-version=2024-06-01&sig=S&jwt=J&x-api-key=K&limit=3&api_version=2"
    assert scrub_url(url) == "http://h/v1?api-version=2024-06-01&sig=***&jwt=***&x-api-key=***&limit=***&api_version=2"


def test_a_bare_query_token_is_redacted_and_empty_pieces_stay() -> None:
    assert scrub_url("http://h/v1?TOKEN123&&a=") == "http://h/v1?***&&a=***"


def test_the_fragment_is_redacted_and_an_empty_one_stays_empty() -> None:
    assert scrub_url("http://h/v1#access_token=F") == "http://h/v1#***"
    assert scrub_url("http://h/v1?x=1#") == "http://h/v1?x=***#"


def test_a_text_without_a_url_is_left_alone_but_for_known_secrets() -> None:
    assert scrub_url("not a url") == "not a url"
    register_secret("known-secret-9")
    assert scrub_url("a known-secret-9 b") == f"a {REDACTED} b"
    assert scrub_url("http://h/known-secret-9/v1") == "http://h/***/v1"


def test_every_url_inside_a_text_every_replica_of_a_list() -> None:
    text = f"base_url=http://a/v1?key=K1|HTTPS://u:{PW}@b/v1 --x 'http://c/v1#f' \"http://u:{PW}@d\""
    assert scrub_text(text) == "base_url=http://a/v1?key=***|HTTPS://b/v1 --x 'http://c/v1#***' \"http://d\""


def test_a_url_ends_at_a_backslash_or_angle_bracket() -> None:
    assert scrub_text("<http://h/v1?k=V>") == "<http://h/v1?k=***>"
    assert scrub_text("\\http://h/v1?k=V\\x") == "\\http://h/v1?k=***\\x"


# --- credentials of a URL ----------------------------------------------------------------------------------


def test_url_credentials_name_everything_a_server_could_echo() -> None:
    url = "https://bob:p%40ss-word@h/v1?api-key=abcd1234&api-version=1#access_token=frag-5678"
    found = url_credentials(url)
    basic = base64.b64encode(b"bob:p@ss-word").decode()
    for secret in (
        "bob:p%40ss-word",
        "p%40ss-word",
        "p@ss-word",
        basic,
        "abcd1234",
        "frag-5678",
        "access_token=frag-5678",
    ):
        assert secret in found, secret
    assert "1" not in found and "h" not in found


def test_url_credentials_of_each_replica() -> None:
    found = url_credentials(f"http://a/v1|http://u:{PW}@b/v1?k=second-secret")
    assert PW in found and "second-secret" in found


def test_url_credentials_of_a_url_without_any() -> None:
    assert url_credentials("http://localhost:8000/v1") == [] and url_credentials(None) == []


# --- the registry ---------------------------------------------------------------------------------------------


#: API keys and values of common placeholders (issue 30 item 1): none is credential-shaped.
PLACEHOLDERS = ("x", "null", "-", "true", "e", "1", "EMPTY", "changeme", "12345678", "1e100000", "ab cd ef gh")


@pytest.mark.parametrize("value", PLACEHOLDERS)
def test_a_placeholder_is_not_registered_so_nothing_is_rewritten(value: str) -> None:
    assert not credential_shaped(value) and register_secret(value) is False
    text = '{"max_tokens": 1, "ok": true, "v": null, "x": "-e-"}'
    assert scrub_secrets(text) == text and encode(text) == text.encode()


@pytest.mark.parametrize("value", ["sk-proj-4fA9zQ", "token-abc123", "AIzaSyD-0123", "Ym9iOnMzY3JldA=="])
def test_a_credential_shaped_value_is_registered(value: str) -> None:
    assert credential_shaped(value) and register_secret(value)
    assert scrub_secrets(f"sent {value}.") == "sent ***."


def test_the_rule_s_bounds() -> None:
    assert not credential_shaped("a1-" + "b" * (MIN_CREDENTIAL_CHARS - 4))  # one character short
    assert credential_shaped("a1-" + "b" * (MIN_CREDENTIAL_CHARS - 3))
    assert not credential_shaped("abcdefghij")  # one kind of character only
    for mark in ' "\\,:[]{}':
        assert not credential_shaped(f"sk-abc1{mark}23"), mark  # would span JSON structure or an escape


def test_a_secret_that_begins_inside_a_json_escape_keeps_the_escape() -> None:
    register_secret("nK8-secret-value")  # its first letters also end the escapes \\n and \\u00e9
    register_secret("e9-secret-2")
    text = json.dumps({"a": "\nK8-secret-value", "b": "line\u00e9-secret-2", "c": "\\nK8-secret-value"})
    assert "\\nK8-secret-value" in text and "\\u00e9-secret-2" in text  # as the JSON text writes them
    assert json.loads(scrub_secrets(text)) == {"a": "\n***", "b": "line\u00e9***", "c": "\\***"}


def test_json_files_scrub_values_never_keys_or_structure(tmp_path: Path) -> None:
    key = "max_tokens-sk1"  # a credential-shaped key that is also the name of a field
    register_secret(key)
    value = {key: f"echo {key}", "n": [1, {"deep": key}], "ok": True}
    for data in (dump_line(value), write_json(tmp_path / "f.json", value)):
        assert json.loads(data) == {key: "echo ***", "n": [1, {"deep": "***"}], "ok": True}


def test_a_secret_holding_another_is_replaced_whole() -> None:
    register_secret("abcd1234")
    register_secret("abcd1234-efgh-ijkl")
    assert scrub_secrets("[abcd1234-efgh-ijkl]") == "[***]"


def test_every_json_file_written_is_scrubbed_of_known_secrets(tmp_path: Path) -> None:
    register_secret("sk-file-secret-1")
    assert encode("a sk-file-secret-1 b") == b"a *** b"
    assert b"sk-file-secret-1" not in dump_line({"x": "sk-file-secret-1"})
    write_json(tmp_path / "f.json", {"k": ["sk-file-secret-1"]})
    assert "sk-file-secret-1" not in (tmp_path / "f.json").read_text()


def test_a_client_registers_its_key_and_its_urls_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "k9-client-key")
    OpenAIClient("judge", "m", base_url=f"http://u:{PW}@h/v1?token=tok-secret-1", api_key_env="MY_KEY", timeout=1)
    assert scrub_secrets(f"k9-client-key {PW} tok-secret-1") == "*** *** ***"


@pytest.mark.parametrize("key", ["x", "null", "-", "true", "e", "1"])
def test_a_placeholder_key_is_refused_for_a_provider_and_warned_about_for_a_base_url(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with pytest.raises(ValueError, match="holds a placeholder, not a credential") as refused:
        OpenAIClient("judge", "m", timeout=1)
    assert f" {key} " not in str(refused.value) and "\n" not in str(refused.value)
    with pytest.warns(PlaceholderKeyWarning, match="not scrubbed from outputs by value"):
        client = OpenAIClient("judge", "m", base_url="http://h/v1", timeout=1)
    assert client.scrub("ma_tokens true null -e- 1") == "ma_tokens true null -e- 1"


@pytest.mark.parametrize("name", ["sk-abc123", "my_key", "OPENAI-KEY", "9LIVES"])
def test_a_key_where_its_variables_name_belongs_is_refused_unshown(name: str, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    with pytest.raises(ValueError, match="NAME") as refused:
        OpenAIClient("judge", "m", base_url="http://h/v1", api_key_env=name, timeout=1)
    assert name not in str(refused.value)


# --- values, keys on the command line --------------------------------------------------------------------------


def test_scrub_value_reaches_every_string_keys_too() -> None:
    value = {f"http://u:{PW}@k": [f"http://u:{PW}@h", ("x", f"http://h/?a={PW}")], "n": 3, "b": True, "z": None}
    scrubbed = scrub_value(value)
    assert PW not in repr(scrubbed)
    assert scrubbed["n"] == 3 and scrubbed["b"] is True and scrubbed["z"] is None
    assert scrubbed["http://k"][1] == ["x", "http://h/?a=***"]


def test_scrub_value_of_model_text_leaves_its_urls_alone() -> None:
    register_secret("sk-model-text-1")
    text = "see https://maps.example/?q=coffee sk-model-text-1"
    assert scrub_value({"raw": text}, urls=False) == {"raw": "see https://maps.example/?q=coffee ***"}


def test_scrub_value_keeps_an_object_whose_text_holds_nothing() -> None:
    path = Path("/tmp/plain")
    assert scrub_value(path) is path
    assert scrub_value(Path(f"/tmp/{PW}-x")) == Path(f"/tmp/{PW}-x")
    register_secret(PW)
    assert scrub_value(Path(f"/tmp/{PW}-x")) == "/tmp/***-x"


@pytest.mark.parametrize(
    "options",
    [
        {"api_key": "V"},
        {"API-KEY": "V"},
        {"Token": "V"},
        {"password": "V"},
        {"jwt": "V"},
        {"dashscope_key": "V"},
        {"session_token": "V"},
        {"client_secret": "V"},
        {"proxy_password": "V"},
        {"extra_body": {"headers": {"authorization": "V"}}},
    ],
)
def test_options_named_like_a_credential_are_refused_unshown(options: dict) -> None:
    with pytest.raises(ValueError, match="holds a credential") as refused:
        refuse_credentials(options, "--model-args")
    assert "'V'" not in str(refused.value)


def test_options_that_only_look_alike_pass() -> None:
    refuse_credentials({"max_tokens": 8, "top_k": 2, "monkey": 1, "tokens": 3, "extra_body": {"top_p": 1}}, "x")


def test_make_backend_and_the_judge_refuse_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    from odu.judge.openai_judge import OpenAIJudge
    from odu.models import make_backend

    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with pytest.raises(ValueError, match="holds a credential"):
        make_backend("openai", model="m", base_url="http://h/v1", api_key="sk-arg")
    with pytest.raises(ValueError, match="holds a credential"):
        OpenAIJudge("j", base_url="http://h/v1", extra_body={"api_key": "sk-body"}, no_cache=True)


# --- URLs a client can use -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("localhost:8000", r"not an http\(s\) URL"),
        ("ftp://h/v1", r"not an http\(s\) URL"),
        ("http://h:80a/v1", "port that is not a number"),
        ("http://:8000/v1", "no host"),
        ("http://u:p#w@h/v1", "must be percent-encoded"),
    ],
)
def test_check_url_refuses_what_no_client_can_use(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        check_url(url, "--judge-base-url")


@pytest.mark.parametrize("url", ["http://h/v1", "https://u:p@h:8443/v1", "HTTP://[::1]:8000/v1", "wss://h/rt"])
def test_check_url_takes_a_usable_url(url: str) -> None:
    check_url(url)


# --- console, log records, files -----------------------------------------------------------------------------------


def test_a_scrubbed_stream_writes_scrubbed_text_and_counts_what_it_was_given() -> None:
    sink = io.StringIO()
    text = f"to http://u:{PW}@h/v1\n"
    assert ScrubbedStream(sink).write(text) == len(text)
    assert sink.getvalue() == "to http://h/v1\n"


def test_the_console_is_scrubbed_inside_the_block_and_restored_after(capsys) -> None:
    before = sys.stdout, sys.stderr
    with scrubbed_console():
        print(f"http://u:{PW}@h/v1")
        print(f"http://h/v1?k={PW}", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == before
    out, err = capsys.readouterr()
    assert PW not in out + err and "http://h/v1" in out


def test_log_records_lose_their_arguments_once_scrubbed() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "args %s and %d", (f"http://u:{PW}@h", 3), None)
    assert ScrubFilter().filter(record)
    assert record.getMessage() == "args http://h and 3" and record.args is None


def test_scrub_file_replaces_a_link_never_writing_through_it(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(f'{{"u": "http://u:{PW}@h"}}')
    link = tmp_path / "results.json"
    link.symlink_to(target)
    assert scrub_file(link) is True
    assert PW in target.read_text() and not link.is_symlink() and PW not in link.read_text()
    assert scrub_file(link) is False


# --- issue 30 item 4: secrets past the URL rule ------------------------------------------------------------------

#: A query secret after each character a free text's URL stops at (white space, quotes, backslash, '<', '|').
CUT_SECRETS = {mark: f"after-{i}-Secret9" for i, mark in enumerate([" ", '"', "'", "\\", "<", "|"])}


@pytest.mark.parametrize("mark", list(CUT_SECRETS))
def test_a_url_value_is_scrubbed_to_its_end_and_its_pieces_are_known_secrets(mark: str) -> None:
    url = f"http://h/v1?key=head{mark}{CUT_SECRETS[mark]}"
    assert scrub_urls(url) == "http://h/v1?key=***"
    assert CUT_SECRETS[mark] in url_credentials(url)
    for secret in url_credentials(url):
        register_secret(secret)
    assert CUT_SECRETS[mark] not in scrub_text(f"log: {{'base_url': {url!r}}}")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("u:pw-Secret9@host:8000/v1", "host:8000/v1"),  # user info without a scheme
        ("host/v1?token=tok-Secret9", "host/v1?token=***"),  # a query without a scheme
        ("localhost:8000/v1#frag-Secret9", "localhost:8000/v1#***"),
    ],
)
def test_a_url_without_a_scheme_gets_the_same_rule(url: str, shown: str) -> None:
    assert scrub_url(url) == shown and scrub_urls(url) == shown
    with pytest.raises(ValueError, match="not an http") as refused:
        check_url(url, "--judge-base-url")
    assert "Secret9" not in str(refused.value)
    assert any("Secret9" in s for s in url_credentials(url))


def test_a_pipe_inside_a_query_value_stays_in_it() -> None:
    assert split_url_list("http://a/v1?k=x|y-Secret9 | http://b/v1") == ["http://a/v1?k=x|y-Secret9", "http://b/v1"]
    assert scrub_urls("http://a/v1?k=x|y-Secret9|http://b/v1") == "http://a/v1?k=***|http://b/v1"


def test_a_command_line_shows_url_values_whole() -> None:
    command = scrub_command(
        [
            "--judge-base-url",
            "u:pw-Secret9@h/v1",
            "--asr-base-url=http://h/v1?k=a b-Secret9",
            "--model-args",
            "model=m,base_url=http://h/v1?k=a b-Secret9,progress=False",
            '{"base_url": "http://h/v1?k=a b-Secret9", "n": 1}',
            "--out",
            "run",
        ]
    )
    assert not any("Secret9" in a for a in command), command
    assert command[-2:] == ["--out", "run"] and json.loads(command[5]) == {"base_url": "http://h/v1?k=***", "n": 1}


def test_scrub_value_scrubs_a_url_named_value_whole() -> None:
    value = {"base_url": "http://h/v1?k=a b-Secret9", "judge": {"asr_url": "u:pw-Secret9@h"}, "note": "a b-Secret9"}
    assert scrub_value(value) == {"base_url": "http://h/v1?k=***", "judge": {"asr_url": "h"}, "note": "a b-Secret9"}


@pytest.mark.parametrize("url", ["http://[::1/v1", "http://[::1]:80a/v1", "http://h:99999/v1", "http://[nope]/v1"])
def test_check_url_refuses_a_broken_host_in_one_line(url: str) -> None:
    with pytest.raises(ValueError, match="is not a server URL") as refused:
        check_url(url)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "name", ["auth", "passphrase", "db-passphrase", "authToken", "auth_header", "x-api-key", "Cookie", "pwd", "apiKey"]
)
def test_more_names_of_credentials_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="holds a credential"):
        refuse_credentials({name: "V"}, "--judge-extra-body")


# --- issue 37 item 1: request bodies by type, whatever their names --------------------------------------------------


@pytest.mark.parametrize(
    ("body", "stored"),
    [
        (
            {"api_key2": "sk-4fA9", "apiKeyValue": "V1", "session_token_2": "x y"},
            {"api_key2": "***", "apiKeyValue": "***", "session_token_2": "***"},
        ),
        ({"metadata": [{"api_key": "sk-4fA9"}, "sk-4fA9", 3]}, {"metadata": [{"api_key": "***"}, "***", 3]}),
        ({"headers": [["Authorization", "Bearer sk-4fA9"]]}, {"headers": [["***", "***"]]}),
        ({"pairs": (("X-Key", "v2"),)}, {"pairs": [["***", "***"]]}),
        ({"a": {"b": [[{"c": [{"d": "deep-4fA9"}]}]]}}, {"a": {"b": [[{"c": [{"d": "***"}]}]]}}),
        (
            {"n": 0, "x": -1.5, "on": False, "none": None, "k": {"enable_thinking": True}},
            {"n": 0, "x": -1.5, "on": False, "none": None, "k": {"enable_thinking": True}},
        ),
        (
            {"effort": "low", "type": "json_object", "cache": "in-memory", "m": ["text", "audio"]},
            {"effort": "low", "type": "json_object", "cache": "in-memory", "m": ["text", "audio"]},
        ),
        (
            {
                "v": "Low",
                "w": "gpt-4o",
                "x": "a" * 17,
                "y": "json__object",
                "z": "-low",
                "e": "",
                "s": " low",
                "d": "12",
            },
            dict.fromkeys("vwxyzesd", "***"),
        ),
        ({"sk-4fA9": 1}, {"sk-4fA9": 1}),  # names are names
        ({"path": Path("/tmp/k"), "raw": b"sk"}, {"path": "***", "raw": "***"}),
        ('{"api_key2": "sk-4fA9", "t": 0.5}', '{"api_key2": "***", "t": 0.5}'),  # JSON text, as key=value gives it
        ("sk-4fA9 not JSON", "***"),
        ("low", "low"),
    ],
)
def test_a_request_body_is_stored_by_type_at_every_depth(body: object, stored: object) -> None:
    assert stored_body(body) == stored


def test_every_value_named_like_a_body_is_stored_by_its_rule_wherever_it_sits(tmp_path: Path) -> None:
    value = {
        "model": {"model_args": {"extra_body": {"api_key2": "sk-4fA9", "top_k": 2}}},
        "judges": [{"odu_ao": {"extra_body": '{"t": "sk-4fA9"}'}}],
        "judge_extra_body": {"u": "sk-4fA9"},
        "--judge-extra-body": {"u": "sk-4fA9"},
        "note": "sk-4fA9 outside a body is data",
    }
    expected = {
        "model": {"model_args": {"extra_body": {"api_key2": "***", "top_k": 2}}},
        "judges": [{"odu_ao": {"extra_body": '{"t": "***"}'}}],
        "judge_extra_body": {"u": "***"},
        "--judge-extra-body": {"u": "***"},
        "note": "sk-4fA9 outside a body is data",
    }
    assert scrub_value(value) == expected and scrub_value(value, urls=False) == expected
    write_json(tmp_path / "card.json", value)  # no secret registered: the body alone makes the writer walk the value
    assert json.loads((tmp_path / "card.json").read_text(encoding="utf-8")) == expected
    assert json.loads(dump_line(value)) == expected


def test_a_scene_row_given_as_text_gets_its_body_stored(tmp_path: Path) -> None:
    from odu.runs.contract import JsonlFile

    files: dict[str, dict] = {}
    with JsonlFile(tmp_path / "rows.jsonl", "run-1", files) as rows:
        rows.write_json(json.dumps({"judge": {"extra_body": {"k": "sk-4fA9"}}}))
        rows.write_json('{"plain": "sk-4fA9"}')
    lines = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == [
        {"run_id": "run-1", "judge": {"extra_body": {"k": "***"}}},
        {"run_id": "run-1", "plain": "sk-4fA9"},
    ]


def test_a_command_line_shows_each_body_by_its_rule() -> None:
    body = '{"api_key2": "sk-4fA9", "effort": "low", "n": 2}'
    shown = '{"api_key2": "***", "effort": "low", "n": 2}'
    args = [
        "--judge-extra-body", body,
        f"--judge-extra-body={body}",
        "--judge-extra-body", "not JSON sk-4fA9",
        "--model-args", json.dumps({"model": "m", "extra_body": json.loads(body)}),
        "--model-args", f"model=m,extra_body={body},base_url=http://u:{PW}@h/v1",
        "--model-args", "model=m,extra_body={'api_key2': 'sk-4fA9'},x=1",
        "--model-args", 'extra_body={"a": "sk-4fA9"},judge_extra_body={"b": "sk-4fA9"}',
    ]  # fmt: skip
    assert scrub_command(args) == [
        "--judge-extra-body", shown,
        f"--judge-extra-body={shown}",
        "--judge-extra-body", "***",
        "--model-args", json.dumps({"model": "m", "extra_body": json.loads(shown)}),
        "--model-args", f"model=m,extra_body={shown},base_url=http://h/v1",
        "--model-args", "model=m,extra_body=***",
        "--model-args", 'extra_body={"a": "***"},judge_extra_body={"b": "***"}',
    ]  # fmt: skip


def test_a_log_record_shows_a_mapping_argument_s_body_by_its_rule() -> None:
    args = {"model": "m", "extra_body": {"api_key2": "sk-4fA9", "n": 1}}
    record = logging.LogRecord(
        "lm-eval", logging.INFO, __file__, 1, "Initializing %s with %s", ("odu-openai", args), None
    )
    assert ScrubFilter().filter(record)
    assert (
        record.getMessage() == "Initializing odu-openai with {'model': 'm', 'extra_body': {'api_key2': '***', 'n': 1}}"
    )
    named = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "%(extra_body)s", ({"extra_body": {"k": "sk-4fA9"}},), None
    )
    assert ScrubFilter().filter(named) and named.getMessage() == "{'k': '***'}"


def test_lm_eval_s_files_get_their_bodies_stored_and_keep_their_layout(tmp_path: Path) -> None:
    results = {"config": {"model_args": {"model": "m", "extra_body": {"api_key2": "sk-4fA9", "n": 1}}}, "é": 1}
    (tmp_path / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    sample = {"arguments": {"extra_body": {"k": "sk-4fA9"}}}
    (tmp_path / "samples.jsonl").write_text(json.dumps(sample) + "\n" + json.dumps({"k": "sk-4fA9"}) + "\n")
    (tmp_path / "run.log").write_text('"extra_body": {"k": "sk-4fA9"}\n')
    assert scrub_file(tmp_path / "results.json") and scrub_file(tmp_path / "samples.jsonl")
    results["config"]["model_args"]["extra_body"]["api_key2"] = "***"
    assert (tmp_path / "results.json").read_text(encoding="utf-8") == json.dumps(
        results, indent=2, ensure_ascii=False
    ) + "\n"
    lines = (tmp_path / "samples.jsonl").read_text().split("\n")
    assert lines == [json.dumps({"arguments": {"extra_body": {"k": "***"}}}), json.dumps({"k": "sk-4fA9"}), ""]
    assert scrub_file(tmp_path / "run.log") is False  # not JSON: its values by value only


def test_the_credential_shaped_pieces_of_a_body_are_known_secrets_and_plain_words_are_not() -> None:
    body = {
        "headers": [["Authorization", "Bearer sk-4fA9-body"], ["Content-Type", "application/json"]],
        "cookie_v2": "sid=Ck9-cookie; Path=/",
        "hook": "https://hooks.example/v1?sig=Zq81-sig&at=20261207",
        "pin": "830012947713",
        "effort": "low",
    }
    register_body(json.dumps(body))  # as key=value gives it: JSON text
    echo = "400: " + json.dumps(body)
    assert "sk-4fA9-body" not in scrub_secrets(echo) and "Ck9-cookie" not in scrub_secrets(echo)
    assert "Zq81-sig" not in scrub_secrets(echo)
    for kept in ("Authorization", "Content-Type", "application/json", "hooks.example/v1", "830012947713", "low"):
        assert kept in scrub_secrets(echo), kept


def test_the_backend_and_the_judge_register_their_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    from odu.judge.openai_judge import OpenAIJudge
    from odu.models import make_backend

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-KEY-0123")
    make_backend("openai", model="m", base_url="http://h/v1", extra_body={"api_key2": "sk-model-4fA9"})
    OpenAIJudge("j", base_url="http://h/v1", extra_body={"apiKeyValue": "sk-judge-4fA9"}, no_cache=True)
    assert scrub_secrets("sk-model-4fA9 sk-judge-4fA9") == "*** ***"


@pytest.mark.parametrize(
    "options",
    [
        {"extra_body": {"metadata": [{"api_key": "V"}]}},
        {"extra_body": {"a": [[{"b": [{"token": "V"}]}]]}},
        {"list": ({"password": "V"},)},
    ],
)
def test_names_of_credentials_are_refused_at_any_depth_lists_included(options: dict) -> None:
    with pytest.raises(ValueError, match="holds a credential") as refused:
        refuse_credentials(options, "--model-args")
    assert "'V'" not in str(refused.value)


def test_unstored_paths_name_where_a_value_would_not_be_stored_as_given() -> None:
    options = {
        "model": "m",
        "base_url": "http://u:pw@h/v1?api-version=1",
        "plain_url": "http://h/v1",
        "extra_body": {"t": 0, "e": "low", "m": [{"k": "sk-4fA9"}], "h": [["A", "b c"]]},
    }
    assert unstored_paths(options) == ["base_url", "extra_body.m[0].k", "extra_body.h[0][0]", "extra_body.h[0][1]"]
    assert unstored_paths({"model": "m", "extra_body": {"effort": "low", "n": 1}}) == []
