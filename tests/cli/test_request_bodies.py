"""Issue 37 item 1: a credential is never stored, whatever its name or depth. A request body the toolkit
passes to a server unread (``extra_body`` of a model, ``--judge-extra-body``) reaches the server as
given, and is stored by type: its names, structure, numbers, booleans, null and setting words as
given, every other string as ``***`` (docs/harness.md, "Preflight, dry run, shards, credentials"). No free string of the shapes
the issue names (names the refusal list misses, a key inside a list, headers as pairs), nor of our
own (a signed URL, a cookie, a JWT, five levels deep, digits only), reaches any file a run writes or
exports, or its console; plain ``lm_eval``, which prints and writes model arguments as given,
refuses them before it prints anything."""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.cli import argv
from support.export_runs import export
from support.judge_fakes import judge_responder
from support.omni_fakes import FakeOmni
from support.openai_server import OpenAIServer, RecordedRequest, Reply, chat_completion, dead_url
from support.process import REPO, fresh_env, run_odu

from odu.cli import main

KEY = "sk-bodies-KEY-0a1b2c3d4e"  # the API key, from the environment
#: Where each free string sits in the body: the issue's named shapes first, then ours.
SECRETS = {
    "api_key2": "sk-named-api-key2-Q7w1",
    "apiKeyValue": "sk-named-apiKeyValue-Q7w2",
    "access_token_v2": "at-named-v2-Q7w3",
    "session_token_2": "st-named-2-Q7w4",
    "a key inside a list": "sk-in-a-list-Q7w5",
    "headers as pairs": "sk-header-pair-Q7w6",
    "a signed URL": "Sig0-signed-url-Q7w7",
    "a cookie": "Ck9-cookie-value-Q7w8",
    "a JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnQ7w9",
    "five levels deep": "deep-value-Q7w10",
    "digits only": "830012947713",
}
#: A request body holding each of them.
BODY: dict[str, Any] = {
    "api_key2": SECRETS["api_key2"],
    "apiKeyValue": SECRETS["apiKeyValue"],
    "access_token_v2": SECRETS["access_token_v2"],
    "session_token_2": SECRETS["session_token_2"],
    "metadata": [{"apiKey2": SECRETS["a key inside a list"]}],
    "headers": [["Authorization", f"Bearer {SECRETS['headers as pairs']}"]],
    "callback": f"https://hooks.example/v1?X-Amz-Signature={SECRETS['a signed URL']}&X-Amz-Date=20261207",
    "extra_headers": {"X-Session": f"sid={SECRETS['a cookie']}; Path=/"},
    "assertion": SECRETS["a JWT"],
    "a": {"b": [{"c": [[{"d": SECRETS["five levels deep"]}]]}]},
    "pin_v2": SECRETS["digits only"],
}
#: What is stored as given: names, structure, numbers, booleans, null, setting words.
KEPT: dict[str, Any] = {
    "chat_template_kwargs": {"enable_thinking": True, "mode": "json_object"},
    "top_k": 20,
    "min_p": 0.05,
    "seed_v2": None,
    "guided_backend": "xgrammar",
}
#: The body as every file must hold it.
STORED: dict[str, Any] = {
    "api_key2": "***",
    "apiKeyValue": "***",
    "access_token_v2": "***",
    "session_token_2": "***",
    "metadata": [{"apiKey2": "***"}],
    "headers": [["***", "***"]],
    "callback": "***",
    "extra_headers": {"X-Session": "***"},
    "assertion": "***",
    "a": {"b": [{"c": [[{"d": "***"}]]}]},
    "pin_v2": "***",
    **KEPT,
}
SENT = {**BODY, **KEPT}


def _leaks(texts: dict[str, bytes], secrets: Iterator[str] | list[str]) -> list[tuple[str, str]]:
    return [(where, s) for s in secrets for where, data in texts.items() if s.encode() in data]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class BodyRun:
    """An ``odu-bench eval`` run whose model and judge were given :data:`BODY` and :data:`KEPT`."""

    root: Path
    folder: Path
    console: bytes
    requests: list[RecordedRequest]


