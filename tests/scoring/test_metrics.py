"""odu/core/metrics.py (Eqs. 1-6): M1 against scikit-learn, M4 against jiwer (randomised, many seeds),
unit tests of every scene and dataset score, and the weighted (vectorised) variants the report's
bootstrap uses against the scalar functions on expanded resamples."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from odu.core.constants import METRIC_WEIGHTS
from odu.core.metrics import avg, false_trigger_rate, macro_f1, mean_defined, s2, s3, s4, s5
from odu.core.text import edit_count, is_cjk_dominant, normalize
from odu.report.weighted import avg_weighted, false_trigger_rate_weighted, macro_f1_weighted, mean_defined_weighted

sklearn_metrics = pytest.importorskip("sklearn.metrics")
jiwer = pytest.importorskip("jiwer")


def _sk_macro_f1(y_true, y_pred, sample_weight=None) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sklearn_metrics.f1_score(y_true, y_pred, average="macro", sample_weight=sample_weight)


# --- M1 = scikit-learn macro F1 -----------------------------------------------------------------


def _labels(rng: random.Random) -> tuple[list[bool], list[bool]]:
    n = rng.choice([1, 2, 3, 5, 10, 50, 300])
    p_true, p_pred = rng.choice([0.0, 1.0, rng.random()]), rng.choice([0.0, 1.0, rng.random()])
    return [rng.random() < p_true for _ in range(n)], [rng.random() < p_pred for _ in range(n)]


@pytest.mark.parametrize("seed", range(300))
def test_m1_equals_sklearn_macro_f1(seed):
    y_true, y_pred = _labels(random.Random(seed))
    assert macro_f1(y_true, y_pred) == pytest.approx(_sk_macro_f1(y_true, y_pred), abs=1e-12)


@pytest.mark.parametrize(
    "y_true, y_pred",
    [
        ([True] * 4, [True] * 4),  # one class, all right: sklearn scores the present class only
        ([False] * 4, [False] * 4),
        ([True] * 4, [False] * 4),  # both classes appear, neither is ever right
        ([False] * 3, [True, False, False]),
        ([True], [False]),
        ([False, True], [True, False]),
    ],
)
def test_m1_degenerate_cases_equal_sklearn(y_true, y_pred):
    assert macro_f1(y_true, y_pred) == pytest.approx(_sk_macro_f1(y_true, y_pred), abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_weighted_m1_equals_sklearn_with_sample_weights(seed):
    rng = random.Random(seed)
    y_true, y_pred = _labels(rng)
    weights = [rng.randint(0, 4) for _ in y_true]
    got = macro_f1_weighted(y_true, y_pred, np.array([weights]))[0]
    if sum(weights) == 0:
        assert np.isnan(got)
    else:
        kept = [(t, p, w) for t, p, w in zip(y_true, y_pred, weights) if w]  # zero weight = absent class
        t, p, w = zip(*kept)
        assert got == pytest.approx(_sk_macro_f1(list(t), list(p), sample_weight=list(w)), abs=1e-12)


def test_m1_examples():
    assert macro_f1([], []) is None
    # Eq. 1 by hand: class 1 has TP=1, FN=1 -> 2/3; class 0 has TP=2, FP=1 -> 4/5.
    assert macro_f1([True, True, False, False], [True, False, False, False]) == pytest.approx((2 / 3 + 4 / 5) / 2)


def test_false_trigger_rate():
    assert false_trigger_rate([False, False, True, False], [True, False, True, True]) == pytest.approx(2 / 3)
    assert false_trigger_rate([True, True], [True, False]) is None  # no negatives
    assert false_trigger_rate([], []) is None
    rates = false_trigger_rate_weighted(
        [False, False, True], [True, False, False], np.array([[1, 1, 1], [2, 1, 5], [0, 0, 1]])
    )
    assert rates[:2] == pytest.approx([1 / 2, 2 / 3]) and np.isnan(rates[2])


# --- M4 = jiwer pooled WER / CER ----------------------------------------------------------------

_WORDS = (
    "the a turn off on light lights kitchen please can you set timer for ten minutes what is this one "
    "that sound mute agent hey remind me to buy milk tomorrow don't I'm it's rock n roll"
).split()
_CJK_CHARS = "把温度调到帮我打开灯这个是什么声音提醒明天买牛奶静音那首歌再放一遍可以吗"
_PUNCT = ["", "", "", ",", ".", "?", "!", "，", "。", "？", "！", "…", "、", "“", "”", "'", " - "]


def _english(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(1, 14))]
    return " ".join(w.upper() if rng.random() < 0.1 else w + rng.choice(_PUNCT) for w in words)


def _chinese(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(2, 20)):
        r = rng.random()
        if r < 0.08:
            parts.append(str(rng.randint(0, 300)))  # digits inside
        elif r < 0.13:
            parts.append(rng.choice(["iPhone", "Wi-Fi", "App Store", "OK"]))  # English words inside
        else:
            parts.append(rng.choice(_CJK_CHARS))
        parts.append(rng.choice(_PUNCT) if rng.random() < 0.2 else "")
    return "".join(parts)


def _edit(rng: random.Random, text: str, pieces: list[str]) -> str:
    """A hypothesis: the reference with random deletions, insertions and substitutions."""
    out = list(pieces)
    for _ in range(rng.randint(0, 4)):
        op, i = rng.random(), rng.randrange(len(out) + 1)
        if op < 0.3 and out:
            del out[min(i, len(out) - 1)]
        elif op < 0.6:
            out.insert(i, rng.choice(_WORDS) if " " in text else rng.choice(_CJK_CHARS))
        elif out:
            out[min(i, len(out) - 1)] = rng.choice(_WORDS) if " " in text else rng.choice(_CJK_CHARS)
    return (" " if " " in text else "").join(out)


def _scene(rng: random.Random, chinese: bool) -> tuple[list[str], list[str]]:
    refs, hyps = [], []
    for _ in range(rng.randint(1, 3)):
        ref = _chinese(rng) if chinese else _english(rng)
        r = rng.random()
        if r < 0.15:
            hyp = ""  # unmatched reference: empty hypothesis
        elif r < 0.3:
            hyp = ref
        else:
            hyp = _edit(rng, ref, list(ref) if chinese else ref.split())
        refs.append(ref)
        hyps.append(hyp)
    return refs, hyps


#: jiwer's own transforms for the rule docs/scoring.md states ("case folding, apostrophes inside words
#: dropped, every other punctuation or symbol -> space, whitespace collapsed"), written with jiwer's
#: pieces and a plain regex, so our ``normalize`` is checked against an independent reading of it.
_JIWER_TEXT = [
    jiwer.ToLowerCase(),
    jiwer.SubstituteRegexes({r"(?<=\w)['\u2019\u02bc](?=\w)": "", r"[^\w\s]|_": " "}),
    jiwer.RemoveMultipleSpaces(),
    jiwer.Strip(),
]
JIWER_WORDS = jiwer.Compose([*_JIWER_TEXT, jiwer.ReduceToListOfListOfWords()])
JIWER_CHARS = jiwer.Compose(
    [*_JIWER_TEXT, jiwer.RemoveWhiteSpace(replace_by_space=False), jiwer.ReduceToListOfListOfChars()]
)


def _jiwer_s4(refs: list[str], hyps: list[str], chars: bool) -> float:
    """1 - pooled WER (CER) by jiwer over the *raw* texts, through jiwer's transforms alone."""
    if chars:
        out = jiwer.process_characters(refs, hyps, reference_transform=JIWER_CHARS, hypothesis_transform=JIWER_CHARS)
    else:
        out = jiwer.process_words(refs, hyps, reference_transform=JIWER_WORDS, hypothesis_transform=JIWER_WORDS)
    errors = out.substitutions + out.deletions + out.insertions
    length = out.substitutions + out.deletions + out.hits
    assert (out.cer if chars else out.wer) == pytest.approx(errors / length)
    return max(0.0, 1 - errors / length)


