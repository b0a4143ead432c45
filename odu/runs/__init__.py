"""The run contract: how scenes become a scored run, and the files a run is.

* :mod:`.contract` — the scene row, the summary, :func:`~.contract.summarize_run`, a run's files;
* :mod:`.scoring` — the one scoring pipeline (parse, match, judge, scene scores) behind every door;
* :mod:`.outdir` — output folders written whole and swapped in, replaced only when ours;
* :mod:`.shards` — ``--shard K/N`` and ``odu-bench merge``'s checks;
* :mod:`.estimate` — ``odu-bench eval --dry-run``: requests, media seconds, tokens and cost.

May import: :mod:`odu.judge`, :mod:`odu.core`, :mod:`odu.io`.
"""
