"""Run control of ``odu-bench eval``: the preflight of the judge and model servers
(:mod:`odu.transport.server_check`), ``--dry-run`` (:mod:`odu.runs.estimate`), ``--shard K/N`` + ``odu-bench
merge`` (:mod:`odu.runs.shards`), and credentials removed from everything written or printed
(:mod:`odu.io.scrub`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from support.cli import argv
from support.omni_fakes import FakeOmni
from support.openai_rules import API_KEY
from support.openai_server import OpenAIServer, Reply, dead_url
from support.sample_runs import server_run_env

from odu.cli import main
from odu.io.scrub import ScrubFilter, scrub_text, scrub_url, scrub_value
from odu.runs.estimate import CHARS_PER_TOKEN, JUDGE_OUTPUT_TOKENS_PER_POINT, MODEL_OUTPUT_TOKENS, PROVIDER_RATES
from odu.runs.shards import parse_shard, shard_index

SECRET = "hunter2-SECRET-f00d"
KEY = API_KEY  # what the strict loopback server accepts


def eval_omni(dataset: Path, out: Path, base_url: str, model_args: str = "", **options: Any) -> int:
    """``odu-bench eval`` of ``odu_ao`` with the ``openai`` backend on model ``omni-test`` at ``base_url``."""
    args = f"model=omni-test,base_url={base_url}{model_args}"
    return main(argv("eval", dataset=dataset, model="openai", tasks="odu_ao", model_args=args, out=out, **options))


@pytest.fixture(autouse=True)
def _env(hf_cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server_run_env(monkeypatch, hf_cache, KEY)


def scenes(dataset: Path) -> list[dict]:
    return [json.loads(line) for line in (dataset / "scenes.jsonl").read_text(encoding="utf-8").splitlines()]


# --- scrubbing ---------------------------------------------------------------------------------------------


def test_scrub_url_removes_user_info_and_every_query_value_but_the_harmless() -> None:
    assert scrub_url(f"http://user:{SECRET}@127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert scrub_url(f"https://{SECRET}@h/v1") == "https://h/v1"
    signed = f"https://b.s3.amazonaws.com/x.mp4?X-Amz-Credential=AK&X-Amz-Signature={SECRET}&partNumber=2"
    assert (
        scrub_url(signed) == "https://b.s3.amazonaws.com/x.mp4?X-Amz-Credential=***&X-Amz-Signature=***&partNumber=***"
    )
    gemini = f"https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key={SECRET}&alt=sse"
    assert scrub_url(gemini).endswith(":generateContent?key=***&alt=***")
    assert (
        scrub_url(f"http://h/v1?api-key={SECRET}&api-version=2024-06-01")
        == "http://h/v1?api-key=***&api-version=2024-06-01"
    )
    assert scrub_url(f"https://api.openai.com/v1?limit=3#{SECRET}") == "https://api.openai.com/v1?limit=***#***"
    assert scrub_url("http://localhost:8000/v1") == "http://localhost:8000/v1"


def test_scrub_text_and_value_reach_every_url_inside() -> None:
    line = (
        f"--model-args model=m,base_url=http://u:{SECRET}@127.0.0.1:9/v1 --judge-base-url 'http://j/v1?token={SECRET}'"
    )
    assert SECRET not in scrub_text(line) and "base_url=http://127.0.0.1:9/v1" in scrub_text(line)
    value = {"config": {"model_args": f"base_url=http://a:{SECRET}@h/v1", "n": 3, "ok": True, "x": None}}
    value["argv"] = ["odu-bench", f"http://a:{SECRET}@h/v1"]
    value["obj"] = Path(f"http:/a:{SECRET}@h")  # not a URL (one slash): left as it is
    scrubbed = scrub_value(value)
    assert SECRET not in json.dumps({k: v for k, v in scrubbed.items() if k != "obj"})
    assert scrubbed["config"]["n"] == 3 and scrubbed["config"]["ok"] is True and scrubbed["config"]["x"] is None


def test_log_records_are_scrubbed_with_their_arguments() -> None:
    record = logging.LogRecord(
        "lm-eval", logging.INFO, __file__, 1, "model args: %s", (f"http://u:{SECRET}@h/v1",), None
    )
    assert ScrubFilter().filter(record) and record.getMessage() == "model args: http://h/v1"


def test_lm_eval_door_scrubs_its_output_files_and_console(
    sample_dataset: Path, tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ODU_DATASET", str(sample_dataset))
    fake = FakeOmni(sample_dataset)
    with OpenAIServer(fake, api_key=None, models=("omni-test",)) as server:  # Basic auth: as above
        url = server.base_url.replace("http://", f"http://user:{SECRET}@")
        args = ["lm-eval", "run", "--model", "odu-openai", "--tasks", "odu_ao", "--limit", "2", "--log_samples"]
        args += ["--model_args", f"model=omni-test,base_url={url},progress=false", "--output_path", str(tmp_path)]
        assert main(args) == 0
    out, err = capfd.readouterr()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.startswith("results_") for p in files) and any(p.name.startswith("samples_") for p in files)
    assert all(SECRET not in p.read_text(encoding="utf-8") for p in files)
    assert SECRET not in out and SECRET not in err and "odu-openai" in out


# --- preflight ---------------------------------------------------------------------------------------------


def test_nothing_listening_stops_the_run_before_any_scene_naming_the_url(tmp_path: Path, capfd) -> None:
    url = dead_url(f"user:{SECRET}@")
    code = main(argv("eval", sample=True, model="openai", model_args=f"model=m,base_url={url}", out=tmp_path / "out"))
    out, err = capfd.readouterr()
    assert code == 2
    assert f"model server {scrub_url(url)} (model 'm')" in err and "cannot reach the server" in err
    assert "Connect" in err and "--no-preflight" in err
    assert SECRET not in out + err and not (tmp_path / "out").exists()


def test_the_judge_is_checked_before_the_model(sample_dataset: Path, tmp_path: Path, capfd) -> None:
    with OpenAIServer(FakeOmni(sample_dataset), models=("omni-test",)) as server:
        code = main(
            argv(
                "eval",
                dataset=sample_dataset,
                model="openai",
                model_args=f"model=omni-test,base_url={server.base_url}",
                judge="openai:judge-test",
                judge_base_url=dead_url(),
                out=tmp_path / "out",
            )
        )
        assert server.count(None) == 0  # a dead judge costs the model server nothing
    err = capfd.readouterr().err
    assert code == 2 and "preflight: judge server http://127.0.0.1:" in err and "judge-test" in err


#: OpenAI's answer to ``max_tokens`` on a gpt-5 / o-series model (quoted in griptape-ai/ComfyUI-Griptape#312).
UNSUPPORTED_MAX_TOKENS = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}


@pytest.mark.parametrize(
    ("models", "probe", "expected"),
    [
        # GET /v1/models lists the served names (vLLM: --served-model-name, owned_by "vllm"); a request
        # for another name is a 404 "The model `x` does not exist." (vllm-project/vllm#3486)
        (("other-model",), None, "model 'omni-test' is not among the models it serves: other-model"),
        # OpenAI refuses a parameter the model does not take with 400 (see UNSUPPORTED_MAX_TOKENS)
        (
            ("omni-test",),
            Reply(400, UNSUPPORTED_MAX_TOKENS),
            "a minimal request was refused (HTTP 400: Error code: 400 - Unsupported parameter: 'max_tokens'",
        ),
        # a wrong key: OpenAI answers 401 on every route, the model list first
        (("omni-test",), "models-401", "GET /models answered HTTP 401"),
    ],
)
def test_preflight_names_what_is_wrong(sample_dataset: Path, tmp_path: Path, capfd, models, probe, expected) -> None:
    fake = FakeOmni(sample_dataset)
    with OpenAIServer(fake, models=models) as server:
        if isinstance(probe, Reply):
            server.responder = lambda body: probe
        elif probe == "models-401":
            server.route("GET", "/v1/models", lambda req: Reply(401, {"error": {"message": "Incorrect API key"}}))
        code = eval_omni(sample_dataset, tmp_path / "out", server.base_url)
        assert server.count() <= 1  # at most the probe reached the chat route
        where = f"model server {server.base_url}"
    err = capfd.readouterr().err
    assert code == 2 and expected in err and where in err


def test_a_server_without_a_model_list_is_probed_then_run_with_only_the_pitfalls_that_apply(
    sample_dataset: Path, tmp_path: Path, capfd
) -> None:
    fake = FakeOmni(sample_dataset)
    with OpenAIServer(fake, models=("omni-test",)) as server:  # serves the model, lists nothing
        server.route("GET", "/v1/models", lambda req: Reply(404, {"error": {"message": "not found"}}))
        code = eval_omni(sample_dataset, tmp_path / "out", server.base_url, ",progress=false")
    err = capfd.readouterr().err
    assert code == 0, err
    assert len(fake.probes) == 1 and fake.probes[0]["max_tokens"] == 8 and fake.probes[0]["model"] == "omni-test"
    assert "audio inside the video" not in err  # an audio-only run sends no video (issue 20: printed before)
    [folder] = (tmp_path / "out").iterdir()
    stats = json.loads((folder / "run_card.json").read_text(encoding="utf-8"))["model"]["backend"]["stats"]
    assert stats["requests"] == len(fake.model_requests)  # the probe is not the run's


def test_preflight_false_and_no_preflight_skip_the_check(tmp_path: Path, capfd) -> None:
    base = dict(sample=True, model="openai", tasks="odu_ao", limit=1, allow_inference_errors=True)
    args = f"model=m,base_url={dead_url()},retries=0,progress=false"
    assert main(argv("eval", **base, model_args=args + ",preflight=false", out=tmp_path / "a")) == 0
    assert main(argv("eval", **base, model_args=args, no_preflight=True, out=tmp_path / "b")) == 0
    err = capfd.readouterr().err
    assert "preflight:" not in err and err.count("inference error (1 scene(s)): model call failed") == 2


# --- dry run -----------------------------------------------------------------------------------------------


def test_dry_run_sends_nothing_and_counts_what_a_run_would(sample_dataset: Path, tmp_path: Path, capsys) -> None:
    records = scenes(sample_dataset)
    with OpenAIServer(FakeOmni(sample_dataset)) as server:
        code = main(
            argv(
                "eval",
                dataset=sample_dataset,
                model="openai,never",
                model_args=f"model=omni-test,base_url={server.base_url}",
                judge="openai:judge-test",
                judge_base_url=server.base_url,
                dry_run=True,
                json=True,
                price_in=2.0,
                price_out=8.0,
                judge_price_in=0.5,
                out=tmp_path / "out",
            )
        )
        assert server.count(None) == 0
    assert code == 0 and not (tmp_path / "out").exists()
    est = json.loads(capsys.readouterr().out)
    assert est["scenes"] == len(records) and est["model_requests"] == len(records)  # one remote model
    durations = {
        m: sum(c["duration"] for r in records if r["modality"] == m for c in r["clips"])
        for m in ("audio-visual", "audio-only")
    }
    assert est["media_seconds"]["audio_visual"] == pytest.approx(durations["audio-visual"], abs=1e-3)
    assert est["media_seconds"]["audio_only"] == pytest.approx(durations["audio-only"], abs=1e-3)
    assert set(est["providers"]) == {r.name for r in PROVIDER_RATES}
    gemini, openai = est["providers"]["gemini"], est["providers"]["openai"]
    assert gemini["output_tokens"] == MODEL_OUTPUT_TOKENS * len(records)
    assert gemini["cost"] == pytest.approx(
        (gemini["input_tokens"] * 2.0 + gemini["output_tokens"] * 8.0) / 1e6, rel=1e-3
    )
    # audio is cheaper in tokens on OpenAI (10/s) than Gemini (32/s); audio-only scenes carry no frames
    audio_gap = durations["audio-only"] * (32 - 10) + durations["audio-visual"] * (32 - 10)
    frames_gap = gemini["input_tokens"] - openai["input_tokens"] - audio_gap
    assert frames_gap < 0  # OpenAI's 2 fps of 425-token frames outweigh Gemini's 1 fps of 258
    # the judge: at most one request per reference segment of each positive scene, for both models
    segments = [
        s
        for r in records
        if r["label"] == "positive"
        for s in r["annotations"][r["language"]]["evaluation_targets"]["segments"]
        if s["key_points"]
    ]
    judge = est["judge"]
    assert judge["requests_at_most"] == 2 * len(segments)
    assert judge["output_tokens"] == 2 * JUDGE_OUTPUT_TOKENS_PER_POINT * sum(len(s["key_points"]) for s in segments)
    assert judge["input_tokens"] > 2 * len(segments) * 1000 / CHARS_PER_TOKEN  # the F.4 instruction alone is long
    assert judge["cost"] == pytest.approx((judge["input_tokens"] * 0.5 + judge["output_tokens"] * 8.0) / 1e6, rel=1e-3)


def test_dry_run_table_and_its_usage_errors(capsys) -> None:
    assert main(argv("eval", sample=True, dry_run=True)) == 0
    table = capsys.readouterr().out
    assert "dry run: nothing sent" in table and all(r.name in table for r in PROVIDER_RATES)
    assert "cost needs --price-in/--price-out" in table
    assert main(argv("eval", sample=True, dry_run=True, price_in=1.0, price_out=4.0)) == 0
    priced = capsys.readouterr().out
    assert "cost at the prices given" in priced and "cost needs" not in priced
    assert main(argv("eval", sample=True, json=True)) == 2
    assert "--json goes with --dry-run" in capsys.readouterr().err


# --- shards ------------------------------------------------------------------------------------------------


def test_shard_split_is_stable_and_parsed_strictly() -> None:
    ids = [f"scene-{i}" for i in range(400)]
    parts = [shard_index(i, 3) for i in ids]
    assert parts == [shard_index(i, 3) for i in ids] and set(parts) == {1, 2, 3}
    assert all(90 < parts.count(k) < 177 for k in (1, 2, 3))
    assert (
        shard_index("avp_gen_900003", 2) == int(__import__("hashlib").sha256(b"avp_gen_900003").hexdigest(), 16) % 2 + 1
    )
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/2", "3/2", "1", "a/b", "1/0"):
        with pytest.raises(ValueError, match="K/N"):
            parse_shard(bad)


def test_lm_eval_door_stops_on_a_failed_preflight(sample_dataset: Path, monkeypatch: pytest.MonkeyPatch, capfd) -> None:
    monkeypatch.setenv("ODU_DATASET", str(sample_dataset))
    url = dead_url(f"u:{SECRET}@")
    args = ["lm-eval", "run", "--model", "odu-openai", "--model_args", f"model=m,base_url={url}", "--tasks", "odu_ao"]
    assert main(args) == 2
    out, err = capfd.readouterr()
    assert err.splitlines()[-1].startswith(f"lm-eval: error: preflight: model server {scrub_url(url)}")
    assert "PreflightError" not in err and SECRET not in out + err  # no traceback of it


def test_every_replica_is_checked(sample_dataset: Path, tmp_path: Path, capfd) -> None:
    fake = FakeOmni(sample_dataset)
    with OpenAIServer(fake, models=("omni-test",)) as live:
        dead = dead_url()
        code = main(
            argv(
                "eval",
                dataset=sample_dataset,
                model="openai",
                tasks="odu_ao",
                model_args=json.dumps({"model": "omni-test", "base_url": f"{live.base_url}|{dead}"}),
                out=tmp_path / "out",
            )
        )
        listed = live.count("/v1/models")
    err = capfd.readouterr().err
    assert code == 2 and f"replica {dead}: cannot reach the server" in err and listed == 1 and not fake.probes
