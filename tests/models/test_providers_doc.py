"""The routes of ``docs/providers.md`` run as written: each documented ``odu-bench eval`` command,
with its placeholders filled and ``base_url`` pointed at the provider's strict fake (and the judge's
at a loopback OpenAI-compatible server), runs the bundled sample to exit 0 with no inference or
judge errors, and no key reaches any output file."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from support.omni_fakes import FakeOmni
from support.openai_server import OpenAIServer

from odu.cli import main as odu_main
from odu.data.sample import sample_dataset_dir

DOC = Path(__file__).resolve().parents[2] / "docs" / "providers.md"
KEYS = {
    "GEMINI_API_KEY": "AIza-doc-route-1a2b3c4d",
    "OPENAI_API_KEY": "sk-doc-route-5e6f7a8b",
    "JUDGE_API_KEY": "sk-doc-judge-9c0d1e2f",
}


def documented_commands() -> dict[str, list[str]]:
    """Backend name -> the documented ``odu-bench eval`` command (continuation lines joined)."""
    commands = {}
    for block in re.findall(r"```sh\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S):
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            if line.startswith("odu-bench eval"):
                args = shlex.split(line.split("#", 1)[0])
                commands[args[args.index("--model") + 1]] = args
    return commands


def test_the_doc_documents_both_routes() -> None:
    assert set(documented_commands()) == {"gemini", "realtime"}


@pytest.fixture(scope="module")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_dataset_dir(tmp_path_factory.mktemp("doc-sample"))


@pytest.mark.parametrize("backend", ["gemini", "realtime"])
def test_documented_route_runs_against_its_fake(
    backend: str,
    tmp_path: Path,
    sample_dataset: Path,
    hf_cache: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    import json

    import datasets

    pytest.importorskip("google.genai" if backend == "gemini" else "websockets")
    from support.gemini_fake import GeminiFake
    from support.realtime_fake import RealtimeFake

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    args = documented_commands()[backend][1:]  # without the program name
    judge_key = KEYS["OPENAI_API_KEY" if backend == "gemini" else "JUDGE_API_KEY"]  # as the doc says
    judging = OpenAIServer(FakeOmni(sample_dataset), api_key=judge_key, models=["judge-test"])
    judging.extra_fields = {"chat_template_kwargs"}  # the doc's --judge-extra-body: a vLLM extra
    with judging as judge, OpenAIServer() as http:
        if backend == "gemini":
            fake = GeminiFake(sample_dataset, key=KEYS["GEMINI_API_KEY"], model="gemini-doc-test").attach(http)
            url, context = http.origin, None
        else:
            context = RealtimeFake(sample_dataset, key=KEYS["OPENAI_API_KEY"], model="gpt-realtime-2")
            fake = context.__enter__()
            url = fake.base_url
        try:
            filled = [
                a.replace("$JUDGE_URL", judge.base_url)
                .replace("JUDGE_MODEL", "judge-test")
                .replace("GEMINI_MODEL_ID", "gemini-doc-test")
                .replace("DIR", str(sample_dataset))
                for a in args
            ]
            at = filled.index("--model-args") + 1
            filled[at] += f",base_url={url}"
            code = odu_main([*filled, "--out", str(tmp_path / "out")])
        finally:
            if context is not None:
                context.__exit__(None, None, None)
    out = capsys.readouterr()
    assert code == 0, out.err[-3000:]
    [folder] = (tmp_path / "out").iterdir()
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["inference_errors"] == 0 and summary["judge_errors"] == 0
    assert summary["judge"]["model"] == "judge-test" and summary["judge"]["requests"] > 0
    for path in folder.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not any(key in text for key in KEYS.values()), path.name
