"""Helpers of the viewer tests and benchmark: model outputs with controlled damage, and a real
headless Chromium (Debian's ``chromium`` + ``chromium-driver``) driven through Selenium.

Run as a script to rebuild the screenshots of docs/viewer.md::

    python tests/support/view_support.py docs/img
"""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from odu.cli import main
from odu.io.jsonio import iter_jsonl
from odu.runs.contract import read_run, write_run

try:
    from support.cli import argv
except ImportError:  # run as a script: this folder is on the path, not tests/
    from cli import argv  # type: ignore[no-redef]

#: Where Debian installs them (``apt-get install chromium chromium-driver``).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
#: Without the background-networking flags Chromium tries to reach Google and a closed network
#: refuses it; a fresh profile per browser keeps runs independent.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
    "--window-size=1400,1000",
)

#: The scene page shown in docs/viewer.md: three clips with replies between them.
SCREENSHOT_SCENE = "avp_gen_900002"
#: Text a hostile model could emit: none of it may become markup in the viewer.
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><b>bold</b>'


def missing_browser() -> list[str]:
    """What the browser tests need and this machine lacks: chromium, chromedriver, selenium."""
    missing = [name for name, found in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)) if not found]
    return missing + ([] if importlib.util.find_spec("selenium") else ["selenium"])


def chromium_available() -> bool:
    return not missing_browser()


@contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A headless Chromium WebDriver with browser console logging on; quit on exit."""
    from selenium import webdriver

    profile = tempfile.mkdtemp(prefix="odu-view-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(driver: Any) -> list[str]:
    """Console messages of level SEVERE since the last call (errors, failed loads, CSP refusals)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


# --- model outputs with controlled damage -----------------------------------------------------------


def _damage_words(text: str, rng: random.Random, rate: float) -> str:
    chars = not any(c == " " for c in text.strip()) and any(ord(c) > 0x2E80 for c in text)
    units = list(text) if chars else text.split()
    out: list[str] = []
    for unit in units:
        roll = rng.random()
        if roll < rate / 3:
            continue  # deletion
        out.append(("嗯" if chars else "uh") if roll < 2 * rate / 3 else unit)  # substitution
        if rate / 3 * 2 <= roll < rate:
            out.append("呢" if chars else "like")  # insertion
    return ("" if chars else " ").join(out)


def damaged_outputs(
    records: Sequence[Mapping[str, Any]],
    seed: int,
    flip: float,
    word_error: float,
    shift_ms: int,
    hostile: bool = False,
) -> dict[str, str | None]:
    """Raw outputs built from the references: decisions flipped with probability ``flip``,
    transcripts with ``word_error`` substitutions/deletions/insertions, times moved by up to
    ``shift_ms``, the last context item dropped, the age group sometimes wrong. With ``hostile``
    the first positive scene's transcript carries :data:`HOSTILE`, the first negative scene gets
    :data:`HOSTILE` as a non-JSON output and the last scene gets no output."""
    rng = random.Random(seed)
    outputs: dict[str, str | None] = {}
    for record in records:
        ann = record["annotations"][record["language"]]["evaluation_targets"]
        decision = ann["has_demand"] != (rng.random() < flip)
        segments = []
        for g in ann["segments"] if decision else []:
            start = max(0, g["start_ms"] + rng.randint(-shift_ms, shift_ms))
            segments.append(
                {
                    "start_ms": start,
                    "end_ms": max(start + 200, g["end_ms"] + rng.randint(-shift_ms, shift_ms)),
                    "transcript": _damage_words(g["transcript"], rng, word_error),
                    "structured_intent": g["structured_intent"],
                    "required_context": [
                        {"type": c["type"], "description": c["description"]} for c in g["required_context"][:-1]
                    ],
                    "user_in_frame": g.get("user_in_frame"),
                    "user_gender": g["user_gender"],
                    "user_age_group": g["user_age_group"] if rng.random() > 0.3 else "elderly",
                }
            )
        if decision and not segments:  # a false trigger
            segments = [
                {
                    "start_ms": 300,
                    "end_ms": 1500,
                    "transcript": "could you help me with that",
                    "structured_intent": "The user asks for help.",
                    "required_context": [],
                    "user_in_frame": True,
                    "user_gender": "unknown",
                    "user_age_group": "adult",
                }
            ]
        outputs[record["scene_id"]] = json.dumps({"has_demand": decision, "segments": segments}, ensure_ascii=False)
    if hostile:
        positive = next(r["scene_id"] for r in records if r["label"] == "positive")
        out = json.loads(outputs[positive])
        out["has_demand"] = True
        out["segments"] = out["segments"] or [{"start_ms": 0, "end_ms": 1000, "transcript": ""}]
        out["segments"][0]["transcript"] += " " + HOSTILE
        out["segments"][0]["structured_intent"] = HOSTILE
        outputs[positive] = json.dumps(out, ensure_ascii=False)
        outputs[next(r["scene_id"] for r in records if r["label"] == "negative")] = "Sure! " + HOSTILE
        outputs[records[-1]["scene_id"]] = None
    return outputs


