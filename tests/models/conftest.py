"""Fixtures of the backend tests: ``media`` (short clips made per test module, ``tests/support/backend_media.py``)."""

from support.backend_media import media  # noqa: F401  (module fixture)
