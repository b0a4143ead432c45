#!/usr/bin/env bash
# Every Eval Ever's own validator (`python -m every_eval_ever validate`, PyPI package every-eval-ever),
# which tests/export/ runs on every EEE record `odu-bench export --format eee` writes (docs/export.md).
# It cannot join the [test] extra: every-eval-ever 0.3.0 requires Python >= 3.12 (odu-bench supports
# 3.10+, and these machines' python3 is 3.11) and huggingface-hub < 2 (odu-bench's environment has 2.x).
# So it gets an environment of its own, on a Python >= 3.12 found here: $ODU_EEE_PYTHON, python3.13,
# python3.12, or one of pyenv's. The tests find it at <active env>/odu-eee-validator (under
# ODU_REQUIRE_EEE_VALIDATOR=1, as in .ci/run, a missing validator fails them instead of skipping).
# Usage: scripts/install_eee_validator.sh [EVERY_EVAL_EVER_VERSION]          (default 0.3.0)
# Exit 3: no Python >= 3.12 on this machine (nothing installed).
set -euo pipefail
version=${1:-0.3.0}
target="$(python -c 'import sys; print(sys.prefix)')/odu-eee-validator"
pyenv_root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
found=""
for candidate in "${ODU_EEE_PYTHON:-}" python3.13 python3.12 ${pyenv_root:+"$pyenv_root"/versions/3.1[2-9]*/bin/python3}; do
    if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then
        found=$candidate
        break
    fi
done
if [ -z "$found" ]; then
    echo "install_eee_validator: no Python >= 3.12 found (set ODU_EEE_PYTHON): every-eval-ever $version needs one" >&2
    exit 3  # .ci/run: the validation tests then skip, said in its log; any other failure stops CI
fi
rm -rf "$target"
"$found" -m venv "$target"
"$target/bin/python" -m pip install -q "every-eval-ever==$version"
"$target/bin/python" -m every_eval_ever validate --help >/dev/null
echo "every-eval-ever $version's validator: $target/bin/python -m every_eval_ever validate ($("$found" --version))"
