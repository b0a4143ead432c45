"""Scene bootstrap (App E.1 "Scene-bootstrap procedure"), vectorised with numpy.

Every statistic the report bootstraps is a function of *weighted sums of per-scene columns*
(hits and point counts, scene scores and their definedness, confusion-matrix indicators). A
resample is a vector of scene multiplicities ``w`` (how often each scene was drawn), so one
matrix product ``W @ X`` gives the sums of every column for every resample at once.

Draws depend only on ``(seed, population name, number of scenes)``: every system and every
statistic over the same population sees the SAME draws, as in App E.1.

>>> boot = SceneBootstrap(4, resamples=3, seed=0, population="demo")
>>> w = boot.multiplicities()
>>> w.shape, bool((w.sum(axis=1) == 4).all())
((3, 4), True)
>>> sums = boot.weighted_sums(np.ones((4, 1)))
>>> sums[:, 0].tolist()
[4.0, 4.0, 4.0]
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import numpy as np

#: Scene bootstrap (App E.1 "Scene-bootstrap procedure"): resamples and the percentile interval.
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_PERCENTILES: tuple[float, float] = (2.5, 97.5)
#: Our choice: the default seed of every report bootstrap (the paper does not give its seed).
BOOTSTRAP_SEED = 20_260_501

#: Resamples drawn per block: bounds memory to ``block x scenes`` multiplicities.
_BLOCK = 1000


class SceneBootstrap:
    """Resamples of ``n`` scenes drawn uniformly with replacement, reproducible from the seed."""

    def __init__(
        self,
        n: int,
        resamples: int = BOOTSTRAP_RESAMPLES,
        seed: int = BOOTSTRAP_SEED,
        population: str = "",
    ) -> None:
        if n < 1 or resamples < 1:
            raise ValueError(f"bootstrap needs scenes and resamples (got n={n}, resamples={resamples})")
        self.n, self.resamples, self.seed, self.population = n, resamples, seed, population

    def blocks(self) -> Iterator[np.ndarray]:
        """Multiplicity blocks ``(rows, n)``; regenerated identically on every call."""
        rng = np.random.default_rng([self.seed, zlib.crc32(self.population.encode())])
        done = 0
        while done < self.resamples:
            rows = min(_BLOCK, self.resamples - done)
            dtype = np.int32 if rows * self.n < 2**31 else np.int64
            draws = rng.integers(0, self.n, size=(rows, self.n), dtype=dtype)
            draws += (np.arange(rows, dtype=dtype) * self.n)[:, None]  # row r counts in [r*n, (r+1)*n)
            counts = np.bincount(draws.ravel(), minlength=rows * self.n)
            yield counts.reshape(rows, self.n).astype(np.float64)
            done += rows

    def multiplicities(self) -> np.ndarray:
        """All resamples as a ``(resamples, n)`` matrix of draw counts."""
        return np.concatenate(list(self.blocks()))

    def weighted_sums(self, columns: np.ndarray) -> np.ndarray:
        """``(resamples, k)`` sums of the ``(n, k)`` per-scene ``columns`` under each resample."""
        columns = np.asarray(columns, dtype=np.float64)
        if columns.ndim != 2 or columns.shape[0] != self.n:
            raise ValueError(f"expected ({self.n}, k) columns, got {columns.shape}")
        return np.concatenate([block @ columns for block in self.blocks()])


def percentile_interval(samples: np.ndarray, percentiles: tuple[float, float] = BOOTSTRAP_PERCENTILES) -> np.ndarray:
    """Percentile interval over axis 0, ignoring resamples where the statistic is undefined (NaN).

    Returns ``(2, ...)``; NaN where no resample defines the statistic.

    >>> percentile_interval(np.array([[1.0], [2.0], [3.0], [np.nan]]), (0, 100)).tolist()
    [[1.0], [3.0]]
    """
    samples = np.asarray(samples, dtype=np.float64)
    flat = samples.reshape(samples.shape[0], -1)
    out = np.full((2, flat.shape[1]), np.nan)
    defined = (~np.isnan(flat)).any(axis=0)
    if defined.any():
        out[:, defined] = np.nanpercentile(flat[:, defined], percentiles, axis=0)
    return out.reshape(2, *samples.shape[1:])


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Elementwise ``numerator / denominator``, NaN where the denominator is 0."""
    numerator, denominator = np.asarray(numerator, float), np.asarray(denominator, float)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
