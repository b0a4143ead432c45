"""The real lane's pieces (docs/real-lane.md): tiny checkpoints built once per session, and
``transformers serve`` started on them as a real subprocess on a free loopback port.

Without the lane's packages (the ``[torch]`` extra: torch, torchvision, transformers with its
``serving`` extra) the lane's tests skip; under ``ODU_REQUIRE_REAL_LANE=1`` (CI, ``.ci/run``) a
skip is a failure.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: Set by CI: the lane must run, a missing package fails instead of skipping.
REQUIRED = os.environ.get("ODU_REQUIRE_REAL_LANE") == "1"
#: What the lane imports: the ``[torch]`` extra.
LANE_MODULES = ("torch", "torchvision", "transformers", "fastapi", "uvicorn")
#: Seconds ``transformers serve`` may take to answer ``/health`` (its imports and the model load).
SERVER_START_S = 180.0

#: Checkpoint folder names (``provider=auto`` and the pitfalls read Qwen-Omni from the model name).
CHECKPOINTS = {
    "qwen2_5_omni": "Qwen2.5-Omni-tiny",
    "qwen2_5_omni_thinker": "Qwen2.5-Omni-thinker-tiny",
    "qwen3_omni_moe_thinker": "Qwen3-Omni-thinker-tiny",
    "text": "Qwen2-text-tiny",
}


def request_fault_status() -> int:
    """The status ``transformers serve`` answers a request's fault (a ``ValueError`` of the request's
    own making) with: 400 with its reason as ``{"detail": ...}`` from 5.25 (cli/serving/server.py
    ``_bad_request_handler``), 500 before, the reason in the server's log only."""
    from packaging.version import Version
    from transformers import __version__

    return 400 if Version(__version__) >= Version("5.25") else 500


def missing_modules(modules: Sequence[str]) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def skip_or_fail(missing: Sequence[str], required: bool, variable: str, needs: str, fix: str) -> None:
    """Skip when something in ``missing`` is (fail when ``required``: ``variable=1`` is set)."""
    if not missing:
        return
    reason = f"{needs} {', '.join(missing)}: {fix}"
    if required:
        pytest.fail(f"{variable}=1 but {reason}")
    pytest.skip(reason)


def require_lane() -> None:
    """Skip (fail under :data:`REQUIRED`) when the lane's packages are missing."""
    skip_or_fail(
        missing_modules(LANE_MODULES),
        REQUIRED,
        "ODU_REQUIRE_REAL_LANE",
        "real lane needs",
        "pip install -e '.[torch]' (docs/real-lane.md)",
    )


def build_checkpoints(
    root: Path, names: Mapping[str, str] = CHECKPOINTS, target: str = "transformers"
) -> dict[str, Path]:
    """Every checkpoint of ``names`` (kind -> folder name) under ``root``, sized for ``target`` (the
    builder's ``--for``), built offline (``HF_HUB_OFFLINE=1``)."""
    import tiny_checkpoints

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return {kind: tiny_checkpoints.build(kind, root / name, target=target) for kind, name in names.items()}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_eval(
    out: Path,
    served: Served,
    tasks: str,
    *,
    limit: int | None = None,
    flags: Mapping[str, Any] | None = None,
    **model_args: Any,
) -> tuple[int, Path]:
    """``odu-bench eval --sample --model openai`` against ``served`` in this process (other ``flags`` as
    :func:`support.cli.argv` takes them): exit code and the model's run folder (``--allow-truncated`` when
    ``max_tokens`` is given: random weights run to any limit)."""
    from odu.cli import main

    from .cli import argv

    args = {"model": served.model, "base_url": served.base_url, **model_args}
    code = main(
        argv(
            "eval",
            sample=True,
            model="openai",
            tasks=tasks,
            limit=limit,
            model_args=json.dumps(args),
            out=out,
            allow_truncated="max_tokens" in model_args,
            **(flags or {}),
        )
    )
    folders = list(out.iterdir()) if out.exists() else []
    return code, folders[0] if folders else out


def backend_card(folder: Path) -> dict[str, Any]:
    """The run card's ``model.backend`` block of a run folder."""
    return json.loads((folder / "run_card.json").read_text(encoding="utf-8"))["model"]["backend"]


def first_scene_prompt_tokens(out: Path, served: Served, **model_args: Any) -> int:
    """Prompt tokens the server counted for the sample's first audio-visual scene (a clip with a sound track)."""
    code, folder = run_eval(out, served, "odu_av", limit=1, **model_args)
    assert code == 0, folder
    return int(backend_card(folder)["stats"]["prompt_tokens"])


def first_scene_seconds() -> float:
    """Seconds of user audio in the sample's first audio-visual scene."""
    import datasets

    from odu.data.sample import sample_dataset_dir

    row = next(iter(datasets.load_dataset(str(sample_dataset_dir()), "av", split="test")))
    return float(sum(t["duration"] for t in row["turns"] if t["role"] == "user"))


@dataclass
class Served:
    """A running ``transformers serve``: its ``/v1`` URL, the model id it answers to, its log file."""

    base_url: str
    model: str
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def healthy(url: str) -> bool:
    """Whether ``url`` answers 200 within 2 s."""
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return bool(reply.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@contextlib.contextmanager
def serve(checkpoint: Path, log_dir: Path) -> Iterator[Served]:
    """``transformers serve CHECKPOINT`` (pinned to it, CPU) until the block ends; fails the test with
    the server's log when it does not come up within :data:`SERVER_START_S`."""
    port = free_port()
    log = log_dir / f"serve-{checkpoint.name}.log"
    command = [
        sys.executable,
        "-c",
        "import sys; from transformers.cli.transformers import main; sys.exit(main())",
        "serve",
        str(checkpoint),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while not healthy(f"http://127.0.0.1:{port}/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"transformers serve did not come up:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield Served(f"http://127.0.0.1:{port}/v1", str(checkpoint), log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
