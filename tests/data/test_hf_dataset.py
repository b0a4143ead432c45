"""The Hugging Face dataset: features, configs, record <-> row, prepare -> load_dataset, lazy media,
the odu_bench.py builder. Real load_dataset on local directories; the 27 real demo records with
media synthesised to each clip's duration."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from datasets import Audio, Dataset, Video, load_dataset
from support.dataset_fixtures import demo_records, expected_rows

from odu.cli import main
from odu.core.schema import scene_from_dict
from odu.data.dataset import (
    CONFIG_NAMES,
    CONFIGS,
    DEFAULT_CONFIG,
    LEAF_CONFIGS,
    cast_media,
    features,
    get_config,
    in_config_order,
    media_features,
    record_to_row,
    row_clips,
    row_to_record,
    row_to_scene,
    with_lazy_media,
)
from odu.data.media import LazyClip, MediaError, sample_times
from odu.data.prepare import card_body, prepare, verify_dataset_dir
from odu.runs.outdir import OutDirError

REPO = Path(__file__).resolve().parents[2]
RECORDS = {r["scene_id"]: r for r in demo_records()}


def load(root: Path, config: str, cache: str) -> Dataset:
    return load_dataset(str(root), config, split="test", cache_dir=cache)


def fake_media(record: dict[str, Any]) -> list[bytes]:
    return [f"{record['scene_id']}/{c['id']}".encode() for c in record["clips"]]


# --- configs and features ---------------------------------------------------------------------------


def test_config_table() -> None:
    assert CONFIG_NAMES[0] == DEFAULT_CONFIG == "all"
    assert set(CONFIG_NAMES) == {
        "all",
        "av",
        "ao",
        "av_en",
        "av_zh",
        "ao_en",
        "ao_zh",
        *(f"{base}_{label}" for base in ("av", "ao", "av_en", "av_zh", "ao_en", "ao_zh") for label in ("pos", "neg")),
    }
    assert len(CONFIG_NAMES) == 19
    assert get_config("all").leaves == tuple(c.name for c in LEAF_CONFIGS)
    assert get_config("av").leaves == ("av_en_pos", "av_en_neg", "av_zh_pos", "av_zh_neg")
    assert get_config("ao_zh_neg").leaves == ("ao_zh_neg",)
    assert get_config("av_pos").description.startswith("audio-visual, both languages pooled, positive")
    with pytest.raises(KeyError, match="choose one of all, av, ao"):
        get_config("av_fr")


def test_config_order_groups_by_leaf_in_release_order() -> None:
    scenes = [scene_from_dict(r) for r in demo_records()]
    ordered = in_config_order("all", scenes, lambda s: s)
    assert sorted(s.scene_id for s in ordered) == sorted(RECORDS)
    leaves = [
        f"{'av' if s.modality == 'audio-visual' else 'ao'}_{s.language}_{'pos' if s.is_positive else 'neg'}"
        for s in ordered
    ]
    assert leaves == sorted(leaves, key=[c.name for c in LEAF_CONFIGS].index)
    av_en = in_config_order("av_en", scenes, lambda s: s)
    assert [s.scene_id for s in av_en] == [
        s.scene_id for s in scenes if s.modality == "audio-visual" and s.language == "en" and s.is_positive
    ] + [s.scene_id for s in scenes if s.modality == "audio-visual" and s.language == "en" and not s.is_positive]


def test_features_columns() -> None:
    feats = features()
    assert list(feats) == [
        "scene_id",
        "language",
        "modality",
        "source",
        "label",
        "axes",
        "taxonomy_axes",
        "negative_reason",
        "negative_signal",
        "turns",
        "annotations",
        "extra_json",
    ]
    turn = feats["turns"].feature
    assert set(turn) == {"role", "clip_id", "media", "duration", "sha256", "text", "extra_json"}
    assert set(turn["media"]) == {"bytes", "path"}
    assert set(feats["annotations"]) == {"en", "zh"}
    key_point = feats["annotations"]["en"]["segments"].feature["key_points"].feature
    assert set(key_point) == {"qid", "point", "source", "tiers"}


# --- record <-> row ------------------------------------------------------------------------------------


@pytest.mark.parametrize("scene_id", sorted(RECORDS))
def test_record_row_round_trip_through_arrow(scene_id: str) -> None:
    record = RECORDS[scene_id]
    row = record_to_row(record, fake_media(record))
    table = pa.Table.from_pylist([row], schema=features().arrow_schema)
    back = row_to_record(table.to_pylist()[0])
    assert back == record  # every field, display fields and clip extras included
    assert scene_from_dict(back) == scene_from_dict(record)


def test_row_turns_interleave_clips_and_replies() -> None:
    record = RECORDS["avp_hr_000149"]  # four clips, a reply after each of the first three
    row = record_to_row(record, fake_media(record))
    assert [t["role"] for t in row["turns"]] == ["user", "assistant"] * 3 + ["user"]
    users = [t for t in row["turns"] if t["role"] == "user"]
    assert [t["clip_id"] for t in users] == ["v1", "v2", "v3", "v4"]
    assert [t["duration"] for t in users] == [c["duration"] for c in record["clips"]]
    assert users[0]["sha256"] == hashlib.sha256(b"avp_hr_000149/v1").hexdigest()
    assert [t["text"] for t in row["turns"] if t["role"] == "assistant"] == [
        c["replies"][0] for c in record["clips"][:3]
    ]


def test_audio_only_segments_have_null_user_in_frame() -> None:
    record = RECORDS["aop_gen_000050"]
    row = record_to_row(record, fake_media(record))
    assert row["annotations"]["en"]["segments"][0]["user_in_frame"] is None
    assert "user_in_frame" not in row_to_record(row)["annotations"]["en"]["evaluation_targets"]["segments"][0]


def test_record_to_row_checks_media_count() -> None:
    with pytest.raises(ValueError, match="scene avp_gen_000003: 3 clip"):
        record_to_row(RECORDS["avp_gen_000003"], [b"only one"])


# --- prepare -> load_dataset ---------------------------------------------------------------------------


def test_every_config_loads_with_the_right_rows(demo_dataset: Path, hf_cache: str) -> None:
    expected = expected_rows(demo_records())
    for name in CONFIG_NAMES:
        if expected.get(name, 0) == 0:
            with pytest.raises(ValueError, match=f"BuilderConfig '{name}' not found"):
                load(demo_dataset, name, hf_cache)
            continue
        ds = load(demo_dataset, name, hf_cache)
        assert len(ds) == expected[name], name
        config = get_config(name)
        assert all(config.includes(scene_from_dict(RECORDS[sid])) for sid in ds["scene_id"])
    assert sum(1 for name in CONFIG_NAMES if expected.get(name)) == 14  # the demo has no zh audio-only, no ao negative


def test_default_config_is_all_in_config_order(demo_dataset: Path, hf_cache: str) -> None:
    ds = load_dataset(str(demo_dataset), split="test", cache_dir=hf_cache)
    scenes = [scene_from_dict(r) for r in demo_records()]
    assert ds["scene_id"] == [s.scene_id for s in in_config_order("all", scenes, lambda s: s)]


def test_loaded_rows_round_trip_to_the_release_records(demo_dataset: Path, demo_release: Path, hf_cache: str) -> None:
    ds = load(demo_dataset, "all", hf_cache)
    assert ds.features == features()
    for row in ds:
        assert row_to_record(row) == RECORDS[row["scene_id"]]
        for turn in row["turns"]:
            if turn["role"] == "user":
                data = (demo_release / turn["media"]["path"]).read_bytes()
                assert turn["media"]["bytes"] == data
                assert turn["sha256"] == hashlib.sha256(data).hexdigest()


def test_lazy_clips_decode_to_the_right_counts(demo_dataset: Path, hf_cache: str) -> None:
    ds = with_lazy_media(load(demo_dataset, "all", hf_cache))
    for row in ds:
        turns = [t for t in row["turns"] if t["role"] == "user"]
        assert all(isinstance(t["media"], LazyClip) for t in turns)
        assert row_to_record(row) == RECORDS[row["scene_id"]]  # a lazy row still converts back
    row = ds[[i for i, sid in enumerate(ds["scene_id"]) if sid == "avp_gen_000003"][0]]
    clips = row_clips(row)
    assert [c.duration for c in clips] == [7.058, 6.06, 4.086]
    final = clips[-1]
    for fps in (1, 2):
        frames = final.frames(fps=fps)
        assert len(frames) == len(sample_times(final.duration, fps)) == -(-4086 * fps // 1000)
        assert frames.frames.shape[1:] == (90, 160, 3)
    assert len(final.frames(fps=8, max_frames=10)) == 10
    assert final.audio(sample_rate=16_000).shape == (round(4.086 * 16_000),)
    assert final.audio(sample_rate=8_000).shape == (round(4.086 * 8_000),)
    audio_only = row_clips(ds[[i for i, m in enumerate(ds["modality"]) if m == "audio-only"][0]])[0]
    assert audio_only.audio().shape == (round(10.05424 * 16_000),)
    with pytest.raises(MediaError, match="no video stream"):
        audio_only.frames(fps=1)
    assert row_to_scene(row).final_clip.duration == 4.086


def test_plain_rows_give_lazy_clips_too(demo_dataset: Path, hf_cache: str) -> None:
    row = load(demo_dataset, "ao_en", hf_cache)[0]
    (clip,) = row_clips(row)
    assert isinstance(clip, LazyClip)
    assert clip.sha256 == row["turns"][0]["sha256"]
    assert clip.info.has_audio and not clip.info.has_video


def test_load_from_parent_in_a_fresh_process_imports_no_torch(demo_dataset: Path, tmp_path: Path) -> None:
    script = """
