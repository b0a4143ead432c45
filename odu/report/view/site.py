"""Write the viewer site: pages and scripts, the index data, scene data in chunks, media once.

Layout of ``SITE/`` (opens from disk: ``file://``, no server, nothing fetched from the network)::

    index.html, scene.html      the two pages (scene.html#<scene_id>): assets/page.html around each
                                page's body (assets/<page>.body.html)
    assets/                     view.css, common.js, index.js, scene.js (vanilla JS, no build step)
    data/index.js               the index: systems, headline with CIs, notes, problems, one entry per scene
    data/scenes/<k>.js          scene pages, SCENES_PER_CHUNK per file, loaded on demand
    media/<sha256>.<ext>        each clip's original bytes, once however many scenes and runs use it
    odu-view.json               what was built (counts, problems): for machines

Browsers do not let a ``file://`` page ``fetch()`` files beside it, so data files are scripts
that hand their JSON to ``ODU.receive*`` (``assets/common.js``), added with ``<script>`` tags.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ...core.caveats import SMALL_SAMPLE_SCENES
from ...core.tables import table3_caveat
from ...runs.outdir import ManifestKind, writing
from .. import comparability_notes
from ..headline import headline
from .payload import index_entry, scene_page, search_text
from .sources import ClipSource, DatasetScenes, MediaError, Run, probe

#: Scenes per scene-data file: small enough to load at once, few enough files for 2,078 scenes.
SCENES_PER_CHUNK = 64
#: What the site writes: an existing ``--out`` holding anything else is never replaced (:mod:`odu.runs.outdir`).
VIEW_SITE = ManifestKind("an odu-bench view site")
MARKER = "odu-view.json"
FORMAT = "odu-bench-view/1"
#: Page name -> its title; each page is ``page.html`` (the head: security policy, styles, scripts)
#: around ``<name>.body.html``, and runs ``assets/<name>.js``.
PAGES = {"index": "ODU-Bench viewer", "scene": "Scene · ODU-Bench viewer"}
ASSETS = ("view.css", "common.js", "index.js", "scene.js")
_SUFFIX = re.compile(r"^\.[a-z0-9]{1,5}$")


@dataclass(slots=True)
class SiteResult:
    """What :func:`build_site` wrote, and the problems it named (scene / clip, and why)."""

    out: Path
    n_scenes: int
    systems: list[str]
    n_media_files: int = 0
    media_bytes: int = 0
    problems: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "out": str(self.out),
            "n_scenes": self.n_scenes,
            "systems": self.systems,
            "n_media_files": self.n_media_files,
            "media_bytes": self.media_bytes,
            "problems": self.problems,
        }


def _js(call: str, data: Any) -> str:
    return f"{call}({json.dumps(data, ensure_ascii=False, separators=(',', ':'), allow_nan=False)});\n"


class _Media:
    """Writes each clip's bytes once under ``media/``, named by content."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: dict[str, str] = {}
        self.bytes = 0

    def clip(self, sid: str, clip: ClipSource, record_clip: Mapping[str, Any], problems: list[str]) -> dict[str, Any]:
        entry = {
            "id": clip.clip_id,
            "duration": record_clip.get("duration"),
            "replies": list(record_clip.get("replies") or []),
            "media": None,
            "kind": None,
            "error": None,
        }
        if clip.read is None:
            return entry
        try:
            data = clip.read()
            info = probe(data)
        except (MediaError, OSError) as exc:
            entry["error"] = f"cannot be read ({exc}); its player is left out"
            problems.append(f"scene {sid} clip {clip.clip_id} ({clip.src}): {entry['error']}")
            return entry
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self.written:
            suffix = Path(clip.src).suffix.lower()
            name = f"media/{digest}{suffix if _SUFFIX.match(suffix) else '.bin'}"
            (self.root / name).write_bytes(data)
            self.written[digest] = name
            self.bytes += len(data)
        entry.update(media=self.written[digest], kind="video" if info.has_video else "audio")
        return entry


def _copy_assets(root: Path) -> None:
    package = resources.files(__package__) / "assets"
    page = string.Template((package / "page.html").read_text(encoding="utf-8"))
    for name, title in PAGES.items():
        body = (package / f"{name}.body.html").read_text(encoding="utf-8")
        (root / f"{name}.html").write_text(page.substitute(title=title, page=name, body=body), encoding="utf-8")
    for name in ASSETS:
        (root / "assets" / name).write_bytes((package / name).read_bytes())


