"""The dataset door: ``odu-bench prepare`` prints the exact ``load_dataset`` call, a stale cached copy
is named when ``datasets`` falls back to it, and ``odu-bench download`` takes the authors' release as
published (records + media at the clips' ``src``) from a faked Hub snapshot of that layout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import huggingface_hub
import pytest
from huggingface_hub.utils import filter_repo_objects
from support.dataset_fixtures import demo_records, expected_rows
from support.process import fresh_env, run_odu

from odu.cli import main
from odu.data.hub import download, load_dataset_call
from odu.data.release import ReleaseError


class ReleaseRepo:
    """``repo_info`` (its file list) + ``snapshot_download`` over a local folder holding a dataset repo, the
    patterns applied by ``huggingface_hub``'s own ``filter_repo_objects`` (what the Hub client does)."""

    def __init__(self, repo: Path, tmp: Path) -> None:
        self.repo, self.tmp, self.served, self.calls = repo, tmp, set(), []

    def files(self) -> list[str]:
        return sorted(p.relative_to(self.repo).as_posix() for p in self.repo.rglob("*") if p.is_file())

    def repo_info(self, repo_id: str, **kwargs: Any) -> Any:
        return SimpleNamespace(siblings=[SimpleNamespace(rfilename=f) for f in self.files()])

    def snapshot_download(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        target = Path(kwargs["local_dir"] or self.tmp / "hub-cache" / kwargs["repo_id"].replace("/", "--"))
        for rel in filter_repo_objects(self.files(), allow_patterns=kwargs["allow_patterns"]):
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.repo / rel, target / rel)
            self.served.add(rel)
        return str(target)


@pytest.fixture
def release_repo(demo_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReleaseRepo:
    """The demo release laid out as the authors publish it: ``scenes.json`` + ``media/...`` (+ a card)."""
    repo = Path(shutil.copytree(demo_release, tmp_path / "repo"))
    (repo / "README.md").write_text("---\nlicense: other\n---\n# ODU-Bench\n", encoding="utf-8")
    fake = ReleaseRepo(repo, tmp_path)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake.snapshot_download)
    monkeypatch.setattr(huggingface_hub, "repo_info", fake.repo_info)
    monkeypatch.setenv("ODU_CACHE_DIR", str(tmp_path / "odu-cache"))
    return fake


def test_download_prepares_the_release_for_the_chosen_configs_only(
    release_repo: ReleaseRepo, tmp_path: Path, hf_cache: str
) -> None:
    from datasets import load_dataset

    out = tmp_path / "odu-bench"
    assert download("qc316/odubench", ["av_en"], out) == out
    records = demo_records()
    av_en = [r for r in records if r["modality"] == "audio-visual" and r["language"] == "en"]
    assert release_repo.served == {"scenes.json", *(c["src"] for r in av_en for c in r["clips"])}
    ds = load_dataset(str(out), "av_en", split="test", cache_dir=hf_cache)
    assert len(ds) == expected_rows(records)["av_en"] == len(av_en)
    assert sorted(ds["scene_id"]) == sorted(r["scene_id"] for r in av_en)
    assert (out / "media_manifest.json").is_file()

    problems: list = []
    local = download("qc316/odubench", problems=problems)  # all configs, into the odu-bench cache
    assert problems == [] and local.is_relative_to(tmp_path / "odu-cache") and local.name == "odu-bench"
    assert len(load_dataset(str(local), "all", split="test", cache_dir=hf_cache)) == len(records)


def test_a_broken_clip_of_the_release_is_named_or_left_out(release_repo: ReleaseRepo, tmp_path: Path) -> None:
    records = demo_records()
    victim = next(r for r in records if r["modality"] == "audio-visual")
    (release_repo.repo / victim["clips"][-1]["src"]).write_bytes(b"not media")
    with pytest.raises(ReleaseError, match=f"scene {victim['scene_id']}, clip {victim['clips'][-1]['id']}"):
        download("qc316/odubench", ["av"], tmp_path / "a")
    problems: list = []
    local = download("qc316/odubench", ["av"], tmp_path / "b", skip_invalid=True, problems=problems)
    assert [p.scene_id for p in problems] == [victim["scene_id"]]
    assert victim["scene_id"] not in (local / "scenes.jsonl").read_text(encoding="utf-8")


def test_a_repo_in_neither_layout_is_refused(release_repo: ReleaseRepo, tmp_path: Path) -> None:
    (release_repo.repo / "scenes.json").rename(release_repo.repo / "annotations.json")
    with pytest.raises(ValueError, match="neither a prepared ODU-Bench dataset .* nor a release"):
        download("qc316/odubench", ["av"], tmp_path / "x")


