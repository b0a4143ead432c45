"""The runs every export test reads (module scope: built once per test module)."""

from support.export_runs import sample_runs, served_runs  # noqa: F401  (the fixtures)
