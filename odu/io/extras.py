"""The one install command errors and docs give for an optional extra.

odu-bench is on no package index, so ``pip install 'odu-bench[torch]'`` resolves nowhere. The form
used everywhere is the extra installed from a checkout of this repository, ``pip install -e
".[EXTRA]"`` (README "Set-up"), followed by the extra's own packages, read from the installed
distribution's metadata, for an install made from a wheel.
"""

from __future__ import annotations

import re
from importlib import metadata

#: The distribution name (``setup.cfg``).
DIST = "odu-bench"
#: The install command of an extra, run in a checkout of this repository.
CHECKOUT_INSTALL = 'pip install -e ".[{extra}]"'


def extra_packages(extra: str) -> list[str]:
    """The requirements of ``extra`` as the installed metadata states them (empty when unknown).

    >>> extra_packages("report")
    ['matplotlib>=3.7']
    """
    try:
        requirements = metadata.requires(DIST) or []
    except metadata.PackageNotFoundError:
        return []
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    return [r.split(";")[0].strip() for r in requirements if ";" in r and marker.search(r.split(";", 1)[1])]


def install_hint(extra: str) -> str:
    """What to run for ``extra``: the checkout command, then the packages themselves.

    >>> install_hint("report")
    'pip install -e ".[report]" in an odu-bench checkout (installed from a wheel: pip install \\'matplotlib>=3.7\\')'
    """
    command = CHECKOUT_INSTALL.format(extra=extra)
    packages = " ".join(f"'{p}'" if re.search(r"[<>=\[]", p) else p for p in extra_packages(extra))
    return f"{command} in an odu-bench checkout" + (
        f" (installed from a wheel: pip install {packages})" if packages else ""
    )


__all__ = ["CHECKOUT_INSTALL", "DIST", "extra_packages", "install_hint"]
