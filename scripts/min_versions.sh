#!/usr/bin/env bash
# The test suite against every lower bound of setup.cfg, in a fresh virtual environment:
# install_requires and the [test] extra pinned to their minimums (scripts/min_constraints.py),
# the project installed as CI installs it (pip install -e ".[test]"), then pytest.
# A bound that does not resolve, has no installable release or fails a test shows here.
# The [torch] extra (local Qwen-Omni inference) is not installed: the suite needs no model weights.
# Left out: the mypy run of tests/project/test_lint.py. Types are checked against current releases
# (CI); older releases ship older type stubs (numpy 1.24, PyAV 17.0.0) that mypy reads differently,
# while what runs is the same.
# Usage: scripts/min_versions.sh [pytest arguments]    (about 2 min of install + the suite)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --upgrade pip packaging
"$py" "$root/scripts/min_constraints.py" "$root/setup.cfg" > "$work/min.txt"
# --prefer-binary, not --only-binary: lm-eval needs sqlitedict, which is published as an sdist only.
"$py" -m pip install -q --prefer-binary -c "$work/min.txt" -e "$root[test]"
echo "== pinned lower bounds"
cat "$work/min.txt"
echo "== installed"
"$py" -m pip freeze | grep -iE "^($(sed 's/==.*//; s/[-_.]/[-_.]/g' "$work/min.txt" | paste -sd'|'))==" || true
cd "$root"
"$work/venv/bin/pytest" -q -p no:cacheprovider \
    --deselect tests/project/test_lint.py::test_the_package_type_checks "$@"