def test_the_jiwer_oracle_reads_raw_text() -> None:
    """The oracle normalises by itself: punctuation, case and in-word apostrophes on raw input."""
    assert JIWER_WORDS(["Don't STOP，the-music!"]) == [["dont", "stop", "the", "music"]]
    assert JIWER_CHARS(["把温度，调到 26度！"]) == [list("把温度调到26度")]


@pytest.mark.parametrize("seed", range(150))
def test_m4_equals_jiwer_pooled_wer_english(seed):
    refs, hyps = _scene(random.Random(seed), chinese=False)
    refs = [r if JIWER_WORDS([r]) != [[]] else "fallback words" for r in refs]  # jiwer needs a non-empty reference
    assert not any(is_cjk_dominant(normalize(r)) for r in refs)
    ours = s4(edit_count(r, h) for r, h in zip(refs, hyps))
    assert ours == pytest.approx(_jiwer_s4(refs, hyps, chars=False), abs=1e-12)


@pytest.mark.parametrize("seed", range(150))
def test_m4_equals_jiwer_pooled_cer_chinese(seed):
    refs, hyps = _scene(random.Random(1000 + seed), chinese=True)
    pairs = [(r, h) for r, h in zip(refs, hyps) if is_cjk_dominant(normalize(r))] or [
        ("把温度调到26度", "把温度调到二十六度")
    ]
    refs, hyps = [r for r, _ in pairs], [h for _, h in pairs]
    ours = s4(edit_count(r, h) for r, h in zip(refs, hyps))
    assert ours == pytest.approx(_jiwer_s4(refs, hyps, chars=True), abs=1e-12)


