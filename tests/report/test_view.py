"""``odu-bench view``: the site's data, media, bad input and run formats (no browser here;
``test_view_browser.py`` drives Chromium over the same sites)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.cli import argv
from support.view_support import (
    HOSTILE,
    build_view,
    damaged_outputs,
    read_index,
    read_scenes,
    sample_records,
    write_predictions,
)

from odu.cli import main
from odu.core.metrics import s4
from odu.core.schema import load_scenes
from odu.core.text import normalize
from odu.report.view.align import alignment, group_alignments

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


# --- M4 edits ---------------------------------------------------------------------------------------


def test_alignment_covers_both_transcripts_and_counts_the_scorers_edits():
    got = alignment("Which of these two is ripe enough?", "which of those two is, like, ripe")
    assert got["unit"] == "word"
    assert [op[0] for op in got["ops"]] == ["equal", "replace", "equal", "insert", "equal", "delete"]
    assert " ".join(r for tag, r, _ in got["ops"] if r) == normalize("Which of these two is ripe enough?")
    assert " ".join(h for tag, _, h in got["ops"] if h) == normalize("which of those two is, like, ripe")
    assert (got["edits"], got["length"]) == (3, 7)
    zh = alignment("我想买那个红色的", "我想要那个红的")
    assert zh["unit"] == "char" and zh["edits"] == 2 and zh["length"] == 8


def test_edits_shown_give_every_scenes_s4(runs):
    """The viewer's M4 groups and counts are the scorer's: pooled, they give each scene's s4."""
    scenes = {s.scene_id: s for s in load_scenes(sample_records())}
    rows = [json.loads(line) for line in (runs["b"] / "scenes.jsonl").read_text(encoding="utf-8").splitlines()]
    outputs = [json.loads(line) for line in (runs["b"].parent / "model-b.predictions.jsonl").read_text().splitlines()]
    from odu.core.parse import parse_output

    checked = 0
    for row, out in zip(rows, outputs):
        if row["s4"] is None:
            continue
        scene = scenes[row["scene_id"]]
        prediction = parse_output(out["output"], scene.modality)
        groups = group_alignments(scene.annotation().segments, prediction.segments, row["matches"])
        assert s4((g["edits"], g["length"]) for g in groups) == pytest.approx(row["s4"])
        checked += 1
    assert checked >= 8


# --- the site ---------------------------------------------------------------------------------------


def test_site_layout_index_and_scene_data(site, runs):
    records = {r["scene_id"]: r for r in sample_records()}
    assert {p.name for p in site.iterdir()} == {
        "index.html",
        "scene.html",
        "assets",
        "data",
        "media",
        "odu-view.json",
        ".odu-written.json",  # what the site wrote, with hashes (odu.runs.outdir)
    }
    index = read_index(site)
    assert [s["name"] for s in index["systems"]] == ["model A", "always"]
    assert {s["id"] for s in index["scenes"]} == set(records)
    assert index["problems"] == []
    assert set(index["headline"]) == {"audio-visual", "audio-only"}
    ci = index["headline"]["audio-visual"][0]["metrics"]["avg"]["ci"]
    assert ci[0] <= index["headline"]["audio-visual"][0]["metrics"]["avg"]["value"] <= ci[1]
    assert any("approximate" in n for n in index["notes"])
    assert any(n.startswith("Table 3 reference language: each scene's own") for n in index["notes"])
    assert any(n.startswith("Table 3 matching thresholds: the paper's are unpublished") for n in index["notes"])
    row = next(json.loads(x) for x in (runs["a"] / "scenes.jsonl").read_text().splitlines())
    entry = next(s for s in index["scenes"] if s["id"] == row["scene_id"])
    assert entry["systems"][0] | {"flags": None} == {
        "predicted": row["predicted_has_demand"],
        "s2": row["s2"],
        "s3": row["s3"],
        "s4": row["s4"],
        "s5": row["s5"],
        "flags": None,
    }
    assert entry["systems"][1]["flags"] == []  # always-trigger on a positive scene: nothing wrong
    negative = next(s for s in index["scenes"] if s["label"] == "negative")
    assert "false trigger" in negative["systems"][1]["flags"]
    # scene pages: every scene once, chunked, with references and both systems
    scenes = read_scenes(site)
    assert set(scenes) == set(records)
    for sid, page in scenes.items():
        assert [c["id"] for c in page["clips"]] == [c["id"] for c in records[sid]["clips"]]
        assert page["reference"]["language"] == records[sid]["language"]
        assert len(page["reference"]["segments"]) == len(
            records[sid]["annotations"][records[sid]["language"]]["evaluation_targets"]["segments"]
        )
        assert [s["present"] for s in page["systems"]] == [True, True]


