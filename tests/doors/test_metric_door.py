"""The metric door: ``odu-bench install-metric`` makes the literal ``evaluate.load("odu_metric")`` work
from an empty folder offline; ``odu-bench upload-metric ORG/NAME`` publishes a Space that
``evaluate.load("ORG/NAME")`` loads, against a loopback Hub as strict as the real one
(``tests/support/fake_hub.py``); ``evaluate.load(<path>)`` of the installed script."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import yaml
from support.fake_hub import FakeHub
from support.process import fresh_env, run_odu

from odu.metric.door import metric_script, space_files

REPO = Path(__file__).resolve().parents[2]
RECORDS = json.loads((REPO / "tests" / "fixtures" / "demo_scenes.json").read_text(encoding="utf-8"))[:6]

#: Loads the metric named on the command line and scores the records with reference outputs.
LOAD_AND_COMPUTE = textwrap.dedent(
    """
    import json, sys
    import evaluate
    records = json.loads(sys.stdin.read())
    outputs = [{"has_demand": r["annotations"][r["language"]]["evaluation_targets"]["has_demand"], "segments": []}
               for r in records]
    metric = evaluate.load(sys.argv[1])
    print(json.dumps({"name": metric.name, "result": metric.compute(predictions=outputs, references=records)}))
    """
)


def load_and_compute(name: str, env: dict[str, str], cwd: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", LOAD_AND_COMPUTE, name],
        input=json.dumps(RECORDS),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def expected_result() -> dict:
    from odu.core.schema import load_scenes
    from odu.judge import make_judge
    from odu.runs.scoring import score_scenes

    scenes = load_scenes(RECORDS)
    outputs = {
        s.scene_id: json.dumps({"has_demand": s.annotation().has_demand, "segments": []}, ensure_ascii=False)
        for s in scenes
    }
    return json.loads(json.dumps(score_scenes(scenes, outputs, make_judge("lexical")).summary))


def test_install_metric_makes_the_bare_name_load_offline_from_an_empty_folder(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    # the start-up hook off (it loads the installed metric by name itself): install-metric's own way
    env = fresh_env(tmp_path, HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1", ODU_LM_EVAL_BRIDGE="0")
    before = subprocess.run(
        [sys.executable, "-c", "import evaluate; evaluate.load('odu_metric')"],
        env=env,
        cwd=empty,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert before.returncode != 0 and "odu_metric" in before.stderr  # nothing to find before the install
    family = tmp_path / "hf-home" / "modules" / "evaluate_modules" / "metrics" / "evaluate-metric--odu_metric"
    older = family / ("0" * 64) / "odu_metric.py"  # a copy an older odu-bench installed
    older.parent.mkdir(parents=True)
    older.write_text("raise ImportError('the old metric')\n", encoding="utf-8")
    proc = run_odu(["install-metric"], env, cwd=empty)
    assert proc.returncode == 0, proc.stderr
    written = Path(proc.stdout.split()[1])
    assert written.is_relative_to(tmp_path / "hf-home") and written.read_bytes() == metric_script().read_bytes()
    assert len(written.parent.name) == 64  # the only directory names evaluate's cache fallback accepts
    loaded = load_and_compute("odu_metric", env, empty)
    assert loaded["name"] == "odu_metric" and loaded["result"] == expected_result()
    assert not older.exists()  # replaced: the bare name loads this version
    assert run_odu(["install-metric"], env, cwd=empty).returncode == 0  # again: one copy, this version
    assert [p.name for p in family.iterdir() if p.is_dir()] == [written.parent.name]


def test_the_installed_script_loads_by_path(tmp_path: Path) -> None:
    env = fresh_env(tmp_path, HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    loaded = load_and_compute(str(metric_script().parent), env, tmp_path)
    assert loaded["result"] == expected_result()


def test_upload_metric_publishes_a_space_that_evaluate_loads(tmp_path: Path) -> None:
    with FakeHub() as hub:
        env = fresh_env(tmp_path, HF_ENDPOINT=hub.endpoint, HF_TOKEN=hub.token)
        proc = run_odu(["upload-metric", "odu-org/odu_metric"], env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        space = hub.repos[("space", "odu-org/odu_metric")]
        assert space.sdk == "static" and set(space.files) == {"odu_metric.py", "README.md"}
        assert space.files["odu_metric.py"] == metric_script().read_bytes()
        front = yaml.safe_load(space.files["README.md"].decode().split("---\n")[1])
        assert front["sdk"] == "static" and "metric" in front["tags"]
        assert hub.token not in proc.stdout + proc.stderr
        writes = [e for e in hub.log if e.path.startswith("/api/") and e.method == "POST"]
        assert writes and all(e.authorization == f"Bearer {hub.token}" for e in writes)

        loaded = load_and_compute("odu-org/odu_metric", {**env, "HF_HOME": str(tmp_path / "user2")}, tmp_path)
        assert loaded["result"] == expected_result()
        assert any(e.path == "/spaces/odu-org/odu_metric/resolve/main/odu_metric.py" for e in hub.log)

        again = run_odu(["upload-metric", "odu-org/odu_metric", "--sdk", "gradio"], env, cwd=tmp_path)
        assert again.returncode == 0, again.stderr[-3000:]  # an existing Space gets a new commit
        assert {"app.py", "requirements.txt"} <= set(space.files) and len(space.commits) == 2
        assert 'evaluate.load("odu-org/odu_metric")' in space.files["app.py"].decode()

        refused = run_odu(["upload-metric", "odu-org/odu_metric"], {**env, "HF_TOKEN": "hf_wrong"}, cwd=tmp_path)
        assert refused.returncode == 2 and "upload failed" in refused.stderr and "401" in refused.stderr


def _post(url: str, body: bytes, token: str | None, content_type: str = "application/json") -> int:
    headers = {"Content-Type": content_type, **({"Authorization": f"Bearer {token}"} if token else {})}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers, method="POST")) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_fake_hub_refuses_what_the_hub_refuses() -> None:
    with FakeHub() as hub:
        create = f"{hub.endpoint}/api/repos/create"
        space = {"name": "m", "organization": "o", "type": "space"}
        assert _post(create, json.dumps(space).encode(), hub.token) == 400  # a Space needs an sdk
        assert _post(create, json.dumps({**space, "sdk": "gradio"}).encode(), None) == 401
        assert _post(create, json.dumps({**space, "sdk": "gradio", "name": "-m"}).encode(), hub.token) == 400
        assert _post(create, json.dumps({**space, "sdk": "static"}).encode(), hub.token) == 200
        assert _post(create, json.dumps({**space, "sdk": "static"}).encode(), hub.token) == 409
        commit = f"{hub.endpoint}/api/spaces/o/m/commit/main"
        header = json.dumps({"key": "header", "value": {"summary": "s"}}).encode()
        card = json.dumps(
            {"key": "file", "value": {"path": "README.md", "content": "bm8gZnJvbnQgbWF0dGVy", "encoding": "base64"}}
        )
        ndjson = "application/x-ndjson"
        assert _post(commit, header + b"\n" + card.encode(), hub.token, ndjson) == 400  # card without front matter
        assert _post(commit, card.encode(), hub.token, ndjson) == 400  # no header line
        assert _post(commit, header, hub.token, "application/json") == 400
        assert _post(f"{hub.endpoint}/api/spaces/o/none/commit/main", header, hub.token, ndjson) == 404
        files = space_files("o/m")
        good = header + b"".join(
            b"\n"
            + json.dumps(
                {
                    "key": "file",
                    "value": {"path": p, "content": base64.b64encode(d).decode(), "encoding": "base64"},
                }
            ).encode()
            for p, d in files.items()
        )
        assert _post(commit, good, hub.token, ndjson) == 200
