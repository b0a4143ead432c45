"""The routes of ``docs/providers.md`` run as written: the route table names every Table 3 row once,
with a route or the reason it stays impossible; each route's ``odu-bench eval`` command, with its
placeholders filled and ``base_url`` pointed at the provider's strict fake (started as the route's
``vllm serve`` command says; the judge's at a loopback OpenAI-compatible server), runs the bundled
sample with no refusal and no inference error, and no key reaches any output file; rows that share a
route get the same request profile. The rule table is ``odu/models/provider_rules.py`` as it renders,
and every test it names exists and cites its rule."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.omni_fakes import FakeOmni
from support.openai_server import OpenAIServer
from support.paper import table3_rows
from support.provider_fakes import ArkFake, DashScopeFake, OpenAIFake, VllmFake, sample_transcripts

from odu.cli import main as odu_main
from odu.data.sample import sample_dataset_dir
from odu.models.providers import Profile, profile

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "providers.md"
KEYS = {
    "GEMINI_API_KEY": "AIza-doc-route-1a2b3c4d",
    "OPENAI_API_KEY": "sk-doc-route-5e6f7a8b",
    "JUDGE_API_KEY": "sk-doc-judge-9c0d1e2f",
    "DASHSCOPE_API_KEY": "sk-doc-dashscope-3a4b5c6d",
    "ARK_API_KEY": "ark-doc-7e8f9a0b",
}
ROOT = Path(__file__).resolve().parents[2]


def documented_routes() -> dict[str, list[str]]:
    """Route key (``<!-- route: KEY -->`` before its block) -> the block's ``odu-bench eval`` command."""
    routes = {}
    text = DOC.read_text(encoding="utf-8")
    for key, block in re.findall(r"<!-- route: ([\w-]+) -->\n```sh\n(.*?)```", text, flags=re.S):
        [line] = [ln for ln in block.replace("\\\n", " ").splitlines() if ln.startswith("odu-bench eval")]
        routes[key] = shlex.split(line.split("#", 1)[0])
    return routes


def route_table() -> dict[str, list[str]]:
    """Table 3 system -> its route table cells."""
    text = DOC.read_text(encoding="utf-8").split("## Route table", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")]
    return {row[0]: row[1:] for row in rows[2:]}  # after the header and its rule


def test_every_table3_row_has_a_route_or_says_why_not() -> None:
    table, routes = route_table(), documented_routes()
    paper = table3_rows()
    assert list(table) == [row["model"] for row in paper]  # every row of Table 3, in its order
    for row in paper:  # the scenes column: where Table 3 has scores
        scored = [name for name, col in (("AV", "av_avg"), ("AO", "ao_avg")) if row[col]]
        assert table[row["model"]][0] == ", ".join(scored), row["model"]
    for system, (_, backend, route, fake) in table.items():
        if backend.startswith("impossible:"):
            assert len(backend) > 80 and route == fake == "—", system  # the reason, not a bare word
        elif backend.startswith("lmms-eval"):  # lmms-eval's own backend on our task, its test named
            assert re.fullmatch(r"\[lmms-eval\]\(lmms-eval\.md#[\w-]+\)", route), system
            test = re.search(r"`(tests/lmms/test_\w+\.py)`", fake)
            assert test and (REPO / test.group(1)).is_file(), system
        else:
            key = re.fullmatch(r"\[([\w-]+)\]\(#[\w-]+\)", route)
            assert key and key.group(1) in routes, system
            assert fake.strip("`") in (
                "GeminiFake",
                "RealtimeFake",
                "VllmFake",
                "DashScopeFake",
                "ArkFake",
                "OpenAIFake",
            )
    assert set(routes) == set(ROUTES)


def shape(p: Profile) -> tuple:
    """What a profile puts in the request body (a family's own refusals aside)."""
    return (p.limit_field, p.sampling, p.sends_stop, p.audio_part, p.audio_in_video, p.native_switch, p.thinking_line)


def test_rows_sharing_a_route_share_its_request_profile() -> None:
    table = route_table()
    by_route: dict[str, list[str]] = {}
    for cells in table.values():
        model = re.search(r"→ vllm \((?:vLLM-Omni, )?`([^`]+)`\)", cells[1])
        if model:
            by_route.setdefault(cells[2], []).append(model.group(1))
    routes = documented_routes()
    for route, models in by_route.items():
        key = re.search(r"\[([\w-]+)\]", route).group(1)  # type: ignore[union-attr]
        args = routes[key][routes[key].index("--model-args") + 1]
        documented = re.search(r"model=([^,]+)", args).group(1)  # type: ignore[union-attr]
        assert documented in models
        assert all(shape(profile("vllm", m)) == shape(profile("vllm", documented)) for m in models), route
    assert sum(len(m) for m in by_route.values()) == 7  # the three Qwen-Omni rows and the four others


#: The documented routes.
ROUTES = (
    "gemini",
    "realtime",
    "vllm-qwen-omni",
    "vllm-omni-ming",
    "vllm-nemotron",
    "vllm-kimi-audio",
    "vllm",
    "dashscope",
    "ark",
    "openai-text",
)


def serve_limits() -> dict[str, int]:
    """The ``--limit-mm-per-prompt`` of the page's ``vllm serve`` commands (one value for all)."""
    [limits] = set(re.findall(r"--limit-mm-per-prompt '(\{[^']*\})'", DOC.read_text(encoding="utf-8")))
    return json.loads(limits)


def serve_commands() -> list[str]:
    """The page's ``vllm serve`` commands, continuation lines joined."""
    text = DOC.read_text(encoding="utf-8").replace("\\\n", " ")
    return re.findall(r"^vllm serve .*$", text, flags=re.MULTILINE)


def test_every_vllm_serve_command_trusts_request_mm_kwargs() -> None:
    """Rule vllm.trust-request-mm-kwargs: vLLM 0.31.0 and later refuse every request of the Qwen-Omni and
    Nemotron routes unless started with the flag, so every launch line names it (the fakes start so)."""
    commands = serve_commands()
    assert len(commands) == 5 and all("--trust-request-mm-kwargs" in c for c in commands), commands


def test_the_rule_table_is_the_codes_and_its_tests_exist() -> None:
    """docs/providers.md "Rule table" is :func:`odu.models.provider_rules.rule_table`; each rule's test exists
    (in ``tests/models/test_provider_rules.py`` its docstring names the rule)."""
    from odu.models.provider_rules import RULE_TESTS, RULES, rule_table

    text = DOC.read_text(encoding="utf-8")
    assert rule_table() == text.split("<!-- rule-table -->\n", 1)[1].split("\n<!-- /rule-table -->", 1)[0]
    assert len({r.id for r in RULES}) == len(RULES) and all(r.source and r.checked for r in RULES)
    tests = (ROOT / RULE_TESTS).read_text(encoding="utf-8")
    for r in RULES:
        if r.test.startswith("test_"):
            body = tests.split(f"def {r.test}(", 1)
            assert len(body) == 2, f"{r.id}: no {r.test} in {RULE_TESTS}"
            assert r.id in body[1].split('"""', 2)[1], f"{r.id}: the docstring of {r.test} does not cite it"
        elif r.test.startswith("tests/"):
            path, _, name = r.test.split(" ", 1)[0].partition("::")
            assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), f"{r.id}: no {r.test}"