def test_m4_pools_edits_not_rates():
    # One long clean segment and one short wrong one: pooling weighs by length (Eq. 4).
    pairs = [
        edit_count("one two three four five six seven eight", "one two three four five six seven eight"),
        edit_count("mute it", ""),
    ]
    assert pairs == [(0, 8), (2, 2)]
    assert s4(pairs) == pytest.approx(1 - 2 / 10)
    assert s4(pairs) != pytest.approx((1.0 + 0.0) / 2)


# --- scene scores s2, s3, s5 and aggregation ------------------------------------------------------


def test_s2_per_segment_rates_averaged():
    assert s2([[True, True, False]]) == pytest.approx(2 / 3)  # App A.5 worked example
    assert s2([[True, False], [True, True, True, True]]) == pytest.approx((1 / 2 + 1) / 2)  # not 5/6 pooled
    assert s2([[], [True, False]]) == pytest.approx(1 / 2)  # a segment without key points is outside G^K
    assert s2([]) is None and s2([[]]) is None


def test_s2_unmatched_segments_count_as_misses():
    assert s2([[False, False, False], [True, True]]) == pytest.approx(0.5)


def test_s2_judge_errors():
    hits = [[True, None, False], [None, None]]
    assert s2(hits) == pytest.approx(1 / 2)  # errors dropped; the all-error segment leaves the mean
    assert s2(hits, errors_as_misses=True) == pytest.approx((1 / 3 + 0) / 2)
    assert s2([[None]]) is None
    assert s2([[None]], errors_as_misses=True) == 0.0


def test_s3_mean_iou_with_zero_for_unmatched():
    assert s3([0.8995, 0.0]) == pytest.approx(0.8995 / 2)
    assert s3([1.0]) == 1.0 and s3([]) is None


def test_s4_edges():
    assert s4([]) is None
    assert s4([(0, 0)]) is None  # references that normalise to nothing: undefined, not 1.0
    assert s4([(3, 0), (0, 4)]) == pytest.approx(1 - 3 / 4)  # insertions against an empty reference still count
    assert s4([(9, 3)]) == 0.0  # floored at 0
    assert s4(iter([(1, 4)])) == pytest.approx(0.75)  # any iterable


