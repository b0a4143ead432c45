"""The processes of one lm-eval run started by ``torchrun`` or ``accelerate launch`` (data parallel).

The launchers set ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` (torch.distributed's environment
initialization); :func:`join` joins their process group when an ``odu-*`` model is built: gloo on
CPU, NCCL on GPUs with each process on GPU ``LOCAL_RANK``. The model then declares its rank and the
number of processes, and lm-eval 0.4.13's ``evaluate`` gives each rank every ``WORLD_SIZE``-th doc
(``Task.build_all_requests(rank=, world_size=)``), pads the ranks to the same number of requests
(:func:`all_gather`), waits for all after generating (:func:`barrier`), and gathers the logged samples
and metrics to rank 0 (:func:`gather_object`), which alone returns results and so alone writes.
A single process (no ``WORLD_SIZE``, or 1) never imports torch here.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

#: The launchers' variables: this process's global rank, the number of processes, its rank on its machine.
RANK_ENV, WORLD_SIZE_ENV, LOCAL_RANK_ENV = "RANK", "WORLD_SIZE", "LOCAL_RANK"
#: How long a rank waits for the others at a collective: a rank whose scenes ran faster waits for the
#: slowest at the end of generation (lm-eval's HFLM gives Accelerate the same 52 weeks).
WAIT = timedelta(weeks=52)


@dataclass(frozen=True)
class Ranks:
    """This process's rank among ``size`` processes and the device its model goes on (None: one process)."""

    rank: int = 0
    size: int = 1
    device: str | None = None


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    try:
        return default if text in (None, "") else int(text)
    except ValueError:
        raise ValueError(
            f"${name} must be a whole number (set by torchrun or accelerate launch), got {text!r}"
        ) from None


def launched_rank() -> int:
    """This process's global rank as the launcher set it (0 when started alone)."""
    return _env_int(RANK_ENV, 0)


def join() -> Ranks:
    """This process's place among the launched processes, their process group joined (once)."""
    if _env_int(WORLD_SIZE_ENV, 1) <= 1:
        return Ranks()
    import torch
    import torch.distributed as dist

    gpu = torch.cuda.is_available()
    device = f"cuda:{_env_int(LOCAL_RANK_ENV, 0)}" if gpu else "cpu"
    if not dist.is_initialized():
        if gpu:
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if gpu else "gloo", timeout=WAIT)
    return Ranks(dist.get_rank(), dist.get_world_size(), device)


def running() -> bool:
    """True inside a process group of more than one process (torch imported only if it already is)."""
    if "torch.distributed" not in sys.modules:
        return False
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def all_gather(tensor: Any) -> Any:
    """``tensor`` of every rank, in rank order, as one tensor (a scalar's as a vector)."""
    import torch
    import torch.distributed as dist

    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor)
    return torch.stack(parts) if tensor.dim() == 0 else torch.cat(parts)


def gather_object(obj: Any, dst: int = 0) -> list[Any] | None:
    """``obj`` of every rank, in rank order, on rank ``dst``; None on the others."""
    import torch.distributed as dist

    gathered: list[Any] | None = [None] * dist.get_world_size() if dist.get_rank() == dst else None
    dist.gather_object(obj, gathered, dst=dst)
    return gathered


def all_gather_object(obj: Any) -> list[Any]:
    """``obj`` of every rank, in rank order, on every rank."""
    import torch.distributed as dist

    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, obj)
    return gathered


def barrier() -> None:
    """Wait until every rank gets here."""
    import torch.distributed as dist

    dist.barrier()


__all__ = [
    "LOCAL_RANK_ENV",
    "RANK_ENV",
    "WORLD_SIZE_ENV",
    "Ranks",
    "all_gather",
    "all_gather_object",
    "barrier",
    "gather_object",
    "join",
    "launched_rank",
    "running",
]