@pytest.fixture(scope="module")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_dataset_dir(tmp_path_factory.mktemp("doc-sample"))


@contextlib.contextmanager
def fake_for(route: str, dataset: Path, model: str, key: str) -> Iterator[tuple[str, Any]]:
    """The started fake of ``route`` wanting ``key``: (its base URL, the fake)."""
    answer = FakeOmni(dataset)
    if route == "gemini":
        pytest.importorskip("google.genai")
        from support.gemini_fake import GeminiFake

        with OpenAIServer() as http:
            fake = GeminiFake(dataset, key=key, model=model).attach(http)
            yield http.origin, fake
    elif route == "realtime":
        pytest.importorskip("websockets")
        from support.realtime_fake import RealtimeFake

        with RealtimeFake(dataset, key=key, model=model) as fake:
            yield fake.base_url, fake
    else:
        kind = {"dashscope": DashScopeFake, "ark": ArkFake, "openai-text": OpenAIFake}.get(route, VllmFake)
        extra: dict[str, Any] = {"models": (model,), "api_key": key}
        if kind is VllmFake:  # as the route's vllm serve command starts it
            extra["limit_mm_per_prompt"] = serve_limits()
            extra["trust_request_mm_kwargs"] = all("--trust-request-mm-kwargs" in c for c in serve_commands())
        if route == "openai-text":
            extra = {**extra, "transcripts": sample_transcripts(dataset), "models": (model, "whisper-1")}
        with kind(answer, **extra) as fake:
            yield fake.base_url, fake


@pytest.mark.parametrize("route", ROUTES)
def test_documented_route_runs_against_its_fake(
    route: str,
    tmp_path: Path,
    sample_dataset: Path,
    hf_cache: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    placeholders = {"GEMINI_MODEL_ID": "gemini-3.1-pro-preview", "ARK_MODEL_ID": "doubao-seed-2-0-lite-260428"}
    args = documented_routes()[route][1:]  # without the program name
    at = args.index("--model-args") + 1
    for name, value in placeholders.items():
        args[at] = args[at].replace(name, value)
    model = re.search(r"model=([^,]+)", args[at]).group(1)  # type: ignore[union-attr]
    named = re.search(r"api_key_env=([^,]+)", args[at])  # the key variables the command names
    model_key = KEYS[named.group(1) if named else "GEMINI_API_KEY" if route == "gemini" else "OPENAI_API_KEY"]
    judge_env = args[args.index("--judge-api-key-env") + 1] if "--judge-api-key-env" in args else "OPENAI_API_KEY"
    judging = OpenAIServer(FakeOmni(sample_dataset), api_key=KEYS[judge_env])
    judging.models, judging.extra_fields = ["judge-test"], {"chat_template_kwargs"}  # the doc's judge extra body
    with judging as judge, fake_for(route, sample_dataset, model, model_key) as (url, fake):
        filled = [a.replace("$JUDGE_URL", judge.base_url).replace("JUDGE_MODEL", "judge-test") for a in args]
        filled = [str(sample_dataset) if a == "DIR" else a for a in filled]
        filled[at] = re.sub(r"base_url=[^,]+", f"base_url={url}", filled[at])
        if "base_url=" not in filled[at]:
            filled[at] += f",base_url={url}"
        if "--asr" in filled:
            filled += ["--asr-base-url", url]
        code = odu_main([*filled, "--out", str(tmp_path / "out")])
        refusals = getattr(fake, "refusals", [])
    out = capsys.readouterr()
    [folder] = (tmp_path / "out").iterdir()
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["judge_errors"] == 0 and refusals == []
    assert summary["judge"]["model"] == "judge-test" and summary["judge"]["requests"] > 0
    assert code == 0, out.err[-3000:]
    assert summary["inference_errors"] == 0  # none left out by the toolkit's own limits either
    for path in folder.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not any(key in text for key in KEYS.values()), path.name