def test_media_written_once_as_the_original_bytes(site):
    from odu.data.sample import sample_dir

    originals = {p.read_bytes() for p in (sample_dir() / "media").iterdir()}
    written = list((site / "media").iterdir())
    assert len(written) == len(originals) == len({p.read_bytes() for p in written})
    assert {p.read_bytes() for p in written} == originals
    kinds = {c["media"]: c["kind"] for page in read_scenes(site).values() for c in page["clips"]}
    assert {Path(m).suffix: k for m, k in kinds.items()} == {".mp4": "video", ".wav": "audio", ".flac": "audio"}
    assert all((site / m).is_file() for m in kinds)


def test_hostile_text_stays_data(site):
    """Model text reaches the site only as JSON strings inside scripts the pages read with
    textContent: it cannot end the data script or appear in the HTML pages."""
    pages = read_scenes(site)
    raw = [p for p in pages.values() if HOSTILE in (p["systems"][0]["raw"] or "")]
    segments = [
        p
        for p in pages.values()
        if any(HOSTILE in seg["transcript"] and seg["intent"] == HOSTILE for seg in p["systems"][0]["segments"] or [])
    ]
    assert len(raw) == len(segments) == 1  # a negative scene's non-JSON output, a positive scene's segment
    assert raw[0]["systems"][0]["flags"] == ["parse error"]
    for html in ("index.html", "scene.html"):
        assert "__pwned" not in (site / html).read_text(encoding="utf-8")
    for script in (site / "assets").glob("*.js"):
        text = script.read_text(encoding="utf-8")
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "document.write" not in text


def test_score_run_reads_raw_outputs_from_predictions_option(runs, tmp_path):
    out = tmp_path / "site"
    predictions = [runs["b"].parent / "model-b.predictions.jsonl", "-"]
    assert build_view(out, runs["b"], runs["never"], predictions=predictions) == 0
    pages = read_scenes(out)
    with_segments = [p for p in pages.values() if p["systems"][0]["segments"]]
    assert with_segments and all(p["systems"][0]["has_outputs"] for p in pages.values())
    assert all(p["systems"][1]["has_outputs"] for p in pages.values())  # eval runs carry predictions.jsonl
    # without raw outputs the rows are still shown, and the page says why segments are missing
    bare = tmp_path / "bare"
    assert build_view(bare, runs["b"]) == 0
    index = read_index(bare)
    assert any("no raw outputs" in n for n in index["notes"])
    assert all(p["systems"][0]["segments"] is None for p in read_scenes(bare).values())


def test_three_systems_side_by_side(runs, tmp_path):
    out = tmp_path / "site"
    assert build_view(out, runs["a"], runs["always"], runs["never"]) == 0
    index = read_index(out)
    assert [s["name"] for s in index["systems"]] == [
        "model-a",
        "floor: always-trigger",
        "floor: never-trigger",
    ]  # eval's names
    assert all(len(s["systems"]) == 3 for s in index["scenes"])


# --- inputs: harness folders, annotation-only releases, bad input ------------------------------------------


def test_harness_output_folder_gives_the_eval_rows(runs, tmp_path):
    harness = ["lm-eval", "run", "--model", "odu-always", "--tasks", "odu_av,odu_ao", "--log_samples"]
    assert main([*harness, "--output_path", str(tmp_path / "harness")]) == 0
    folder = next(p for p in (tmp_path / "harness").iterdir() if p.is_dir())
    out = tmp_path / "site"
    assert build_view(out, folder, runs["always"], names=["harness", "eval"]) == 0
    index = read_index(out)
    for scene in index["scenes"]:
        assert scene["systems"][0] == scene["systems"][1]
    assert index["headline"]["audio-visual"][0]["metrics"] == index["headline"]["audio-visual"][1]["metrics"]
    page = next(iter(read_scenes(out).values()))
    assert page["systems"][0]["raw"] == page["systems"][1]["raw"] is not None