def test_s5_fields_then_mean():
    av = {"user_in_frame": [False], "user_gender": [True], "user_age_group": [True]}
    assert s5(av) == pytest.approx(2 / 3)  # App A.5 worked example
    assert s5({"user_gender": [True, False], "user_age_group": [True, True]}) == pytest.approx((1 / 2 + 1) / 2)
    assert s5({"user_gender": [], "user_age_group": []}) is None


def test_mean_defined():
    assert mean_defined([0.5, None, 1.0]) == pytest.approx(0.75)
    assert mean_defined([None, None]) is None and mean_defined([]) is None
    assert mean_defined(iter([0.0])) == 0.0
    means = mean_defined_weighted([0.5, None, 1.0], np.array([[1, 1, 1], [3, 1, 1], [0, 1, 0]]))
    assert means[:2] == pytest.approx([0.75, 2.5 / 4]) and np.isnan(means[2])


def test_avg_weights_and_renormalisation():
    assert sum(METRIC_WEIGHTS.values()) == pytest.approx(1.0)
    full = {"m1": 0.9, "m2": 0.5, "m3": 0.4, "m4": 0.8, "m5": 0.6}
    assert avg(full) == pytest.approx(0.15 * 0.9 + 0.6 * 0.5 + 0.1 * 0.4 + 0.1 * 0.8 + 0.05 * 0.6)
    no_m3 = dict(full, m3=None)  # Eq. 6 over the available dimensions
    assert avg(no_m3) == pytest.approx((0.15 * 0.9 + 0.6 * 0.5 + 0.1 * 0.8 + 0.05 * 0.6) / 0.9)
    assert avg({"m1": 0.7}) == pytest.approx(0.7)
    assert avg({}) is None and avg(dict.fromkeys(full)) is None
    rows = avg_weighted({m: np.array([v, np.nan if m == "m3" else v]) for m, v in full.items()})
    assert rows == pytest.approx([avg(full), avg(no_m3)])


# --- weighted variants (the report's bootstrap) = the scalar functions -------------------------


def _case(rng: random.Random, n: int):
    y_true = [rng.random() < 0.7 for _ in range(n)]
    y_pred = [rng.random() < 0.6 for _ in range(n)]
    values = [None if rng.random() < 0.2 else rng.random() for _ in range(n)]
    return y_true, y_pred, values


def _expand(seq, counts):
    return [x for x, c in zip(seq, counts) for _ in range(c)]


@pytest.mark.parametrize("seed", range(40))
def test_weighted_variants_equal_scalar_on_expanded_resamples(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 12)
    y_true, y_pred, values = _case(rng, n)
    weights = np.array([[rng.randint(0, 3) for _ in range(n)] for _ in range(5)] + [[1] * n])
    f1 = macro_f1_weighted(y_true, y_pred, weights)
    ftr = false_trigger_rate_weighted(y_true, y_pred, weights)
    mean = mean_defined_weighted(values, weights)
    for r, counts in enumerate(weights):
        t, p, v = _expand(y_true, counts), _expand(y_pred, counts), _expand(values, counts)
        for got, want in ((f1[r], macro_f1(t, p)), (ftr[r], false_trigger_rate(t, p)), (mean[r], mean_defined(v))):
            assert (np.isnan(got) and want is None) or got == pytest.approx(want, abs=1e-12)


def test_macro_f1_weighted_single_class_matches_scalar():
    # only positives, all predicted positive: class 0 absent in labels and predictions
    assert macro_f1_weighted([True, True], [True, True], np.ones((1, 2)))[0] == macro_f1([True, True], [True, True])
    assert np.isnan(macro_f1_weighted([True], [True], np.zeros((1, 1)))[0])


@pytest.mark.parametrize("seed", range(20))
def test_avg_weighted_equals_scalar(seed):
    rng = random.Random(seed)
    metrics = {m: (None if rng.random() < 0.3 else rng.random()) for m in ("m1", "m2", "m3", "m4", "m5")}
    got = avg_weighted({m: np.array([np.nan if v is None else v]) for m, v in metrics.items()})[0]
    want = avg(metrics)
    assert (np.isnan(got) and want is None) or got == pytest.approx(want)
