"""Speed of ``odu-bench view`` at the release's size: building the site, opening it in Chromium.

Data: ``--scenes`` (default 2,078) synthetic scenes of the release's shape
(``bench_scoring.synthetic_scene``: App B.1 Table 5 ratios, 1-3 segments, 2-6 key points) as a raw
release with no media files (annotations only), and ``--systems`` (default 3) runs: raw outputs
with realistic damage (``bench_scoring.synthetic_output``, one seed per system) scored with the
lexical judge, each run directory holding ``summary.json``, ``scenes.jsonl`` and
``predictions.jsonl``. Preparing the data is not timed.

Timed, in the same run:

* build: ``odu-bench view RUN... --dataset scenes.jsonl --out SITE`` in this process with the
  default 10,000 bootstrap resamples of the headline CIs (wall and CPU seconds; best of
  ``--build-repeats``);
* index open in headless Chromium (Debian's ``chromium`` + ``chromium-driver``): navigation start
  to the table filled (``performance.mark("odu-index-ready")`` in ``assets/index.js``), median of
  ``--repeats`` fresh loads. Naive baseline on the same site: the index page with every scene's
  page data loaded up front (all ``data/scenes/*.js`` before ``index.js``), i.e. one data file
  without on-demand loading;
* a scene page: navigation start to rendered (``odu-scene-ready``), median over ``--repeats``
  scenes spread over the site.

Targets (issue 14): build < 10 s, index open < 2 s.

Run: ``python benchmarks/bench_view.py [--scenes 2078] [--systems 3] [--repeats 5] [--json out.json]``.
Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _figures import add_json_option, write_json
from bench_scoring import synthetic_output, synthetic_scene

from odu.cli import main as odu_bench
from odu.core.schema import scene_from_dict
from odu.core.tables import render
from odu.judge import make_judge
from odu.runs.contract import write_run
from odu.runs.scoring import score_scenes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.view_support import chromium, chromium_available  # noqa: E402

BUILD_LIMIT_S, INDEX_LIMIT_S = 10.0, 2.0


def make_runs(n_scenes: int, n_systems: int, seed: int, workdir: Path) -> tuple[Path, list[Path]]:
    """The release records (no media) and ``n_systems`` scored run directories."""
    rng = random.Random(seed)
    records = [synthetic_scene(i, rng) for i in range(n_scenes)]
    release = workdir / "scenes.jsonl"
    release.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    scenes = [scene_from_dict(r) for r in records]
    runs = []
    for k in range(n_systems):
        out_rng = random.Random(seed + 1 + k)
        outputs = {r["scene_id"]: synthetic_output(r, out_rng) for r in records}
        raw = [{"scene_id": sid, "output": output} for sid, output in outputs.items()]
        scored = score_scenes(scenes, outputs, make_judge("lexical"))
        runs.append(write_run(scored, workdir / f"system-{k + 1}", jsonl_files={"predictions.jsonl": raw}))
    return release, runs


def build(release: Path, runs: list[Path], site: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``odu-bench view`` (in process, no progress bar)."""
    wall, cpu = time.perf_counter(), time.process_time()
    code = odu_bench(["view", *map(str, runs), "--dataset", str(release), "--out", str(site), "--no-progress"])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if code != 0:
        raise SystemExit(f"odu-bench view exited {code}")
    return wall, cpu


def naive_index(site: Path) -> Path:
    """``index.html`` with every scene chunk loaded before the index script (no on-demand loading)."""
    chunks = sorted((site / "data" / "scenes").glob("*.js"), key=lambda p: int(p.stem))
    tags = "".join(f'<script src="data/scenes/{p.name}"></script>\n' for p in chunks)
    html = (site / "index.html").read_text(encoding="utf-8")
    page = site / "index-all-data.html"
    page.write_text(
        html.replace(
            '<script src="assets/index.js" defer></script>', tags + '<script src="assets/index.js" defer></script>'
        ),
        encoding="utf-8",
    )
    return page