def test_annotation_only_release_shows_everything_but_players(tmp_path):
    records = json.loads((FIXTURES / "demo_scenes.json").read_text(encoding="utf-8"))
    scenes = tmp_path / "scenes.jsonl"
    scenes.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    predictions = write_predictions(damaged_outputs(records, 5, 0.2, 0.2, 500), tmp_path / "predictions.jsonl")
    run = tmp_path / "run"
    assert main(argv("score", scenes=scenes, predictions=predictions, judge="lexical", out=run, no_progress=True)) == 0
    shutil.copyfile(predictions, run / "predictions.jsonl")
    out = tmp_path / "site"
    assert build_view(out, run, dataset=FIXTURES / "demo_scenes.json") == 0
    index = read_index(out)
    assert index["dataset"]["media"] is False and index["problems"] == []
    assert not any((out / "media").iterdir())
    pages = read_scenes(out)
    assert len(pages) == len(records)
    for page in pages.values():
        assert page["reference"] is not None and all(c["media"] is None and c["error"] is None for c in page["clips"])
    assert any(p["systems"][0]["transcripts"] for p in pages.values())


def test_missing_scene_and_unreadable_clip_are_named_and_the_rest_built(runs, tmp_path, capsys):
    from odu.data.sample import sample_dir

    release = tmp_path / "release"
    shutil.copytree(sample_dir(), release)
    records = sample_records()
    dropped = records[3]["scene_id"]
    (release / "scenes.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records if r["scene_id"] != dropped), encoding="utf-8"
    )
    broken = records[0]["clips"][0]
    (release / broken["src"]).write_bytes(b"\x00\x00\x00\x18ftypmp42 cut short")
    out = tmp_path / "site"
    code = build_view(out, runs["a"], dataset=release)
    assert code == 1  # built, with problems
    err = capsys.readouterr().err
    assert f"scene {dropped} (scored by model-a) is not in the dataset" in err
    assert f"scene {records[0]['scene_id']} clip {broken['id']}" in err and "cannot be read" in err
    index = read_index(out)
    assert len(index["problems"]) == 2 and len(index["scenes"]) == len(records)
    pages = read_scenes(out)
    assert pages[dropped]["in_dataset"] is False and pages[dropped]["reference"] is None
    assert pages[dropped]["problems"] and pages[dropped]["systems"][0]["s2"] is not None
    clip = pages[records[0]["scene_id"]]["clips"][0]
    assert clip["media"] is None and "cannot be read" in clip["error"]
    assert all(
        c["media"] for sid, p in pages.items() if sid not in (dropped, records[0]["scene_id"]) for c in p["clips"]
    )


def test_out_is_replaced_only_when_it_holds_a_view(runs, tmp_path, capsys):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    args = [str(runs["never"]), "--sample", "--resamples", "20", "--no-progress", "--out"]
    assert main(["view", *args, str(foreign)]) == 2
    assert "not part of an odu-bench view site (keep.txt)" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["keep.txt"]
    site = tmp_path / "site"
    assert main(["view", *args, str(site)]) == 0
    capsys.readouterr()
    assert main(["view", *args, str(site), "--json"]) == 0  # an earlier view is replaced
    built = json.loads(capsys.readouterr().out)
    assert built == json.loads((site / "odu-view.json").read_text(encoding="utf-8"))
    assert built["n_scenes"] == 21 and built["problems"] == []
    assert not list(tmp_path.glob(".site.*"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["RUN", "--sample", "--names", "a", "b"], "--names gives 2 value(s) for 1 run(s)"),
        (["NOPE", "--sample"], "no summary.json"),
        (["RUN", "--dataset", "no/such/dir/at/all"], "no such directory (looked in"),
        (["RUN", "RUN", "--sample"], "duplicate system name"),
        (["RUN", "--sample", "--resamples", "0"], "--resamples must be at least 1"),
    ],
)
def test_bad_arguments_are_named(runs, tmp_path, capsys, args, message):
    args = [str(runs["never"]) if a == "RUN" else str(tmp_path / a) if a == "NOPE" else a for a in args]
    assert main(["view", *args, "--out", str(tmp_path / "site"), "--no-progress"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "site").exists()