def write_predictions(outputs: Mapping[str, str | None], path: Path) -> Path:
    """``outputs`` as a ``odu-bench score --predictions`` JSONL file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for sid, output in outputs.items():
            fh.write(json.dumps({"scene_id": sid, "output": output}, ensure_ascii=False) + "\n")
    return path


def sample_records() -> list[dict[str, Any]]:
    from odu.data.sample import sample_dir

    return [
        json.loads(line) for line in (sample_dir() / "scenes.jsonl").read_text(encoding="utf-8").splitlines() if line
    ]


def score_sample_run(
    out: Path,
    seed: int,
    flip: float,
    word_error: float,
    shift_ms: int,
    hostile: bool = False,
    keep_predictions: bool = True,
) -> Path:
    """An ``odu-bench score`` run (lexical judge) of damaged outputs on the bundled sample; its raw
    outputs are copied in as ``predictions.jsonl`` (as ``odu-bench eval`` writes them) unless not
    ``keep_predictions`` (then they stay at ``<out>.predictions.jsonl``)."""
    from odu.data.sample import sample_dir

    outputs = damaged_outputs(sample_records(), seed, flip, word_error, shift_ms, hostile)
    predictions = write_predictions(outputs, out.parent / f"{out.name}.predictions.jsonl")
    scenes = sample_dir() / "scenes.jsonl"
    code = main(argv("score", scenes=scenes, predictions=predictions, judge="lexical", out=out, no_progress=True))
    assert code == 0, f"odu-bench score exited {code}"
    if keep_predictions:  # written again as one run with its raw outputs
        rows = [row for _, row in iter_jsonl(predictions)]
        write_run(read_run(out), out, overwrite=True, jsonl_files={"predictions.jsonl": rows})
    return out


# --- sites of the tests ------------------------------------------------------------------------------


def build_view(out: Path, *run_dirs: object, **options: object) -> int:
    """``odu-bench view RUN_DIR... --out OUT`` with ``options`` (as :func:`support.cli.argv` writes
    them), on the bundled sample unless a ``dataset`` is given, 50 resamples unless told, no progress bar."""
    options = {"sample": "dataset" not in options, "resamples": 50, "no_progress": True, **options}
    return main(argv("view", *run_dirs, out=out, **options))


def read_data(path: Path) -> Any:
    """The JSON handed to ``ODU.receive*`` by a site data script."""
    text = path.read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def read_index(site: Path) -> dict[str, Any]:
    return read_data(site / "data" / "index.js")


def read_scenes(site: Path) -> dict[str, Any]:
    scenes: dict[str, Any] = {}
    for chunk in (site / "data" / "scenes").glob("*.js"):
        scenes |= read_data(chunk)
    return scenes


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Two ``odu-bench score`` runs on the sample (one with hostile outputs, one whose raw outputs
    are a separate file) and the two floor baselines of ``odu-bench eval --sample``."""
    root = tmp_path_factory.mktemp("view-runs")
    out = {
        "a": score_sample_run(root / "model-a", 1, 0.1, 0.15, 400, hostile=True),
        "b": score_sample_run(root / "model-b", 2, 0.3, 0.35, 900, keep_predictions=False),
    }
    assert main(["eval", "--sample", "--out", str(root / "eval")]) == 0
    out |= {"always": root / "eval" / "always", "never": root / "eval" / "never"}
    return out


@pytest.fixture(scope="session")
def site(runs, tmp_path_factory) -> Path:
    """The bundled sample with two runs: a damaged model (score) and the always-trigger floor (eval)."""
    out = tmp_path_factory.mktemp("view-site") / "site"
    assert build_view(out, runs["a"], runs["always"], names=["model A", "always"], resamples=200) == 0
    return out


def screenshots(img_dir: Path) -> list[Path]:
    """Build the sample site with two systems and save the index and one scene page as PNGs."""
    work = Path(tempfile.mkdtemp(prefix="odu-view-shots-"))
    try:
        runs = [
            score_sample_run(work / "model-a", 1, 0.1, 0.15, 400),
            score_sample_run(work / "model-b", 2, 0.3, 0.35, 900),
        ]
        site = work / "site"
        assert build_view(site, *runs, names=["model A", "model B"], resamples=1000) == 0
        img_dir.mkdir(parents=True, exist_ok=True)
        shots = []
        with chromium(1680, 860) as driver:
            driver.get((site / "index.html").as_uri())
            shots.append(img_dir / "viewer-index.png")
            driver.save_screenshot(str(shots[-1]))
            driver.get((site / "scene.html").as_uri() + "#" + SCREENSHOT_SCENE)
            driver.set_window_size(1400, 900)
            driver.set_window_size(1400, driver.execute_script("return document.documentElement.scrollHeight") + 160)
            driver.get((site / "scene.html").as_uri() + "#" + SCREENSHOT_SCENE)
            shots.append(img_dir / "viewer-scene.png")
            driver.save_screenshot(str(shots[-1]))
        return shots
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    import sys

    for path in screenshots(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img")):
        print(path)