def _mark(driver: Any, url: str, mark: str) -> float:
    """Seconds from navigation start to ``performance.mark(mark)`` on a fresh load of ``url``."""
    driver.get("about:blank")
    driver.get(url)
    for _ in range(200):
        ms = driver.execute_script(
            f"const m = performance.getEntriesByName('{mark}'); return m.length ? m[0].startTime : null"
        )
        if ms is not None:
            return ms / 1000
        time.sleep(0.05)
    raise RuntimeError(f"{url}: {mark} never reached")


def open_times(site: Path, repeats: int) -> dict[str, Any]:
    ids = [
        s["id"]
        for s in json.loads((site / "data" / "index.js").read_text(encoding="utf-8")[len("ODU.receiveIndex(") : -3])[
            "scenes"
        ]
    ]
    naive = naive_index(site)
    with chromium() as driver:
        _mark(driver, (site / "index.html").as_uri(), "odu-index-ready")  # warm the browser process
        index = [_mark(driver, (site / "index.html").as_uri(), "odu-index-ready") for _ in range(repeats)]
        rows = driver.execute_script("return document.querySelectorAll('#scenes tbody tr').length")
        all_data = [_mark(driver, naive.as_uri(), "odu-index-ready") for _ in range(repeats)]
        picks = [ids[(i * len(ids)) // repeats] for i in range(repeats)]
        scene = [_mark(driver, (site / "scene.html").as_uri() + "#" + sid, "odu-scene-ready") for sid in picks]
    return {
        "index_s": statistics.median(index),
        "index_runs_s": index,
        "rows": rows,
        "index_all_data_s": statistics.median(all_data),
        "scene_s": statistics.median(scene),
        "scene_runs_s": scene,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenes", type=int, default=2078)
    parser.add_argument("--systems", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--build-repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    add_json_option(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-view-"))
    try:
        release, runs = make_runs(args.scenes, args.systems, args.seed, work)
        site = work / "site"
        builds = [build(release, runs, site) for _ in range(args.build_repeats)]
        wall, cpu = min(builds)
        size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        result: dict[str, Any] = {
            "scenes": args.scenes,
            "systems": args.systems,
            "build_wall_s": wall,
            "build_cpu_s": cpu,
            "build_runs_wall_s": [b[0] for b in builds],
            "site_bytes": size,
            "index_data_bytes": (site / "data" / "index.js").stat().st_size,
            "scene_files": len(list((site / "data" / "scenes").glob("*.js"))),
        }
        if chromium_available():
            result |= open_times(site, args.repeats)
        else:
            result["browser"] = "skipped: chromium / chromedriver / selenium not installed"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    write_json(args.json, result)
    rows = [
        [
            "build (odu-bench view)",
            f"{result['build_wall_s']:.2f} s wall, {result['build_cpu_s']:.2f} s CPU",
            f"< {BUILD_LIMIT_S:.0f} s",
            "ok" if result["build_wall_s"] < BUILD_LIMIT_S else "OVER",
        ]
    ]
    if "index_s" in result:
        rows += [
            [
                "index open (table filled)",
                f"{result['index_s']:.2f} s ({result['rows']} rows)",
                f"< {INDEX_LIMIT_S:.0f} s",
                "ok" if result["index_s"] < INDEX_LIMIT_S and result["rows"] == args.scenes else "OVER",
            ],
            [
                "naive: index + all scene data",
                f"{result['index_all_data_s']:.2f} s ({result['index_all_data_s'] / result['index_s']:.1f}x)",
                "",
                "",
            ],
            ["scene page open", f"{result['scene_s']:.2f} s", "", ""],
        ]
    print(render(["step", f"{args.scenes} scenes x {args.systems} systems", "target", ""], rows))
    print(
        f"site: {result['site_bytes'] / 1e6:.1f} MB, index data {result['index_data_bytes'] / 1e6:.2f} MB, "
        f"{result['scene_files']} scene data files"
    )


if __name__ == "__main__":
    main()
