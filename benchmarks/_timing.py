"""Timing for the benchmarks: the best of several runs, the one least disturbed by other load on a
shared machine."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(
    repeats: int, fn: Callable[[], object], clock: Callable[[], float] = time.perf_counter, warm_up: bool = False
) -> float:
    """The shortest of ``repeats`` calls of ``fn`` on ``clock``, in seconds (after one uncounted
    call with ``warm_up``)."""
    if warm_up:
        fn()
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)
