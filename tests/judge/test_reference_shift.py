"""``odu-bench judge-audit --reference-shift`` (odu/report/reference_shift.py): M2 of the zh scenes
against their zh and their en reference, same outputs, same judge (docs/judges.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import argv
from support.own_reference import OwnReferenceJudge

from odu.cli import main
from odu.core.schema import load_scenes
from odu.data.sample import sample_dir
from odu.report.reference_shift import reference_shift
from odu.selftest import perfect_output

DEMO = Path(__file__).resolve().parents[1] / "fixtures" / "demo_scenes.json"
SAMPLE = sample_dir() / "scenes.jsonl"


@pytest.mark.parametrize("written_in, expected", [("zh", {"zh": 1.0, "en": 0.0}), ("en", {"zh": 0.0, "en": 1.0})])
def test_the_reference_switches_and_the_outputs_stay(written_in: str, expected: dict[str, float]) -> None:
    """Outputs written from one annotation score perfectly against that reference and not at all
    against the other, with a judge that hits only a reference's own text."""
    scenes = load_scenes(DEMO)
    zh = [s for s in scenes if s.language == "zh"]
    outputs = {"perfect": {s.scene_id: perfect_output(s, written_in) for s in scenes}}
    result = reference_shift(outputs, scenes, {"own": OwnReferenceJudge(scenes)})
    assert result["population"]["scenes"] == {
        m: sum(s.modality == m for s in zh) for m in ("audio-visual", "audio-only") if any(s.modality == m for s in zh)
    }
    for modality, cell in result["systems"]["perfect"]["own"].items():
        assert cell["m2"] == expected, modality
        assert cell["shift"] == expected["en"] - expected["zh"]
        assert cell["judge_error_points"] == {"zh": 0, "en": 0}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _sample_outputs(tmp_path: Path) -> tuple[list[dict], Path]:
    """The bundled sample's records and outputs written from each scene's own annotation."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    scenes = load_scenes(SAMPLE)
    preds = _write(tmp_path / "preds.jsonl", [{"scene_id": s.scene_id, "output": perfect_output(s)} for s in scenes])
    return records, preds


def test_cli_on_the_sample_with_the_lexical_judge_equals_score_per_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both figures are what `odu-bench score --annotation-language zh|en` gives on the zh scenes
    alone; the en scenes of --scenes are left out."""
    records, preds = _sample_outputs(tmp_path)
    zh_only = _write(tmp_path / "zh.jsonl", [r for r in records if r["language"] == "zh"])
    zh_ids = {r["scene_id"] for r in records if r["language"] == "zh"}
    rows = [json.loads(line) for line in preds.read_text(encoding="utf-8").splitlines()]
    zh_preds = _write(tmp_path / "zh-preds.jsonl", [r for r in rows if r["scene_id"] in zh_ids])
    scored = {}
    for lang in ("zh", "en"):
        out = tmp_path / f"score-{lang}"
        assert (
            main(
                argv("score", scenes=zh_only, predictions=zh_preds, out=out, annotation_language=lang, no_progress=True)
            )
            == 0
        )
        scored[lang] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    capsys.readouterr()
    report = tmp_path / "shift.json"
    assert (
        main(
            argv(
                "judge-audit",
                reference_shift=True,
                scenes=SAMPLE,
                predictions=f"ref={preds}",
                judge="lexical",
                out=report,
            )
        )
        == 0
    )
    printed = capsys.readouterr().out
    result = json.loads(report.read_text(encoding="utf-8"))
    cells = result["systems"]["ref"]["lexical"]
    assert set(cells) == {"audio-visual", "audio-only"}
    for modality, cell in cells.items():
        assert cell["m2"] == {"zh": scored["zh"][modality]["m2"], "en": scored["en"][modality]["m2"]}
        assert cell["shift"] == pytest.approx(cell["m2"]["en"] - cell["m2"]["zh"])
        assert result["population"]["scenes"][modality] == scored["zh"][modality]["n_scenes"]
        assert f"| ref    | lexical | {modality}" in printed
        assert f"{100 * cell['m2']['zh']:.1f}" in printed and f"{100 * cell['shift']:+.1f}" in printed
    assert "against their zh and their en reference" in printed
    # the lexical judge matches words: zh outputs against en key points share none
    assert cells["audio-visual"]["m2"]["zh"] > 0.5 and cells["audio-visual"]["m2"]["en"] == 0.0


def test_run_directories_give_their_predictions_and_json_is_printed_without_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, preds = _sample_outputs(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_bytes(preds.read_bytes())
    assert (
        main(
            argv(
                "judge-audit",
                reference_shift=True,
                scenes=SAMPLE,
                run=f"sys={run}",
                judge="lexical",
                modality="audio-only",
            )
        )
        == 0
    )
    printed = capsys.readouterr().out
    result = json.loads(printed[: printed.index("\nM2 of the zh scenes")])
    assert (
        list(result["systems"]["sys"]["lexical"]) == ["audio-only"] and result["population"]["modality"] == "audio-only"
    )


def test_judge_errors_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, preds = _sample_outputs(tmp_path)
    empty = _write(tmp_path / "verdicts.jsonl", [])
    args = argv("judge-audit", reference_shift=True, scenes=SAMPLE, predictions=preds, judge=f"verdicts:{empty}")
    assert main(args) == 1
    assert "could not be judged" in capsys.readouterr().err
    assert main([*args, "--allow-judge-errors"]) == 0


@pytest.mark.parametrize(
    "options, message",
    [
        ({"predictions": "PREDS"}, "--reference-shift needs --scenes"),
        ({"scenes": "SAMPLE"}, "--reference-shift needs outputs"),
        ({"scenes": "SAMPLE", "predictions": ["a=PREDS", "--predictions", "a=PREDS"]}, "named alike"),
        ({"scenes": "SAMPLE", "run": "nowhere"}, "predictions.jsonl"),
        ({"scenes": "EN_ONLY", "predictions": "PREDS"}, "no zh scenes"),
        ({"scenes": "NO_EN", "predictions": "PREDS"}, "no annotations.en"),
    ],
)
def test_usage_errors_name_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: dict, message: str
) -> None:
    records, preds = _sample_outputs(tmp_path)
    no_en = [dict(r, annotations={"zh": r["annotations"]["zh"]}) if r["language"] == "zh" else r for r in records]
    paths = {
        "PREDS": str(preds),
        "SAMPLE": str(SAMPLE),
        "EN_ONLY": str(_write(tmp_path / "en.jsonl", [r for r in records if r["language"] == "en"])),
        "NO_EN": str(_write(tmp_path / "no-en.jsonl", no_en)),
        "nowhere": str(tmp_path / "nowhere"),
    }
    resolved = {
        k: [paths.get(x, x.replace("PREDS", str(preds))) for x in v] if isinstance(v, list) else paths.get(v, v)
        for k, v in options.items()
    }
    assert main(argv("judge-audit", reference_shift=True, judge="lexical", **resolved)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_predictions_without_reference_shift_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv("judge-audit", scenes=SAMPLE, predictions=tmp_path / "p.jsonl", judge="lexical")) == 2
    assert "--predictions is for --reference-shift" in capsys.readouterr().err
