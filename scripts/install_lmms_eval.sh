#!/usr/bin/env bash
# lmms-eval beside odu-bench, in the active environment (docs/lmms-eval.md "Install").
# lmms-eval 0.7.3 requires av<16 while odu-bench needs av>=17 (upstream PR #1536 moves it to
# av>=17.1,<18, not released yet), so pip cannot install both by resolution. This installs lmms-eval
# without its dependencies, then every requirement of its core list but av, plus what its omni
# backends import (qwen-omni-utils, moviepy, librosa), under a constraint file of everything already
# installed: nothing odu-bench or the [torch] extra brought moves; a requirement that would move it
# fails here, visibly. Run after `pip install -e ".[torch]"` (lmms-eval needs torch).
# Usage: scripts/install_lmms_eval.sh [LMMS_EVAL_VERSION]          (default 0.7.3)
set -euo pipefail
version=${1:-0.7.3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python -m pip freeze --exclude-editable | grep -v '^-e ' > "$work/installed.txt"
python -m pip install -q --no-deps "lmms-eval==$version"
python - "$work/requirements.txt" <<'EOF'
"""lmms-eval's own requirements (no extras) but av, one per line."""
import sys
from importlib.metadata import requires

from packaging.requirements import Requirement

with open(sys.argv[1], "w", encoding="utf-8") as out:
    for line in requires("lmms-eval") or []:
        req = Requirement(line)
        if req.marker is None and req.name.lower() != "av":
            out.write(f"{req}\n")
EOF
# qwen_omni_utils, moviepy, librosa: imported by the qwen2_5_omni / qwen3_omni backends
python -m pip install -q -c "$work/installed.txt" -r "$work/requirements.txt" \
    "qwen-omni-utils==0.0.9" "moviepy>=2" librosa
python - <<'EOF'
import av, lmms_eval  # noqa: E401
from importlib.metadata import version
print(f"lmms-eval {version('lmms-eval')} installed beside av {av.__version__}")
EOF
