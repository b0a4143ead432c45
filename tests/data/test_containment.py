"""Containment, as each part promises it: a release's media stay under its media root
(``odu.data.release.media_path``: relative, no ``..`` out, no link out, a loop refused), a prepared
dataset's card points only inside its folder (``odu.data.hub.check_data_files``), and an output
folder is never an input, nor holds one, nor lies inside one (``odu.runs.outdir.check_apart``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from odu.data.hub import check_data_files
from odu.data.release import MediaPathError, media_path
from odu.runs.outdir import OutDirError, check_apart


@pytest.fixture
def root(tmp_path: Path) -> Path:
    rel = tmp_path / "rel"
    (rel / "media").mkdir(parents=True)
    (rel / "media" / "a.wav").write_bytes(b"RIFF")
    return rel


def test_a_relative_path_inside_the_root_is_taken(root: Path) -> None:
    assert media_path(root, "media/a.wav") == root / "media" / "a.wav"
    assert media_path(root, "media/../media/a.wav") == root / "media" / ".." / "media" / "a.wav"


@pytest.mark.parametrize("src", ["/etc/passwd", "C:\\x.wav", "\\\\server\\share\\x.wav"])
def test_an_absolute_path_is_refused(root: Path, src: str) -> None:
    with pytest.raises(MediaPathError, match="absolute"):
        media_path(root, src)


def test_dot_dot_out_of_the_root_is_refused_before_any_link_is_read(root: Path) -> None:
    (root.parent / "outside.wav").write_bytes(b"RIFF")
    with pytest.raises(MediaPathError, match="leads out of the media root"):
        media_path(root, "../outside.wav")


def test_a_sibling_whose_name_starts_like_the_root_is_outside(root: Path) -> None:
    """``/rel-evil`` is not inside ``/rel``: containment by path parts, never by string prefix."""
    evil = root.parent / f"{root.name}-evil"
    evil.mkdir()
    (evil / "x.wav").write_bytes(b"RIFF")
    with pytest.raises(MediaPathError, match="leads out of the media root"):
        media_path(root, f"../{root.name}-evil/x.wav")
    (root / "media" / "link.wav").symlink_to(evil / "x.wav")
    with pytest.raises(MediaPathError, match="resolves outside the media root"):
        media_path(root, "media/link.wav")


def test_a_link_leading_out_is_refused_and_one_staying_in_is_taken(root: Path) -> None:
    (root.parent / "outside.wav").write_bytes(b"RIFF")
    (root / "media" / "out.wav").symlink_to(root.parent / "outside.wav")
    (root / "media" / "in.wav").symlink_to(root / "media" / "a.wav")
    with pytest.raises(MediaPathError, match="resolves outside the media root"):
        media_path(root, "media/out.wav")
    assert media_path(root, "media/in.wav") == root / "media" / "in.wav"


def test_a_link_loop_is_refused(root: Path) -> None:
    (root / "media" / "x.wav").symlink_to(root / "media" / "y.wav")
    (root / "media" / "y.wav").symlink_to(root / "media" / "x.wav")
    with pytest.raises(MediaPathError, match="cannot be resolved"):
        media_path(root, "media/x.wav")


def test_an_empty_src_is_refused(root: Path) -> None:
    with pytest.raises(MediaPathError, match="no media path"):
        media_path(root, "")


# --- a prepared dataset's card ------------------------------------------------------------------------


def test_data_files_inside_the_folder_are_taken(tmp_path: Path) -> None:
    data = tmp_path / "ds" / "data" / "av"
    data.mkdir(parents=True)
    check_data_files(tmp_path / "ds", {"test": [str(data / "test-0.parquet")]})


@pytest.mark.parametrize(
    "outside",
    [
        "{root}/../elsewhere/test-0.parquet",
        "{root}-evil/test-0.parquet",
        "/etc/passwd",
        "https://evil.example/x.parquet",
    ],
)
def test_data_files_outside_the_folder_are_refused(tmp_path: Path, outside: str) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    with pytest.raises(ValueError, match="point outside the folder"):
        check_data_files(root, {"test": [outside.format(root=root)]})


def test_a_link_out_of_the_dataset_folder_is_refused(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "ds", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (elsewhere / "x.parquet").write_bytes(b"PAR1")
    (root / "x.parquet").symlink_to(elsewhere / "x.parquet")
    with pytest.raises(ValueError, match="point outside the folder"):
        check_data_files(root, {"test": [str(root / "x.parquet")]})


def test_a_hub_repo_has_no_local_folder_to_check(tmp_path: Path) -> None:
    check_data_files("org/name-not-a-folder", {"test": ["hf://datasets/org/name/data/x.parquet"]})


# --- output folders and inputs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("out", "given", "how"),
    [
        ("in", "in", "is"),
        ("parent", "parent/in/file.jsonl", "contains"),
        ("in/out", "in", "lies inside"),
    ],
)
def test_out_may_not_be_hold_or_lie_inside_an_input(tmp_path: Path, out: str, given: str, how: str) -> None:
    (tmp_path / "parent" / "in").mkdir(parents=True)
    (tmp_path / "parent" / "in" / "file.jsonl").write_text("{}")
    (tmp_path / "in").mkdir()
    with pytest.raises(OutDirError, match=f"{how} the input"):
        check_apart(tmp_path / out, [tmp_path / given])


def test_siblings_and_missing_inputs_are_apart(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in-evil").mkdir()
    check_apart(tmp_path / "in-evil", [tmp_path / "in", None, tmp_path / "never-made"])
    check_apart(tmp_path / "in2", [tmp_path / "in"])


def test_links_are_resolved_before_comparing(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "in")
    with pytest.raises(OutDirError, match="is the input"):
        check_apart(tmp_path / "alias", [tmp_path / "in"])


def test_loading_a_prepared_dataset_checks_its_card(demo_dataset: Path, tmp_path: Path, hf_cache: str) -> None:
    """``load_split``, the one loader of a prepared folder, refuses a card pointing outside it."""
    import shutil

    from odu.data.hub import load_split

    dataset = Path(shutil.copytree(demo_dataset, tmp_path / "ds"))
    shutil.copytree(dataset / "data" / "av_en_pos", tmp_path / "elsewhere")
    card = (dataset / "README.md").read_text(encoding="utf-8")
    (dataset / "README.md").write_text(card.replace("data/av_en_pos/test-*.parquet", "../elsewhere/test-*.parquet"))
    with pytest.raises(ValueError, match="point outside the folder"):
        load_split(dataset, "av")


@pytest.mark.parametrize("where", ["the records' folder", "the media root", "inside the media root"])
def test_prepare_never_writes_into_its_release_or_media(demo_release: Path, tmp_path: Path, where: str) -> None:
    import shutil

    from odu.data.prepare import prepare

    release = Path(shutil.copytree(demo_release, tmp_path / "release"))
    records = tmp_path / "records" / "scenes.json"
    records.parent.mkdir()
    shutil.move(release / "scenes.json", records)
    out = {
        "the records' folder": records.parent,
        "the media root": release,
        "inside the media root": release / "prepared",
    }[where]
    with pytest.raises(OutDirError, match="the input"):
        prepare(records, out, media_root=release)