def test_cli_download_of_a_release_prints_the_load_call(
    release_repo: ReleaseRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "odu-bench"
    assert main(["download", "qc316/odubench", "--config", "ao_zh", "--config", "av_zh", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"load with: load_dataset({str(out.resolve())!r}, 'ao_zh', split='test')" in printed


#: Runs the load call a command printed, from another folder.
RUN_CALL = "import sys\nfrom datasets import load_dataset\nprint(len(eval(sys.argv[1])))"


def test_prepare_prints_the_exact_load_call(tmp_path: Path) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir(), elsewhere.mkdir()
    env = fresh_env(tmp_path, HF_HUB_OFFLINE="1")
    proc = run_odu(["prepare", "--sample", "--out", "odu-bench", "--no-progress"], env, cwd=work)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("load with: "))
    call = line.removeprefix("load with: ").split("  (configs: ")[0]
    assert call == load_dataset_call(work / "odu-bench", "all") and str((work / "odu-bench").resolve()) in call
    loaded = subprocess.run(
        [sys.executable, "-c", RUN_CALL, call], env=env, cwd=elsewhere, capture_output=True, text=True, timeout=300
    )
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert int(loaded.stdout.split()[-1]) == sum(1 for _ in (work / "odu-bench" / "scenes.jsonl").open())


#: load_split of a bare name and of a path, warnings shown as JSON lines.
LOAD_SPLIT = textwrap.dedent(
    """
    import json, sys, warnings
    from odu.data.hub import StaleDatasetWarning, load_split
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = load_split(sys.argv[1], "ao")
    stale = [str(w.message) for w in caught if issubclass(w.category, StaleDatasetWarning)]
    print(json.dumps({"ids": sorted(rows["scene_id"]), "stale": stale}))
    """
)


#: A plain ``datasets.load_dataset`` of a bare name, as a user (or an earlier Hub download) leaves in the cache.
PLAIN_LOAD = "import sys, datasets; datasets.load_dataset(sys.argv[1], 'ao', split='test')"


def _load_split(env: dict[str, str], source: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LOAD_SPLIT, source], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def _loaded(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_stale_cached_copy_is_named(tmp_path: Path, prepared_sample: Path) -> None:
    """``load_dataset("odu-bench", ...)`` from a folder without ``odu-bench/`` silently serves the copy an
    earlier plain load of any folder (or Hub repo) of that name left in the cache; ``load_split`` says
    so, and a path never falls back."""
    first, elsewhere = tmp_path / "first", tmp_path / "elsewhere"
    first.mkdir(), elsewhere.mkdir()
    shutil.copytree(prepared_sample, first / "odu-bench")
    env = fresh_env(tmp_path, HF_HUB_OFFLINE="1")

    fresh = _loaded(_load_split(env, "odu-bench", first))
    assert fresh["ids"] and fresh["stale"] == []
    plain = subprocess.run(
        [sys.executable, "-c", PLAIN_LOAD, "odu-bench"], env=env, cwd=first, capture_output=True, text=True, timeout=300
    )
    assert plain.returncode == 0, plain.stderr[-2000:]
    stale = _loaded(_load_split(env, "odu-bench", elsewhere))
    assert stale["ids"] == fresh["ids"] and len(stale["stale"]) == 1
    assert "older" in stale["stale"][0] and "prepared folder" in stale["stale"][0]
    assert _loaded(_load_split(env, str(first / "odu-bench"), elsewhere))["stale"] == []


def test_a_name_without_a_folder_or_a_cached_copy_is_one_clear_error(tmp_path: Path, prepared_sample: Path) -> None:
    """``load_split`` caches a folder's rows under its shards' content, never under its name, so a bare
    name from a folder without it finds no copy to serve: a ``ValueError`` naming the dataset and the fix,
    not datasets' ``ConnectionError``."""
    first, elsewhere = tmp_path / "first", tmp_path / "elsewhere"
    first.mkdir(), elsewhere.mkdir()
    shutil.copytree(prepared_sample, first / "odu-bench")
    env = fresh_env(tmp_path, HF_HUB_OFFLINE="1")
    assert _loaded(_load_split(env, "odu-bench", first))["ids"]
    proc = _load_split(env, "odu-bench", elsewhere)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: dataset odu-bench (ao): not a folder here") and "prepared folder" in last
