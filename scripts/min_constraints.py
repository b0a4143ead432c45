"""Print a pip constraints file that pins every direct requirement of setup.cfg (``install_requires``
and the ``test`` extra, which holds the optional backends' packages too) to its lower bound: what
``uv --resolution lowest-direct`` does, which pip cannot. Used by ``scripts/min_versions.sh``.

A requirement without a lower bound is an error: every bound the project states is one it tests.
A package named twice is pinned to the higher of its bounds. Constraints take no extras, so
``lm-eval[api]>=0.4.13`` pins ``lm-eval==0.4.13``.
"""

from __future__ import annotations

import configparser
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version


def lower_bounds(setup_cfg: str) -> list[str]:
    cfg = configparser.ConfigParser()
    cfg.read(setup_cfg, encoding="utf-8")
    lines = cfg["options"]["install_requires"].splitlines() + cfg["options.extras_require"]["test"].splitlines()
    pins: dict[str, tuple[str, Version]] = {}
    for line in filter(None, (raw.split("#")[0].strip() for raw in lines)):
        req = Requirement(line)
        low = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
        if not low:
            sys.exit(f"{req.name}: no lower bound in {line!r}")
        key = canonicalize_name(req.name)
        if key not in pins or max(low) > pins[key][1]:
            pins[key] = (req.name, max(low))
    return [f"{name}=={version}" for name, version in pins.values()]


if __name__ == "__main__":
    print("\n".join(lower_bounds(sys.argv[1] if len(sys.argv) > 1 else "setup.cfg")))
