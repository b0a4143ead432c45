"""Issue 23 item 2: secrets by rule (:mod:`odu.io.scrub`). No secret of the leaking shapes the issue
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
from support.judge_fakes import judge_responder
from support.omni_fakes import FakeOmni
from support.openai_server import Fault, OpenAIServer, RecordedRequest, Reply, chat_completion
from support.process import REPO, fresh_env, run_odu
from support.sample_runs import server_run_env

from odu.cli import main
from odu.io.scrub import PlaceholderKeyWarning, scrub_text, scrub_url

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
        # issue 30 item 4: more names of credentials, a URL without a scheme, a broken IPv6 host
        ({"judge": "openai:judge-test", "judge_extra_body": '{"auth": "sk-body-auth-secret"}'}, "holds a credential"),
        ({"judge": "openai:j", "judge_extra_body": '{"passphrase": "body-pass-secret"}'}, "holds a credential"),
        ({"judge": "openai:j", "judge_base_url": "u:userinfo-ss-secret@127.0.0.1:9/v1"}, "not an http(s) URL"),
        ({"judge": "openai:j", "judge_base_url": "127.0.0.1:9/v1?key=noscheme-ss-secret"}, "not an http(s) URL"),
        ({"judge": "openai:j", "judge_base_url": "http://[::1/v1"}, "is not a server URL"),
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
    for secret in ("sk-judge-key-as-option", "sk-model-key-as-arg", "sk-body-key-secret", "ss-secret", "body-"):
        assert secret not in out + err, (secret, err)


def test_one_url_rule_for_messages_and_files() -> None:
    """Every query value and the fragment are secret when a URL is shown; an allow-list of harmless
    names keeps its values; user info goes, in every replica, whatever the scheme's case."""
    url = f"HTTPS://u:{UPPER_PW}@h:8443/v1?api-version=2024-06-01&{'&'.join(f'{k}={v}' for k, v in QUERY_SECRETS.items())}#access_token={FRAGMENT}"
    shown = scrub_url(url)
    assert all(s not in shown for s in _secrets()) and "api-version=2024-06-01" in shown and "jwt=***" in shown
    assert scrub_text(f"a={url}|{url} b") == f"a={shown}|{shown} b"
    assert scrub_url(f"http://u:{AT_PW}@h/v1") == "http://h/v1"


# --- issue 30 item 1: a short or common API key never rewrites a file ----------------------------------------------

SAMPLE_SCENES = REPO / "odu" / "data" / "sample" / "scenes.jsonl"


