"""Print a pip constraints file that pins every direct requirement of setup.cfg (``install_requires``
and the ``test`` extra, which holds the optional backends' packages too) to its lower bound: what
``uv --resolution lowest-direct`` does, which pip cannot. Used by ``scripts/min_versions.sh``.

A requirement without a lower bound is an error: every bound the project states is one it tests.
Constraints take no extras, so ``lm-eval[api]>=0.4.13`` pins ``lm-eval==0.4.13``.
"""

from __future__ import annotations

import configparser
import sys

from packaging.requirements import Requirement


def lower_bounds(setup_cfg: str) -> list[str]:
    cfg = configparser.ConfigParser()
    cfg.read(setup_cfg, encoding="utf-8")
    lines = cfg["options"]["install_requires"].splitlines() + cfg["options.extras_require"]["test"].splitlines()
    pins = []
    for line in filter(None, (raw.split("#")[0].strip() for raw in lines)):
        req = Requirement(line)
        low = [s.version for s in req.specifier if s.operator in (">=", "==", "~=")]
        if not low:
            sys.exit(f"{req.name}: no lower bound in {line!r}")
        pins.append(f"{req.name}=={low[0]}")
    return pins


if __name__ == "__main__":
    print("\n".join(lower_bounds(sys.argv[1] if len(sys.argv) > 1 else "setup.cfg")))
