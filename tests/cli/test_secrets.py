"""Issue 23 item 2: secrets by rule (:mod:`odu.scrub`). No secret of the leaking shapes the issue
found reaches any file or stream of a run: URL query values and fragments by rule (never a list
of names), passwords of every replica however written, the API key wherever a server echoes it
(model answers, judge reasons, both caches), and keys given on the command line are refused
without being shown."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import argv
from support.omni_fakes import FakeOmni
from support.openai_server import OpenAIServer, RecordedRequest, Reply, chat_completion
from support.sample_runs import server_run_env

from odu.cli import main
from odu.scrub import scrub_text, scrub_url

KEY = "sk-echoed-KEY-0f1e2d3c4b5a"  # the API key, which the server echoes in every answer
#: Query parameters that carried credentials past the old list of names (issue 23), and ``sig``.
QUERY_SECRETS = {
    name: f"Q{i}-{name}-secret"
    for i, name in enumerate(
        ("api_token", "x-api-key", "subscription-key", "private_token", "auth_token", "jwt", "session_token", "sig")
    )
}
FRAGMENT = "F-access-token-secret"
UPPER_PW = "UPPER-scheme-pw-secret"  # a replica URL with an upper-case scheme
AT_PW = "at@sign-pw-secret"  # a password holding '@', in the second replica
JUDGE_PW = "judge-pw-secret"


@pytest.fixture(autouse=True)
def _env(hf_cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server_run_env(monkeypatch, hf_cache, KEY)


def echoing(fake: FakeOmni) -> Any:
    """A chat route answering as ``fake`` does, with the request's Authorization header and the API
    key written into every answer: each predicted intent and each judge reason."""

    def handle(req: RecordedRequest) -> Reply:
        echo = f"{req.headers.get('authorization', '')} {KEY}"
        answer = fake(req.json)
        assert isinstance(answer, str)
        try:
            data = json.loads(answer)
        except ValueError:
            return Reply(body=chat_completion(req.json, answer))
        if isinstance(data, list):  # the judge's verdicts
            for verdict in data:
                verdict["reason"] = echo
        else:
            for segment in data["segments"]:
                segment["structured_intent"] += f" ({echo})"
        return Reply(body=chat_completion(req.json, json.dumps(data)))

    return handle


def _secrets() -> list[str]:
    basic = base64.b64encode(f"user:{UPPER_PW}".encode()).decode()
    return [KEY, *QUERY_SECRETS.values(), FRAGMENT, UPPER_PW, AT_PW, JUDGE_PW, basic]


def _leaks(texts: dict[str, bytes]) -> list[tuple[str, str]]:
    return [(where, s) for where, data in texts.items() for s in _secrets() if s.encode() in data]


def test_no_secret_of_the_leaking_shapes_reaches_a_file_or_a_stream(
    sample_dataset: Path, tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = sample_dataset
    fake = FakeOmni(dataset)
    query = "&".join(f"{name}={value}" for name, value in QUERY_SECRETS.items())
    with OpenAIServer(api_key=None, models=("omni-test", "judge-test")) as server:
        server.route("POST", "/v1/chat/completions", echoing(fake))
        host = server.origin.removeprefix("http://")
        replicas = f"HTTP://user:{UPPER_PW}@{host}/v1#access_token={FRAGMENT}|http://user:{AT_PW}@{host}/v1"
        args = argv(
            "eval",
            dataset=dataset,
            model="openai",
            tasks="odu_ao",
            model_args=json.dumps({"model": "omni-test", "base_url": replicas, "progress": False}),
            judge="openai:judge-test",
            judge_base_url=f"http://judge:{JUDGE_PW}@{host}/v1",
            judge_cache=tmp_path / "judge.sqlite",
            asr_base_url=f"http://asr.example/v1?{query}",  # recorded, never called (no text-only task)
            use_cache=tmp_path / "lm-cache",
            out=tmp_path / "out",
            verbosity="DEBUG",  # lm-eval logs its model arguments
        )
        monkeypatch.setattr("sys.argv", ["odu-bench", *args])  # the run card keeps the command line
        code = main(args)
    out, err = capfd.readouterr()
    assert code == 0, err
    assert fake.model_requests and any("Basic" in r.headers.get("authorization", "") for r in server.requests)
    files = {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert {"out/openai-omni-test/predictions.jsonl", "judge.sqlite"} <= set(files)
    assert any(name.startswith("lm-cache") for name in files)
    assert _leaks({**files, "stdout": out.encode(), "stderr": err.encode()}) == []
    assert "Initializing" in err  # lm-eval's log line of the model arguments was there, scrubbed
    folder = tmp_path / "out" / "openai-omni-test"
    predictions = (folder / "predictions.jsonl").read_text(encoding="utf-8")
    assert "Basic ***" in predictions or "*** ***" in predictions  # the echo is there, scrubbed
    card = json.loads((folder / "run_card.json").read_text(encoding="utf-8"))
    assert any("api_token=***" in a for a in card["command"])  # the parameter named, its value not
    assert any("http://judge:" not in a and f"http://{host}/v1" in a for a in card["command"])  # user info gone


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"judge": "openai:judge-test", "judge_api_key_env": "sk-judge-key-as-option"}, "never by the key itself"),
        ({"model_args": "model=omni-test,api_key=sk-model-key-as-arg"}, "holds a credential"),
        ({"judge": "openai:judge-test", "judge_extra_body": '{"api_key": "sk-body-key-secret"}'}, "holds a credential"),
        ({"judge": "openai:j", "judge_base_url": "http://u:pa#ss-secret@127.0.0.1:9/v1"}, "must be percent-encoded"),
        ({"judge": "openai:j", "judge_base_url": "http://u:pa/ss-secret@127.0.0.1:9/v1"}, "must be percent-encoded"),
        ({"judge": "openai:j", "judge_base_url": "http://u:pa?ss-secret@127.0.0.1:9/v1"}, "must be percent-encoded"),
        ({"judge": "openai:j", "judge_base_url": "localhost:8000"}, "not an http(s) URL"),
    ],
)
def test_keys_on_the_command_line_and_broken_urls_are_refused_unshown(
    options: dict[str, str], said: str, tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    try:
        code = main(
            argv(
                "eval",
                sample=True,
                model="openai" if "model_args" in options else "never",
                out=tmp_path / "o",
                **options,
            )
        )
    except SystemExit as exc:  # argparse refuses an option's value
        code = int(exc.code or 0)
    out, err = capfd.readouterr()
    assert code == 2 and said in err, err
    assert "Traceback" not in err and not (tmp_path / "o").exists()
    for secret in ("sk-judge-key-as-option", "sk-model-key-as-arg", "sk-body-key-secret", "ss-secret"):
        assert secret not in out + err, (secret, err)


def test_one_url_rule_for_messages_and_files() -> None:
    """Every query value and the fragment are secret when a URL is shown; an allow-list of harmless
    names keeps its values; user info goes, in every replica, whatever the scheme's case."""
    url = f"HTTPS://u:{UPPER_PW}@h:8443/v1?api-version=2024-06-01&{'&'.join(f'{k}={v}' for k, v in QUERY_SECRETS.items())}#access_token={FRAGMENT}"
    shown = scrub_url(url)
    assert all(s not in shown for s in _secrets()) and "api-version=2024-06-01" in shown and "jwt=***" in shown
    assert scrub_text(f"a={url}|{url} b") == f"a={shown}|{shown} b"
    assert scrub_url(f"http://u:{AT_PW}@h/v1") == "http://h/v1"
