"""Scoring speed of ``score_scenes`` with stored verdicts, and its growth from 2k to 100k scenes.

Synthetic scenes of the release's shape (App B.1 Table 5: 2,078 scenes, 1,347 audio-visual / 731
audio-only, 1,631 positive / 447 no-demand, 1,170 Chinese / 908 English; 1-3 reference segments,
2-6 key points each), raw model outputs with realistic perturbations (time jitter, transcript
edits, split and merged segments, missed and spurious segments, profile errors, code fences,
``<think>`` blocks, prose, ~3% malformed JSON), and a stored-verdicts JSONL for every key point.

Timed, in the same run and on the same data (files and judge loading outside the clock; the
transcript-normalisation cache is cleared before each timed run):

* ``odu``: ``odu.scoring.score_scenes`` with ``StoredVerdictJudge`` (one batched judge call);
* ``naive``: a straightforward per-scene scorer over the same parser and matcher, with M4 from
  jiwer (one ``process_words`` / ``process_characters`` call per segment group, uncached
  normalisation) and one judge call per scene. It must give the same M1-M5 (checked).

Times are process CPU seconds (robust to other work on a shared machine; the scorer is
single-threaded), with wall seconds alongside. Growth is reported as CPU time per scene relative to
the smallest size (1.0 = linear).

Run: ``python benchmarks/bench_scoring.py [--sizes 2078 10000 50000 100000] [--repeats 3]
[--naive-max 100000] [--json out.json]``. Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jiwer

from odu.constants import AUDIO_ONLY, AUDIO_VISUAL, CONTEXT_TYPES_AO, CONTEXT_TYPES_AV, PROFILE_FIELDS
from odu.judge import StoredVerdictJudge
from odu.judge.base import Judge, JudgeRequest, candidate_text
from odu.match import linked_groups, match_segments, pred_order_key
from odu.metrics import avg, false_trigger_rate, macro_f1, mean_defined, s2, s3, s4, s5
from odu.parse import parse_output
from odu.schema import Scene, scene_from_dict
from odu.scoring import score_scenes
from odu.tables import render
from odu.text import is_cjk_dominant, normalize

#: App B.1 Table 5 (main split).
TOTAL, AV_SCENES, POSITIVE, ZH = 2078, 1347, 1631, 1170

_EN_WORDS = (
    "hey agent can you please turn off the light in kitchen set a timer for ten minutes what is this one "
    "that sound mute remind me to buy milk tomorrow how do I fix the red piece on left side play "
    "song again translate into Japanese record summary meeting notes"
).split()
_ZH_CHARS = (
    "把温度调到帮我打开灯这个是什么声音提醒明天买牛奶静音那首歌再放一遍可以吗刚才视频里说的原因记一下顺便翻成日文"
)
_PUNCT_EN, _PUNCT_ZH = (",", ".", "?", "!", ""), ("，", "。", "？", "！", "")


# --- synthetic data -------------------------------------------------------------------------------


def _sentence(rng: random.Random, zh: bool) -> str:
    if zh:
        chars = [rng.choice(_ZH_CHARS) for _ in range(rng.randint(8, 30))]
        if rng.random() < 0.2:
            chars.insert(rng.randrange(len(chars)), str(rng.randint(2, 300)))
        return "".join(c + (rng.choice(_PUNCT_ZH) if rng.random() < 0.1 else "") for c in chars)
    words = [rng.choice(_EN_WORDS) for _ in range(rng.randint(5, 20))]
    return " ".join(w + (rng.choice(_PUNCT_EN) if rng.random() < 0.1 else "") for w in words).capitalize()


def synthetic_scene(i: int, rng: random.Random) -> dict[str, Any]:
    """One release-schema scene record; index ``i`` fixes modality, label and language in Table 5 ratios."""
    audio_visual = (i * AV_SCENES) % TOTAL < AV_SCENES
    positive = (i * POSITIVE + 7) % TOTAL < POSITIVE
    zh = (i * ZH + 3) % TOTAL < ZH
    modality = AUDIO_VISUAL if audio_visual else AUDIO_ONLY
    types = CONTEXT_TYPES_AV if audio_visual else CONTEXT_TYPES_AO
    duration_ms = rng.randint(8_000, 30_000)
    segments, t = [], rng.randint(0, 2_000)
    for _ in range(rng.choices((1, 2, 3), (0.75, 0.2, 0.05))[0] if positive else 0):
        length = rng.randint(1_200, 6_000)
        seg: dict[str, Any] = {
            "start_ms": t,
            "end_ms": t + length,
            "transcript": _sentence(rng, zh),
            "structured_intent": f"The user wants to {' '.join(rng.choices(_EN_WORDS, k=8))}",
            "required_context": [
                {
                    "type": rng.choice(types),
                    "description": " ".join(rng.choices(_EN_WORDS, k=12)),
                    "necessity": "needed",
                }
                for _ in range(rng.randint(1, 3))
            ],
            "user_gender": rng.choice(("male", "female")),
            "user_age_group": rng.choice(("adult", "adult", "elderly", "child")),
            "key_points": [
                {
                    "qid": f"kp{k:02d}",
                    "point": " ".join(rng.choices(_EN_WORDS, k=6)),
                    "source": rng.choice(("intent", "required_context.audio", "required_context.visual")),
                    "tiers": ["T1"],
                }
                for k in range(1, rng.randint(2, 6) + 1)
            ],
        }
        if audio_visual:
            seg["user_in_frame"] = rng.random() < 0.7
        segments.append(seg)
        t += length + rng.randint(500, 3_000)
    targets = {"evaluation_targets": {"has_demand": positive, "segments": segments}}
    prefix = ("av" if audio_visual else "ao") + ("p" if positive else "n")
    return {
        "scene_id": f"{prefix}_gen_{i:06d}",
        "language": "zh" if zh else "en",
        "modality": modality,
        "source": "generated",
        "label": "positive" if positive else "negative",
        "axes": [{"axis": "axis1", "code": "1.2", "name": "Vision-grounded"}],
        "annotations": {"en": targets, "zh": targets},
        "clips": [{"id": "v1", "src": f"{i}.mp4", "duration": max(duration_ms, t) / 1000, "replies": []}],
    }


def _perturb_text(rng: random.Random, text: str, zh: bool) -> str:
    units = list(text) if zh else text.split()
    out = []
    for u in units:
        r = rng.random()
        if r < 0.04:
            continue  # deletion
        out.append(rng.choice(_ZH_CHARS if zh else _EN_WORDS) if r < 0.12 else u)
        if rng.random() < 0.03:
            out.append(rng.choice(_ZH_CHARS if zh else _EN_WORDS))
    return ("" if zh else " ").join(out)


def _predicted(rng: random.Random, ref: dict[str, Any], zh: bool, audio_visual: bool) -> dict[str, Any]:
    jitter = lambda: rng.randint(-400, 400)  # noqa: E731
    seg: dict[str, Any] = {
        "start_ms": max(0, ref["start_ms"] + jitter()),
        "end_ms": ref["end_ms"] + jitter(),
        "transcript": _perturb_text(rng, ref["transcript"], zh),
        "structured_intent": " ".join(k["point"] for k in ref["key_points"] if rng.random() < 0.7),
        "required_context": [
            {"type": c["type"], "description": c["description"]} for c in ref["required_context"] if rng.random() < 0.8
        ],
        "user_gender": ref["user_gender"] if rng.random() < 0.9 else "unknown",
        "user_age_group": ref["user_age_group"] if rng.random() < 0.8 else "adult",
    }
    if audio_visual:
        seg["user_in_frame"] = ref["user_in_frame"] if rng.random() < 0.85 else not ref["user_in_frame"]
    return seg


def synthetic_output(rec: dict[str, Any], rng: random.Random) -> str:
    """A raw model output for ``rec``: usually a perturbed copy of its reference, sometimes wrong."""
    zh, audio_visual = rec["language"] == "zh", rec["modality"] == AUDIO_VISUAL
    refs = rec["annotations"][rec["language"]]["evaluation_targets"]["segments"]
    r = rng.random()
    if refs and r < 0.08:
        answer: dict[str, Any] = {"has_demand": False, "segments": []}  # missed demand
    elif not refs and r < 0.8:
        answer = {"has_demand": False, "segments": []}
    elif not refs:  # false trigger
        fake = {
            "start_ms": 500,
            "end_ms": 2_500,
            "transcript": _sentence(rng, zh),
            "key_points": [],
            "required_context": [],
            "user_gender": "male",
            "user_age_group": "adult",
            "user_in_frame": True,
        }
        answer = {"has_demand": True, "segments": [_predicted(rng, fake, zh, audio_visual)]}
    else:
        segments = []
        for ref in refs:
            q = rng.random()
            if q < 0.06:
                continue  # missed segment
            seg = _predicted(rng, ref, zh, audio_visual)
            if q < 0.14:  # split in two fragments
                cut_t = (seg["start_ms"] + seg["end_ms"]) // 2
                text = seg["transcript"]
                cut_c = len(text) // 2 if zh else text.rfind(" ", 0, len(text) // 2 + 1)
                segments += [
                    dict(seg, end_ms=cut_t, transcript=text[: max(cut_c, 0)]),
                    dict(seg, start_ms=cut_t, transcript=text[max(cut_c, 0) :].strip()),
                ]
            else:
                segments.append(seg)
        if len(segments) >= 2 and rng.random() < 0.1:  # two neighbours merged into one
            a, b = segments[0], segments[1]
            segments[:2] = [dict(a, end_ms=b["end_ms"], transcript=f"{a['transcript']} {b['transcript']}")]
        if rng.random() < 0.05:  # spurious extra segment
            segments.append(
                {
                    "start_ms": 0,
                    "end_ms": 300,
                    "transcript": "um",
                    "structured_intent": "",
                    "required_context": [],
                    "user_gender": "unknown",
                    "user_age_group": "unknown",
                }
            )
        rng.shuffle(segments)
        answer = {"has_demand": True, "segments": segments}
    text = json.dumps(answer, ensure_ascii=False, indent=rng.choice((None, 2)))
    w = rng.random()
    if w < 0.03:
        return text[: rng.randint(1, len(text) - 1)]  # cut off mid-JSON
    if w < 0.25:
        return f"```json\n{text}\n```"
    if w < 0.35:
        return f"<think>The user seems to want something {{maybe}}.</think>\n```json\n{text}\n```"
    if w < 0.45:
        return f"Here is my analysis of the final clip:\n{text}\nI hope this helps."
    return text


def synthetic_verdicts(records: Sequence[dict[str, Any]], rng: random.Random, path: Path) -> None:
    """Stored verdicts for every key point of every reference segment (JSONL)."""
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            for g, seg in enumerate(rec["annotations"][rec["language"]]["evaluation_targets"]["segments"]):
                for k in seg["key_points"]:
                    fh.write(
                        json.dumps(
                            {"scene_id": rec["scene_id"], "segment": g, "qid": k["qid"], "hit": rng.random() < 0.65}
                        )
                        + "\n"
                    )


def make_data(n: int, seed: int, workdir: Path) -> tuple[list[Scene], dict[str, str], Path]:
    rng = random.Random(seed)
    records = [synthetic_scene(i, rng) for i in range(n)]
    outputs = {r["scene_id"]: synthetic_output(r, rng) for r in records}
    verdicts = workdir / f"verdicts-{n}.jsonl"
    synthetic_verdicts(records, rng, verdicts)
    return [scene_from_dict(r) for r in records], outputs, verdicts


# --- the naive baseline -------------------------------------------------------------------------


def _jiwer_edits(reference: str, hypothesis: str) -> tuple[int, int]:
    ref, hyp = normalize.__wrapped__(reference), normalize.__wrapped__(hypothesis)
    if is_cjk_dominant(ref):
        ref, hyp = ref.replace(" ", ""), hyp.replace(" ", "")
        out = jiwer.process_characters(ref, hyp) if ref else None
    else:
        out = jiwer.process_words(ref, hyp) if ref else None
    if out is None:  # jiwer wants a reference; nothing to score against
        return len(hyp.split()), 0  # an empty reference is scored in words
    return out.substitutions + out.deletions + out.insertions, out.substitutions + out.deletions + out.hits


def naive_score(scenes: Sequence[Scene], outputs: Mapping[str, str], judge: Judge) -> dict[str, dict[str, Any]]:
    """Per-scene loop: parse, match, judge this scene, score; then aggregate per modality."""
    rows: dict[str, list[dict[str, Any]]] = {AUDIO_VISUAL: [], AUDIO_ONLY: []}
    for scene in scenes:
        pred = parse_output(outputs.get(scene.scene_id), scene.modality)
        refs = scene.annotation().segments
        matches = match_segments(refs, pred.segments if pred.has_demand else ())
        requests = [
            JudgeRequest(scene.scene_id, m.reference, text, refs[m.reference].key_points)
            for m in matches
            if m.merged is not None and refs[m.reference].key_points and (text := candidate_text(m.merged))
        ]
        verdicts = {r.segment: v for r, v in zip(requests, judge.judge(requests))}
        row = {"y": scene.is_positive, "p": pred.has_demand, "s2": None, "s3": None, "s4": None, "s5": None}
        if scene.is_positive and refs:
            hits = []
            for m in matches:
                v = verdicts.get(m.reference)
                hits.append(
                    [False if v is None else (None if v.error else v.hits[k.qid]) for k in refs[m.reference].key_points]
                )
            groups = linked_groups(matches)  # references linked through shared predictions
            edits = [
                _jiwer_edits(
                    " ".join(refs[i].transcript for i in sorted(rs, key=lambda i: (refs[i].start_ms, i))),
                    " ".join(
                        pred.segments[j].transcript for j in sorted(ps, key=lambda j: pred_order_key(pred.segments[j]))
                    ),
                )
                for rs, ps in groups
            ]
            row |= {
                "s2": s2(hits),
                "s3": s3([m.iou for m in matches]),
                "s4": s4(edits),
                "s5": s5(
                    {
                        f: [
                            m.merged is not None and getattr(m.merged, f) == getattr(refs[m.reference], f)
                            for m in matches
                        ]
                        for f in PROFILE_FIELDS[scene.modality]
                    }
                ),
            }
        rows[scene.modality].append(row)
    out = {}
    for modality, rs in rows.items():
        if rs:
            y, p = [r["y"] for r in rs], [r["p"] for r in rs]
            metrics = {"m1": macro_f1(y, p), **{f"m{k}": mean_defined(r[f"s{k}"] for r in rs) for k in (2, 3, 4, 5)}}
            out[modality] = {**metrics, "avg": avg(metrics), "ftr": false_trigger_rate(y, p)}
    return out


# --- timing -------------------------------------------------------------------------------------


def _timed(fn) -> tuple[float, float, Any]:
    """(CPU seconds, wall seconds, result) of one run of ``fn`` on a cold normalisation cache."""
    normalize.cache_clear()
    c0, w0 = time.process_time(), time.perf_counter()
    result = fn()
    return time.process_time() - c0, time.perf_counter() - w0, result


def measure(n: int, repeats: int, naive: bool, seed: int) -> dict[str, Any]:
    """Time one size: ``odu`` and (if ``naive``) the baseline, interleaved, best of ``repeats``."""
    with tempfile.TemporaryDirectory() as tmp:
        scenes, outputs, verdicts_path = make_data(n, seed, Path(tmp))
        t0 = time.perf_counter()
        judge = StoredVerdictJudge(verdicts_path)
        load_verdicts = time.perf_counter() - t0
    odu_times, naive_times = [], []
    for _ in range(repeats):  # interleaved, so both see the same machine conditions
        *t, run = _timed(lambda: score_scenes(scenes, outputs, judge))
        odu_times.append(t)
        if naive:
            *t, baseline = _timed(lambda: naive_score(scenes, outputs, judge))
            naive_times.append(t)
    odu_s, odu_wall = min(c for c, _ in odu_times), min(w for _, w in odu_times)
    entry: dict[str, Any] = {
        "scenes": n,
        "odu_s": round(odu_s, 4),
        "odu_wall_s": round(odu_wall, 4),
        "odu_us_per_scene": round(1e6 * odu_s / n, 1),
        "load_verdicts_s": round(load_verdicts, 4),
        "repeats": repeats,
        "parse_errors": run.summary["parse_errors"],
        "judge_requests": sum(len(r["candidates"]) for r in run.scenes),
    }
    if naive_times:
        for modality, metrics in baseline.items():
            for name, value in metrics.items():
                ours = run.summary[modality][name]
                assert (ours is None and value is None) or abs(ours - value) < 1e-9, (n, modality, name, ours, value)
        naive_s, naive_wall = min(c for c, _ in naive_times), min(w for _, w in naive_times)
        entry |= {
            "naive_s": round(naive_s, 4),
            "naive_wall_s": round(naive_wall, 4),
            "speedup": round(naive_s / odu_s, 2),
            "same_metrics": True,
        }
    entry["metrics"] = {
        m: {k: round(v, 4) for k, v in run.summary[m].items() if k in ("m1", "m2", "m3", "m4", "m5", "avg", "ftr")}
        for m in (AUDIO_VISUAL, AUDIO_ONLY)
    }
    return entry


def bench(sizes: Sequence[int], repeats: int, naive_max: int, seed: int) -> dict[str, Any]:
    """Every size in a fresh interpreter, so no size inherits another's heap."""
    results = []
    for n in sizes:
        reps = repeats if n <= 10_000 else max(1, repeats - 1)
        cmd = [sys.executable, __file__, "--measure", str(n), "--repeats", str(reps), "--seed", str(seed)]
        done = subprocess.run(
            cmd + (["--naive-max", "0"] if n > naive_max else []), capture_output=True, text=True, check=True
        )
        entry = json.loads(done.stdout.splitlines()[-1])
        results.append(entry)
        print(
            f"{n:>7} scenes: odu {entry['odu_s']:.3f} CPU s"
            + (f", naive {entry['naive_s']:.3f} CPU s" if "naive_s" in entry else ""),
            file=sys.stderr,
            flush=True,
        )
    base = results[0]["odu_us_per_scene"]
    for r in results:
        r["per_scene_vs_smallest"] = round(r["odu_us_per_scene"] / base, 2)
    return {
        "benchmark": "score_scenes with stored verdicts",
        "clock": "process CPU seconds (wall alongside)",
        "seed": seed,
        "results": results,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[TOTAL, 10_000, 50_000, 100_000])
    ap.add_argument("--repeats", type=int, default=3, help="best of N for sizes up to 10,000 (N-1 above)")
    ap.add_argument("--naive-max", type=int, default=100_000, help="largest size the naive baseline runs at")
    ap.add_argument("--seed", type=int, default=20260501)
    ap.add_argument("--json", type=Path, help="also write the JSON here")
    ap.add_argument("--measure", type=int, help=argparse.SUPPRESS)  # internal: one size, JSON line out
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.repeats, args.measure <= args.naive_max, args.seed)))
        return
    report = bench(args.sizes, args.repeats, args.naive_max, args.seed)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    rows = [
        [
            f"{r['scenes']:,}",
            f"{r['odu_s']:.3f}",
            f"{r['odu_wall_s']:.3f}",
            f"{r['odu_us_per_scene']:.0f}",
            f"{r['per_scene_vs_smallest']:.2f}",
            f"{r['naive_s']:.3f}" if "naive_s" in r else "-",
            f"{r['speedup']:.2f}x" if "speedup" in r else "-",
        ]
        for r in report["results"]
    ]
    print(
        render(
            ["scenes", "odu CPU s", "odu wall s", "us/scene", "per scene vs smallest", "naive CPU s", "naive / odu"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
