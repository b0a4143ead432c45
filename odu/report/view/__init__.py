"""``odu-bench view``: a static, offline web viewer of scored runs for error analysis.

:func:`build_site` writes a folder that opens from disk (``file://``) in a current browser, with
no server and nothing fetched from the network: an index of every scene of the runs (filters,
sort, search, the headline with CIs) and a page per scene (clips with players, timeline of the
final clip, M4 edits, key-point verdicts, M5 fields, raw outputs), up to four systems side by
side. ``docs/viewer.md`` is the user's guide.
"""

from __future__ import annotations

from .site import SiteResult, build_site
from .sources import DatasetScenes, Run, load_dataset_scenes, load_runs

__all__ = ["DatasetScenes", "Run", "SiteResult", "build_site", "load_dataset_scenes", "load_runs"]
