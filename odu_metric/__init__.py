"""The ``evaluate`` metric door: ``odu_metric.py`` is the script ``evaluate.load`` reads (a path to this
folder, or ``evaluate.load("odu_metric")`` after ``odu-bench install-metric``); nothing to import here."""
