"""Raw release reading and validation (odu.data.release): every problem names its scene and clip."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.dataset_fixtures import demo_records

from odu.cli import main
from odu.data.release import (
    MEDIA_DURATION_TOLERANCE_S,
    MediaPathError,
    ReleaseError,
    find_records,
    fingerprint,
    media_path,
    read_release,
)

#: A multi-clip audio-visual positive, the audio-only positive and an audio-visual negative.
SMALL = ("avp_gen_000003", "aop_gen_000050", "avn_gen_000010")


@pytest.fixture(scope="module")
def small_release_src(demo_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("small-release")
    records = [r for r in demo_records() if r["scene_id"] in SMALL]
    for r in records:
        for c in r["clips"]:
            (root / c["src"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(demo_release / c["src"], root / c["src"])
    (root / "scenes.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return root


@pytest.fixture
def release(small_release_src: Path, tmp_path: Path) -> Path:
    """A fresh writable copy of the three-scene release."""
    return Path(shutil.copytree(small_release_src, tmp_path / "release"))


def records_of(root: Path) -> list[dict[str, Any]]:
    return json.loads((root / "scenes.json").read_text(encoding="utf-8"))


def write_records(root: Path, records: list[dict[str, Any]]) -> None:
    (root / "scenes.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")


def clip_file(root: Path, scene_id: str, clip_id: str) -> Path:
    record = next(r for r in records_of(root) if r["scene_id"] == scene_id)
    return root / next(c["src"] for c in record["clips"] if c["id"] == clip_id)


def only_problem(root: Path) -> str:
    with pytest.raises(ReleaseError) as info:
        read_release(root)
    assert len(info.value.problems) == 1, info.value.problems
    return str(info.value.problems[0])


def test_demo_release_is_valid(demo_release: Path) -> None:
    release = read_release(demo_release)
    assert [s.scene.scene_id for s in release] == [r["scene_id"] for r in demo_records()]
    assert release.problems == []
    assert release.records_path == demo_release / "scenes.json"
    assert all(p.is_file() for s in release for p in s.media_paths)


def test_missing_media_names_scene_and_clip(release: Path) -> None:
    clip_file(release, "avp_gen_000003", "v2").unlink()
    message = only_problem(release)
    assert message.startswith("scene avp_gen_000003, clip v2: media file not found")


def test_corrupt_media_names_scene_and_clip(release: Path) -> None:
    clip_file(release, "avn_gen_000010", "v1").write_bytes(b"\x00garbage, not an mp4" * 100)
    message = only_problem(release)
    assert message.startswith("scene avn_gen_000010, clip v1: media does not decode")


@pytest.mark.parametrize(("scene_id", "clip_id"), [("avp_gen_000003", "v3"), ("aop_gen_000050", "v1")])
def test_truncated_media_names_scene_and_clip(release: Path, scene_id: str, clip_id: str) -> None:
    path = clip_file(release, scene_id, clip_id)  # an MP4 with its index up front; a WAV
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    message = only_problem(release)
    assert message.startswith(f"scene {scene_id}, clip {clip_id}: media does not decode")
    assert "truncated" in message


def test_wrong_duration_is_reported(release: Path) -> None:
    records = records_of(release)
    records[0]["clips"][0]["duration"] += 3 * MEDIA_DURATION_TOLERANCE_S
    write_records(release, records)
    message = only_problem(release)
    assert message.startswith("scene avp_gen_000003, clip v1: media lasts 7.058 s but the record says 7.358 s")


def test_duration_within_tolerance_is_accepted(release: Path) -> None:
    records = records_of(release)
    records[0]["clips"][0]["duration"] += MEDIA_DURATION_TOLERANCE_S / 2
    write_records(release, records)
    assert len(read_release(release)) == 3


def test_audio_visual_clip_without_video_is_reported(release: Path) -> None:
    records = records_of(release)
    records[2]["clips"][0]["src"] = records[1]["clips"][0]["src"]  # the audio-only scene's WAV
    records[2]["clips"][0]["duration"] = records[1]["clips"][0]["duration"]
    write_records(release, records)
    assert "audio-visual clip has no video stream" in only_problem(release)


def test_segment_past_final_clip_is_reported(release: Path) -> None:
    records = records_of(release)
    final = records[0]["clips"][-1]
    records[0]["annotations"]["zh"]["evaluation_targets"]["segments"][0]["end_ms"] = (
        round(final["duration"] * 1000) + 500
    )
    write_records(release, records)
    message = only_problem(release)
    assert message.startswith("scene avp_gen_000003, clip v3: annotations.zh.segments[0] ends at")


def test_duplicate_ids_are_reported(release: Path) -> None:
    records = records_of(release)
    records[0]["clips"][1]["id"] = "v1"
    records.append(records[1])
    write_records(release, records)
    with pytest.raises(ReleaseError) as info:
        read_release(release)
    messages = [str(p) for p in info.value.problems]
    assert "scene avp_gen_000003, clip v1: duplicate clip id" in messages
    assert "scene aop_gen_000050: duplicate scene_id" in messages


def test_scene_id_must_agree_with_the_record(release: Path) -> None:
    records = records_of(release)
    records[2]["source"] = "human-recorded"  # avn_gen_000010
    write_records(release, records)
    assert only_problem(release) == (
        "scene avn_gen_000010: the scene id says source 'generated' but the record has 'human-recorded'"
    )
    records[2]["scene_id"] = "custom-scene-1"  # ids of another shape are not checked
    write_records(release, records)
    assert len(read_release(release)) == 3


def test_schema_error_names_the_scene(release: Path) -> None:
    records = records_of(release)
    del records[1]["label"]
    records[2].pop("scene_id")
    write_records(release, records)
    with pytest.raises(ReleaseError) as info:
        read_release(release)
    assert [str(p) for p in info.value.problems] == [
        "scene aop_gen_000050: missing field 'label'",
        "scene record 2: missing field 'scene_id'",
    ]


def test_all_problems_are_collected_and_skip_invalid_keeps_the_rest(release: Path) -> None:
    clip_file(release, "avp_gen_000003", "v1").unlink()
    clip_file(release, "avn_gen_000010", "v1").write_bytes(b"not media")
    with pytest.raises(ReleaseError) as info:
        read_release(release)
    assert [(p.scene_id, p.clip_id) for p in info.value.problems] == [
        ("avp_gen_000003", "v1"),
        ("avn_gen_000010", "v1"),
    ]
    assert "2 problem(s)" in str(info.value)
    kept = read_release(release, skip_invalid=True)
    assert [s.scene.scene_id for s in kept] == ["aop_gen_000050"]
    assert len(kept.problems) == 2


def test_records_only_check_ignores_media(release: Path) -> None:
    shutil.rmtree(release / "media")
    assert len(read_release(release, check_media=False)) == 3


def test_media_root_option(release: Path, tmp_path: Path) -> None:
    records_dir = tmp_path / "records"
    records_dir.mkdir()
    shutil.move(release / "scenes.json", records_dir / "scenes.jsonl")
    with pytest.raises(ReleaseError):
        read_release(records_dir)
    assert len(read_release(records_dir / "scenes.jsonl", media_root=release)) == 3


def test_find_records(release: Path, tmp_path: Path) -> None:
    assert find_records(release) == release / "scenes.json"
    assert find_records(release / "scenes.json") == release / "scenes.json"
    with pytest.raises(FileNotFoundError, match="no such release records file or directory"):
        find_records(tmp_path / "nothing-here")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"looked for scenes\.jsonl, scenes\.json"):
        find_records(tmp_path / "empty")


def test_fingerprint_follows_records_and_media(release: Path) -> None:
    first = fingerprint(release)
    assert fingerprint(release) == first
    records = records_of(release)
    records[0]["negative_signal"] = "edited"
    write_records(release, records)
    second = fingerprint(release)
    assert second != first
    path = clip_file(release, "aop_gen_000050", "v1")
    path.write_bytes(path.read_bytes() + b"\0")
    assert fingerprint(release) != second


def test_prepare_cli_reports_problems_and_skips(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clip_file(release, "avn_gen_000010", "v1").unlink()
    out = tmp_path / "odu-bench"
    assert main(["prepare", str(release), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "scene avn_gen_000010, clip v1: media file not found" in err and "--skip-invalid" in err
    assert not out.exists()
    assert main(["prepare", str(release), "--out", str(out), "--skip-invalid", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "skipped: scene avn_gen_000010, clip v1: media file not found" in captured.err
    assert captured.out.startswith("2 scenes, 4 clips")
    assert [json.loads(line)["scene_id"] for line in (out / "scenes.jsonl").read_text().splitlines()] == [
        "avp_gen_000003",
        "aop_gen_000050",
    ]


# --- media stays inside the media root (issue 12 item 10) ------------------------------------------


def _point_clip_at(root: Path, src: str) -> None:
    records = records_of(root)
    records[1]["clips"][0]["src"] = src  # aop_gen_000050, clip v1
    write_records(root, records)


def _outside_copy(release: Path, tmp_path: Path) -> Path:
    """The audio-only scene's media, copied to a folder beside (outside) the release."""
    outside = tmp_path / "outside"
    outside.mkdir()
    return Path(shutil.copyfile(clip_file(release, "aop_gen_000050", "v1"), outside / "x.wav"))


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink-file", "symlink-dir"])
def test_media_outside_the_release_is_refused(release: Path, tmp_path: Path, kind: str) -> None:
    outside = _outside_copy(release, tmp_path)
    if kind == "dotdot":
        src = "../outside/x.wav"
    elif kind == "absolute":
        src = str(outside)
    elif kind == "symlink-file":
        (release / "media" / "link.wav").symlink_to(outside)
        src = "media/link.wav"
    else:
        (release / "linked").symlink_to(outside.parent, target_is_directory=True)
        src = "linked/x.wav"
    _point_clip_at(release, src)
    message = only_problem(release)
    assert message.startswith("scene aop_gen_000050, clip v1: media path ")
    assert ("absolute" if kind == "absolute" else "out") in message