@pytest.fixture(scope="module")
def body_run(sample_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> BodyRun:
    root = tmp_path_factory.mktemp("bodies")
    fake = FakeOmni(sample_dataset)
    with OpenAIServer(fake, api_key=KEY, models=("omni-test", "judge-test"), extra_fields=set(SENT)) as server:
        model_args = {"model": "omni-test", "base_url": server.base_url, "progress": False, "extra_body": SENT}
        args = argv(
            "eval",
            dataset=sample_dataset,
            model="openai",
            tasks="odu_ao",
            model_args=json.dumps(model_args),
            judge="openai:judge-test",
            judge_base_url=server.base_url,
            judge_extra_body=json.dumps(SENT),
            judge_cache=root / "judge.sqlite",
            use_cache=root / "lm-cache",
            out=root / "out",
            verbosity="INFO",  # lm-eval logs its model arguments
        )
        done = run_odu(args, fresh_env(root / "env", OPENAI_API_KEY=KEY))
    assert done.returncode == 0, done.stderr[-3000:]
    [folder] = (root / "out").iterdir()
    return BodyRun(root, folder, (done.stdout + done.stderr).encode(), server.requests)


def test_the_body_reaches_the_servers_as_given(body_run: BodyRun) -> None:
    """The rule is about what is stored: model and judge requests carry every field, every value."""
    bodies = [r.json for r in body_run.requests if r.path == "/v1/chat/completions"]
    models = [b for b in bodies if b["model"] == "omni-test"]
    judges = [b for b in bodies if b["model"] == "judge-test"]
    assert models and judges
    assert all({k: b.get(k) for k in SENT} == SENT for b in models + judges)


@pytest.mark.parametrize("shape", list(SECRETS))
def test_no_free_string_of_a_body_reaches_a_file_or_the_console(shape: str, body_run: BodyRun) -> None:
    files = _files(body_run.root)
    names = {"run_card.json", "results.json", "summary.json", "scenes.jsonl", "predictions.jsonl", "judge.sqlite"}
    assert names <= {Path(n).name for n in files}
    assert any(Path(n).name.startswith("samples_") for n in files) and any("lm-cache" in n for n in files)
    assert _leaks({**files, "console": body_run.console}, [SECRETS[shape]]) == []
    assert b"Initializing odu-openai model" in body_run.console  # lm-eval's line of the arguments was there


def test_every_record_of_the_body_keeps_its_names_numbers_and_setting_words(body_run: BodyRun) -> None:
    card = _read(body_run.folder / "run_card.json")
    results = _read(body_run.folder / "results.json")
    summary = _read(body_run.folder / "summary.json")
    [judge_in_card] = card["judge"].values()
    [judge_in_results] = results["odu"]["judges"].values()
    records = {
        "run card: model_args": card["model"]["model_args"]["extra_body"],
        "run card: backend": card["model"]["backend"]["extra_body"],
        "run card: judge": judge_in_card["extra_body"],
        "results: model_args": results["config"]["model_args"]["extra_body"],
        "results: backend": results["config"]["odu_backend"]["extra_body"],
        "results: judge": judge_in_results["extra_body"],
        "summary: judge": summary["judge"]["extra_body"],
    }
    for where, stored in records.items():
        assert {k: stored.get(k) for k in STORED} == STORED, where
    command = card["command"]
    for option in ("--model-args", "--judge-extra-body"):
        shown = json.loads(command[command.index(option) + 1])
        assert shown.get("extra_body", shown) == STORED, option


def test_the_every_eval_ever_export_holds_no_free_string(body_run: BodyRun, tmp_path: Path) -> None:
    assert export([body_run.folder], "eee", tmp_path / "eee", resamples=20, model_ids=["lab/omni-test"]) == 0
    files = _files(tmp_path / "eee")
    assert len(files) == 2 and b"***" in b"".join(files.values())  # the body is there, stored by its rule
    assert _leaks(files, list(SECRETS.values())) == []


def test_the_inspect_export_holds_no_free_string(body_run: BodyRun, tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    assert export([body_run.folder], "inspect", tmp_path / "inspect", model_ids=["lab/omni-test"]) == 0
    files = _files(tmp_path / "inspect")
    assert files and _leaks(files, list(SECRETS.values())) == []


# --- odu-bench score: the judge's body, and a server that echoes it --------------------------------------------

SAMPLE_SCENES = REPO / "odu" / "data" / "sample" / "scenes.jsonl"


def _reference_outputs(path: Path) -> Path:
    rows = [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").splitlines() if line]
    outputs = [
        {"scene_id": r["scene_id"], "output": json.dumps(r["annotations"][r["language"]]["evaluation_targets"])}
        for r in rows
    ]
    path.write_text("".join(json.dumps(o) + "\n" for o in outputs), encoding="utf-8")
    return path


def test_score_stores_the_judge_body_by_rule_and_no_echo_of_it(
    tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every other judge call is refused with the request body echoed in the error message (as
    servers naming an unknown field do): the errors are recorded and printed, the credential-shaped
    free strings in them are not."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    shaped = {k: v for k, v in SECRETS.items() if k != "digits only"}  # a number is no credential to echo
    body = {k: v for k, v in SENT.items() if k != "pin_v2"}
    answer = judge_responder()
    calls: list[int] = []

    def echoing(req: RecordedRequest) -> Reply:
        calls.append(1)
        if len(calls) % 2:
            echoed = {k: req.json[k] for k in body}
            return Reply(400, {"error": {"message": f"unknown fields: {json.dumps(echoed)}", "type": "invalid"}})
        return Reply(body=chat_completion(req.json, answer(req.json)))

    with OpenAIServer(api_key=KEY, models=("loopback",), extra_fields=set(body)) as server:
        server.route("POST", "/v1/chat/completions", echoing)
        args = argv(
            "score",
            scenes=SAMPLE_SCENES,
            predictions=_reference_outputs(tmp_path / "p.jsonl"),
            judge="openai:loopback",
            judge_base_url=server.base_url,
            judge_extra_body=json.dumps(body),
            judge_retries=0,
            out=tmp_path / "run",
        )
        code = main([*args, "--no-cache", "--no-progress", "--allow-judge-errors"])
    out, err = capfd.readouterr()
    assert code == 0, err
    summary = _read(tmp_path / "run" / "summary.json")
    assert summary["judge"]["errors"] > 0 and "unknown fields" in (tmp_path / "run" / "scenes.jsonl").read_text()
    assert {k: summary["judge"]["extra_body"].get(k) for k in body} == {k: STORED[k] for k in body}
    files = _files(tmp_path / "run")
    assert _leaks({**files, "stdout": out.encode(), "stderr": err.encode()}, list(shaped.values())) == []


# --- odu-bench lm-eval: lm-eval's own files and console ---------------------------------------------------------


def test_lm_eval_through_odu_bench_stores_the_body_by_rule_in_lm_eval_s_files(
    sample_dataset: Path, tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ODU_DATASET", str(sample_dataset))
    monkeypatch.delenv("ODU_JUDGE", raising=False)
    # lm-eval makes its log handler once per process, on the stderr of that moment: in this process an
    # earlier test's captured stream; this test reads the stderr of its own run
    for handler in logging.getLogger("lm_eval").handlers:
        if type(handler) is logging.StreamHandler:  # lm-eval's own, not pytest's capturing handlers
            monkeypatch.setattr(handler, "stream", sys.stderr)
    with OpenAIServer(FakeOmni(sample_dataset), api_key=KEY, models=("omni-test",), extra_fields=set(SENT)) as server:
        model_args = {"model": "omni-test", "base_url": server.base_url, "progress": False, "extra_body": SENT}
        args = ["lm-eval", "run", "--model", "odu-openai", "--tasks", "odu_ao", "--limit", "2", "--log_samples"]
        assert main([*args, "-a", json.dumps(model_args), "--output_path", str(tmp_path / "out")]) == 0
    out, err = capfd.readouterr()
    files = _files(tmp_path / "out")
    [results] = [n for n in files if Path(n).name.startswith("results_")]
    assert any(Path(n).name.startswith("run_card_") for n in files)
    stored = json.loads(files[results])["config"]["model_args"]["extra_body"]
    assert {k: stored.get(k) for k in STORED} == STORED
    assert _leaks(files, list(SECRETS.values())) == []
    # lm-eval prints its arguments above the table itself: there, credential-shaped values only are known
    shaped = [v for k, v in SECRETS.items() if k != "digits only"]
    assert _leaks({"stdout": out.encode(), "stderr": err.encode()}, shaped) == []
    assert "'pin_v2': '***'" in err  # its log record of the arguments: the body by its rule


# --- plain lm_eval: refused before it prints anything ---------------------------------------------------------


def _installed() -> bool:
    return any(Path(p, "odu_lm_eval_bridge.pth").is_file() for p in sys.path)


def _plain_lm_eval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "ODU_LM_EVAL_BRIDGE"} | {"OPENAI_API_KEY": KEY}
    command = [sys.executable, "-m", "lm_eval", "run", "--tasks", "odu_ao", "--limit", "1", *args]
    return subprocess.run(command, env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not _installed(), reason="the .pth comes with pip install (-e) only")
def test_plain_lm_eval_refuses_each_free_string_naming_where_it_is_before_printing_anything(tmp_path: Path) -> None:
    model_args = {"model": "m", "base_url": dead_url(), "extra_body": SENT}
    done = _plain_lm_eval(tmp_path, "--model", "odu-openai", "--model_args", json.dumps(model_args))
    assert done.returncode == 2, done.stderr[-3000:]
    [line] = done.stderr.splitlines()
    assert line.startswith("lm-eval: error: --model_args: extra_body.api_key2, ") and not done.stdout
    paths = ["apiKeyValue", "metadata[0].apiKey2", "headers[0][0]", "headers[0][1]", "a.b[0].c[0][0].d", "pin_v2"]
    assert all(f"extra_body.{path}" in line for path in paths) and "odu-bench lm-eval" in line
    assert "extra_body.top_k" not in line and "chat_template_kwargs" not in line  # what is stored as given passes
    assert _leaks({"stderr": line.encode()}, list(SECRETS.values())) == []


@pytest.mark.skipif(not _installed(), reason="the .pth comes with pip install (-e) only")
@pytest.mark.parametrize(
    ("model_args", "said"),
    [
        (
            '{"model": "m", "extra_body": {"metadata": [{"api_key": "sk-LEAKED-list-0123"}]}}',
            "'api_key' holds a credential",
        ),
        ("model=m,base_url=http://user:LEAKED-pw-0123@127.0.0.1:9/v1", "base_url would be printed"),
        ('{"model": "m", "extra_body": {"api_key2": "sk-LEAKED-json-0123"}', "not valid JSON (Expecting ',' delimiter"),
        ('model=m,extra_body={"api_key2": "sk-LEAKED-kv-0123"}', "not valid JSON"),
    ],
    ids=["a key named so inside a list", "a URL's password", "a JSON argument cut short", "key=value holding JSON"],
)
def test_plain_lm_eval_never_echoes_the_model_arguments(model_args: str, said: str, tmp_path: Path) -> None:
    done = _plain_lm_eval(tmp_path, "--model", "odu-openai", "--model_args", model_args)
    assert done.returncode == 2 and said in done.stderr, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "LEAKED" not in done.stdout + done.stderr


@pytest.mark.skipif(not _installed(), reason="the .pth comes with pip install (-e) only")
def test_plain_lm_eval_runs_a_body_stored_as_given_and_leaves_other_models_alone(tmp_path: Path) -> None:
    url = dead_url()
    ours = _plain_lm_eval(
        tmp_path, "--model", "odu-openai", "-a", json.dumps({"model": "m", "base_url": url, "extra_body": KEPT})
    )
    assert ours.returncode == 2 and "preflight: model server" in ours.stderr.splitlines()[-1]  # past the check
    theirs = _plain_lm_eval(
        tmp_path, "--model", "dummy", "-a", json.dumps({"extra_body": {"api_key2": "sk-theirs-0123"}})
    )
    assert "would be printed" not in theirs.stderr  # lm-eval's own models are lm-eval's business


class _Cli:
    """Stands for lm-eval's ``HarnessCLI``: ``parse_args`` gives the namespace it was made with."""

    _parser = argparse.ArgumentParser(prog="lm-eval")

    def __init__(self, **parsed: Any) -> None:
        self.parsed = argparse.Namespace(config=None, **parsed)

    def parse_args(self) -> argparse.Namespace:
        return self.parsed


def test_the_parser_hook_refuses_where_lm_eval_shows_the_arguments_as_given(capsys: pytest.CaptureFixture) -> None:
    from odu.harness.arguments import refusing_credentials
    from odu.io.scrub import scrubbed_console

    parse_args = refusing_credentials(_Cli.parse_args)
    body = {"model": "m", "extra_body": {"api_key2": "sk-hook-4fA9", "n": 1}}
    with pytest.raises(SystemExit) as exited:
        parse_args(_Cli(model="odu-openai", model_args=body))
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and not out
    assert err.startswith("lm-eval: error: --model_args: extra_body.api_key2 would be printed") and err.count("\n") == 1
    assert "sk-hook-4fA9" not in err
    assert parse_args(_Cli(model="hf", model_args=body)).model == "hf"  # lm-eval's own models: lm-eval's business
    stored = {"model": "m", "extra_body": {"effort": "low", "n": 1}}
    assert parse_args(_Cli(model="odu-openai", model_args=stored)).model_args == stored
    with scrubbed_console():  # odu-bench lm-eval: its console and files are scrubbed, it checks for itself
        assert parse_args(_Cli(model="odu-openai", model_args=body)).model_args == body


def test_lm_eval_s_json_errors_say_where_the_json_breaks_not_what_it_holds() -> None:
    from lm_eval._cli.utils import try_parse_json

    from odu.harness.arguments import json_errors_unshown

    parse = json_errors_unshown(getattr(try_parse_json, "__wrapped__", try_parse_json))
    assert parse('{"a": 1}') == {"a": 1} and parse("a=1") == "a=1"
    with pytest.raises(argparse.ArgumentError) as refused:
        parse('{"model": "m", "extra_body": {"api_key2": "sk-json-4fA9"}')
    assert "sk-json-4fA9" not in str(refused.value) and "Expecting ',' delimiter at character 57" in str(refused.value)
