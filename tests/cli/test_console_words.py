"""Issue 35 item 4: our warnings on the console (:mod:`odu.io.console`). A warning of ours is one line in
the toolkit's voice (``odu-bench eval: warning: ...``; ``odu-bench: warning: ...`` under lm-eval and the
``evaluate`` metric), printed once per cause per run however many places raise it, without Python's
``module.py:NN: Category:`` header and source line. Each command runs as a user runs it (``python -m
odu``, ``python -m lm_eval``, ``evaluate.load``), against a loopback server that takes a placeholder
API key, which every client of the run (model, preflight, judge) warns about."""

from __future__ import annotations

import json
import re
import shutil
import site
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import argv
from support.omni_fakes import FakeOmni, reference_output
from support.openai_server import OpenAIServer
from support.process import REPO, fresh_env, run_odu
from support.sample_runs import scored_sample_run

from odu.data.hub import StaleDatasetWarning
from odu.io.console import OduWarning, our_voice, say_in_our_voice
from odu.io.scrub import PlaceholderKeyWarning
from odu.metric.door import metric_script

#: A placeholder API key: sent to a ``base_url``, warned about (``odu.transport.openai_client.placeholder_key``).
KEY = "x"
#: The placeholder key's warning, as it begins.
PLACEHOLDER_SAID = "API key: OPENAI_API_KEY holds a placeholder, not a credential"
MODEL, JUDGE = "omni-test", "judge-test"
SAMPLE_SCENES = REPO / "odu" / "data" / "sample" / "scenes.jsonl"


def said_once(stderr: str, voice: str, words: str) -> str:
    """The one line of ``stderr`` holding ``words``: a warning in ``voice``, none of Python's format."""
    lines = [line for line in stderr.splitlines() if words in line]
    assert len(lines) == 1, stderr[-4000:]
    [line] = lines
    assert line.startswith(f"{voice}: warning: {words}"), line
    assert re.search(r"\.py:\d+", line) is None and "warnings.warn" not in stderr
    assert not any(c.__name__ in stderr for c in (PlaceholderKeyWarning, StaleDatasetWarning)), stderr[-4000:]
    return line


@pytest.fixture
def fake(sample_dataset: Path) -> FakeOmni:
    """The omni model and the judge, answering as the sample's references say."""
    return FakeOmni(sample_dataset)


@pytest.fixture
def server(fake: FakeOmni) -> Iterator[OpenAIServer]:
    """A loopback server of ``fake``, taking the placeholder key."""
    with OpenAIServer(fake, api_key=KEY, models=(MODEL, JUDGE)) as started:
        yield started


def _judge_spec(server: OpenAIServer) -> str:
    return f"openai:{JUDGE} --judge-base-url {server.base_url}"


