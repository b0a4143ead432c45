"""Hub download / upload (odu.data.hub, odu-bench download|upload), offline: the huggingface_hub calls
are replaced by fakes that record their arguments and serve the prepared directory as the "repo"."""

from __future__ import annotations

import fnmatch
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import huggingface_hub
import pytest
from datasets import load_dataset
from support.dataset_fixtures import demo_records, expected_rows

from odu.cli import main
from odu.data.hub import allow_patterns, download, upload

METADATA = ["README.md", "media_manifest.json", "scenes.jsonl"]


class FakeHub:
    """``snapshot_download`` over a local "repo" folder, honouring ``allow_patterns`` like the Hub."""

    def __init__(self, repo: Path, tmp: Path) -> None:
        self.repo, self.tmp, self.calls = repo, tmp, []

    def repo_info(self, repo_id: str, **kwargs: Any) -> Any:
        files = sorted(p.relative_to(self.repo).as_posix() for p in self.repo.rglob("*") if p.is_file())
        return SimpleNamespace(siblings=[SimpleNamespace(rfilename=f) for f in files])

    def snapshot_download(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        target = Path(kwargs["local_dir"] or self.tmp / "hub-cache-snapshot")
        for path in sorted(self.repo.rglob("*")):
            rel = path.relative_to(self.repo).as_posix()
            if path.is_file() and any(fnmatch.fnmatch(rel, p) for p in kwargs["allow_patterns"]):
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target / rel)
        return str(target)


@pytest.fixture
def hub(demo_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    fake = FakeHub(Path(shutil.copytree(demo_dataset, tmp_path / "repo")), tmp_path)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake.snapshot_download)
    monkeypatch.setattr(huggingface_hub, "repo_info", fake.repo_info)
    return fake


class FakeApi:
    """``HfApi`` recording ``create_repo`` / ``upload_folder``."""

    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __init__(self, token: Any = None) -> None:
        self.calls.append(("init", (), {"token": token}))

    def create_repo(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append(("create_repo", args, kwargs))

    def upload_folder(self, **kwargs: Any) -> Any:
        self.calls.append(("upload_folder", (), kwargs))
        return type("Commit", (), {"commit_url": f"https://huggingface.co/datasets/{kwargs['repo_id']}/commit/abc"})()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> type[FakeApi]:
    FakeApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    return FakeApi


def test_allow_patterns_per_config() -> None:
    assert allow_patterns(["av_en"]) == [*METADATA, "data/av_en_pos/test-*.parquet", "data/av_en_neg/test-*.parquet"]
    assert allow_patterns(["av_en_pos", "av_pos"]) == [
        *METADATA,
        "data/av_en_pos/test-*.parquet",
        "data/av_zh_pos/test-*.parquet",
    ]
    every = allow_patterns(None)
    assert len(every) == len(METADATA) + 8 and every == allow_patterns(["all"])
    with pytest.raises(KeyError, match="unknown ODU-Bench config"):
        allow_patterns(["av_fr"])


def test_download_one_config_then_load_it(hub: FakeHub, tmp_path: Path) -> None:
    out = tmp_path / "odu-bench"
    assert download("org/odu-bench", ["av_en"], out, revision="v1") == out
    (call,) = hub.calls
    assert call == {
        "repo_id": "org/odu-bench",
        "repo_type": "dataset",
        "revision": "v1",
        "allow_patterns": allow_patterns(["av_en"]),
        "local_dir": str(out),
        "token": None,
    }
    assert sorted(p.relative_to(out).as_posix() for p in out.glob("data/*/*")) == [
        "data/av_en_neg/test-00000-of-00001.parquet",
        "data/av_en_pos/test-00000-of-00001.parquet",
    ]
    cache = str(tmp_path / "cache")
    ds = load_dataset(str(out), "av_en", split="test", cache_dir=cache)
    assert len(ds) == expected_rows(demo_records())["av_en"]
    # configs whose shards were not fetched fail loudly (split sizes in the card), never silently short
    with pytest.raises(Exception, match="NonMatchingSplitsSizes|expected"):
        load_dataset(str(out), "av", split="test", cache_dir=cache)


def test_download_into_the_hub_cache(hub: FakeHub) -> None:
    local = download("org/odu-bench")
    assert hub.calls[0]["local_dir"] is None
    assert hub.calls[0]["allow_patterns"] == allow_patterns(None)
    assert len(list(local.glob("data/*/*.parquet"))) == len(list(hub.repo.glob("data/*/*.parquet")))


def test_download_rejects_a_corrupt_shard(hub: FakeHub, tmp_path: Path) -> None:
    shard = next(hub.repo.glob("data/av_en_neg/*.parquet"))
    shard.write_bytes(shard.read_bytes() + b"tampered")
    with pytest.raises(ValueError, match="av_en_neg/test-00000-of-00001.parquet: sha256 differs"):
        download("org/odu-bench", ["av_en"], tmp_path / "odu-bench")
    download("org/odu-bench", ["av_zh"], tmp_path / "zh")  # the other configs are unaffected


def test_upload_checks_then_pushes_the_layout(api: type[FakeApi], demo_dataset: Path) -> None:
    url = upload(demo_dataset, "org/odu-bench", private=True, token="hf_secret")
    assert url == "https://huggingface.co/datasets/org/odu-bench/commit/abc"
    assert [name for name, _, _ in api.calls] == ["init", "create_repo", "upload_folder"]
    assert api.calls[1][1:] == (("org/odu-bench",), {"repo_type": "dataset", "private": True, "exist_ok": True})
    pushed = api.calls[2][2]
    assert pushed["folder_path"] == str(demo_dataset) and pushed["repo_type"] == "dataset"
    assert pushed["allow_patterns"] == [*METADATA, "data/*/*.parquet"]
    assert pushed["delete_patterns"] == ["data/*/*.parquet"]  # stale shards of an older upload go


def test_upload_refuses_an_unsound_folder(api: type[FakeApi], demo_dataset: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copytree(demo_dataset, tmp_path / "odu-bench"))
    next(copy.glob("data/av_en_pos/*.parquet")).unlink()
    with pytest.raises(ValueError, match="av_en_pos/test-00000-of-00001.parquet: missing shard"):
        upload(copy, "org/odu-bench")
    assert api.calls == []


def test_cli_download_and_upload(
    hub: FakeHub, api: type[FakeApi], demo_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "got"
    assert main(["download", "org/odu-bench", "--config", "av_zh", "--config", "ao", "--out", str(out)]) == 0
    assert hub.calls[0]["allow_patterns"] == allow_patterns(["av_zh", "ao"])
    assert "org/odu-bench (av_zh, ao) ->" in capsys.readouterr().out
    assert main(["upload", str(demo_dataset), "org/odu-bench"]) == 0
    assert api.calls[-1][0] == "upload_folder"
    assert main(["upload", str(tmp_path / "missing"), "org/odu-bench"]) == 2
    assert "missing README.md" in capsys.readouterr().err