def _reference_outputs(path: Path) -> Path:
    rows = [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").splitlines() if line]
    path.write_text(
        "".join(
            json.dumps(
                {"scene_id": r["scene_id"], "output": json.dumps(r["annotations"][r["language"]]["evaluation_targets"])}
            )
            + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    return path


def _score_with_judge(tmp_path: Path, base_url: str, out: str = "run") -> int:
    args = argv(
        "score",
        scenes=SAMPLE_SCENES,
        predictions=_reference_outputs(tmp_path / "p.jsonl"),
        judge="openai:loopback",
        judge_base_url=base_url,
        judge_cache=tmp_path / f"{out}.sqlite",
        out=tmp_path / out,
        no_progress=True,
    )
    return main(args)


@pytest.mark.parametrize("key", ["x", "null", "-", "true", "e", "1"])
def test_a_placeholder_key_rewrites_no_file_and_is_warned_about(
    key: str, tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with OpenAIServer(judge_responder(), api_key=key, models=("loopback",)) as server:
        with pytest.warns(PlaceholderKeyWarning, match="OPENAI_API_KEY holds a placeholder"):
            code = _score_with_judge(tmp_path, server.base_url)
    out, err = capfd.readouterr()
    assert code == 0, err
    for path in (tmp_path / "run").iterdir():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines() if path.suffix == ".jsonl" else [text]
        assert all(json.loads(line) is not None for line in lines if line), path.name
        assert "***" not in text, path.name
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["judge"]["errors"] == 0 and "***" not in out + err
    report = argv("report", tmp_path / "run", out=tmp_path / "report", resamples=20, no_plots=True)
    assert main(report) == 0  # the run reads back


def test_a_placeholder_key_for_a_providers_own_server_is_refused_in_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    args = argv("score", scenes=SAMPLE_SCENES, predictions=_reference_outputs(tmp_path / "p.jsonl"), out=tmp_path / "o")
    assert main([*args, "--judge", "openai:gpt-4o-mini", "--no-progress"]) == 2
    err = capfd.readouterr().err
    assert "OPENAI_API_KEY holds a placeholder, not a credential" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


# --- issue 30 item 4: secrets past the URL rule --------------------------------------------------------------------

#: A query secret after each character a free text's URL stops at: white space, quotes, backslash, '<', '|'.
CUT = {mark: f"cut{i}-Query-secret" for i, mark in enumerate([" ", '"', "'", "\\", "<", "|"])}


@pytest.mark.parametrize("mark", list(CUT))
def test_a_query_secret_after_a_stop_character_reaches_no_file_or_stream(
    mark: str, tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with OpenAIServer(judge_responder(), api_key=KEY, models=("loopback",)) as server:
        assert _score_with_judge(tmp_path, f"{server.base_url}?key=head{mark}{CUT[mark]}") == 0
        server.inject(Fault.server_error(401))  # a refusing judge: its server named in the message
        assert _score_with_judge(tmp_path, f"{server.base_url}?key=head{mark}{CUT[mark]}", out="again") == 2
    out, err = capfd.readouterr()
    assert "judge server http://127.0.0.1:" in err and "key=***" in err
    summary = (tmp_path / "run" / "summary.json").read_text(encoding="utf-8")
    assert '"base_url": "http://127.0.0.1:' in summary and "key=***" in summary
    assert CUT[mark] not in summary + out + err
    assert all(CUT[mark] not in p.read_text(encoding="utf-8", errors="replace") for p in tmp_path.rglob("*.json*"))


def test_model_args_naming_a_key_are_refused_before_lm_eval_logs_anything(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("model_args:\n  model: m\n  passphrase: sk-config-LEAKED-0123\n", encoding="utf-8")
    forms = [
        ["--model_args", "model=m,base_url=http://127.0.0.1:9/v1,api_key=sk-arg-LEAKED-0123"],
        ["-a", '{"model": "m", "extra_body": {"auth": "sk-json-LEAKED-0123"}}'],
        ["--config", str(config)],
    ]
    env = fresh_env(tmp_path, OPENAI_API_KEY=KEY, HF_HUB_OFFLINE="1")
    for form in forms:
        done = run_odu(["lm-eval", "run", "--model", "odu-openai", *form, "--tasks", "odu_ao", "--limit", "1"], env)
        assert done.returncode == 2, done.stderr[-2000:]
        assert done.stderr.startswith("odu-bench lm-eval: error:") and "holds a credential" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "LEAKED" not in done.stdout + done.stderr


def test_a_key_inside_the_outputs_is_scrubbed_from_the_scene_rows_which_stay_json(
    tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scorer writes each scene row as JSON text it builds itself: a known secret in it (here a
    model output holding the key, scored from a file) is replaced in its string values only."""
    key = "sk-rows-KEY-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    predictions = _reference_outputs(tmp_path / "p.jsonl")
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        output = json.loads(row["output"])
        for segment in output["segments"][:1]:
            segment["structured_intent"] += f" {key}"
        row["output"] = json.dumps(output)
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with OpenAIServer(judge_responder(), api_key=key, models=("loopback",)) as server:
        args = argv(
            "score", scenes=SAMPLE_SCENES, predictions=predictions, judge="openai:loopback", out=tmp_path / "run"
        )
        assert main([*args, "--judge-base-url", server.base_url, "--no-cache", "--no-progress"]) == 0
    text = (tmp_path / "run" / "scenes.jsonl").read_text(encoding="utf-8")
    assert key not in text and "***" in text
    assert all("candidates" in json.loads(line) for line in text.splitlines())
    assert key not in "".join(capfd.readouterr())