def _axis_names(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    names: dict[str, dict[str, str]] = {}
    for record in records:
        for a in record.get("axes") or []:
            if a.get("code"):
                names.setdefault(a["axis"], {}).setdefault(a["code"], a.get("name") or "")
    return {axis: dict(sorted(codes.items())) for axis, codes in sorted(names.items())}


def _notes(runs: Sequence[Run]) -> list[str]:
    notes = comparability_notes([r.system for r in runs])
    notes += [f"Table 3 {line.removeprefix('- ')}" for line in table3_caveat([r.system.summary for r in runs])[1:]]
    notes += [f"{r.system.name}: {p}" for r in runs for p in r.pitfalls]
    notes += [f"{r.system.name}: its files disagree: {p}" for r in runs for p in r.system.problems]
    notes += [
        f"{r.system.name}: no raw outputs (predictions.jsonl) in {r.source}: predicted segments, M4 edits "
        "and the raw output are not shown (pass --predictions)"
        for r in runs
        if r.outputs is None
    ]
    return notes


def _write_scenes(
    runs: Sequence[Run], dataset: DatasetScenes, root: Path, warn: Callable[[str], None], progress: bool
) -> tuple[list[dict[str, Any]], list[str], _Media]:
    """Scene pages in chunks and media under ``root``; the index entries and the problems met."""
    ids = list(dict.fromkeys(r["scene_id"] for run in runs for r in run.system.rows))
    rows_by_id = [{r["scene_id"]: r for r in run.system.rows} for run in runs]
    media = _Media(root)
    entries: list[dict[str, Any]] = []
    problems: list[str] = []
    chunk: dict[str, Any] = {}
    for i, sid in enumerate(tqdm(ids, desc="view: scenes", unit="scene", disable=not progress)):
        rows = [by_id.get(sid) for by_id in rows_by_id]
        record = dataset.records.get(sid)
        found: list[str] = []
        if record is None:
            holders = ", ".join(run.system.name for run, row in zip(runs, rows) if row is not None)
            found.append(
                f"scene {sid} (scored by {holders}) is not in the dataset ({dataset.source}): "
                "no reference, clips or media shown"
            )
        clips = [
            media.clip(sid, clip, fields, found)
            for clip, fields in zip(dataset.clips.get(sid, []), (record or {}).get("clips", []))
        ]
        chunk[sid] = page = scene_page(sid, record, runs, rows, clips, found)
        for problem in found:
            warn(problem)
        problems += found
        entries.append(index_entry(sid, rows, record, i // SCENES_PER_CHUNK, search_text(record, page["systems"])))
        if len(chunk) == SCENES_PER_CHUNK or i == len(ids) - 1:
            (root / "data" / "scenes" / f"{i // SCENES_PER_CHUNK}.js").write_text(
                _js("ODU.receiveScenes", chunk), encoding="utf-8"
            )
            chunk = {}
    return entries, problems, media


def build_site(
    runs: Sequence[Run],
    dataset: DatasetScenes,
    out: str | Path,
    *,
    resamples: int,
    seed: int,
    progress: bool = False,
    warn: Callable[[str], None] | None = None,
    inputs: Sequence[str | Path | None] = (),
) -> SiteResult:
    """Write the site for ``runs`` over ``dataset`` into ``out``: replaced only once complete, and
    only when it holds an earlier site (:data:`VIEW_SITE`); ``inputs`` (the runs,
    prediction files and dataset read) may not be, hold or lie inside ``out``.

    Scenes the dataset lacks and clips that cannot be read are named in the result, on the pages
    and through ``warn`` as they are met; the rest is built.
    """
    out = Path(out)
    warn = warn or (lambda _: None)
    with writing(out, VIEW_SITE, inputs=inputs) as tmp:
        for problem in dataset.problems:
            warn(problem)
        for folder in ("assets", "data/scenes", "media"):
            (tmp / folder).mkdir(parents=True)
        entries, problems, media = _write_scenes(runs, dataset, tmp, warn, progress)
        result = SiteResult(
            out,
            len(entries),
            [r.system.name for r in runs],
            len(media.written),
            media.bytes,
            [*dataset.problems, *problems],
        )
        index = {
            "format": FORMAT,
            "built": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "dataset": {"source": dataset.source, "media": dataset.has_media},
            "systems": [
                {
                    "name": r.system.name,
                    "source": r.source,
                    "judge": dict(r.system.summary.get("judge") or {}),
                    "approximate": r.system.approximate,
                    "annotation_language": r.annotation_language,
                    "n_scenes": len(r.system.rows),
                    "has_outputs": r.outputs is not None,
                }
                for r in runs
            ],
            "headline": headline([r.system for r in runs], resamples, seed),
            "bootstrap": {"resamples": resamples, "seed": seed, "small_sample_scenes": SMALL_SAMPLE_SCENES},
            "notes": _notes(runs),
            "problems": result.problems,
            "axes": _axis_names(list(dataset.records.values())),
            "scenes": entries,
        }
        (tmp / "data" / "index.js").write_text(_js("ODU.receiveIndex", index), encoding="utf-8")
        _copy_assets(tmp)
        (tmp / MARKER).write_text(json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return result
