"""A loopback test server in its own process, as a real server would be, for the benchmarks."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def server_process(serve: Callable[[float, Any, Any], None], latency: float) -> Iterator[str]:
    """Start ``serve(latency, ready, stop)`` in a spawned process; yield the base URL it puts on
    ``ready``; set ``stop`` and join on exit."""
    ctx = multiprocessing.get_context("spawn")
    ready, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=serve, args=(latency, ready, stop), daemon=True)
    server.start()
    try:
        yield ready.get(timeout=60)
    finally:
        stop.set()
        server.join(timeout=10)