def test_eval_says_a_placeholder_key_once_in_its_own_voice(
    server: OpenAIServer, fake: FakeOmni, sample_dataset: Path, tmp_path: Path
) -> None:
    model_args = {"model": MODEL, "base_url": server.base_url, "progress": False}
    args = argv(
        "eval",
        dataset=sample_dataset,
        model="openai",
        tasks="odu_ao",
        limit=2,
        model_args=json.dumps(model_args),
        judge=f"openai:{JUDGE}",
        judge_base_url=server.base_url,
        out=tmp_path / "out",
    )
    proc = run_odu(args, fresh_env(tmp_path, OPENAI_API_KEY=KEY, HF_HUB_OFFLINE="1"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    said_once(proc.stderr, "odu-bench eval", PLACEHOLDER_SAID)
    assert len(fake.probes) == 2 and fake.model_requests  # model and judge, each with its preflight: one line


def test_score_says_a_placeholder_key_in_its_own_voice(server: OpenAIServer, tmp_path: Path) -> None:
    records = [json.loads(line) for line in SAMPLE_SCENES.read_text(encoding="utf-8").splitlines() if line]
    predictions = tmp_path / "predictions.jsonl"
    rows = [{"scene_id": r["scene_id"], "output": reference_output(r)} for r in records]
    predictions.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    args = argv("score", scenes=SAMPLE_SCENES, predictions=predictions, out=tmp_path / "run", no_progress=True)
    proc = run_odu([*args, "--judge", _judge_spec(server)], fresh_env(tmp_path, OPENAI_API_KEY=KEY), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    said_once(proc.stderr, "odu-bench score", PLACEHOLDER_SAID)


@pytest.mark.parametrize(
    ("door", "voice"), [(["-m", "odu", "lm-eval", "run"], "odu-bench lm-eval"), (["-m", "lm_eval"], "odu-bench")]
)
def test_lm_eval_with_our_model_says_a_placeholder_key_once(
    door: list[str], voice: str, server: OpenAIServer, fake: FakeOmni, sample_dataset: Path, tmp_path: Path
) -> None:
    """``odu-bench lm-eval`` speaks as that command; plain ``lm_eval`` (the start-up bridge registers
    ``odu-openai``) as the toolkit."""
    if door[1] == "lm_eval" and not any(Path(p, "odu_lm_eval_bridge.pth").is_file() for p in site.getsitepackages()):
        pytest.skip("the start-up bridge's .pth comes with pip install (-e) only")
    args = [
        *["--model", "odu-openai", "--model_args", f"model={MODEL},base_url={server.base_url},progress=false"],
        *["--tasks", "odu_ao", "--limit", "2", "--metadata", json.dumps({"dataset": str(sample_dataset)})],
    ]
    env = fresh_env(tmp_path, OPENAI_API_KEY=KEY, HF_HUB_OFFLINE="1", ODU_JUDGE=_judge_spec(server))
    proc = subprocess.run(
        [sys.executable, *door, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    said_once(proc.stderr, voice, PLACEHOLDER_SAID)
    assert len(fake.probes) == 2  # model and judge preflights: said once


#: The metric loaded by path and computed with the judge of ``sys.argv[2]`` on the records of ``sys.argv[3]``.
METRIC_COMPUTE = textwrap.dedent(
    """
    import json, sys
    import evaluate
    records = [json.loads(line) for line in open(sys.argv[3], encoding="utf-8") if line.strip()]
    metric = evaluate.load(sys.argv[1])
    result = metric.compute(predictions=[None] * len(records), references=records, judge=sys.argv[2])
    print(result["judge"]["name"])
    """
)


def test_the_evaluate_metric_says_a_placeholder_key_in_the_toolkits_voice(server: OpenAIServer, tmp_path: Path) -> None:
    metric = str(metric_script().parent)
    proc = subprocess.run(
        [sys.executable, "-c", METRIC_COMPUTE, metric, _judge_spec(server), str(SAMPLE_SCENES)],
        env=fresh_env(tmp_path, OPENAI_API_KEY=KEY, HF_HUB_OFFLINE="1"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and proc.stdout.split()[-1] == "openai", proc.stderr[-4000:]
    said_once(proc.stderr, "odu-bench", PLACEHOLDER_SAID)


#: ``datasets.load_dataset`` of a prepared folder per config of ``sys.argv[2:]``, as a user's earlier load leaves it.
PLAIN_LOADS = "import sys, datasets; [datasets.load_dataset(sys.argv[1], c, split='test') for c in sys.argv[2:]]"


@pytest.mark.parametrize("command", ["eval", "view"])
def test_a_stale_cached_dataset_is_said_once_per_config(command: str, sample_dataset: Path, tmp_path: Path) -> None:
    """``--dataset org/odu-bench``, offline, with no such folder: ``datasets`` serves the copy a Hub
    download of it left in its cache (``ORG___NAME/CONFIG/...``, here made from a prepared folder)."""
    env = fresh_env(tmp_path, HF_HUB_OFFLINE="1")
    configs = ["ao", "av"] if command == "eval" else ["all"]
    loaded = subprocess.run(
        [sys.executable, "-c", PLAIN_LOADS, str(sample_dataset), *configs],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    cache = Path(env["HF_DATASETS_CACHE"])
    shutil.copytree(cache / sample_dataset.name, cache / f"org___{sample_dataset.name}")
    dataset = f"org/{sample_dataset.name}"
    if command == "eval":
        args = argv("eval", dataset=dataset, model="never", tasks="odu_ao,odu_av", out=tmp_path / "out")
    else:
        args = argv(
            "view", scored_sample_run(tmp_path / "run"), dataset=dataset, out=tmp_path / "site", no_progress=True
        )
    proc = run_odu(args, env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for config in configs:
        said_once(
            proc.stderr, f"odu-bench {command}", f"dataset {dataset} ({config}): not found as a folder or on the Hub"
        )


#: The start-up bridge with a hook that fails, as one would on an lm-eval release it does not know.
BRIDGE_FAILS = textwrap.dedent(
    """
    import odu_lm_eval_bridge as bridge
    def broken(module):
        raise AttributeError("module 'colorsys' has no attribute 'TaskManager'")
    bridge._HOOKS["colorsys"] = broken
    bridge.install()
    import colorsys
    print(colorsys.rgb_to_hls(1, 0, 0))
    """
)


def test_a_failed_bridge_hook_is_one_line_in_the_toolkits_voice(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BRIDGE_FAILS], env=fresh_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "(0.0, 0.5, 1.0)", proc.stderr[-3000:]  # it runs on
    line = said_once(proc.stderr, "odu-bench", "lm-eval bridge: not applied on colorsys: AttributeError(")
    assert line.endswith("(set ODU_LM_EVAL_BRIDGE=0 to silence)") and "LmEvalBridgeWarning" not in proc.stderr


# --- the voice itself -------------------------------------------------------------------------------------------


def test_only_our_warnings_change_voice_and_the_command_restores_what_it_found() -> None:
    before = warnings.showwarning, warnings.formatwarning
    with our_voice("odu-bench test"):
        say_in_our_voice()  # the harness, inside a command: the command's voice stays
        ours = warnings.formatwarning("said", StaleDatasetWarning, "/x/odu/data/hub.py", 7)
        theirs = warnings.formatwarning("said", UserWarning, "/x/lib.py", 7)
    assert ours == "odu-bench test: warning: said\n"
    assert theirs.startswith("/x/lib.py:7: UserWarning: said")
    assert (warnings.showwarning, warnings.formatwarning) == before


def test_our_warnings_stay_python_warnings_a_filter_decides_first() -> None:
    with our_voice("odu-bench test"), warnings.catch_warnings():
        warnings.simplefilter("error", OduWarning)
        with pytest.raises(PlaceholderKeyWarning, match="said"):
            warnings.warn("said", PlaceholderKeyWarning, stacklevel=1)
