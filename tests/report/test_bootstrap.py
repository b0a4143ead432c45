"""odu/report/bootstrap.py: the scene bootstrap is reproducible and shared across systems; its
interval and ratio helpers handle undefined resamples."""

from __future__ import annotations

import numpy as np
import pytest

from odu.report.bootstrap import SceneBootstrap, percentile_interval, ratio


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
