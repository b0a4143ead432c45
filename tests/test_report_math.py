"""The report's vectorised math: weighted metric variants agree with the scalar core functions,
and the scene bootstrap is reproducible and shared across systems."""

from __future__ import annotations

import random

import numpy as np
import pytest

from odu.metrics import (
    avg,
    avg_weighted,
    false_trigger_rate,
    false_trigger_rate_weighted,
    macro_f1,
    macro_f1_weighted,
    mean_defined,
    mean_defined_weighted,
)
from odu.report.bootstrap import SceneBootstrap, percentile_interval, ratio


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


def test_bootstrap_draws_depend_only_on_seed_population_and_size():
    a = SceneBootstrap(7, resamples=2500, seed=3, population="channels/audio-visual").multiplicities()
    b = SceneBootstrap(7, resamples=2500, seed=3, population="channels/audio-visual").multiplicities()
    c = SceneBootstrap(7, resamples=2500, seed=4, population="channels/audio-visual").multiplicities()
    d = SceneBootstrap(7, resamples=2500, seed=3, population="channels/audio-only").multiplicities()
    assert a.shape == (2500, 7) and (a.sum(axis=1) == 7).all()
    assert (a == b).all() and not (a == c).all() and not (a == d).all()
    # uniform draws: every scene is drawn once per resample on average
    assert a.mean(axis=0) == pytest.approx(np.ones(7), abs=0.1)


def test_weighted_sums_are_multiplicities_times_columns():
    boot = SceneBootstrap(5, resamples=1200, seed=1)
    x = np.arange(10, dtype=float).reshape(5, 2)
    assert np.allclose(boot.weighted_sums(x), boot.multiplicities() @ x)
    with pytest.raises(ValueError):
        boot.weighted_sums(np.ones((4, 2)))


def test_percentile_interval_ignores_undefined_resamples():
    samples = np.array([[0.0, np.nan], [1.0, np.nan], [2.0, np.nan], [np.nan, np.nan]])
    lo, hi = percentile_interval(samples, (0, 100))
    assert lo[0] == 0.0 and hi[0] == 2.0 and np.isnan(lo[1]) and np.isnan(hi[1])
    assert percentile_interval(np.arange(101.0)).tolist() == [2.5, 97.5]


def test_ratio_is_nan_on_empty_denominator():
    assert ratio(np.array([1.0, 0.0]), np.array([2.0, 0.0]))[0] == 0.5
    assert np.isnan(ratio(np.array([1.0, 0.0]), np.array([2.0, 0.0]))[1])
