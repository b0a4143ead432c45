"""One way to put a wrapper of ours around an lm-eval attribute, once.

The start-up bridge does it when lm-eval starts (``odu_lm_eval_bridge._wrapped_on_first_call``);
``odu-bench lm-eval`` with the bridge switched off does it here. Either marks what it put in place
with :data:`MARK`, so the other never wraps twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The attribute set on a wrapper of ours (the bridge sets the same name).
MARK = "odu_bridge"


def wrap_once(owner: Any, name: str, wrapper: Callable[[Any], Any]) -> None:
    """Replace ``owner.name`` by ``wrapper(owner.name)``, marked, unless a wrapper of ours is there already."""
    original = getattr(owner, name)
    if getattr(original, MARK, False):
        return
    wrapped = wrapper(original)
    setattr(wrapped, MARK, True)
    setattr(owner, name, wrapped)


__all__ = ["MARK", "wrap_once"]
