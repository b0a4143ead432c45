"""The sample runs every export test reads (module scope: built once per test module)."""

from support.export_runs import sample_runs  # noqa: F401  (the fixture)
