"""Scene bootstrap (App E.1 "Scene-bootstrap procedure"), vectorised with numpy.

Every statistic the report bootstraps is a function of *weighted sums of per-scene columns*
(hits and point counts, scene scores and their definedness, confusion-matrix indicators). A
resample is a vector of scene multiplicities ``w`` (how often each scene was drawn), so one
matrix product ``W @ X`` gives the sums of every column for every resample at once.

Draws depend only on ``(seed, population name, number of scenes)``: every system and every
statistic over the same population sees the SAME draws, as in App E.1. Asked to cluster
(``clusters``), the bootstrap draws whole clusters of scenes instead (each drawn cluster brings
all its scenes), and :class:`SceneSwaps` draws the relabellings of a paired permutation test
(:mod:`odu.report.paired`) by the same rules.

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
from collections.abc import Iterator, Sequence

import numpy as np

#: Scene bootstrap (App E.1 "Scene-bootstrap procedure"): resamples and the percentile interval.
BOOTSTRAP_RESAMPLES = 10_000
#: Our choice: the most resamples ``--resamples`` takes (``report``, ``view``, ``export``), ten times
#: App E.1's 10,000. Time and the (resamples x metrics) sums grow with it; at 10,000 the percentile
#: interval's Monte-Carlo error is already far below a scene's weight, and an unbounded count ran
#: out of memory.
MAX_RESAMPLES = 100_000
BOOTSTRAP_PERCENTILES: tuple[float, float] = (2.5, 97.5)
#: Our choice: the default seed of every report bootstrap (the paper does not give its seed).
BOOTSTRAP_SEED = 20_260_501

#: Resamples drawn per block: bounds memory to ``block x scenes`` multiplicities.
_BLOCK = 1000


class SceneDraws:
    """Reproducible blocks of per-scene weights ``(rows, n)``, drawn per scene or, with
    ``clusters``, per cluster (every scene of a cluster gets its cluster's weight).

    ``clusters`` labels each scene with a cluster index in ``0 .. G-1`` (:func:`cluster_codes`).
    Subclasses say how one block of weights over ``units`` (scenes or clusters) is drawn."""

    def __init__(
        self,
        n: int,
        resamples: int = BOOTSTRAP_RESAMPLES,
        seed: int = BOOTSTRAP_SEED,
        population: str = "",
        clusters: Sequence[int] | np.ndarray | None = None,
    ) -> None:
        if n < 1 or resamples < 1:
            raise ValueError(f"bootstrap needs scenes and resamples (got n={n}, resamples={resamples})")
        self.n, self.resamples, self.seed, self.population = n, resamples, seed, population
        self.clusters = None if clusters is None else np.asarray(clusters, dtype=np.int64)
        if self.clusters is not None and (self.clusters.shape != (n,) or self.clusters.min() < 0):
            raise ValueError(f"clusters must label each of the {n} scenes with an index >= 0")
        self.units = n if self.clusters is None else int(self.clusters.max()) + 1

    def _draw(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        """One block ``(rows, units)`` of weights."""
        raise NotImplementedError

    def blocks(self) -> Iterator[np.ndarray]:
        """Weight blocks ``(rows, n)``; regenerated identically on every call."""
        rng = np.random.default_rng([self.seed, zlib.crc32(self.population.encode())])
        done = 0
        while done < self.resamples:
            rows = min(_BLOCK, self.resamples - done)
            block = self._draw(rng, rows)
            yield (block if self.clusters is None else block[:, self.clusters]).astype(np.float64)
            done += rows

    def weights(self) -> np.ndarray:
        """All draws as a ``(resamples, n)`` matrix."""
        return np.concatenate(list(self.blocks()))

    def weighted_sums(self, columns: np.ndarray) -> np.ndarray:
        """``(resamples, k)`` sums of the ``(n, k)`` per-scene ``columns`` under each draw."""
        columns = np.asarray(columns, dtype=np.float64)
        if columns.ndim != 2 or columns.shape[0] != self.n:
            raise ValueError(f"expected ({self.n}, k) columns, got {columns.shape}")
        return np.concatenate([block @ columns for block in self.blocks()])


class SceneBootstrap(SceneDraws):
    """Resamples of ``n`` scenes drawn uniformly with replacement, reproducible from the seed; with
    ``clusters``, the clusters are drawn (a cluster bootstrap) and each brings all its scenes."""

    def _draw(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        units = self.units
        dtype = np.int32 if rows * units < 2**31 else np.int64
        draws = rng.integers(0, units, size=(rows, units), dtype=dtype)
        draws += (np.arange(rows, dtype=dtype) * units)[:, None]  # row r counts in [r*units, (r+1)*units)
        return np.bincount(draws.ravel(), minlength=rows * units).reshape(rows, units)

    def multiplicities(self) -> np.ndarray:
        """All resamples as a ``(resamples, n)`` matrix of draw counts."""
        return self.weights()


class SceneSwaps(SceneDraws):
    """Random relabellings of a paired comparison: per draw, each scene (or, with ``clusters``,
    each cluster) is 1 when its two systems' outputs are swapped, 0 when not, each with
    probability 1/2 (the paired permutation test's null distribution)."""

    def _draw(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        return rng.integers(0, 2, size=(rows, self.units), dtype=np.int8)


def cluster_codes(values: Sequence[object]) -> tuple[np.ndarray, list[str]]:
    """Each value's cluster index (clusters in sorted order of their text) and the cluster names.

    >>> codes, names = cluster_codes(["zh", "en", "zh"])
    >>> codes.tolist(), names
    ([1, 0, 1], ['en', 'zh'])
    """
    names = sorted({str(v) for v in values})
    index = {name: i for i, name in enumerate(names)}
    return np.array([index[str(v)] for v in values], dtype=np.int64), names


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
