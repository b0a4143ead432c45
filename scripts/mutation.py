"""Mutation check: do the tests catch deliberate one-line faults in the core?

Each :class:`Fault` below replaces one exact piece of source text (found exactly once in its
file) by a wrong one, the kind of slip a change could make: a threshold off by one step, a
comparison flipped, a check dropped, the wrong denominator. Every fault is applied, one at a
time, to a temporary copy of the repository (never to the working tree), and the test files of
its group run against that copy (``pytest -x``, with a per-fault timeout). A fault is *killed*
when a test fails (or the run times out), *survived* when every test passes. The kill rate is
killed / (faults run), equivalent faults (which change no observable behaviour; each says why)
left out.

It is slow (minutes), so neither the test suite nor CI runs it; ``tests/project/test_mutation_faults.py``
only checks that every fault still applies cleanly. Run::

    python scripts/mutation.py                        # every group
    python scripts/mutation.py --group match --group metrics
    python scripts/mutation.py --exclude-group transport --json mutation.json --min-rate 0.95
    python scripts/mutation.py --list                 # the faults, nothing run

Exit status: 0, or 1 when the kill rate is below ``--min-rate``, 2 when the unmutated copy
already fails its tests. The figure is quoted in ``docs/performance.md`` ("Mutation check").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Test files each group of faults runs against (the ones that pin that part of the core).
GROUP_TESTS: dict[str, tuple[str, ...]] = {
    "match": ("tests/scoring/test_match.py", "tests/scoring/test_match_edges.py", "tests/scoring/test_scoring.py"),
    "metrics": ("tests/scoring/test_metrics.py", "tests/scoring/test_scoring.py"),
    "text": ("tests/scoring/test_text.py", "tests/scoring/test_match.py", "tests/scoring/test_scoring.py"),
    "parse": ("tests/scoring/test_parse.py",),
    "scoring": (
        "tests/scoring/test_scene_scores.py",
        "tests/scoring/test_scoring.py",
        "tests/scoring/test_match.py",
        "tests/scoring/test_run_contract.py",
        "tests/judge/test_judge_scoring.py",
    ),
    "schema": ("tests/scoring/test_schema_rules.py", "tests/scoring/test_scoring.py", "tests/scoring/test_jsonio.py"),
    "constants": (
        "tests/scoring/test_match_edges.py",
        "tests/scoring/test_metrics.py",
        "tests/scoring/test_scoring.py",
        "tests/scoring/test_match.py",
        "tests/scoring/test_text.py",
        "tests/scoring/test_parse.py",
        "tests/judge/test_lexical_threshold.py",
        "tests/judge/test_judge_scoring.py",
        "tests/project/test_docs.py",
    ),
    "tables": ("tests/scoring/test_tables.py", "tests/report/test_report.py", "tests/scoring/test_scoring.py"),
    "report": (
        "tests/report/test_bootstrap_settings.py",
        "tests/report/test_headline_rules.py",
        "tests/scoring/test_metrics.py",
        "tests/report/test_bootstrap.py",
        "tests/report/test_report.py",
    ),
    "judge": (
        "tests/judge/test_lexical_threshold.py",
        "tests/scoring/test_scoring.py",
        "tests/judge/test_judge_cache.py",
        "tests/judge/test_judge_prompt.py",
        "tests/judge/test_judge_scoring.py",
        "tests/judge/test_judge_openai.py",
    ),
    "transport": (
        "tests/models/test_retry_waits.py",
        "tests/models/test_openai_client.py",
        "tests/judge/test_judge_openai.py",
    ),
    # issue 23's parts
    "scrub": ("tests/scoring/test_scrub.py", "tests/models/test_openai_client.py", "tests/cli/test_secrets.py"),
    "containment": ("tests/data/test_containment.py", "tests/data/test_release.py"),
    "shards": ("tests/harness/test_shard_checks.py",),
    "estimate": ("tests/harness/test_estimate.py",),
    "rundirs": ("tests/scoring/test_outdir.py", "tests/scoring/test_run_contract.py"),
    "preflight": ("tests/models/test_preflight.py",),
    "replicas": ("tests/models/test_replica_pool.py", "tests/models/test_transport.py"),
    "viewer": ("tests/report/test_view_browser.py",),
    "judgecache": (
        "tests/judge/test_judge_reasks.py",
        "tests/judge/test_judge_cache.py",
        "tests/judge/test_judge_prompt.py",
    ),
    "bounds": ("tests/scoring/test_bounds.py", "tests/models/test_retry_waits.py"),
    "vllm": (
        "tests/models/test_provider_rules.py",
        "tests/models/test_providers.py",
        "tests/real/test_tiny_checkpoints.py",
    ),
    # issue 30's parts (hardening, round three)
    "keyshape": ("tests/scoring/test_scrub.py", "tests/cli/test_secrets.py", "tests/models/test_openai_client.py"),
    "urlrule": (
        "tests/scoring/test_scrub.py",
        "tests/models/test_openai_client.py",
        "tests/cli/test_secrets.py",
        "tests/models/test_replica_pool.py",
    ),
    "linearread": (
        "tests/property/test_jsonl_property.py",
        "tests/data/test_hostile_records.py",
        "tests/cli/test_bounded.py",
    ),
    "cardyaml": ("tests/cli/test_bounded.py",),
    # issue 30's parts (items 3, 7, 8, 9, 10)
    "outfolders": ("tests/scoring/test_outdir.py", "tests/cli/test_out_folders.py"),
    "clipserve": ("tests/models/test_transformers_route.py", "tests/lmms/test_lmms_hooks.py"),
    "pairing": ("tests/report/test_scene_pairing.py",),
    "lmmshooks": ("tests/lmms/test_lmms_hooks.py",),
    "contentcache": ("tests/data/test_dataset_cache.py",),
    # issue 30 item 6, issue 31 items 3-6: odu-bench export
    "export": (
        "tests/export/test_export_rules.py",
        "tests/export/test_export.py",
        "tests/export/test_export_docs.py",
    ),
    # issue 31 (newcomer round two): fast files first (pytest -x stops at the first failure), the
    # wheel's last (they build it once, then follow README's wheel route and run odu-bench selftest)
    "newcomer2": (
        "tests/report/test_paired.py",
        "tests/harness/test_caveats.py",
        "tests/harness/test_shard_checks.py",
        "tests/harness/test_bridge.py",
        "tests/harness/test_run_control.py",
        "odu/selftest/test_sample.py",
        "tests/doors/test_wheel_route.py",
        "tests/doors/test_newcomer.py",
    ),
}

#: Seconds one fault's test run may take before it counts as killed (a hang is a caught fault).
FAULT_TIMEOUT_S = 600


@dataclass(frozen=True)
class Fault:
    """Replace ``old`` (exactly once in ``path``) by ``new``. ``equivalent`` explains why a fault
    changes no observable behaviour; such faults are listed but not run or counted."""

    name: str
    group: str
    path: str
    old: str
    new: str
    equivalent: str = ""


F = Fault
# fmt: off
FAULTS: tuple[Fault, ...] = (
    # --- segment matching (App A.2)
    F("iou-intersection-from-min", "match", "odu/core/match.py",
      "inter = min(a[1], b[1]) - max(a[0], b[0])", "inter = min(a[1], b[1]) - min(a[0], b[0])"),
    F("iou-union-from-max", "match", "odu/core/match.py",
      "union = max(a[1], b[1]) - min(a[0], b[0])", "union = max(a[1], b[1]) - max(a[0], b[0])"),
    F("iou-same-instant-zero", "match", "odu/core/match.py",
      "return 1.0 if a == b else 0.0", "return 0.0"),
    F("inside-wrong-denominator", "match", "odu/core/match.py",
      "/ (inner[1] - inner[0])", "/ (outer[1] - outer[0])"),
    F("text-inside-no-length-guard", "match", "odu/core/match.py",
      " or len(inner) > len(outer):", ":"),
    F("contains-needs-both", "match", "odu/core/match.py",
      "if text >= CONTAINMENT_TEXT_MIN or span >= CONTAINMENT_SPAN_MIN", "if text >= CONTAINMENT_TEXT_MIN and span >= CONTAINMENT_SPAN_MIN"),
    F("similarity-partial-ratio", "match", "odu/core/match.py",
      "sim = [[fuzz.ratio(rt, pt)", "sim = [[fuzz.partial_ratio(rt, pt)"),
    F("threshold-strict", "match", "odu/core/match.py",
      "if j not in used and score[i][j] >= threshold", "if j not in used and score[i][j] > threshold"),
    F("prediction-reused-one-to-one", "match", "odu/core/match.py",
      "if not assigned[i] and j not in used:", "if not assigned[i]:"),
    F("transcript-phase-iou-threshold", "match", "odu/core/match.py",
      'one_to_one(sim, ious, TRANSCRIPT_MATCH_MIN, "transcript")', 'one_to_one(sim, ious, IOU_MATCH_MIN, "transcript")'),
    F("fragment-worst-reference", "match", "odu/core/match.py",
      "i = min(found, key=lambda f: (-f[0], f[1]))[2]", "i = min(found, key=lambda f: (f[0], f[1]))[2]"),
    F("cover-worst-prediction", "match", "odu/core/match.py",
      "assigned[i].append(min(found, key=lambda f: (-f[0], f[1]))[2])", "assigned[i].append(min(found, key=lambda f: (f[0], f[1]))[2])"),
    F("merge-span-min-end", "match", "odu/core/match.py",
      "end_ms=max(s[1] for s in spans)", "end_ms=min(s[1] for s in spans)"),
    F("merge-in-list-order", "match", "odu/core/match.py",
      "ordered = sorted(fragments, key=pred_order_key)", "ordered = list(fragments)"),
    F("merge-profile-from-first-even-if-missing", "match", "odu/core/match.py",
      "for f in ordered if getattr(f, field) is not None), None)", "for f in ordered), None)"),
    F("linked-groups-never-link", "match", "odu/core/match.py",
      "for other in [g for g in groups if g[1] & group[1]]:", "for other in [g for g in groups if g[0] & group[0]]:"),
    # --- scene and dataset scores (App A.3-A.4)
    F("macro-f1-class-1-only", "metrics", "odu/core/metrics.py",
      "for c_tp, c_fp, c_fn in ((tn, fn, fp), (tp, fp, fn)):", "for c_tp, c_fp, c_fn in ((tp, fp, fn),):"),
    F("macro-f1-class-0-fp-fn-swapped", "metrics", "odu/core/metrics.py",
      "for c_tp, c_fp, c_fn in ((tn, fn, fp), (tp, fp, fn)):", "for c_tp, c_fp, c_fn in ((tn, fp, fn), (tp, fp, fn)):",
      equivalent="class 0's F1 is 2TN / (2TN + FP + FN): swapping its FP and FN changes no sum"),
    F("ftr-no-negatives-zero", "metrics", "odu/core/metrics.py",
      "return triggered / negatives if negatives else None", "return triggered / negatives if negatives else 0.0"),
    F("ftr-over-positives", "metrics", "odu/core/metrics.py",
      "negatives = [p for t, p in zip(y_true, y_pred) if not t]", "negatives = [p for t, p in zip(y_true, y_pred) if t]"),
    F("s2-error-rules-swapped", "metrics", "odu/core/metrics.py",
      "decided = [bool(h) for h in hits] if errors_as_misses else [h for h in hits if h is not None]", "decided = [h for h in hits if h is not None] if errors_as_misses else [bool(h) for h in hits]"),
    F("s2-undefined-as-zero", "metrics", "odu/core/metrics.py",
      "return sum(rates) / len(rates) if rates else None", "return sum(rates) / len(rates) if rates else 0.0"),
    F("s3-empty-as-zero", "metrics", "odu/core/metrics.py",
      "return sum(ious) / len(ious) if ious else None", "return sum(ious) / len(ious) if ious else 0.0"),
    F("s4-no-clamp", "metrics", "odu/core/metrics.py",
      "return max(0.0, 1 - sum(e for e, _ in pairs) / total)", "return 1 - sum(e for e, _ in pairs) / total"),
    F("s4-empty-reference-perfect", "metrics", "odu/core/metrics.py",
      "    if not total:\n        return None", "    if not total:\n        return 1.0"),
    F("s5-third-field-dropped", "metrics", "odu/core/metrics.py",
      "per_field = [sum(v) / len(v) for v in field_correct.values() if v]", "per_field = [sum(v) / len(v) for v in list(field_correct.values())[:2] if v]"),
    F("mean-undefined-as-zero", "metrics", "odu/core/metrics.py",
      "defined = [v for v in values if v is not None]", "defined = [v or 0.0 for v in values]"),
    F("avg-weights-not-renormalised", "metrics", "odu/core/metrics.py",
      "return sum(w * v for w, v in available.values()) / sum(w for w, _ in available.values())", "return sum(w * v for w, v in available.values())"),
    # --- transcript normalisation and edits (App A.3 Eq. 4)
    F("normalize-no-casefold", "text", "odu/core/text.py",
      'text = unicodedata.normalize("NFKC", text).casefold()', 'text = unicodedata.normalize("NFKC", text)'),
    F("normalize-nfc", "text", "odu/core/text.py",
      'text = unicodedata.normalize("NFKC", text).casefold()', 'text = unicodedata.normalize("NFC", text).casefold()'),
    F("apostrophe-splits-word", "text", "odu/core/text.py",
      'text = _APOSTROPHES.sub("", text)', 'text = _APOSTROPHES.sub(" ", text)'),
    F("symbols-kept", "text", "odu/core/text.py",
      'value = " " if unicodedata.category(ch)[0] in "PS" else ch', 'value = " " if unicodedata.category(ch)[0] in "P" else ch'),
    F("cjk-dominance-inclusive", "text", "odu/core/text.py",
      "cjk / (cjk + other) > CJK_DOMINANT_MIN", "cjk / (cjk + other) >= CJK_DOMINANT_MIN"),
    F("cjk-other-runs-ignored", "text", "odu/core/text.py",
      "other = len(_OTHER_RUN.findall(text))", "other = 0"),
    F("char-units-keep-spaces", "text", "odu/core/text.py",
      "return [c for c in normalized if not c.isspace()] if chars", "return list(normalized) if chars"),
    F("units-chosen-by-hypothesis", "text", "odu/core/text.py",
      "chars = is_cjk_dominant(ref_norm)", "chars = is_cjk_dominant(hyp_norm)"),
    F("edit-length-of-hypothesis", "text", "odu/core/text.py",
      "return Levenshtein.distance(ref_units, hyp_units), len(ref_units)", "return Levenshtein.distance(ref_units, hyp_units), len(hyp_units)"),
    # --- parsing model output (App A.1; docs/scoring.md, "Parsing rules")
    F("think-content-kept", "parse", "odu/core/parse.py",
      "pos = closed.end()", "pos = opened.end()"),
    F("unclosed-think-answer-kept", "parse", "odu/core/parse.py",
      "text = text[: unclosed.start()]", "text = text[unclosed.end() :]"),
    F("fences-kept", "parse", "odu/core/parse.py",
      'return _FENCE.sub(" ", text)', "return text"),
    F("first-object-wins", "parse", "odu/core/parse.py",
      'if "has_demand" in obj:', "if True:"),
    F("one-json-candidate", "parse", "odu/core/parse.py",
      "while start != -1 and tries < limits.MAX_JSON_CANDIDATES:", "while start != -1 and tries < 1:"),
    F("string-boolean-always-true", "parse", "odu/core/parse.py",
      'return value.strip().lower() == "true"', "return True"),
    F("negative-time-mirrored", "parse", "odu/core/parse.py",
      "        ms = 0\n", "        ms = -ms\n"),
    F("time-limit-inclusive", "parse", "odu/core/parse.py",
      "abs(value) >= limits.MAX_TIME_MS", "abs(value) > limits.MAX_TIME_MS"),
    F("reversed-span-collapsed", "parse", "odu/core/parse.py",
      "start, end = end, start", "end = start"),
    F("half-span-kept", "parse", "odu/core/parse.py",
      "if (start is None) != (end is None):", "if False:"),
    F("string-boolean-case-sensitive", "parse", "odu/core/parse.py",
      'value.strip().lower() in ("true", "false")', 'value.strip() in ("true", "false")'),
    F("context-object-dropped", "parse", "odu/core/parse.py",
      "raw = [raw]", "raw = []"),
    F("in-frame-read-for-audio-only", "parse", "odu/core/parse.py",
      "if not audio_only:", "if True:"),
    F("no-demand-with-segments-is-parse-error", "parse", "odu/core/parse.py",
      "return Prediction(False, issues=tuple(issues))\n", "return Prediction(False, issues=tuple(issues), parse_error=True)\n"),
    F("segments-not-capped", "parse", "odu/core/parse.py",
      "raw_segments = raw_segments[: limits.MAX_SEGMENTS]", "raw_segments = raw_segments"),
    F("text-cut-twice-as-long", "parse", "odu/core/parse.py",
      "value[: limits.MAX_TEXT_CHARS]", "value[: 2 * limits.MAX_TEXT_CHARS]"),
    # --- the scorer (odu/runs/scoring.py)
    F("m5-unmatched-segments-skipped", "scoring", "odu/runs/scoring.py",
      "== getattr(refs[m.reference], f) for m in matches]", "== getattr(refs[m.reference], f) for m in matches if m.merged is not None]"),
    F("m3-unmatched-segments-skipped", "scoring", "odu/runs/scoring.py",
      "s3([m.iou for m in matches])", "s3([m.iou for m in matches if m.matched])"),
    F("m2-unmatched-segments-skipped", "scoring", "odu/runs/scoring.py",
      "segment_hits.append([False] * points)", "segment_hits.append([])"),
    F("skipped-point-is-miss", "scoring", "odu/runs/scoring.py",
      'return None, f"judge gave no verdict for {qid}"', "return False, None"),
    F("errors-as-misses-in-headline-s2", "scoring", "odu/runs/scoring.py",
      "found = (s2(segment_hits), s2(segment_hits, errors_as_misses=True))", "found = (s2(segment_hits, errors_as_misses=True), s2(segment_hits, errors_as_misses=True))"),
    F("judge-errors-counted-per-point", "scoring", "odu/runs/scoring.py",
      "error_segments += errors > 0", "error_segments += errors"),
    F("unknown-prediction-ids-accepted", "scoring", "odu/runs/scoring.py",
      "    if unseen:\n", "    if False:\n"),
    F("verdict-count-unchecked", "scoring", "odu/runs/scoring.py",
      "if len(answered) != len(requests):", "if False:"),
    F("no-demand-prediction-matched", "scoring", "odu/runs/scoring.py",
      "prediction.segments if prediction.has_demand else ()", "prediction.segments",
      equivalent="a prediction with has_demand false never has segments (odu.core.parse and Prediction's users)"),
    # --- reading releases (odu/core/schema.py)
    F("inverted-span-accepted", "schema", "odu/core/schema.py",
      "if start < 0 or end < start:", "if start < 0:"),
    F("demand-segments-unchecked", "schema", "odu/core/schema.py",
      "if has_demand != bool(segs):", "if False:"),
    F("label-disagreement-accepted", "schema", "odu/core/schema.py",
      'if ann.has_demand != (label == "positive"):', "if False:"),
    F("duplicate-qid-accepted", "schema", "odu/core/schema.py",
      "if len({p.qid for p in points}) != len(points):", "if False:"),
    F("duplicate-scene-accepted", "schema", "odu/core/schema.py",
      "if scene.scene_id in seen:", "if False:"),
    F("scene-without-clips-accepted", "schema", "odu/core/schema.py",
      "if not clips:", "if False:"),
    F("av-in-frame-optional", "schema", "odu/core/schema.py",
      "elif not isinstance(in_frame, bool):", "elif False:"),
    F("annotation-language-ignored", "schema", "odu/core/schema.py",
      'lang = self.language if language == "scene" else language', "lang = self.language"),
    F("duplicate-prediction-accepted", "schema", "odu/core/schema.py",
      "if sid in outputs:", "if False:"),
    F("unknown-modality-accepted", "schema", "odu/core/schema.py",
      "if modality not in MODALITIES:", "if False:"),
    # --- named choices (odu/core/constants.py; docs/scoring.md, "Scoring choices")
    F("avg-weight-m2", "constants", "odu/core/constants.py",
      '"m2": 0.60', '"m2": 0.50'),
    F("transcript-match-min", "constants", "odu/core/constants.py",
      "TRANSCRIPT_MATCH_MIN = 0.5", "TRANSCRIPT_MATCH_MIN = 0.4"),
    F("iou-match-min", "constants", "odu/core/constants.py",
      "IOU_MATCH_MIN = 0.2", "IOU_MATCH_MIN = 0.1"),
    F("containment-text-min", "constants", "odu/core/constants.py",
      "CONTAINMENT_TEXT_MIN = 0.8", "CONTAINMENT_TEXT_MIN = 0.6"),
    F("containment-min-chars", "constants", "odu/core/constants.py",
      "CONTAINMENT_MIN_CHARS = 4", "CONTAINMENT_MIN_CHARS = 1"),
    F("containment-span-min", "constants", "odu/core/constants.py",
      "CONTAINMENT_SPAN_MIN = 0.5", "CONTAINMENT_SPAN_MIN = 0.3"),
    F("cjk-dominant-min", "constants", "odu/core/constants.py",
      "CJK_DOMINANT_MIN = 0.5", "CJK_DOMINANT_MIN = 0.3"),
    F("max-segments", "constants", "odu/core/constants.py",
      "MAX_SEGMENTS = 32", "MAX_SEGMENTS = 8"),
    F("max-text-chars", "constants", "odu/core/constants.py",
      "MAX_TEXT_CHARS = 4_000", "MAX_TEXT_CHARS = 400"),
    F("candidate-separator", "constants", "odu/core/constants.py",
      'CANDIDATE_SEPARATOR = " | "', 'CANDIDATE_SEPARATOR = " / "'),
    F("lexical-hit-min", "constants", "odu/core/constants.py",
      "LEXICAL_HIT_MIN = 0.5", "LEXICAL_HIT_MIN = 0.4"),
    # --- tables and reports
    F("percent-not-scaled", "tables", "odu/core/tables.py",
      'f"{100 * value:.1f}"', 'f"{value:.1f}"'),
    F("table3-columns-m3-m4-swapped", "tables", "odu/core/tables.py",
      '("avg", "m1", "m2", "m3", "m4", "m5", "ftr")', '("avg", "m1", "m2", "m4", "m3", "m5", "ftr")'),
    F("bootstrap-resamples", "report", "odu/report/bootstrap.py",
      "BOOTSTRAP_RESAMPLES = 10_000", "BOOTSTRAP_RESAMPLES = 1_000"),
    F("bootstrap-percentiles", "report", "odu/report/bootstrap.py",
      "BOOTSTRAP_PERCENTILES: tuple[float, float] = (2.5, 97.5)", "BOOTSTRAP_PERCENTILES: tuple[float, float] = (5.0, 95.0)"),
    F("bootstrap-last-scene-never-drawn", "report", "odu/report/bootstrap.py",
      "draws = rng.integers(0, units, size=(rows, units), dtype=dtype)", "draws = rng.integers(0, max(1, units - 1), size=(rows, units), dtype=dtype)"),
    F("interval-nan-not-ignored", "report", "odu/report/bootstrap.py",
      "np.nanpercentile(flat[:, defined], percentiles, axis=0)", "np.percentile(flat[:, defined], percentiles, axis=0)"),
    F("weighted-macro-f1-absent-class-counted", "report", "odu/report/weighted.py",
      "classes += denom > 0", "classes += 1"),
    F("weighted-avg-not-renormalised", "report", "odu/report/weighted.py",
      "weights = np.array(list(METRIC_WEIGHTS.values()))[:, None] * ~np.isnan(stacked)", "weights = np.array(list(METRIC_WEIGHTS.values()))[:, None] * np.ones_like(stacked)"),
    F("bootstrap-rows-in-run-order", "report", "odu/report/headline.py",
      'rows = sorted(rows, key=lambda r: r["scene_id"])', "rows = list(rows)"),
    F("incomplete-run-keeps-avg", "report", "odu/report/headline.py",
      "            if system.incomplete:  # no Avg rests on an incomplete run\n                metrics", "            if False:\n                metrics"),
    # --- judge: requests, cache, verdicts
    F("cache-key-without-candidate", "judge", "odu/judge/cache.py",
      '"candidate": candidate,', '"candidate": "",'),
    F("cache-key-without-tiers", "judge", "odu/judge/cache.py",
      "[[k.qid, list(k.tiers), k.point] for k in key_points]", "[[k.qid, k.point] for k in key_points]"),
    F("cache-key-without-settings", "judge", "odu/judge/cache.py",
      '"settings": dict(settings or {}),', '"settings": {},'),
    F("cache-key-without-model", "judge", "odu/judge/cache.py",
      '"model": model,', '"model": "",'),
    F("cache-last-verdict-wins", "judge", "odu/judge/cache.py",
      "INSERT OR IGNORE", "INSERT OR REPLACE"),
    F("verdict-unknown-qid-accepted", "judge", "odu/judge/prompt.py",
      "if qid not in expected:", "if False:"),
    F("verdict-repeated-qid-accepted", "judge", "odu/judge/prompt.py",
      "if qid in hits:", "if False:"),
    F("verdict-missing-qid-accepted", "judge", "odu/judge/prompt.py",
      "    if missing:\n        raise VerdictParseError", "    if False:\n        raise VerdictParseError"),
    F("verdict-hit-any-value", "judge", "odu/judge/prompt.py",
      "if not isinstance(hit, bool):", "if hit is None:"),
    F("candidate-context-type-dropped", "judge", "odu/judge/base.py",
      'parts.append(f"{c.type}: {description}" if c.type else description)', "parts.append(description)"),
    F("lexical-share-of-candidate", "judge", "odu/judge/lexical.py",
      "share = len(point & candidate) / len(point) if point else 0.0", "share = len(point & candidate) / len(candidate) if candidate else 0.0"),
    F("lexical-threshold-strict", "judge", "odu/judge/lexical.py",
      "hits[k.qid] = share >= LEXICAL_HIT_MIN", "hits[k.qid] = share > LEXICAL_HIT_MIN"),
    F("lexical-judge-batched", "judge", "odu/judge/lexical.py",
      "    streams = True\n", "    streams = False\n",
      equivalent="the scorer gives the same rows whether a judge streams or gets one batch (only memory differs)"),
    F("reasks-not-counted", "judge", "odu/judge/openai_judge.py",
      "self._stats.reasks += 1", "pass"),
    # --- transport: the one client's retry policy (odu/transport/openai_client.py)
    F("retry-after-ms-ignored", "transport", "odu/transport/openai_client.py",
      'headers.get("retry-after-ms")', 'headers.get("x-retry-after-ms")'),
    F("failed-verdicts-cached", "transport", "odu/judge/openai_judge.py",
      "if verdict.error is None and self.cache is not None:", "if self.cache is not None:"),
    F("404-not-fatal", "transport", "odu/transport/openai_client.py",
      "FATAL_STATUSES = frozenset({401, 403, 404})", "FATAL_STATUSES = frozenset({401, 403})"),
    F("429-not-retried", "transport", "odu/transport/openai_client.py",
      "RETRY_STATUSES = frozenset({408, 409, 429})", "RETRY_STATUSES = frozenset({408, 409})"),
    F("500-not-retried", "transport", "odu/transport/openai_client.py",
      "if status >= 500 or status in RETRY_STATUSES:", "if status > 500 or status in RETRY_STATUSES:"),
    F("one-attempt-fewer", "transport", "odu/transport/openai_client.py",
      "    for attempt in range(retries + 1):\n        try:", "    for attempt in range(retries):\n        try:"),
    F("retry-after-not-capped", "transport", "odu/transport/openai_client.py",
      "await asyncio.sleep(min(wait, cap))", "await asyncio.sleep(wait)"),
    F("backoff-not-exponential", "transport", "odu/transport/openai_client.py",
      "wait = min(cap, first * factor**attempt) * random.uniform(0.5, 1.0)", "wait = first"),
    F("retries-not-counted", "transport", "odu/transport/openai_client.py",
      "self.stats.retries += 1", "pass"),
    F("undecodable-body-not-retried", "transport", "odu/transport/openai_client.py",
      "openai.APIResponseValidationError, ValueError", "openai.APIResponseValidationError"),
    F("scrub-disabled", "transport", "odu/transport/openai_client.py",
      "        return scrub_text(text)\n", "        return text\n"),
    F("public-url-keeps-credentials", "transport", "odu/transport/openai_client.py",
      "return scrub_urls(self.base_url) if self.base_url is not None else None", "return self.base_url"),
    F("servers-reason-dropped", "transport", "odu/transport/openai_client.py",
      "status_failure(exc.status_code, sdk_status_message(exc.message, exc.body), exc.response)",
      "status_failure(exc.status_code, exc.message, exc.response)"),
    F("given-up-call-keeps-the-sdk-text", "transport", "odu/transport/openai_client.py",
      "after {attempt + 1} attempts: {verdict}", "after {attempt + 1} attempts: {failure}"),
    F("servers-reason-uncut", "transport", "odu/transport/openai_client.py",
      "    if len(reason) > MAX_REASON_CHARS:\n", "    if False:\n"),
    # === issue 23: the parts added since the first check, faults written from what each promises ===
    # --- credential scrubbing (odu/io/scrub.py and where secrets are registered and scrubbed)
    F("harmless-names-include-sig", "scrub", "odu/io/scrub.py",
      'frozenset({"api_version"})', 'frozenset({"api_version", "sig"})'),
    F("harmless-names-not-normalised", "scrub", "odu/io/scrub.py",
      'return name.strip().lower().replace("-", "_") in HARMLESS_QUERY_PARAMS', "return name in HARMLESS_QUERY_PARAMS"),
    F("fragment-kept", "scrub", "odu/io/scrub.py",
      'rest += "#" + (REDACTED if fragment else "")', 'rest += "#" + fragment'),
    F("bare-query-token-kept", "scrub", "odu/io/scrub.py",
      'f"{name}={REDACTED}" if eq else REDACTED)', 'f"{name}={REDACTED}" if eq else piece)'),
    F("url-runs-past-the-replica-separator", "scrub", "odu/io/scrub.py",
      """_URL = re.compile(r\"\"\"[A-Za-z][A-Za-z0-9+.\\-]*://[^\\s"'<>`|\\\\]+\"\"\")""",
      """_URL = re.compile(r\"\"\"[A-Za-z][A-Za-z0-9+.\\-]*://[^\\s"'<>`\\\\]+\"\"\")"""),
    F("password-with-at-split-at-first-at", "scrub", "odu/io/scrub.py",
      'userinfo, _, host = authority.rpartition("@")', 'userinfo, _, host = authority.partition("@")'),
    F("ambiguous-user-info-kept", "scrub", "odu/io/scrub.py",
      "        return scheme + sep, userinfo, True, after\n", "        return scheme + sep, None, False, rest\n"),
    F("guessed-user-info-unmarked", "scrub", "odu/io/scrub.py",
      'head = scheme + (f"{REDACTED}@" if guessed else "")', "head = scheme"),
    F("url-scrub-skips-known-secrets", "scrub", "odu/io/scrub.py",
      "    return scrub_secrets(_by_rule(url))", "    return _by_rule(url)"),
    F("known-secret-left-in-text", "scrub", "odu/io/scrub.py",
      "        if secret in text:\n", "        if secret == text:\n"),
    F("shortest-secret-first", "scrub", "odu/io/scrub.py",
      "_secrets.sort(key=len, reverse=True)", "_secrets.sort(key=len)"),
    F("basic-auth-header-not-registered", "scrub", "odu/io/scrub.py",
      "            found.append(base64.b64encode(plain.encode()).decode())\n", ""),
    F("decoded-password-not-registered", "scrub", "odu/io/scrub.py",
      'found += [userinfo, userinfo.partition(":")[2], plain.partition(":")[2]]', 'found += [userinfo, userinfo.partition(":")[2]]'),
    F("fragment-values-not-registered", "scrub", "odu/io/scrub.py",
      "for part in (rest.partition(\"?\")[2], fragment):", "for part in (rest.partition(\"?\")[2],):"),
    F("mapping-keys-not-scrubbed", "scrub", "odu/io/scrub.py",
      "(_URL.sub(lambda m: _by_rule(m.group(0)), k) if urls and isinstance(k, str) else k)", "k"),
    F("lists-not-scrubbed", "scrub", "odu/io/scrub.py",
      "return [scrub_value(v, urls) for v in value]", "return list(value)"),
    F("credential-suffixes-pass", "scrub", "odu/io/scrub.py",
      "words[-1] in CREDENTIAL_WORDS or words[0]", "words[0]"),
    F("nested-credentials-pass", "scrub", "odu/io/scrub.py",
      '            refuse_credentials(value, f"{where}.{name}")\n', "            pass\n"),
    F("console-not-scrubbed", "scrub", "odu/io/scrub.py",
      "self._stream.write(scrub_text(text))", "self._stream.write(text)"),
    F("scrub-file-writes-through-link", "scrub", "odu/io/scrub.py",
      'replace_file(path, scrubbed.encode("utf-8", errors="surrogateescape"))', 'path.write_text(scrubbed, encoding="utf-8", errors="surrogateescape")'),
    F("check-url-takes-an-ambiguous-password", "scrub", "odu/io/scrub.py",
      "    elif guessed:\n", "    elif False:\n"),
    F("check-url-takes-a-port-of-letters", "scrub", "odu/io/scrub.py",
      "            parts.port  # noqa: B018", "            # parts.port"),
    F("files-keep-known-secrets", "scrub", "odu/io/jsonio.py",
      "return utf8(scrub_secrets(text))", "return utf8(text)"),
    F("key-variable-name-any", "scrub", "odu/transport/openai_client.py",
      'KEY_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")', 'KEY_ENV_NAME = re.compile(r"[A-Za-z0-9_-]+")'),
    F("api-key-not-registered", "scrub", "odu/transport/openai_client.py",
      "if key and not register_secret(key):", "if key and not key:"),
    F("url-credentials-not-registered", "scrub", "odu/transport/openai_client.py",
      "for secret in url_credentials(base_url):", "for secret in url_credentials(None):"),
    F("model-text-keeps-the-key", "scrub", "odu/models/remote.py",
      "generation = replace(generation, text=scrub_secrets(generation.text))", "generation = replace(generation, text=generation.text)"),
    F("judge-text-keeps-the-key", "scrub", "odu/judge/openai_judge.py",
      "return scrub_secrets(text) if text else text", "return text"),
    F("backend-takes-a-key-argument", "scrub", "odu/models/__init__.py",
      '    refuse_credentials(options, f"model {name!r}")', "    pass"),
    F("judge-body-takes-a-key", "scrub", "odu/judge/openai_judge.py",
      """        refuse_credentials(dict(extra_body or {}), "the judge's extra request body")\n""", ""),
    # --- release containment (odu/data/release.py, odu/data/hub.py, odu/runs/outdir.py)
    F("containment-by-string-prefix", "containment", "odu/data/release.py",
      "return path == root or root in path.parents", "return str(path).startswith(str(root))"),
    F("absolute-media-path-taken", "containment", "odu/data/release.py",
      "if rel.is_absolute() or PureWindowsPath(src).drive or PureWindowsPath(src).root:", "if PureWindowsPath(src).drive:"),
    F("dot-dot-not-checked", "containment", "odu/data/release.py",
      'if ".." in rel.parts and not _inside(', 'if False and not _inside('),
    F("links-not-resolved", "containment", "odu/data/release.py",
      "real_root, real = _resolved(link_root or media_root, src), _resolved(path, src)", "real_root, real = (link_root or media_root).absolute(), path.absolute()"),
    F("card-containment-by-string-prefix", "containment", "odu/data/hub.py",
      "if real is None or not (real == real_root or real_root in real.parents):", "if real is None or not str(real).startswith(str(real_root)):"),
    F("card-url-taken", "containment", "odu/data/hub.py",
      'real = Path(os.path.realpath(text)) if "://" not in text else None', 'real = Path(os.path.realpath(text)) if "://" not in text else real_root'),
    F("card-links-not-resolved", "containment", "odu/data/hub.py",
      'real = Path(os.path.realpath(text)) if "://" not in text else None', 'real = Path(os.path.abspath(text)) if "://" not in text else None'),
    F("card-not-checked", "containment", "odu/data/hub.py",
      "    check_data_files(source, builder.config.data_files)\n", ""),
    F("out-may-hold-an-input", "containment", "odu/runs/outdir.py",
      "        elif target in source.parents:\n", "        elif False:\n"),
    F("out-may-lie-inside-an-input", "containment", "odu/runs/outdir.py",
      "        elif source in target.parents:\n", "        elif False:\n"),
    F("out-compared-without-links", "containment", "odu/runs/outdir.py",
      "    return Path(os.path.realpath(path))", "    return Path(os.path.abspath(path))"),
    F("prepare-media-root-not-an-input", "containment", "odu/data/prepare.py",
      "inputs = [records_path, media_root if media_root is not None else records_path.parent]", "inputs = [records_path]"),
    # --- shard checks (odu/runs/shards.py, odu/cli/merge.py)
    F("shard-index-off-by-one", "shards", "odu/runs/shards.py",
      '.hexdigest(), 16) % count + 1', '.hexdigest(), 16) % count'),
    F("shard-zero-taken", "shards", "odu/runs/shards.py",
      "if not sep or n < 1 or not 1 <= k <= n:", "if not sep or n < 1 or not 0 <= k <= n:"),
    F("missing-shard-taken", "shards", "odu/runs/shards.py",
      "    if missing:\n        raise ShardError", "    if False:\n        raise ShardError"),
    F("shard-given-twice-taken", "shards", "odu/runs/shards.py",
      "        if s.index in seen:\n", "        if False:\n"),
    F("different-splits-taken", "shards", "odu/runs/shards.py",
      "    if len(counts) > 1:\n", "    if len(counts) > 2:\n"),
    F("scene-in-wrong-shard-taken", "shards", "odu/runs/shards.py",
      "if shard_index(sid, count) != s.index:", "if False:"),
    F("scene-in-two-shards-taken", "shards", "odu/runs/shards.py",
      "if (task, sid) in owner:", "if False:"),
    F("lost-scene-taken", "shards", "odu/runs/shards.py",
      "if said != len(rows_of[s.path]):", "if said is None:"),
    F("uncovered-dataset-taken", "shards", "odu/runs/shards.py",
      "        if found != total:\n", "        if found > total:\n"),
    F("model-args-may-differ", "shards", "odu/runs/shards.py",
      '    "model.model_args",\n', ""),
    F("judge-counters-compared", "shards", "odu/runs/shards.py",
      "return {k: v for k, v in judge.items() if k not in _JUDGE_COUNTERS}", "return dict(judge)"),
    F("a-bool-counts-as-an-int", "shards", "odu/runs/shards.py",
      "if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):", "if not isinstance(value, kind):"),
    F("empty-filtered-resps-taken", "shards", "odu/runs/shards.py",
      "    if not responses:\n", "    if False:\n"),
    F("samples-and-scenes-may-differ", "shards", "odu/runs/shards.py",
      'if held != {row["scene_id"] for row in run.scenes}:', "if False:"),
    F("judge-counters-not-summed", "shards", "odu/runs/shards.py",
      "total = sum(b.get(key, 0) for b in blocks)", "total = blocks[0].get(key, 0)"),
    F("merged-samples-in-shard-order", "shards", "odu/runs/shards.py",
      "out[task] = sorted(rows, key=_row)", "out[task] = list(rows)"),
    F("merged-scene-count-of-one-shard", "shards", "odu/runs/shards.py",
      'n = sum(int((d or {}).get(key, {}).get("n_scenes") or 0) for d in per_shard)',
      'n = int((per_shard[0] or {}).get(key, {}).get("n_scenes") or 0)'),
    F("merged-sample-len-of-one-shard", "shards", "odu/cli/merge.py",
      '            tasks[task]["sample_len"] = len(samples[task])\n', '            pass\n'),
    # --- dry-run arithmetic (odu/runs/estimate.py)
    F("one-request-whatever-the-models", "estimate", "odu/runs/estimate.py",
      "        out.model_requests += models\n", "        out.model_requests += 1\n"),
    F("text-tokens-per-model-dropped", "estimate", "odu/runs/estimate.py",
      "tally.input_tokens += (text + media) * models", "tally.input_tokens += text + media * models"),
    F("text-only-sends-audio", "estimate", "odu/runs/estimate.py",
      "media = seconds * TRANSCRIPT_TOKENS_PER_S if text_only else seconds * r.audio_per_s", "media = seconds * r.audio_per_s"),
    F("audio-only-gets-frames", "estimate", "odu/runs/estimate.py",
      "if scene.modality == AUDIO_VISUAL and not text_only:", "if not text_only:"),
    F("text-only-gets-frames", "estimate", "odu/runs/estimate.py",
      "if scene.modality == AUDIO_VISUAL and not text_only:", "if scene.modality == AUDIO_VISUAL:"),
    F("frames-rounded-down", "estimate", "odu/runs/estimate.py",
      "frames = math.ceil(duration * rates.frames_per_s)", "frames = int(duration * rates.frames_per_s)"),
    F("frames-not-capped", "estimate", "odu/runs/estimate.py",
      "return min(frames, rates.max_frames) if rates.max_frames else frames", "return frames"),
    F("output-tokens-of-one-model", "estimate", "odu/runs/estimate.py",
      "tally.output_tokens += MODEL_OUTPUT_TOKENS * models", "tally.output_tokens += MODEL_OUTPUT_TOKENS"),
    F("judge-asked-again-for-a-repeated-scene", "estimate", "odu/runs/estimate.py",
      "if judge_runs and scene.scene_id not in judged:", "if judge_runs:"),
    F("judge-of-one-model", "estimate", "odu/runs/estimate.py",
      "out.judge.requests += judge_runs", "out.judge.requests += 1"),
    F("negatives-judged", "estimate", "odu/runs/estimate.py",
      "    if not scene.is_positive:\n        return []\n", "",
      equivalent="a negative scene has no reference segment (the schema refuses has_demand false with segments): nothing to judge either way"),
    F("segments-without-points-judged", "estimate", "odu/runs/estimate.py",
      "        if segment.key_points:", "        if True:"),
    F("cost-per-thousand", "estimate", "odu/runs/estimate.py",
      "self.output_tokens * (price_out or 0.0)) / 1e6", "self.output_tokens * (price_out or 0.0)) / 1e3"),
    F("cost-with-one-price-missing-is-none", "estimate", "odu/runs/estimate.py",
      "if price_in is None and price_out is None:", "if price_in is None or price_out is None:"),
    F("judge-price-without-default", "estimate", "odu/runs/estimate.py",
      'jin, jout = judge_prices.get("judge_price_in", price_in), judge_prices.get("judge_price_out", price_out)',
      'jin, jout = judge_prices.get("judge_price_in"), judge_prices.get("judge_price_out")'),
    F("audio-visual-seconds-as-audio", "estimate", "odu/runs/estimate.py",
      "        elif scene.modality == AUDIO_VISUAL:\n            out.video_s += seconds",
      "        elif scene.modality == AUDIO_VISUAL:\n            out.audio_s += seconds"),
    F("dry-run-counts-baselines", "estimate", "odu/cli/eval.py",
      "        models=len(remote),", "        models=len(models),"),
    F("dry-run-judges-remote-models-only", "estimate", "odu/cli/eval.py",
      "judge_runs=len(models) if llm_judge else 0", "judge_runs=len(remote) if llm_judge else 0"),
    F("dry-run-ignores-limit", "estimate", "odu/cli/eval.py",
      "docs += list(task.eval_docs)[: args.limit] if args.limit else list(task.eval_docs)", "docs += list(task.eval_docs)"),
    # --- run folders (odu/runs/outdir.py, odu/runs/contract.py)
    F("out-link-followed", "rundirs", "odu/runs/outdir.py",
      "    if target.is_symlink():\n", "    if False:\n"),
    F("overwrite-not-needed", "rundirs", "odu/runs/outdir.py",
      "    if not overwrite:\n", "    if False:\n"),
    F("foreign-files-replaced", "rundirs", "odu/runs/outdir.py",
      "    if foreign:\n", "    if False:\n"),
    F("live-writers-leftovers-removed", "rundirs", "odu/runs/outdir.py",
      '            if not _alive(int(match["pid"])):', "            if True:"),
    F("swap-without-a-second-look", "rundirs", "odu/runs/outdir.py",
      "    if check_target(target, kind, option=option):\n        aside = _moved_aside(target)",
      "    if target.exists():\n        aside = _moved_aside(target)"),
    F("work-folder-kept-on-failure", "rundirs", "odu/runs/outdir.py",
      "    finally:\n        shutil.rmtree(work, ignore_errors=True)", "    finally:\n        pass"),
    F("clear-without-a-second-look", "rundirs", "odu/runs/outdir.py",
      "    if check_target(target, kind, option=option):\n        shutil.rmtree(_moved_aside(target)",
      "    if target.exists():\n        shutil.rmtree(_moved_aside(target)"),
    F("run-written-meanwhile-replaced", "rundirs", "odu/runs/contract.py",
      "if not self.overwrite and target.is_dir() and any(target.iterdir()):", "if False:"),
    # --- output folders: only what the command wrote, as written (odu/runs/outdir.py, odu/runs/contract.py; issue 30 item 3)
    F("run-without-summary-is-all-its-own", "outfolders", "odu/runs/contract.py",
      "        if listed is None:\n            return [e.name for e in sorted(folder.iterdir())]\n        return unwritten(folder, listed, manifest=SUMMARY_FILE)",
      "        if listed is None:\n            return []\n        return unwritten(folder, listed, manifest=SUMMARY_FILE)"),
    F("summary-vouches-for-any-name", "outfolders", "odu/runs/contract.py",
      'if "/" not in name and is_run_file(name) and isinstance(entry, dict)', 'if "/" not in name and isinstance(entry, dict)'),
    F("summary-without-run-id-trusted", "outfolders", "odu/runs/contract.py",
      "if summary is None or not isinstance(summary.get(RUN_ID), str):", "if summary is None:"),
    F("listed-file-hash-unchecked", "outfolders", "odu/runs/outdir.py",
      "(rel != manifest and files.get(rel) != sha256_file(entry))", "(rel != manifest and rel not in files)"),
    F("link-in-an-output-is-its-own", "outfolders", "odu/runs/outdir.py",
      "elif not _regular(entry) or (rel != manifest and", "elif (rel != manifest and"),
    F("unlisted-folder-is-its-own", "outfolders", "odu/runs/outdir.py",
      "            if _folder(entry) and rel in folders:\n", "            if _folder(entry):\n"),
    F("manifest-of-another-kind-trusted", "outfolders", "odu/runs/outdir.py",
      'or held.get("what") != self.what:', ':'),
    F("manifest-hash-not-checked-as-sha256", "outfolders", "odu/runs/outdir.py",
      "if not isinstance(files, dict) or not all(is_sha256(h) for h in files.values()):", "if not isinstance(files, dict):"),
    F("no-manifest-all-its-own", "outfolders", "odu/runs/outdir.py",
      "        if listed is None:\n            return [e.name for e in sorted(folder.iterdir())]", "        if listed is None:\n            return []"),
    F("output-not-sealed", "outfolders", "odu/runs/outdir.py",
      "        kind.seal(work)\n", ""),
    # --- the clip server, spooled clips and the hearing check (issue 30 item 7)
    F("served-outside-the-cache", "clipserve", "odu/models/clip_server.py",
      "            if self.server.root not in real.parents:\n", "            if False:\n"),
    F("served-without-resolving-links", "clipserve", "odu/models/clip_server.py",
      "real = Path(os.path.realpath(entry[0]))", "real = Path(os.path.abspath(entry[0]))"),
    F("spooled-under-any-name", "clipserve", "odu/models/clips.py",
      "    if not is_sha256(sha256):  # the file's name: never a path such as ../../x\n", "    if False:\n"),
    F("link-in-the-cache-kept", "clipserve", "odu/models/clips.py",
      "    if not path.is_file() or path.is_symlink():\n", "    if not path.is_file():\n"),
    F("negative-token-count-taken", "clipserve", "odu/models/hearing.py",
      "if value is not None and (type(value) is not int or value < 0):", "if value is not None and type(value) is not int:"),
    F("failed-probe-escapes", "clipserve", "odu/models/openai_omni.py",
      "        except CallFailedError as exc:  # one line", "        except ZeroDivisionError as exc:  # one line"),
    # --- scenes paired only when the runs scored the same content (issue 30 item 8)
    F("content-hashes-not-recorded", "pairing", "odu/runs/scoring.py",
      '        **dict(zip(("scene_sha256", "reference_sha256"), content_hashes(scene, language))),\n', ""),
    F("scene-hash-not-compared", "pairing", "odu/report/runs.py",
      '("scene_sha256", "its clips, replies or labels differ", True),', '("scene_sha256", "its clips, replies or labels differ", False),'),
    F("reference-hash-not-compared", "pairing", "odu/report/runs.py",
      'f"its {language} reference differs", language == first_language),', 'f"its {language} reference differs", False),'),
    F("references-of-two-languages-compared", "pairing", "odu/report/runs.py",
      'f"its {language} reference differs", language == first_language),', 'f"its {language} reference differs", True),'),
    F("reference-language-of-the-scene-always", "pairing", "odu/report/runs.py",
      'return str(row.get("language")) if chosen in (None, "", "scene") else str(chosen)', 'return str(row.get("language"))'),
    # --- lmms-eval hooks on hostile docs, items and samples (issue 30 item 9)
    F("doc-unchecked", "lmmshooks", "odu/harness/tasks.py",
      "    check_doc(doc)\n    source = doc_asr(doc) if with_asr else None", "    source = doc_asr(doc) if with_asr else None"),
    F("doc-hash-any-text", "lmmshooks", "odu/harness/tasks.py",
      'is_sha256(clip.get("sha256"))),', 'isinstance(clip.get("sha256"), str)),'),
    F("locator-unchecked", "lmmshooks", "odu/harness/lmms.py",
      "    if not request.text_only:\n        check_doc(doc, media=True)\n", ""),
    F("negative-row-a-locator", "lmmshooks", "odu/models/clips.py",
      '        or loc["row"] < 0\n', ""),
    F("aggregation-trusts-its-items", "lmmshooks", "odu/harness/lmms.py",
      "key = tuple(_item_key(n, item) for n, item in enumerate(items, 1))", 'key = tuple((i["scene_id"], i["output_sha256"]) for i in items)'),
    F("surrogate-hashed-raw", "lmmshooks", "odu/harness/lmms.py",
      "digest = hashlib.sha256(encode(output)).hexdigest()", 'digest = hashlib.sha256(output.encode("utf-8", "surrogatepass")).hexdigest()'),
    F("sample-without-answer-taken", "lmmshooks", "odu/harness/lmms.py",
      '    if "filtered_resps" not in sample:\n', "    if False:\n"),
    # --- a prepared folder's rows cached by its shards' content (issue 30 item 10)
    F("folder-cached-by-name", "contentcache", "odu/data/hub.py",
      "    if Path(source).is_dir():  # datasets keys", "    if False:  # datasets keys"),
    F("key-on-names-only", "contentcache", "odu/data/hub.py",
      "\\0{file_sha256(Path(file))}\\n", "\\n"),
    F("memo-ignores-change-time", "contentcache", "odu/data/hub.py",
      "\\0{info.st_mtime_ns}\\0{info.st_ctime_ns}", "\\0{info.st_mtime_ns}"),
    # --- the server preflight (odu/transport/server_check.py)
    F("refusal-taken-as-no-model-list", "preflight", "odu/transport/server_check.py",
      "NO_MODEL_LIST = frozenset({404, 405, 501})", "NO_MODEL_LIST = frozenset({401, 403, 404, 405, 501})"),
    F("model-listed-by-substring", "preflight", "odu/transport/server_check.py",
      'if not any(i == client.model or i.removeprefix("models/") == client.model for i in ids):', "if not any(client.model in i for i in ids):"),
    F("first-replica-only", "preflight", "odu/transport/server_check.py",
      "    for url in urls:\n", "    for url in urls[:1]:\n"),
    F("probe-error-ignored", "preflight", "odu/transport/server_check.py",
      "        if error:\n", "        if False:\n"),
    F("probe-refusal-escapes", "preflight", "odu/transport/server_check.py",
      "except (CallFailedError, ServerUnavailableError) as exc:", "except CallFailedError as exc:"),
    F("preflight-counted-in-stats", "preflight", "odu/transport/server_check.py",
      "        vars(client.stats).update(saved[2])\n", "        pass\n"),
    F("preflight-retries", "preflight", "odu/transport/server_check.py",
      "client.timeout, client.retries = PREFLIGHT_TIMEOUT_S, 0", "client.timeout, client.retries = PREFLIGHT_TIMEOUT_S, client.retries"),
    F("probe-asks-a-long-answer", "preflight", "odu/transport/server_check.py",
      "PROBE_MAX_TOKENS = 8", "PROBE_MAX_TOKENS = 0"),
    F("replica-not-named", "preflight", "odu/transport/server_check.py",
      """raise PreflightError(f"replica {scrub_url(url or '')}: {exc}" if len(urls) > 1 else str(exc)) from None""", "raise PreflightError(str(exc)) from None"),
    F("model-checked-before-judge", "preflight", "odu/harness/models.py",
      "    judge = task_judge()\n    try:\n        check_judge(judge)\n    finally:\n        judge.close()\n    check_model(backend)",
      "    check_model(backend)\n    judge = task_judge()\n    try:\n        check_judge(judge)\n    finally:\n        judge.close()"),
    F("preflight-deadline-ignored", "preflight", "odu/transport/server_check.py",
      "        await asyncio.wait_for(_check(client, probe), PREFLIGHT_TIMEOUT_S)", "        await _check(client, probe)"),
    # --- replica choice (odu/transport/openai_client.py)
    F("busiest-replica-chosen", "replicas", "odu/transport/openai_client.py",
      "index = min(ready, key=lambda i: (self.in_flight[i], self._chosen[i]))", "index = max(ready, key=lambda i: (self.in_flight[i], self._chosen[i]))"),
    F("most-recently-chosen-on-a-tie", "replicas", "odu/transport/openai_client.py",
      "index = min(ready, key=lambda i: (self.in_flight[i], self._chosen[i]))", "index = min(ready, key=lambda i: (self.in_flight[i], -self._chosen[i]))"),
    F("failed-replica-does-not-rest", "replicas", "odu/transport/openai_client.py",
      "self._rest_until[index] = time.monotonic() + min(max(self.cooldown, rest or 0.0), 10 * self.cooldown)",
      "self._rest_until[index] = time.monotonic()"),
    F("rest-not-capped", "replicas", "odu/transport/openai_client.py",
      "min(max(self.cooldown, rest or 0.0), 10 * self.cooldown)", "max(self.cooldown, rest or 0.0)"),
    F("retry-after-not-rested", "replicas", "odu/transport/openai_client.py",
      "min(max(self.cooldown, rest or 0.0), 10 * self.cooldown)", "self.cooldown"),
    F("all-resting-first-replica", "replicas", "odu/transport/openai_client.py",
      "ready = self._ready() or [min(range(len(self)), key=self._rest_until.__getitem__)]", "ready = self._ready() or [0]"),
    F("ready-elsewhere-with-one-replica", "replicas", "odu/transport/openai_client.py",
      "return len(self) > 1 and bool(self._ready())", "return bool(self._ready())"),
    F("in-flight-never-released", "replicas", "odu/transport/openai_client.py",
      "        self.in_flight[index] -= 1\n", "        pass\n"),
    F("any-failure-rests-the-replica", "replicas", "odu/transport/openai_client.py",
      "            if isinstance(verdict, TransientError):\n                self.replicas.fail", "            if verdict is not None or True:\n                self.replicas.fail"),
    F("retry-waits-with-a-replica-ready", "replicas", "odu/transport/openai_client.py",
      "wait = 0.0 if ready_elsewhere() else retry_after(failure)", "wait = retry_after(failure)"),
    F("empty-replica-taken", "replicas", "odu/transport/openai_client.py",
      "    if not all(urls):\n", "    if not any(urls):\n"),
    # --- the viewer's escaping (odu/report/view/assets)
    F("viewer-text-as-markup", "viewer", "odu/report/view/assets/common.js",
      "node.append(child instanceof Node ? child : document.createTextNode(String(child)));",
      "if (child instanceof Node) node.append(child); else node.insertAdjacentHTML(\"beforeend\", String(child));"),
    F("dataset-line-as-markup", "viewer", "odu/report/view/assets/index.js",
      'document.getElementById("dataset").textContent =', 'document.getElementById("dataset").innerHTML ='),
    F("scene-id-as-markup", "viewer", "odu/report/view/assets/scene.js",
      'document.getElementById("scene-id").textContent = scene.id;', 'document.getElementById("scene-id").innerHTML = scene.id;'),
    F("scene-link-not-encoded", "viewer", "odu/report/view/assets/common.js",
      'ODU.sceneHref = (id) => "scene.html#" + encodeURIComponent(id);', 'ODU.sceneHref = (id) => "scene.html#" + id;'),
    F("scene-fragment-not-decoded", "viewer", "odu/report/view/assets/scene.js",
      "const currentId = () => decodeURIComponent(location.hash.slice(1))", "const currentId = () => location.hash.slice(1)"),
    F("no-content-security-policy", "viewer", "odu/report/view/assets/page.html",
      """<meta http-equiv="Content-Security-Policy" content="default-src 'self'; img-src 'self' data:; media-src 'self'; object-src 'none'; base-uri 'none'">\n""", ""),
    # --- the judge's cache and re-asks (odu/judge/openai_judge.py, odu/judge/prompt.py)
    F("one-re-ask-fewer", "judgecache", "odu/judge/openai_judge.py",
      "        for attempt in range(self.reasks + 1):\n", "        for attempt in range(self.reasks):\n"),
    F("re-ask-without-the-reply", "judgecache", "odu/judge/openai_judge.py",
      "messages = reask_messages(base, reply, problem, request.key_points)", "messages = base"),
    F("re-ask-quotes-nothing", "judgecache", "odu/judge/prompt.py",
      '{"role": "assistant", "content": (reply or "")[:4000]},', '{"role": "assistant", "content": ""},'),
    F("re-ask-names-no-qid", "judgecache", "odu/judge/prompt.py",
      'qids = ", ".join(k.qid for k in key_points)', 'qids = ""'),
    F("failed-call-re-asked", "judgecache", "odu/judge/openai_judge.py",
      '                return JudgeVerdict.failed(self.client.scrub(f"judge call failed: {exc}"))',
      '                problem = str(exc)\n                continue'),
    F("cache-never-read", "judgecache", "odu/judge/openai_judge.py",
      "stored = self.cache.get_many(keys) if self.cache else {}", "stored = {}"),
    F("cache-hits-not-counted", "judgecache", "odu/judge/openai_judge.py",
      "                self._stats.cache_hits += 1\n", "                pass\n"),
    F("repeated-segment-asked-twice", "judgecache", "odu/judge/openai_judge.py",
      "                pending.setdefault(key, []).append(i)", "                pending.setdefault(f\"{key}#{i}\", []).append(i)"),
    F("no-cache-ignored", "judgecache", "odu/judge/openai_judge.py",
      "self.cache = None if no_cache else VerdictCache(cache_path)", "self.cache = VerdictCache(cache_path)"),
    F("repeated-key-last-wins", "judgecache", "odu/judge/prompt.py",
      "        if key in obj:\n            raise _RepeatedKey(key)\n", ""),
    # --- bounded reads (odu/io/files.py, odu/io/jsonio.py, odu/transport/openai_client.py)
    F("fifo-opened", "bounds", "odu/io/files.py",
      "if not stat.S_ISREG(os.fstat(fd).st_mode):", "if stat.S_ISDIR(os.fstat(fd).st_mode):"),
    F("open-blocks", "bounds", "odu/io/files.py",
      'fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))', "fd = os.open(path, os.O_RDONLY)"),
    F("size-limit-late", "bounds", "odu/io/files.py",
      "            if size > limit:\n", "            if size > limit + _CHUNK:\n"),
    F("read-deadline-ignored", "bounds", "odu/io/files.py",
      "            if time.monotonic() - started > deadline_s:\n", "            if False:\n"),
    F("line-read-whole", "bounds", "odu/io/jsonio.py",
      "while line := fh.readline(MAX_LINE_BYTES + 1):", "while line := fh.readline():"),
    F("line-limit-off-by-one", "bounds", "odu/io/jsonio.py",
      "        if len(line) > MAX_LINE_BYTES:\n", "        if len(line) > MAX_LINE_BYTES + 1:\n"),
    F("json-file-size-unchecked", "bounds", "odu/io/jsonio.py",
      "    if len(data) > MAX_JSON_FILE_BYTES:\n", "    if False:\n"),
    F("nan-scene-score-counted", "rundirs", "odu/runs/contract.py",
      "fine = value is None or (type(value) in (int, float) and 0 <= value <= 1)  # NaN fails the range",
      "fine = value is None or type(value) in (int, float)"),
    F("array-element-unbounded", "bounds", "odu/io/jsonio.py",
      "                    if len(buf) - pos > MAX_LINE_BYTES:\n", "                    if False:\n"),
    F("retry-after-uncapped", "bounds", "odu/transport/openai_client.py",
      "    return min(max(0.0, asked), MAX_RETRY_AFTER_S)", "    return max(0.0, asked)"),
    F("retry-after-nan-taken", "bounds", "odu/transport/openai_client.py",
      "    if asked is None or asked != asked:  # none given, or NaN", "    if asked is None:"),
    F("media-read-whole", "bounds", "odu/data/media.py",
      '        return read_bounded(path, MAX_MEDIA_BYTES, MEDIA_READ_TIMEOUT_S, "media")', "        return Path(path).read_bytes()"),
    # --- vLLM 0.32 (odu/models/providers.py, openai_omni.py, odu/harness/models.py, tools/tiny_checkpoints.py)
    F("trust-flag-release-late", "vllm", "odu/models/providers.py",
      'VLLM_TRUST_REQUEST_MM_KWARGS = "0.31.0"', 'VLLM_TRUST_REQUEST_MM_KWARGS = "0.32.1"'),
    F("trust-flag-unknown-version-old", "vllm", "odu/models/providers.py",
      "older_than(version, VLLM_TRUST_REQUEST_MM_KWARGS) is not True", "older_than(version, VLLM_TRUST_REQUEST_MM_KWARGS) is False"),
    F("untrusted-server-keeps-the-switch", "vllm", "odu/models/providers.py",
      "if takes_switch and flagged and trusted is False:", "if takes_switch and flagged and trusted is True:"),
    F("no-hearing-check-on-vllm", "vllm", "odu/models/providers.py",
      "flag_known=trusted if flagged else None,\n            checks_hearing=True,",
      "flag_known=trusted if flagged else None,\n            checks_hearing=False,"),
    F("flag-refusal-fails-each-scene", "vllm", "odu/models/openai_omni.py",
      "if chosen is not None and chosen.launch_flag and VLLM_MM_KWARGS_REFUSAL in str(exc):", "if False:"),
    F("dry-run-never-refuses-the-flag", "vllm", "odu/models/openai_omni.py",
      "        if chosen.version is None:", "        if True:"),
    F("soundless-video-sent", "vllm", "odu/models/openai_omni.py",
      'self.audio_in_video == "native" and not clip.info.has_audio:', 'self.audio_in_video == "native" and False:'),
    F("none-word-dropped", "vllm", "odu/harness/models.py",
      "k: NONE_WORD if v is None else v", "k: v"),
    F("vllm-heads-8-wide", "vllm", "tools/tiny_checkpoints.py",
      '{**TINY_LAYERS, "hidden_size": 64, "intermediate_size": 64}', '{**TINY_LAYERS, "hidden_size": 16, "intermediate_size": 64}'),
    F("talker-experts-left-unseeded", "vllm", "tools/tiny_checkpoints.py",
      "            _seed_talker_experts(model, seed)\n", "            pass\n"),
    # === issue 30: hardening, round three ===
    # --- keys never rewrite outputs (odu/io/scrub.py: credential-shaped values only, escapes kept; odu/io/jsonio.py: values only)
    F("placeholder-length-taken", "keyshape", "odu/io/scrub.py",
      "        len(value) >= MIN_CREDENTIAL_CHARS\n", "        len(value) >= 1\n"),
    F("one-kind-of-character-taken", "keyshape", "odu/io/scrub.py",
      "and sum(1 for kind in _KINDS if kind.search(value)) >= 2", "and sum(1 for kind in _KINDS if kind.search(value)) >= 1"),
    F("number-taken-as-credential", "keyshape", "odu/io/scrub.py",
      "        and _NUMBER_CHARS.fullmatch(value) is None\n", ""),
    F("credential-alphabet-any", "keyshape", "odu/io/scrub.py",
      "and _CREDENTIAL_CHARS.fullmatch(value) is not None", "and True"),
    F("escape-cut-by-a-secret", "keyshape", "odu/io/scrub.py",
      "        if i >= 0 and escapes[i][1] > start:\n", "        if False:\n"),
    F("json-keys-scrubbed-as-text", "keyshape", "odu/io/jsonio.py",
      "        text = dumps(scrub_value(value, urls=False), indent=indent, default=default)\n",
      "        text = scrub_secrets(text)\n"),
    F("scene-rows-not-scrubbed", "keyshape", "odu/runs/contract.py",
      "json_text(json.loads(text)) if holds_secret(text) else text", "text"),
    F("placeholder-key-taken-for-a-provider", "keyshape", "odu/transport/openai_client.py",
      "    if base_url is None:\n        raise ValueError(\n", "    if False:\n        raise ValueError(\n"),
    F("placeholder-key-not-warned", "keyshape", "odu/transport/openai_client.py",
      'warnings.warn(\n        f"API key: {said}: it is sent, but not scrubbed from outputs by value", PlaceholderKeyWarning, stacklevel=3\n    )',
      "pass"),
    # --- linear reads (odu/io/jsonio.py)
    F("depth-limit-off-by-one", "linearread", "odu/io/jsonio.py",
      "        for _ in range(limit):\n            if dict not in kinds:", "        for _ in range(limit - 1):\n            if dict not in kinds:"),
    F("objects-not-walked", "linearread", "odu/io/jsonio.py",
      "                nested = map(dict.values, level)\n", "                nested = level\n"),
    F("mixed-levels-not-walked", "linearread", "odu/io/jsonio.py",
      "nested = (node.values() if type(node) is dict else node for node in level)", "nested = level"),
    F("a-level-with-other-items-ends-the-walk", "linearread", "odu/io/jsonio.py",
      "            if kinds.isdisjoint(_CONTAINERS):\n", "            if not kinds <= _CONTAINERS:\n"),
    F("decoder-recursion-uncaught", "linearread", "odu/io/jsonio.py",
      "        value = json.loads(text)\n    except RecursionError:", "        value = json.loads(text)\n    except MemoryError:"),
    F("depth-unchecked-after-decoding", "linearread", "odu/io/jsonio.py",
      "    if nests_too_deep(value, text):\n        raise JsonFileError(f\"{where}: nested", "    if False:\n        raise JsonFileError(f\"{where}: nested"),
    F("bracket-bound-too-loose", "linearread", "odu/io/jsonio.py",
      "    return brackets > MAX_RECORD_DEPTH and too_deep", "    return brackets > 2 * MAX_RECORD_DEPTH and too_deep"),
    F("record-tree-bound-on-nothing", "linearread", "odu/core/schema.py",
      "        if not nests_too_deep(rec, dumped):", '        if not nests_too_deep(rec, ""):'),
    F("records-never-tree-checked", "linearread", "odu/core/schema.py",
      "    if not read:\n        check_tree(rec, where)", "    if False:\n        check_tree(rec, where)"),
    F("python-records-taken-as-read", "linearread", "odu/core/schema.py",
      "    read = isinstance(source, (str, Path))\n", "    read = True\n"),
    F("array-element-bound-on-the-whole-buffer", "linearread", "odu/io/jsonio.py",
      "            if nests_too_deep(value, buf, pos, end):", "            if nests_too_deep(value, buf[pos:end][:1]):"),
    # --- secrets past the URL rule, base URL queries (odu/io/scrub.py, odu/transport/openai_client.py, odu/cli/lm_eval_cmd.py)
    F("url-value-cut-like-a-text", "urlrule", "odu/io/scrub.py",
      '    return "|".join(scrub_url(url) for url in split_url_list(value))', "    return scrub_text(value)"),
    F("url-without-scheme-kept", "urlrule", "odu/io/scrub.py",
      "    return scrub_secrets(_by_rule(url))", '    return scrub_secrets(_by_rule(url) if "://" in url else url)'),
    F("pipe-in-a-query-splits-it", "urlrule", "odu/io/scrub.py",
      '        if urls and "://" not in piece and ("?" in urls[-1] or "#" in urls[-1]):', "        if False:"),
    F("cut-pieces-not-registered", "urlrule", "odu/io/scrub.py",
      "found += [value, unquote(value), *_TEXT_STOPS.split(value)]", "found += [value, unquote(value)]"),
    F("url-named-value-scrubbed-as-text", "urlrule", "odu/io/scrub.py",
      "scrub_urls(v) if urls and isinstance(v, str) and _url_named(k) else scrub_value(v, urls)", "scrub_value(v, urls)"),
    F("url-option-value-scrubbed-as-text", "urlrule", "odu/io/scrub.py",
      '        if i and args[i - 1].startswith("--")', '        if False and args[i - 1].startswith("--")'),
    F("first-word-of-a-name-ignored", "urlrule", "odu/io/scrub.py",
      " or words[0] in CREDENTIAL_FIRST_WORDS or ", " or "),
    F("camel-case-names-one-word", "urlrule", "odu/io/scrub.py",
      '_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")', '_WORD = re.compile(r"[A-Za-z]+|[0-9]+")'),
    F("broken-host-passes-as-traceback", "urlrule", "odu/io/scrub.py",
      "            parts.port  # noqa: B018  (raises ValueError for a port that is not a number in range)\n        except ValueError:",
      "            parts.port  # noqa: B018  (raises ValueError for a port that is not a number in range)\n        except TypeError:"),
    F("lm-eval-model-args-unchecked", "urlrule", "odu/cli/lm_eval_cmd.py",
      "            refuse_key_arguments(parsed)\n", ""),
    F("lm-eval-config-unchecked", "urlrule", "odu/cli/lm_eval_cmd.py",
      'found.append((f"--config {config}: model_args", EvaluatorConfig.load_yaml_config(config).get("model_args")))', "pass"),
    F("base-url-query-glued-to-the-path", "urlrule", "odu/transport/openai_client.py",
      "            base_url=base_url,\n            default_query=query or None,", "            base_url=self.replicas.urls[0],\n            default_query=None,"),
    F("replica-keeps-the-first-query", "urlrule", "odu/transport/openai_client.py",
      "params=[*params, *chosen_query.items()]", "params=request.url.params"),
    F("query-parameter-twice-taken", "urlrule", "odu/transport/openai_client.py",
      "    if len(set(names)) < len(names):\n", "    if False:\n"),
    # --- a dataset card's YAML (odu/data/prepare.py)
    F("card-yaml-unchecked", "cardyaml", "odu/data/prepare.py",
      "        check_card(path / CARD_NAME)\n", ""),
    # --- exports (odu/export/, odu/cli/common.py): what they refuse, carry and write
    F("export-collision-unchecked", "export", "odu/export/__init__.py",
      "if (other := owners.get(path)) is not None:", "if (other := owners.get(path)) is not None and False:"),
    F("export-card-source-as-hub-id", "export", "odu/export/hub.py",
      "    target = check_dataset_id(dataset_id)\n",
      '    target = check_dataset_id(dataset_id or next(iter(run.card_block("dataset").values()), {}).get("source"))\n'),
    F("export-local-paths-kept", "export", "odu/export/source.py",
      "clean = without_local_paths(scrub_value(card)) if card else None", "clean = scrub_value(card) if card else None"),
    F("export-local-path-after-equals", "export", "odu/export/source.py",
      '''_LOCAL_PATH = re.compile(r"""(?<![\\w.:/\\\\~-])''', '''_LOCAL_PATH = re.compile(r"""(?<![\\w.:/\\\\~=-])'''),
    F("export-model-text-urls-scrubbed", "export", "odu/export/__init__.py",
      "return {path: scrub_value(content, urls=False) for path, content in files.items()}",
      "return {path: scrub_value(content) for path, content in files.items()}"),
    F("export-source-url-format-string", "export", "odu/export/hub.py",
      "    return re.sub(", "    return source_url.format(name=name, run_id=run_id) or re.sub("),
    F("export-source-url-scheme-unchecked", "export", "odu/export/hub.py",
      '    if not source_url.lower().startswith(("http://", "https://")):', "    if False:"),
    F("resamples-unbounded", "export", "odu/cli/common.py",
      "    if args.resamples > MAX_RESAMPLES:", "    if args.resamples > MAX_RESAMPLES * 10:"),
    F("hub-value-unrounded", "export", "odu/export/hub.py",
      '"value": round(100 * value, HUB_VALUE_DECIMALS),', '"value": 100 * value,'),
    F("hub-framework-notice-silent", "export", "odu/export/hub.py",
      "    if HUB_EVALUATION_FRAMEWORK in registered:", "    if True:"),
    F("eee-num-samples-all-scenes", "export", "odu/export/eee.py",
      '{"num_samples": task.scenes(entry),', '{"num_samples": entry["n_scenes"],'),
    F("ftr-population-demand-scenes", "export", "odu/export/tasks.py",
      '    "ftr": "n_negative",', '    "ftr": "n_positive",'),
    F("eee-organization-optional", "export", "odu/export/settings.py",
      "        if not self.organization.strip():", "        if False:"),
    F("model-id-without-developer", "export", "odu/export/source.py",
      "        if not developer.strip() or not model.strip():", "        if not model.strip() and False:"),
    F("eee-uuid-not-v4", "export", "odu/export/eee.py",
      "return str(uuid.UUID(bytes=digest[:16], version=4))", "return str(uuid.UUID(bytes=digest[:16]))"),
    F("eee-details-not-strings", "export", "odu/export/eee.py",
      "        str(k): v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)",
      "        str(k): v"),
    F("eee-samples-file-named-jsonl", "export", "odu/export/eee.py",
      '    samples = f"{stem}_samples.jsonl"', '    samples = f"{stem}.jsonl"'),
    F("export-lm-eval-folder-unread", "export", "odu/export/source.py",
      "    if (folder := harness_folder(run_dir)) is not None:", "    if (folder := harness_folder(run_dir)) is not None and False:"),
    F("inspect-metric-rounded", "export", "odu/export/inspect_log.py",
      "            name=t.metric,\n            value=value,\n", "            name=t.metric,\n            value=round(value, 2),\n"),
    # --- issue 31: a paired interval of exactly 0 where two runs agree
    F("paired-second-system-summed-apart", "newcomer2", "odu/report/paired.py",
      "resampled_b = _finish(first_sums[a] + difference_sums[:, n * k : (n + 1) * k])",
      "resampled_b = _finish(boot.weighted_sums(np.hstack([columns[a], columns[b]]))[:, k:])"),
    # --- issue 31: score (and merge) mark, print and store the caveats as eval does
    F("score-stores-no-caveats", "newcomer2", "odu/cli/score.py",
      'summary["caveats"] = run_caveats(summary["judge"], summary_counts(summary))', 'summary["caveats"] = []'),
    F("table-marks-no-row", "newcomer2", "odu/core/caveats.py",
      "return {marked(name, caveats[name]): summary", "return {name: summary"),
    F("table-lists-no-caveat", "newcomer2", "odu/core/caveats.py",
      "[CAVEATS_HEADING, *lines] if lines else []", "[]"),
    F("merge-prints-no-caveats", "newcomer2", "odu/cli/merge.py",
      "print(runs_table({label: summary}))", 'print(runs_table({label: {**summary, "caveats": []}}))'),
    # --- issue 31: an error of ours on lm-eval's command line is one line, exit 2
    F("lm-eval-error-keeps-its-traceback", "newcomer2", "odu_lm_eval_bridge.py",
      "            line = error_line(exc)\n", "            line = None\n"),
    F("lm-eval-error-exit-1", "newcomer2", "odu_lm_eval_bridge.py",
      "raise SystemExit(2) from None", "raise SystemExit(1) from None"),
    F("lm-eval-s-own-errors-one-lined", "newcomer2", "odu/harness/errors.py",
      "    if not any(frame.is_relative_to(folder)", "    if False and any(frame.is_relative_to(folder)"),
    F("lm-eval-error-unscrubbed", "newcomer2", "odu/harness/errors.py",
      "    return scrub_text(str(exc))", "    return str(exc)"),
    # --- issue 31: a checkout's odu reads its own task folder, whatever is installed
    F("checkout-reads-the-start-up-bridge-s-tasks", "newcomer2", "odu/harness/tasks.py",
      "find_task_dir(TASK_DIRS, str(Path(__file__).resolve().parents[2]))", "find_task_dir(TASK_DIRS)"),
    # --- issue 31: the wheel route (odu-bench selftest and the tests shipped in odu/selftest/)
    F("wheel-without-the-selftest-data", "newcomer2", "setup.cfg",
      "odu.selftest = selftest.ini, data/*", "odu.selftest = selftest.ini"),
    F("selftest-misses-a-wrong-eq6-weight", "newcomer2", "odu/core/constants.py",
      '"m1": 0.15, "m2": 0.60,', '"m1": 0.25, "m2": 0.50,'),
    F("selftest-without-its-settings", "newcomer2", "odu/cli/selftest.py",
      '"-c", str(CONFIG), ', ""),
    F("selftest-writes-bytecode-into-the-package", "newcomer2", "odu/cli/selftest.py",
      '            "PYTHONDONTWRITEBYTECODE": "1",\n', ""),
    F("selftest-heeds-the-user-s-judge", "newcomer2", "odu/selftest/conftest.py",
      '    "ODU_JUDGE",\n', ""),
    F("selftest-runs-in-the-package-folder", "newcomer2", "odu/selftest/conftest.py",
      "    monkeypatch.chdir(tmp_path)\n", ""),
)
# fmt: on


