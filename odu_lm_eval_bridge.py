"""Lets plain ``lm_eval`` find the ODU-Bench models and tasks (lm-eval 0.4.13 has no plugin discovery),
and plain ``lmms-eval`` the ODU-Bench tasks (lmms-eval 0.7.3 reads no task entry points).

Installed with the package together with ``odu_lm_eval_bridge.pth``, which imports this module at
interpreter start-up. :func:`install` only puts a finder first on :data:`sys.meta_path`; the finder
does nothing until lm-eval itself imports

* ``lm_eval.models`` -> the ``odu-*`` names of our ``lm_eval.models`` entry points are registered as
  lazy ``"module:Class"`` placeholders (``odu`` is imported only when such a model is used; a name
  lm-eval already knows is never replaced);
* ``lm_eval.tasks`` -> ``TaskManager`` also indexes our task folder (:func:`task_dir`) whenever it
  indexes lm-eval's built-in tasks; the user's ``--include_path`` comes after ours, so it still wins;
* ``lmms_eval.tasks`` -> lmms-eval's ``TaskManager`` also indexes our lmms-eval task folder
  (:func:`lmms_task_dir`). lmms-eval keeps the *first* folder's task of a name, so ours goes after the
  user's ``--include_path``, which still wins. (``LMMS_EVAL_PLUGINS`` cannot do this in 0.7.3: its CLI
  reads it after building the ``TaskManager``; docs/lmms-eval.md.)

No ``odu`` import here, and only ``os`` and ``sys`` at start-up: a process that never imports lm-eval
pays for one small module. ``ODU_LM_EVAL_BRIDGE=0`` switches the bridge off. It steps aside on
lm-eval releases that read the entry points themselves (``load_plugins``, upstream PR #4013, for
models; ``discover_plugin_task_paths``, PR #4015, for the ``lm_eval.tasks`` entry point). A failure
is one ``RuntimeWarning``, never an error inside lm-eval.
"""

import os
import sys

# Only os and sys at run time: this module is imported at every interpreter start-up. mypy reads
# TYPE_CHECKING as true; the annotations are strings.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

#: Environment variable that switches the bridge off (``0``, ``false``, ``no``, ``off``).
ENV = "ODU_LM_EVAL_BRIDGE"
#: The distribution whose entry points are registered.
DIST = "odu-bench"
#: Where the task folder lies relative to this file: inside the package (wheel), else the source tree.
TASK_DIRS = (os.path.join("odu", "harness", "lm_eval_tasks"), "lm_eval_tasks")
#: The same for the lmms-eval task folder.
LMMS_TASK_DIRS = (os.path.join("odu", "harness", "lmms_eval_tasks"), "lmms_eval_tasks")


def _find_task_dir(relatives: "Sequence[str]") -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    for relative in relatives:
        path = os.path.join(here, relative)
        if os.path.isfile(os.path.join(path, "odu", "utils.py")):
            return path
    raise FileNotFoundError(f"the odu task folder is not installed next to {here} ({relatives[-1]}/odu)")


def task_dir() -> str:
    """The folder holding the ``odu`` task YAMLs: ``odu/harness/lm_eval_tasks`` of an installed
    wheel, or the source tree's top-level ``lm_eval_tasks`` (checkout, editable install)."""
    return _find_task_dir(TASK_DIRS)


def lmms_task_dir() -> str:
    """The folder holding the lmms-eval ``odu`` task YAMLs (``odu/harness/lmms_eval_tasks`` of a
    wheel, else the source tree's ``lmms_eval_tasks``)."""
    return _find_task_dir(LMMS_TASK_DIRS)


def _warn(what: str, exc: BaseException) -> None:
    import warnings

    warnings.warn(f"odu-bench: lm-eval bridge: {what}: {exc!r} (set {ENV}=0 to silence)", RuntimeWarning, stacklevel=2)


def _register_models(module: "ModuleType") -> None:
    from importlib.metadata import distribution

    from lm_eval.api import registry

    if hasattr(registry, "load_plugins"):  # lm-eval reads lm_eval.models entry points itself (PR #4013)
        return
    for ep in distribution(DIST).entry_points:
        if ep.group == "lm_eval.models" and ep.name not in registry.model_registry:
            registry.model_registry.register(ep.name, target=ep.value)  # "module:Class", imported on first use


def _add_task_dir(module: "Any") -> None:
    manager = module.TaskManager  # in lm_eval.tasks (<= 0.4.11) or lm_eval.tasks.manager (>= 0.4.12)
    if hasattr(sys.modules[manager.__module__], "discover_plugin_task_paths"):  # task entry points (PR #4015)
        return
    _index_also(manager, task_dir(), first=True)  # lm-eval: a later folder's task of a name wins


def _add_lmms_task_dir(module: "Any") -> None:
    _index_also(module.TaskManager, lmms_task_dir(), first=False)  # lmms-eval: the first folder's wins


def _index_also(manager: "Any", ours: str, first: bool) -> None:
    """Make ``manager`` (a ``TaskManager`` class) index ``ours`` with the default tasks: before the
    user's ``include_path`` (``first``) or after it, so that the user's tasks win either way."""
    import functools
    import inspect

    original = manager.__init__
    signature = inspect.signature(original)

    @functools.wraps(original)
    def __init__(self: "Any", *args: "Any", **kwargs: "Any") -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        if bound.arguments.get("include_defaults", True):
            given = bound.arguments.get("include_path")
            paths = [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given]
            if not any(os.path.realpath(p) == os.path.realpath(ours) for p in paths):
                bound.arguments["include_path"] = [ours, *paths] if first else [*paths, ours]
        original(*bound.args, **bound.kwargs)

    manager.__init__ = __init__


_HOOKS: "dict[str, Callable[[ModuleType], None]]" = {
    "lm_eval.models": _register_models,
    "lm_eval.tasks": _add_task_dir,
    "lmms_eval.tasks": _add_lmms_task_dir,
}


class _Loader:
    """Runs the real loader, then our hook on the fresh module."""

    def __init__(self, loader: "Loader", hook: "Callable[[ModuleType], None]") -> None:
        self._loader, self._hook = loader, hook

    def __getattr__(self, name: str) -> "Any":
        return getattr(self._loader, name)

    def create_module(self, spec: "ModuleSpec") -> "ModuleType | None":
        return self._loader.create_module(spec)

    def exec_module(self, module: "ModuleType") -> None:
        self._loader.exec_module(module)
        try:
            self._hook(module)
        except Exception as exc:  # never break lm-eval
            _warn(f"not applied on {module.__name__}", exc)


class _Finder:
    """A :data:`sys.meta_path` finder that only answers for the lm-eval modules we hook."""

    def find_spec(
        self, fullname: str, path: "Sequence[str] | None", target: "ModuleType | None" = None
    ) -> "ModuleSpec | None":
        hook = _HOOKS.get(fullname)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, hook)  # type: ignore[assignment]  # a Loader by its methods
        return spec


def install() -> None:
    """Put the finder first on :data:`sys.meta_path` (once), unless ``ODU_LM_EVAL_BRIDGE=0``."""
    if os.environ.get(ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder())
