#!/usr/bin/env bash
# lmms-eval beside odu-bench, in the active environment (docs/lmms-eval.md "Install").
# Two pins cannot be resolved next to what odu-bench and the [torch] extra install:
#   lmms-eval 0.7.3 requires av<16, odu-bench av>=17 (upstream PR #1536 moves it to av>=17.1,<18,
#   not released yet); moviepy 2.x (imported by lmms-eval's Qwen-Omni backends) requires pillow<12,
#   the [torch] extra brings pillow 12+.
# So each is installed without its dependencies, then its other requirements (and qwen-omni-utils,
# librosa, which those backends import) under a constraint file of everything already installed:
# nothing odu-bench or the [torch] extra brought moves; a requirement that would move it fails here.
# And one it does not declare: lmms-eval 0.7.3 imports filelock._api (evaluator.py
# _enable_reentrant_filelocks), which filelock 4 removed: filelock is held below 4 (the one package
# of ours this moves; torch, datasets and huggingface_hub take any filelock 3).
# Last, the transformers 4 layer: lmms-eval 0.7.3's qwen2_5_omni / qwen3_omni backends call
# generate(return_audio=False) after disable_talker(), which transformers 5 (generation_mode) refuses
# on every request, while the [torch] extra needs transformers 5. The layer
# (scripts/lmms_eval_transformers4.txt) goes to a folder of its own, <env>/odu-lmms-eval-transformers4,
# put first on PYTHONPATH for lmms-eval runs only.
# Run after `pip install -e ".[torch]"` (lmms-eval needs torch).
# Usage: scripts/install_lmms_eval.sh [LMMS_EVAL_VERSION]          (default 0.7.3)
set -euo pipefail
version=${1:-0.7.3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python -m pip freeze --exclude-editable | grep -v -e '^-e ' -e '^filelock==' > "$work/installed.txt"
python -m pip install -q --no-deps "lmms-eval==$version" "moviepy==2.2.1"
python - "$work/requirements.txt" <<'EOF'
"""The core requirements (no extras) of the packages installed without theirs, but the pinned ones."""
import sys
from importlib.metadata import requires

from packaging.requirements import Requirement

LEFT_OUT = {"lmms-eval": {"av"}, "moviepy": {"pillow"}}
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for dist, names in LEFT_OUT.items():
        for line in requires(dist) or []:
            req = Requirement(line)
            if req.marker is None and req.name.lower() not in names:
                out.write(f"{req}\n")
EOF
python -m pip install -q -c "$work/installed.txt" -r "$work/requirements.txt" "qwen-omni-utils==0.0.9" librosa "filelock<4"
layer="$(python -c 'import sys; print(sys.prefix)')/odu-lmms-eval-transformers4"
rm -rf "$layer"
python -m pip install -q --no-deps --target "$layer" -r "$here/lmms_eval_transformers4.txt"
python - <<'EOF'
import av, PIL, moviepy, qwen_omni_utils, lmms_eval  # noqa: E401
from importlib.metadata import version
print(f"lmms-eval {version('lmms-eval')} installed beside av {av.__version__}, pillow {PIL.__version__}")
EOF
echo "transformers 4 layer for lmms-eval's Qwen-Omni backends: PYTHONPATH=$layer"
