"""Whole-process scoring speed and peak memory: ``odu-bench score`` against merely json-parsing its
three input files, and against a naive scorer, at 2,078 / 20,000 / 100,000 scenes (issue 13).

Synthetic runs of the real records' shape (``shared/odu-demo``: display fields, six axes, earlier
clips with replies, both languages' references; App B.1 Table 5 ratios: 1,347 audio-visual / 731
audio-only, 1,631 positive / 447 no-demand, 1,170 Chinese / 908 English per 2,078; 1-3 reference
segments, 2-6 key points each), raw model outputs with realistic perturbations (time jitter,
transcript edits, split and merged segments, missed and spurious segments, profile errors, code
fences, ``<think>`` blocks, prose, ~3% malformed JSON), and a stored verdict for every key point.
The three files are written once per size as JSONL.

Timed in the same run, each a fresh Python process (interpreter start and imports included):

* ``parse`` (the json-parse limit): one process that ``json``-parses every line of the three
  files and keeps what it parsed, as any reader of them must at least do;
* ``odu``: ``python -m odu score --scenes ... --predictions ... --judge verdicts:... --out ...``;
* ``naive``: a straightforward scorer in one process (:func:`naive_main`): every file read into
  lists first, every scene built, then a per-scene loop over the same parser and matcher with M4
  from jiwer and stored-verdict lookups; writes its per-scene scores and summary. Its M1-M5, Avg
  and FTR must equal ``odu``'s (checked, to 1e-12);
* ``held``: a process that only loads the predictions and verdicts as ``odu`` holds them; ``odu``'s
  peak minus this is its memory beyond the predictions and verdicts themselves.

CPU seconds (user + system of the process: robust to other work on a shared machine) and wall
seconds; peak memory is the process's peak resident set (``ru_maxrss``). Best of ``--repeats``
(interleaved, so all see the same machine conditions; fewer above 20,000 scenes).

Run: ``python benchmarks/bench_scoring.py [--sizes 2078 20000 100000] [--repeats 3] [--json out.json]``.
Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _figures import add_json_option, write_json

from odu.core.constants import AUDIO_ONLY, AUDIO_VISUAL, CONTEXT_TYPES_AO, CONTEXT_TYPES_AV, PROFILE_FIELDS
from odu.core.tables import render

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
#: Goals (issue 13): odu / parse at 20,000 scenes.
TIME_GOAL, MEMORY_GOAL = 2.0, 0.5


# --- synthetic data -------------------------------------------------------------------------------


def _sentence(rng: random.Random, zh: bool) -> str:
    if zh:
        chars = [rng.choice(_ZH_CHARS) for _ in range(rng.randint(8, 30))]
        if rng.random() < 0.2:
            chars.insert(rng.randrange(len(chars)), str(rng.randint(2, 300)))
        return "".join(c + (rng.choice(_PUNCT_ZH) if rng.random() < 0.1 else "") for c in chars)
    words = [rng.choice(_EN_WORDS) for _ in range(rng.randint(5, 20))]
    return " ".join(w + (rng.choice(_PUNCT_EN) if rng.random() < 0.1 else "") for w in words).capitalize()


def _targets(rng: random.Random, zh: bool, audio_visual: bool, positive: bool) -> tuple[dict[str, Any], int]:
    """An annotation (``evaluation_targets``: 1-3 segments with 2-6 key points when positive) and
    the end of its last segment (ms)."""
    types = CONTEXT_TYPES_AV if audio_visual else CONTEXT_TYPES_AO
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
                    "necessity": " ".join(rng.choices(_EN_WORDS, k=14)),
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
    return {"evaluation_targets": {"has_demand": positive, "segments": segments}}, t


def synthetic_scene(i: int, rng: random.Random) -> dict[str, Any]:
    """One release-schema scene record of the real records' shape (``shared/odu-demo``): display
    fields, six axes and four challenge axes, earlier clips with the assistant's replies, and both
    references (the other language's text differs). Index ``i`` fixes modality, label and language
    in Table 5 ratios."""
    audio_visual = (i * AV_SCENES) % TOTAL < AV_SCENES
    positive = (i * POSITIVE + 7) % TOTAL < POSITIVE
    zh = (i * ZH + 3) % TOTAL < ZH
    own, end = _targets(rng, zh, audio_visual, positive)
    other = {  # the other language: same spans, profile and key points, other text
        "evaluation_targets": {
            "has_demand": positive,
            "segments": [
                dict(
                    seg,
                    transcript=_sentence(rng, not zh),
                    structured_intent=_sentence(rng, not zh),
                    key_points=[dict(k, point=_sentence(rng, not zh)) for k in seg["key_points"]],
                )
                for seg in own["evaluation_targets"]["segments"]
            ],
        }
    }
    prefix = ("av" if audio_visual else "ao") + ("p" if positive else "n")
    earlier = [
        {"id": f"v{c}", "src": f"media/{i}__clip_v{c}.mp4", "duration": rng.randint(3_000, 9_000) / 1000}
        | {"replies": [" ".join(rng.choices(_EN_WORDS, k=rng.randint(20, 45)))]}
        for c in range(1, rng.choices((1, 2, 3), (0.5, 0.35, 0.15))[0])
    ]
    final = {"id": f"v{len(earlier) + 1}", "src": f"media/{i}__final.mp4", "duration": max(end, 8_000) / 1000}
    axes = [
        {"axis": f"axis{a}", "code": f"{a}.{rng.randint(1, 4)}", "name": " ".join(rng.choices(_EN_WORDS, k=3))}
        for a in range(1, 7)
    ]
    return {
        "scene_id": f"{prefix}_gen_{i:06d}",
        "title": _sentence(rng, False)[:40],
        "summary": _sentence(rng, False),
        "guide": _sentence(rng, False) + " " + _sentence(rng, False),
        "language": "zh" if zh else "en",
        "modality": AUDIO_VISUAL if audio_visual else AUDIO_ONLY,
        "source": "generated",
        "label": "positive" if positive else "negative",
        "axes": axes,
        "taxonomy_axes": axes[:4],
        "annotations": {"zh": own, "en": other} if zh else {"en": own, "zh": other},
        "clips": [*earlier, final],
        "poster" if audio_visual else "waveform": f"media/{i}.jpg",
        "negative_reason": "" if positive else _sentence(rng, False),
        "negative_signal": "" if positive else rng.choice(("ambient", "self-talk", "media")),
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


def write_data(n: int, seed: int, folder: Path) -> dict[str, Path]:
    """scenes.jsonl, predictions.jsonl and verdicts.jsonl of ``n`` synthetic scenes, written as they
    are made (a stored verdict for every key point of each scene's own reference)."""
    rng = random.Random(seed)
    paths = {name: folder / f"{name}.jsonl" for name in ("scenes", "predictions", "verdicts")}
    with (
        paths["scenes"].open("w", encoding="utf-8") as scenes,
        paths["predictions"].open("w", encoding="utf-8") as predictions,
        paths["verdicts"].open("w", encoding="utf-8") as verdicts,
    ):
        for i in range(n):
            rec = synthetic_scene(i, rng)
            scenes.write(json.dumps(rec, ensure_ascii=False) + "\n")
            output = synthetic_output(rec, rng)
            predictions.write(json.dumps({"scene_id": rec["scene_id"], "output": output}, ensure_ascii=False) + "\n")
            for g, seg in enumerate(rec["annotations"][rec["language"]]["evaluation_targets"]["segments"]):
                for k in seg["key_points"]:
                    row = {"scene_id": rec["scene_id"], "segment": g, "qid": k["qid"], "hit": rng.random() < 0.65}
                    verdicts.write(json.dumps(row) + "\n")
    return paths


# --- the naive scorer (its own process) --------------------------------------------------------------


def _jiwer_edits(reference: str, hypothesis: str) -> tuple[int, int]:
    import jiwer

    from odu.core.text import is_cjk_dominant, normalize

    ref, hyp = normalize.__wrapped__(reference), normalize.__wrapped__(hypothesis)
    if is_cjk_dominant(ref):
        ref, hyp = ref.replace(" ", ""), hyp.replace(" ", "")
        out = jiwer.process_characters(ref, hyp) if ref else None
    else:
        out = jiwer.process_words(ref, hyp) if ref else None
    if out is None:  # jiwer wants a reference; nothing to score against
        return len(hyp.split()), 0  # an empty reference is scored in words
    return out.substitutions + out.deletions + out.insertions, out.substitutions + out.deletions + out.hits


def naive_main(scenes_path: Path, predictions_path: Path, verdicts_path: Path, out: Path) -> None:
    """Read every file whole, build every scene, then score scene by scene: parse, match, look up
    the stored verdicts, M4 from jiwer; write the per-scene scores and the summary (M1-M5, Avg, FTR)."""
    from odu.core.match import linked_groups, match_segments, pred_order_key
    from odu.core.metrics import avg, false_trigger_rate, macro_f1, mean_defined, s2, s3, s4, s5
    from odu.core.parse import parse_output
    from odu.core.schema import scene_from_dict
    from odu.judge.base import candidate_text

    def lines(path: Path) -> list[Any]:
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    scenes = [scene_from_dict(r) for r in lines(scenes_path)]
    outputs = {r["scene_id"]: r["output"] for r in lines(predictions_path)}
    verdicts = {(v["scene_id"], v["segment"], v["qid"]): v["hit"] for v in lines(verdicts_path)}
    rows: dict[str, list[dict[str, Any]]] = {AUDIO_VISUAL: [], AUDIO_ONLY: []}
    for scene in scenes:
        pred = parse_output(outputs.get(scene.scene_id), scene.modality)
        refs = scene.annotation().segments
        matches = match_segments(refs, pred.segments if pred.has_demand else ())
        row = {"scene_id": scene.scene_id, "y": scene.is_positive, "p": pred.has_demand}
        row |= {"s2": None, "s3": None, "s4": None, "s5": None}
        if scene.is_positive and refs:
            hits = []
            for m in matches:
                judged = m.merged is not None and candidate_text(m.merged)
                points = [verdicts.get((scene.scene_id, m.reference, k.qid)) for k in refs[m.reference].key_points]
                if judged and None in points:  # a point without a stored verdict: its segment undecided
                    points = [None] * len(points)
                hits.append(points if judged else [False] * len(points))
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
            profile = {
                f: [m.merged is not None and getattr(m.merged, f) == getattr(refs[m.reference], f) for m in matches]
                for f in PROFILE_FIELDS[scene.modality]
            }
            row |= {"s2": s2(hits), "s3": s3([m.iou for m in matches]), "s4": s4(edits), "s5": s5(profile)}
        rows[scene.modality].append(row)
    summary = {}
    for modality, rs in rows.items():
        if rs:
            y, p = [r["y"] for r in rs], [r["p"] for r in rs]
            metrics = {"m1": macro_f1(y, p), **{f"m{k}": mean_defined(r[f"s{k}"] for r in rs) for k in (2, 3, 4, 5)}}
            summary[modality] = {**metrics, "avg": avg(metrics), "ftr": false_trigger_rate(y, p)}
    out.mkdir(parents=True, exist_ok=True)
    with (out / "scenes.jsonl").open("w", encoding="utf-8") as fh:
        for rs in rows.values():
            fh.writelines(json.dumps(r) + "\n" for r in rs)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


# --- processes -----------------------------------------------------------------------------------

#: The json-parse limit: parse every line of the files named on the command line, keep the results.
PARSE = "import json, sys\nkept = [[json.loads(line) for line in open(p, encoding='utf-8')] for p in sys.argv[1:]]\n"
#: The predictions and verdicts as ``odu-bench score`` holds them, and nothing else.
HELD = (
    "import sys\nfrom odu.judge import StoredVerdictJudge\nfrom odu.core.schema import read_predictions\n"
    "held = read_predictions(sys.argv[1]), StoredVerdictJudge(sys.argv[2])\n"
)


def run_process(command: Sequence[str]) -> dict[str, float]:
    """Wall and CPU seconds and peak resident memory (MiB) of one process run to its end."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 1):  # 1: judge errors, counted apart (none here)
            err.seek(0)
            raise RuntimeError(f"{command[:4]} exited {child.returncode}: {err.read().decode()[-2000:]}")
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_mib": round(usage.ru_maxrss / 1024, 1),
    }


def _best(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: min(r[k] for r in runs) for k in runs[0]}


def measure(n: int, repeats: int, seed: int, workdir: Path) -> dict[str, Any]:
    """Every process at one size, interleaved ``repeats`` times; the best figures of each."""
    folder = workdir / str(n)
    folder.mkdir()
    files = write_data(n, seed, folder)
    py = sys.executable
    commands = {
        "parse": [py, "-c", PARSE, *map(str, files.values())],
        "held": [py, "-c", HELD, str(files["predictions"]), str(files["verdicts"])],
        "odu": [
            *[py, "-m", "odu", "score", "--scenes", str(files["scenes"]), "--predictions", str(files["predictions"])],
            *["--judge", f"verdicts:{files['verdicts']}", "--out", str(folder / "odu"), "--no-progress", "--overwrite"],
        ],
        "naive": [py, __file__, "--naive", *map(str, files.values()), str(folder / "naive")],
    }
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, command in commands.items():
            runs[name].append(run_process(command))
    best = {name: _best(r) for name, r in runs.items()}
    ours = json.loads((folder / "odu" / "summary.json").read_text(encoding="utf-8"))
    naive = json.loads((folder / "naive" / "summary.json").read_text(encoding="utf-8"))
    for modality, metrics in naive.items():
        for name, value in metrics.items():
            mine = ours[modality][name]
            assert (mine is None and value is None) or abs(mine - value) < 1e-12, (n, modality, name, mine, value)
    sizes = {name: round(path.stat().st_size / 2**20, 1) for name, path in files.items()}
    return {
        "scenes": n,
        "file_mib": sizes,
        "repeats": repeats,
        **best,
        "odu_vs_parse": {
            "cpu": round(best["odu"]["cpu_s"] / best["parse"]["cpu_s"], 2),
            "wall": round(best["odu"]["wall_s"] / best["parse"]["wall_s"], 2),
            "peak": round(best["odu"]["peak_mib"] / best["parse"]["peak_mib"], 2),
        },
        "naive_vs_odu": {
            "cpu": round(best["naive"]["cpu_s"] / best["odu"]["cpu_s"], 2),
            "wall": round(best["naive"]["wall_s"] / best["odu"]["wall_s"], 2),
            "peak": round(best["naive"]["peak_mib"] / best["odu"]["peak_mib"], 2),
        },
        "odu_cpu_us_per_scene": round(1e6 * best["odu"]["cpu_s"] / n, 1),
        "odu_peak_beyond_held_mib": round(best["odu"]["peak_mib"] - best["held"]["peak_mib"], 1),
        "same_metrics": True,
        "metrics": {m: {k: round(v, 4) for k, v in ours[m].items() if k in naive[m]} for m in naive},
    }


def bench(sizes: Sequence[int], repeats: int, large_repeats: int, seed: int) -> dict[str, Any]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            entry = measure(n, repeats if n <= 20_000 else large_repeats, seed, Path(tmp))
            results.append(entry)
            print(
                f"{n:>7} scenes: parse {entry['parse']['cpu_s']:.2f} s, odu {entry['odu']['cpu_s']:.2f} s, "
                f"naive {entry['naive']['cpu_s']:.2f} s (CPU)",
                file=sys.stderr,
                flush=True,
            )
    goals = {}
    by_size = {r["scenes"]: r for r in results}
    if 20_000 in by_size:
        r = by_size[20_000]
        goals["20k_time_vs_parse"] = {
            "goal": TIME_GOAL,
            "cpu": r["odu_vs_parse"]["cpu"],
            "wall": r["odu_vs_parse"]["wall"],
        }
        goals["20k_peak_vs_parse"] = {"goal": MEMORY_GOAL, "value": r["odu_vs_parse"]["peak"]}
    goals["faster_than_naive_at_every_size"] = all(r["naive_vs_odu"]["cpu"] > 1 for r in results)
    if 20_000 in by_size and 100_000 in by_size:
        small, large = by_size[20_000], by_size[100_000]
        goals["100k_cpu_per_scene_vs_20k"] = round(large["odu_cpu_us_per_scene"] / small["odu_cpu_us_per_scene"], 2)
        goals["100k_peak_beyond_held_vs_20k_mib"] = [
            small["odu_peak_beyond_held_mib"],
            large["odu_peak_beyond_held_mib"],
        ]
    return {
        "benchmark": "odu-bench score, whole process, stored verdicts",
        "clock": "process CPU seconds (user + system); wall alongside; peak = ru_maxrss",
        "seed": seed,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "results": results,
        "goals": goals,
    }


def table(report: Mapping[str, Any]) -> str:
    rows = [
        [
            f"{r['scenes']:,}",
            f"{r['parse']['cpu_s']:.2f} s / {r['parse']['peak_mib']:.0f} MiB",
            f"{r['odu']['cpu_s']:.2f} s / {r['odu']['peak_mib']:.0f} MiB",
            f"{r['naive']['cpu_s']:.2f} s / {r['naive']['peak_mib']:.0f} MiB",
            f"{r['odu_vs_parse']['cpu']:.2f}× / {r['odu_vs_parse']['peak']:.2f}×",
            f"{r['naive_vs_odu']['cpu']:.2f}×",
            f"{r['odu_cpu_us_per_scene']:.0f}",
            f"{r['odu_peak_beyond_held_mib']:.0f}",
        ]
        for r in report["results"]
    ]
    header = [
        "scenes",
        "json-parse limit (CPU / peak)",
        "odu-bench score",
        "naive scorer",
        "odu / parse (time / memory)",
        "naive / odu (time)",
        "odu µs / scene",
        "odu MiB beyond inputs held",
    ]
    return render(header, rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[TOTAL, 20_000, 100_000])
    ap.add_argument("--repeats", type=int, default=3, help="best of N up to 20,000 scenes")
    ap.add_argument("--large-repeats", type=int, default=1, help="best of N above 20,000 scenes")
    ap.add_argument("--seed", type=int, default=20260501)
    add_json_option(ap)
    ap.add_argument(
        "--naive", nargs=4, type=Path, metavar=("SCENES", "PREDICTIONS", "VERDICTS", "OUT"), help=argparse.SUPPRESS
    )
    args = ap.parse_args()
    if args.naive:
        naive_main(*args.naive)
        return
    report = bench(args.sizes, args.repeats, args.large_repeats, args.seed)
    print(json.dumps(report, indent=2))
    write_json(args.json, report)
    print(table(report))


if __name__ == "__main__":
    main()