import json, sys
from datasets import load_dataset
from odu.data.dataset import row_clips, with_lazy_media
ds = with_lazy_media(load_dataset("odu-bench", "av_en", split="test", cache_dir=sys.argv[1]))
clip = row_clips(ds[0])[-1]
print(json.dumps({"rows": len(ds), "frames": len(clip.frames(fps=1)), "samples": len(clip.audio()),
                  "heavy": sorted(m for m in ("torch", "torchcodec", "torchaudio", "tensorflow", "jax") if m in sys.modules)}))
"""
    env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "cache")],
        cwd=demo_dataset.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["rows"] == expected_rows(demo_records())["av_en"]
    assert report["frames"] > 0 and report["samples"] > 0
    assert report["heavy"] == []


# --- layout, card, manifest, determinism ------------------------------------------------------------


def front_matter(root: Path) -> tuple[dict[str, Any], str]:
    text = (root / "README.md").read_text(encoding="utf-8")
    _, meta, body = text.split("---\n", 2)
    return yaml.safe_load(meta), body


def test_card_configs_and_dataset_info(demo_dataset: Path) -> None:
    meta, body = front_matter(demo_dataset)
    expected = expected_rows(demo_records())
    names = [c["config_name"] for c in meta["configs"]]
    assert names == [n for n in CONFIG_NAMES if expected.get(n)]
    assert meta["configs"][0] == {
        "config_name": "all",
        "default": True,
        "data_files": [
            {
                "split": "test",
                "path": [
                    f"data/{leaf}/test-*.parquet"
                    for leaf in ("av_en_pos", "av_en_neg", "av_zh_pos", "av_zh_neg", "ao_en_pos")
                ],
            }
        ],
    }
    assert not any(c.get("default") for c in meta["configs"][1:])
    infos = {i["config_name"]: i for i in meta["dataset_info"]}
    assert {n: i["splits"][0]["num_examples"] for n, i in infos.items()} == {n: expected[n] for n in names}
    from datasets import Features

    assert Features._from_yaml_list(infos["av_en"]["features"]) == features()
    assert body.lstrip().startswith(card_body().strip())
    assert "may be used solely to\n  evaluate systems on this benchmark" in body
    assert "| `ao_zh` | 0 (not in this copy: no scenes) |" in body


def test_manifest_lists_media_and_shards(demo_dataset: Path, demo_release: Path) -> None:
    manifest = json.loads((demo_dataset / "media_manifest.json").read_text())
    assert manifest["algorithm"] == "sha256"
    media = {(m["scene_id"], m["clip_id"]): m for m in manifest["media"]}
    assert len(media) == sum(len(r["clips"]) for r in demo_records())
    for (sid, cid), entry in media.items():
        clip = next(c for c in RECORDS[sid]["clips"] if c["id"] == cid)
        data = (demo_release / clip["src"]).read_bytes()
        assert entry == {
            "scene_id": sid,
            "clip_id": cid,
            "path": clip["src"],
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        }
    assert sorted(manifest["shards"]) == sorted(
        p.relative_to(demo_dataset).as_posix() for p in demo_dataset.glob("data/*/*.parquet")
    )
    assert verify_dataset_dir(demo_dataset) == []
    lines = (demo_dataset / "scenes.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == demo_records()


def test_verify_detects_modified_and_unlisted_shards(demo_dataset: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copytree(demo_dataset, tmp_path / "odu-bench"))
    shard = next(copy.glob("data/av_zh_neg/*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-1] + b"X")
    shutil.copyfile(shard, shard.with_name("test-00009-of-00010.parquet"))
    problems = verify_dataset_dir(copy)
    assert any("av_zh_neg/test-00000-of-00001.parquet: sha256 differs" in p for p in problems)
    assert any("test-00009-of-00010.parquet: shard not listed" in p for p in problems)
    assert verify_dataset_dir(copy, ["av_en"]) == [p for p in problems if "not listed" in p]


def test_prepare_is_byte_for_byte_deterministic(demo_release: Path, demo_dataset: Path, tmp_path: Path) -> None:
    again = tmp_path / "odu-bench"
    prepare(demo_release, again)
    files = sorted(p.relative_to(demo_dataset) for p in demo_dataset.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (again / rel).read_bytes() == (demo_dataset / rel).read_bytes(), rel
    prepare(demo_release, again)  # rerun into the same folder replaces it with the same bytes
    assert all((again / rel).read_bytes() == (demo_dataset / rel).read_bytes() for rel in files)


def test_shards_and_row_groups_are_bounded(demo_release: Path, tmp_path: Path, hf_cache: str) -> None:
    out = tmp_path / "odu-bench"
    limit = 300_000
    prepare(demo_release, out, max_shard_bytes=limit, max_row_group_bytes=limit // 3)
    shards = sorted(out.glob("data/av_zh_pos/*.parquet"))
    assert len(shards) > 1
    assert [s.name for s in shards] == [f"test-{i:05d}-of-{len(shards):05d}.parquet" for i in range(len(shards))]
    for shard in out.glob("data/*/*.parquet"):
        meta = pq.ParquetFile(shard).metadata
        assert meta.num_rows == 1 or shard.stat().st_size - meta.serialized_size <= limit * 1.05, shard
        assert all(
            meta.row_group(i).num_rows == 1 or meta.row_group(i).total_byte_size <= limit // 3 * 1.2
            for i in range(meta.num_row_groups)
        )
    scenes = [scene_from_dict(r) for r in demo_records()]
    ds = load(out, "av_zh", hf_cache)
    assert ds["scene_id"] == [s.scene_id for s in in_config_order("av_zh", scenes, lambda s: s)]


def test_prepare_keeps_a_foreign_folder(demo_release: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutDirError, match=r"not part of a prepared ODU-Bench dataset \(notes.txt\)"):
        prepare(demo_release, tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_prepare_cli(demo_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "odu-bench"
    assert main(["prepare", str(demo_release / "scenes.json"), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("27 scenes, 40 clips, 5 shard(s)")
    assert "av_en=15" in printed
    assert verify_dataset_dir(out) == []


def test_prepare_cli_sample(tmp_path: Path, hf_cache: str) -> None:
    out = tmp_path / "odu-bench"
    assert main(["prepare", "--sample", "--out", str(out), "--no-progress"]) == 0
    meta, _ = front_matter(out)
    assert meta["configs"][0]["config_name"] == "all"
    assert len(load(out, "all", hf_cache)) == meta["dataset_info"][0]["splits"][0]["num_examples"]


# --- datasets' own decoding (torchcodec) -------------------------------------------------------------


def test_cast_media_relabels_the_media_struct(demo_dataset: Path, hf_cache: str) -> None:
    ds = load(demo_dataset, "av_en_neg", hf_cache)
    audio = cast_media(ds, "audio", sampling_rate=16_000, decode=False)
    assert isinstance(audio.features["turns"].feature["media"], Audio)
    assert audio[0]["turns"][0]["media"]["bytes"] == ds[0]["turns"][0]["media"]["bytes"]
    video = cast_media(ds, "video", decode=False)
    assert isinstance(video.features["turns"].feature["media"], Video)
    with pytest.raises(ValueError, match="audio-only scenes"):
        cast_media(load(demo_dataset, "all", hf_cache), "video")
    with pytest.raises(ValueError, match="'audio' or 'video'"):
        media_features("image")


def test_media_features_at_load_time(demo_dataset: Path, hf_cache: str) -> None:
    ds = load_dataset(
        str(demo_dataset),
        "ao_en",
        split="test",
        cache_dir=hf_cache,
        features=media_features("audio", sampling_rate=16_000, decode=False),
    )
    media = ds.features["turns"].feature["media"]
    assert isinstance(media, Audio) and media.sampling_rate == 16_000
    assert ds[0]["turns"][0]["media"]["path"] == RECORDS[ds[0]["scene_id"]]["clips"][0]["src"]


def test_datasets_decoding_with_torchcodec(demo_dataset: Path, hf_cache: str) -> None:
    pytest.importorskip("torchcodec")
    row = cast_media(load(demo_dataset, "av_en_neg", hf_cache), "audio", sampling_rate=16_000)[0]
    decoded = row["turns"][0]["media"].get_all_samples()
    assert decoded.sample_rate == 16_000
    assert decoded.data.shape[-1] == pytest.approx(row["turns"][0]["duration"] * 16_000, abs=16_000 * 0.1)
    video = load_dataset(
        str(demo_dataset), "av_en_neg", split="test", cache_dir=hf_cache, features=media_features("video")
    )[0]["turns"][0]["media"]
    assert video.metadata.num_frames > 0


# --- the odu_bench.py builder ----------------------------------------------------------------------------


@pytest.fixture
def builder_cls(monkeypatch: pytest.MonkeyPatch) -> type:
    monkeypatch.syspath_prepend(str(REPO))
    from odu_bench import OduBench

    return OduBench


def test_builder_usable_directly(
    builder_cls: type, demo_release: Path, demo_dataset: Path, tmp_path: Path, hf_cache: str
) -> None:
    builder = builder_cls(config_name="av_zh", data_dir=str(demo_release), cache_dir=str(tmp_path))
    builder.download_and_prepare()
    built = builder.as_dataset(split="test")
    prepared = load(demo_dataset, "av_zh", hf_cache)
    assert built.features == prepared.features
    assert built.to_list() == prepared.to_list()
    assert builder.info.citation.startswith("@article{chen2026odubench")


def test_builder_cache_key_follows_the_source(builder_cls: type, demo_release: Path, tmp_path: Path) -> None:
    release = Path(shutil.copytree(demo_release, tmp_path / "release"))
    first = builder_cls(config_name="ao", data_dir=str(release), cache_dir=str(tmp_path / "cache"))
    same = builder_cls(config_name="ao", data_dir=str(release), cache_dir=str(tmp_path / "cache"))
    assert first.cache_dir == same.cache_dir
    records = json.loads((release / "scenes.json").read_text())
    records[0]["title"] = "edited"
    (release / "scenes.json").write_text(json.dumps(records, ensure_ascii=False))
    edited = builder_cls(config_name="ao", data_dir=str(release), cache_dir=str(tmp_path / "cache"))
    assert edited.hash != first.hash and edited.cache_dir != first.cache_dir


def test_builder_empty_config_error(builder_cls: type, demo_release: Path, tmp_path: Path) -> None:
    builder = builder_cls(config_name="ao_zh", data_dir=str(demo_release), cache_dir=str(tmp_path))
    with pytest.raises(Exception) as info:
        builder.download_and_prepare()
    assert "config 'ao_zh' has no scenes" in str(info.value.__cause__ or info.value)


def test_builder_configs_match_the_core_table(builder_cls: type) -> None:
    assert [c.name for c in builder_cls.BUILDER_CONFIGS] == list(CONFIG_NAMES)
    assert builder_cls.DEFAULT_CONFIG_NAME == "all"
    assert [c.description for c in builder_cls.BUILDER_CONFIGS] == [c.description for c in CONFIGS]


def test_sample_dataset_dir_is_prepared_once(tmp_path: Path, hf_cache: str) -> None:
    from odu.data.sample import sample_dataset_dir

    first = sample_dataset_dir(tmp_path)
    assert first.name == "odu-bench" and first.parent.name.startswith("sample-")
    stamp = (first / "README.md").stat().st_mtime_ns
    assert sample_dataset_dir(tmp_path) == first
    assert (first / "README.md").stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert verify_dataset_dir(first) == []
    assert len(load(first, "ao_zh", hf_cache)) > 0