@dataclass
class Outcome:
    name: str
    group: str
    status: str  # killed | survived | timeout | equivalent | not-applied
    seconds: float
    detail: str = ""


def apply(text: str, fault: Fault) -> str:
    """``text`` with the fault applied; ``ValueError`` unless its original occurs exactly once."""
    count = text.count(fault.old)
    if count != 1:
        raise ValueError(f"{fault.name}: original text found {count} times in {fault.path}")
    return text.replace(fault.old, fault.new)


def copy_repo(dest: Path) -> Path:
    """The repository's tracked and untracked-but-not-ignored files (the working tree as it is),
    copied to ``dest``; no bytecode, no ``.git``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        src = ROOT / os.fsdecode(name)
        if not src.is_file():  # deleted but still in the index
            continue
        target = dest / os.fsdecode(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)
    return dest


def pytest_run(copy: Path, tests: Sequence[str], timeout: float) -> tuple[str, str]:
    """("passed" | "failed" | "timeout", last lines) of the tests, run on ``copy``'s sources."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    present = [t for t in tests if (copy / t).exists()]
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *present]
    try:
        done = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"no result after {timeout:.0f} s"
    tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-2:])
    return ("passed" if done.returncode == 0 else "failed"), tail[-300:]


def check_imports_copy(copy: Path) -> None:
    """Make sure the tests import ``odu`` from the copy, not from the editable install."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    where = subprocess.run(
        [sys.executable, "-c", "import odu; print(odu.__file__)"], cwd=copy, env=env, capture_output=True, text=True
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"mutation: the copy's tests import odu from {where}, not from {copy}")


def run_fault(copy: Path, fault: Fault, timeout: float) -> Outcome:
    if fault.equivalent:
        return Outcome(fault.name, fault.group, "equivalent", 0.0, fault.equivalent)
    path = copy / fault.path
    original = path.read_text(encoding="utf-8")
    try:
        mutated = apply(original, fault)
    except ValueError as exc:
        return Outcome(fault.name, fault.group, "not-applied", 0.0, str(exc))
    start = time.perf_counter()
    path.write_text(mutated, encoding="utf-8")
    try:
        result, tail = pytest_run(copy, GROUP_TESTS[fault.group], timeout)
    finally:
        path.write_text(original, encoding="utf-8")
    status = {"passed": "survived", "failed": "killed", "timeout": "timeout"}[result]
    return Outcome(fault.name, fault.group, status, time.perf_counter() - start, tail)


def select(groups: Sequence[str], excluded: Sequence[str], names: Sequence[str]) -> list[Fault]:
    unknown = (set(groups) | set(excluded)) - set(GROUP_TESTS)
    if unknown:
        raise SystemExit(f"mutation: unknown group(s) {sorted(unknown)}; groups: {sorted(GROUP_TESTS)}")
    chosen = [
        f
        for f in FAULTS
        if (not groups or f.group in groups) and f.group not in excluded and (not names or f.name in names)
    ]
    missing = set(names) - {f.name for f in FAULTS}
    if missing:
        raise SystemExit(f"mutation: unknown fault(s) {sorted(missing)}")
    return chosen


def summary(outcomes: Sequence[Outcome]) -> dict:
    counted = [o for o in outcomes if o.status in ("killed", "survived", "timeout")]
    killed = [o for o in counted if o.status != "survived"]
    return {
        "faults": len(outcomes),
        "run": len(counted),
        "killed": len(killed),
        "survived": [o.name for o in counted if o.status == "survived"],
        "equivalent": [o.name for o in outcomes if o.status == "equivalent"],
        "not_applied": [o.name for o in outcomes if o.status == "not-applied"],
        "kill_rate": len(killed) / len(counted) if counted else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", action="append", default=[], help="only this group (repeatable)")
    parser.add_argument("--exclude-group", action="append", default=[], help="leave this group out (repeatable)")
    parser.add_argument("--fault", action="append", default=[], help="only this fault (repeatable)")
    parser.add_argument("--json", type=Path, help="write every outcome and the summary here")
    parser.add_argument("--min-rate", type=float, default=0.0, help="exit 1 when the kill rate is below this")
    parser.add_argument("--timeout", type=float, default=FAULT_TIMEOUT_S, help="seconds per fault's test run")
    parser.add_argument("--jobs", type=int, default=1, help="faults run at once, each in its own copy")
    parser.add_argument("--no-baseline", action="store_true", help="skip running the unmutated tests first")
    parser.add_argument("--list", action="store_true", help="list the faults and exit")
    args = parser.parse_args(argv)
    faults = select(args.group, args.exclude_group, args.fault)
    if args.list:
        for f in faults:
            print(f"{f.group:10} {f.name:45} {f.path}" + (f"  (equivalent: {f.equivalent})" if f.equivalent else ""))
        return 0
    with tempfile.TemporaryDirectory(prefix="odu-mutation-") as tmp:
        copies = [copy_repo(Path(tmp) / f"copy{k}") for k in range(max(1, args.jobs))]
        check_imports_copy(copies[0])
        if not args.no_baseline:
            for group in dict.fromkeys(f.group for f in faults):
                result, tail = pytest_run(copies[0], GROUP_TESTS[group], args.timeout)
                print(f"baseline {group}: {result}", flush=True)
                if result != "passed":
                    print(f"mutation: the unmutated tests of group {group} do not pass: {tail}", file=sys.stderr)
                    return 2
        outcomes: list[Outcome] = []

        def work(k: int) -> None:
            for fault in faults[k :: len(copies)]:
                outcome = run_fault(copies[k], fault, args.timeout)
                outcomes.append(outcome)
                print(f"{outcome.status:11} {fault.group:10} {fault.name:45} {outcome.seconds:6.1f} s", flush=True)

        with ThreadPoolExecutor(len(copies)) as pool:
            list(pool.map(work, range(len(copies))))
    order = {f.name: i for i, f in enumerate(FAULTS)}
    outcomes.sort(key=lambda o: order[o.name])
    result = summary(outcomes)
    rate = result["kill_rate"]
    print(
        f"\nkilled {result['killed']} of {result['run']} faults run"
        + (f" ({100 * rate:.1f} %)" if rate is not None else "")
        + f"; equivalent (not run): {len(result['equivalent'])}; survived: {', '.join(result['survived']) or 'none'}"
    )
    if result["not_applied"]:
        print(f"not applied (original text changed): {', '.join(result['not_applied'])}")
    if args.json:
        payload = {
            "summary": result,
            "groups": sorted({f.group for f in faults}),
            "outcomes": [asdict(o) for o in outcomes],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if rate is not None and rate < args.min_rate else 0


if __name__ == "__main__":
    sys.exit(main())