def test_links_inside_the_release_and_an_explicit_media_root_are_accepted(release: Path, tmp_path: Path) -> None:
    inside = clip_file(release, "aop_gen_000050", "v1")
    (release / "alias.wav").symlink_to(inside)
    _point_clip_at(release, "alias.wav")
    assert len(read_release(release)) == 3
    outside = _outside_copy(release, tmp_path)
    records = records_of(release)
    for record in records:  # the whole release's media moved to another folder, named explicitly
        for clip in record["clips"]:
            target = outside.parent / clip["src"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(release / clip["src"], target)
    write_records(release, records)
    shutil.rmtree(release / "media")
    assert len(read_release(release, media_root=outside.parent)) == 3


def test_prepare_cli_refuses_media_outside_and_stores_no_host_path(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = _outside_copy(release, tmp_path)
    _point_clip_at(release, str(outside))
    out = tmp_path / "odu-bench"
    assert main(["prepare", str(release), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "scene aop_gen_000050, clip v1: media path" in err and "absolute" in err and "Traceback" not in err
    assert not out.exists()
    _point_clip_at(release, "x.wav")  # the same file, its folder named as the media root
    records = records_of(release)
    for record in records[::2]:
        for clip in record["clips"]:
            target = outside.parent / clip["src"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(release / clip["src"], target)
    argv = ["prepare", str(release), "--out", str(out), "--media-root", str(outside.parent), "--no-progress"]
    assert main(argv) == 0
    manifest = (out / "media_manifest.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in manifest and "x.wav" in manifest


def test_a_killed_prepare_leaves_a_work_folder_the_next_run_removes(release: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "odu-bench"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".odu-bench.partial-{int(dead.stdout)}-x"  # the pid of a process that has ended
    (stale / "data").mkdir(parents=True)
    (stale / "data" / "half.parquet").write_bytes(b"\0" * 1000)
    live = tmp_path / f".odu-bench.partial-{os.getppid()}-x"  # a running process's folder is left alone
    live.mkdir()
    other = tmp_path / f".other.partial-{int(dead.stdout)}-x"  # another output's folder too
    other.mkdir()
    assert main(["prepare", str(release), "--out", str(out), "--no-progress"]) == 0
    assert not stale.exists() and live.is_dir() and other.is_dir()


def test_hub_cache_links_may_lead_into_the_repo_folder(tmp_path: Path) -> None:
    """A Hub snapshot's files are links into the repo folder's blobs/ (huggingface_hub cache
    layout): allowed with that folder as link root, and nowhere else."""
    repo = tmp_path / "datasets--org--odu"
    blob = repo / "blobs" / "0123abcd"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"RIFF")
    snapshot = repo / "snapshots" / "rev1"
    (snapshot / "media").mkdir(parents=True)
    (snapshot / "media" / "a.wav").symlink_to(blob)
    with pytest.raises(MediaPathError, match="resolves outside the media root"):
        media_path(snapshot, "media/a.wav")
    assert media_path(snapshot, "media/a.wav", link_root=repo) == snapshot / "media" / "a.wav"
    with pytest.raises(MediaPathError, match="leads out of the media root"):
        media_path(snapshot, "../../blobs/0123abcd", link_root=repo)  # src itself stays under the snapshot
