"""What the ``evaluate`` door (``odu_metric/``) stands on.

* :mod:`.door` — the metric's compute, its judge and run options, where its script is installed;
* :mod:`.inputs` — what the metric accepts as references and predictions, turned into records.

May import: :mod:`odu.data`, :mod:`odu.runs`, :mod:`odu.judge`, :mod:`odu.core`, :mod:`odu.io`.
"""
