"""Fixtures of the viewer tests: ``runs`` and ``site`` (session-wide scored runs on the bundled
sample and their site, ``tests/support/view_support.py``)."""

from support.view_support import runs, site  # noqa: F401  (session fixtures)
