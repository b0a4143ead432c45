"""Issue 21: every caveat that qualifies a number is printed next to it and stored with it
(``odu.core.caveats``): ``--limit``, ``--shard``, answers cut at the output-token limit, small samples;
and one name per system across ``eval``, lm-eval and reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.cli import argv, printed_table
from support.omni_fakes import FakeOmni
from support.openai_rules import API_KEY
from support.openai_server import OpenAIServer, Reply, chat_completion

from odu.cli import main
from odu.core.caveats import SMALL_SAMPLE_SCENES, run_caveats
from odu.models.base import TRUNCATED_ISSUE


@pytest.fixture(autouse=True)
def _no_user_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ODU_JUDGE", "ODU_ASR", "ODU_DATASET"):
        monkeypatch.delenv(name, raising=False)


def summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def kinds(caveats: list[dict]) -> list[str]:
    return [c["kind"] for c in caveats]


def test_a_limit_is_printed_beside_the_row_and_stored_with_it(prepared_sample: Path, tmp_path: Path, capsys) -> None:
    """Item 2: ``eval --sample --model always --limit 2`` once showed AV M1 100.0 and no word of the limit."""
    assert main(argv("eval", sample=True, model="always", limit=2, out=tmp_path / "out")) == 0
    out = capsys.readouterr().out
    [row] = [line for line in out.splitlines() if line.startswith("| floor")]
    assert row.startswith("| floor: always-trigger * |")  # the mark beside the numbers
    notes = out[out.index(row) :]
    assert (
        "* floor: always-trigger: --limit 2: the first 2 scenes of each task (4 of 21 scenes), not the benchmark"
        in notes
    )
    assert "* floor: always-trigger: 2 audio-visual scenes: a small sample (< 30)" in notes
    stored = summary(tmp_path / "out" / "always")
    assert kinds(stored["caveats"]) == ["limit", "approximate_judge", "small_sample", "small_sample"]
    assert stored["system"] == "floor: always-trigger" and stored["truncated"] == 0
    assert stored["dataset"]["odu_av"]["source"] == str(prepared_sample)  # which dataset, in the file
    results = json.loads((tmp_path / "out" / "always" / "results.json").read_text(encoding="utf-8"))
    assert results["configs"]["odu_av"]["dataset_path"] == str(prepared_sample)
    assert kinds(results["odu"]["caveats"]["odu_ao"])[0] == "limit"
    assert f"dataset: {prepared_sample} (--sample)" in out


def test_a_shard_is_a_caveat_too(prepared_sample: Path, tmp_path: Path, capsys) -> None:
    assert main(argv("eval", sample=True, model="never", shard="1/2", tasks="odu_ao", out=tmp_path / "s")) == 0
    assert "* floor: never-trigger: --shard 1/2: one part of the dataset" in capsys.readouterr().out
    assert kinds(summary(tmp_path / "s" / "never")["caveats"])[0] == "shard"


def test_the_full_sample_still_says_it_is_small_and_the_floor_answers_cleanly(
    prepared_sample: Path, tmp_path: Path, capsys
) -> None:
    """Item 12: the always-trigger floor's answers parse without an issue; item 5 on eval's console."""
    assert main(argv("eval", sample=True, model="always", out=tmp_path / "out")) == 0
    out = capsys.readouterr().out
    assert "12 audio-visual scenes: a small sample" in out and "--limit" not in out
    rows = [json.loads(line) for line in (tmp_path / "out" / "always" / "scenes.jsonl").read_text().splitlines()]
    assert rows and all(r["issues"] == [] for r in rows)


def test_score_marks_prints_and_stores_the_caveats_as_eval_does(prepared_sample: Path, tmp_path: Path, capsys) -> None:
    """Issue 31 item 6: ``odu-bench score`` on fewer than 30 scenes showed no ``*`` and no caveat,
    though README promises both for every run; the same outputs through ``eval`` and ``score``."""
    assert main(argv("eval", sample=True, model="always", out=tmp_path / "eval")) == 0
    [evaluated], eval_notes = printed_table(capsys.readouterr().out)
    run = tmp_path / "eval" / "always"
    scenes = prepared_sample / "scenes.jsonl"
    predictions = run / "predictions.jsonl"
    assert main(argv("score", scenes=scenes, predictions=predictions, out=tmp_path / "score", no_progress=True)) == 0
    out = capsys.readouterr().out
    [scored], score_notes = printed_table(out)
    assert scored == ["predictions *", *evaluated[1:]] and evaluated[0] == "floor: always-trigger *"
    assert 'Caveats of these numbers (stored in summary.json "caveats"):' in out
    assert score_notes == [line.replace("floor: always-trigger", "predictions") for line in eval_notes]
    assert any("12 audio-visual scenes: a small sample (< 30)" in line for line in score_notes)
    assert summary(tmp_path / "score")["caveats"] == summary(run)["caveats"]


def test_both_spellings_of_a_model_are_taken_and_an_unknown_one_names_both(
    prepared_sample: Path, tmp_path: Path, capsys
) -> None:
    """Item 8: ``eval --model odu-never`` (lm-eval's spelling) runs the ``never`` backend."""
    assert main(argv("eval", sample=True, model="odu-never", tasks="odu_ao", out=tmp_path / "o")) == 0
    assert (tmp_path / "o" / "never").is_dir()
    capsys.readouterr()
    assert main(argv("eval", sample=True, model="gpt-9")) == 2
    err = capsys.readouterr().err
    assert "unknown model 'gpt-9'" in err and "openai" in err and "odu-openai" in err


def test_answers_cut_at_the_token_limit_are_named_counted_and_fail_the_run(
    prepared_sample: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 3: an answer the server stopped at max_tokens is no "no JSON object found" mystery."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    sample_dataset = prepared_sample
    fake = FakeOmni(sample_dataset)

    def cut(req) -> Reply:
        body = req.json
        completion = chat_completion(body, fake(body)[:20])  # the reference answer, cut short
        completion["choices"][0]["finish_reason"] = "length"
        return Reply(body=completion)

    with OpenAIServer(fake, api_key=API_KEY, models=["omni-test"]) as server:
        server.route("POST", "/v1/chat/completions", cut)
        args = argv(
            "eval",
            dataset=sample_dataset,
            model="openai",
            tasks="odu_ao",
            model_args=f"model=omni-test,base_url={server.base_url}",
            no_preflight=True,
        )
        assert main([*args, "--out", str(tmp_path / "cut")]) == 1
        out, err = capsys.readouterr()
        assert main([*args, "--out", str(tmp_path / "allowed"), "--allow-truncated"]) == 0
    [folder] = (tmp_path / "cut").iterdir()
    stored = summary(folder)
    n = stored["audio-only"]["n_scenes"]
    assert stored["truncated"] == n == stored["parse_errors"]
    rows = [json.loads(line) for line in (folder / "scenes.jsonl").read_text().splitlines()]
    assert all(r["truncated"] and r["issues"][0] == TRUNCATED_ISSUE for r in rows)
    assert "truncated" in kinds(stored["caveats"])
    assert f"{n} parse errors ({n} of them answers cut at max_tokens)" in err
    assert f"{n} answer(s) were cut at the output-token limit" in err and "--allow-truncated" in err
    assert re.search(rf"\* omni-test: {n} answer\(s\) cut at the output-token limit", out)


def test_caveats_come_from_the_facts_of_a_run() -> None:
    judge = {"name": "openai", "approximate": False}
    assert run_caveats(judge, {"audio-visual": SMALL_SAMPLE_SCENES}) == []
    assert kinds(run_caveats(judge, {"": 1}, limit=0.5, n_total=4)) == ["limit", "small_sample"]
    [limit, _] = run_caveats(judge, {"": 1}, limit=0.5, n_total=4)
    assert limit["text"].startswith("--limit 0.5: the first 50% of each task's scenes (1 of 4 scenes)")
