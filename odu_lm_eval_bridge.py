"""Lets plain ``lm_eval`` find the ODU-Bench models and tasks (lm-eval 0.4.13 has no plugin discovery),
plain ``lmms-eval`` the ODU-Bench tasks (lmms-eval 0.7.3 reads no task entry points), and keeps the
names a newcomer types (``odu-bench``, ``odu_metric``) from dead ends.

Installed with the package together with ``odu_lm_eval_bridge.pth``, which imports this module at
interpreter start-up. :func:`install` only puts a finder first on :data:`sys.meta_path`; the finder
does nothing until one of these modules is imported, then hooks it:

* ``lm_eval.models`` -> the ``odu-*`` names of our ``lm_eval.models`` entry points are registered as
  lazy ``"module:Class"`` placeholders (``odu`` is imported only when such a model is used; a name
  lm-eval already knows is never replaced); an unknown ``--model openai`` names ``odu-openai``;
* ``lm_eval.tasks`` -> ``TaskManager`` also indexes our task folder (:func:`task_dir`) whenever it
  indexes lm-eval's built-in tasks; the user's ``--include_path`` comes after ours, so it still wins;
* ``lmms_eval.tasks`` -> lmms-eval's ``TaskManager`` also indexes our lmms-eval task folder
  (:func:`lmms_task_dir`). lmms-eval keeps the *first* folder's task of a name, so ours goes after the
  user's ``--include_path``, which still wins. (``LMMS_EVAL_PLUGINS`` cannot do this in 0.7.3: its CLI
  reads it after building the ``TaskManager``; docs/lmms-eval.md.)
* ``lmms_eval.evaluator`` -> the results of ``simple_evaluate`` (lmms-eval's ``results.json``) say what
  the backend misses of each ODU-Bench task's clips, e.g. frames only (``odu.harness.lmms.noting_pitfalls``);
* ``lm_eval.config.evaluate_config`` -> a command line asking only for our tasks skips the index of
  lm-eval's ~14,700 built-in task names (13 s, docs/performance.md), which none of them needs;
* ``lm_eval.loggers.utils`` -> its git lookup keeps ``fatal: not a git repository`` off the console;
* ``lm_eval.utils`` -> the printed results table ends with the dataset each ODU-Bench task read and
  the caveats of its numbers (``odu.harness.annotate``);
* ``lm_eval._cli.harness`` -> the model arguments of our models that would carry a credential into
  what lm-eval prints and writes are refused as soon as they are parsed, in one line
  (``odu.harness.arguments``); an error of ours that names its cause (a model server failing its
  preflight, a missing dataset) is one line and exit 2, not a traceback (``odu.harness.errors``);
* ``lm_eval._cli.utils`` -> its parser of JSON arguments fails without printing the argument
  (``odu.harness.arguments``);
* ``evaluate`` -> ``evaluate.load("odu_metric")`` loads the installed metric (no Hub round trip);
* ``datasets`` -> ``load_dataset("odu-bench", ...)`` where no ``./odu-bench`` folder exists fails at
  once, naming the fix, instead of trying the Hub and then serving an older cached copy.

No ``odu`` import here, and only ``os`` and ``sys`` at start-up: a process that never imports these
modules pays for one small module. ``ODU_LM_EVAL_BRIDGE=0`` switches the bridge off. It steps aside
on lm-eval releases that read the entry points themselves (``load_plugins``, upstream PR #4013, for
models; ``discover_plugin_task_paths``, PR #4015, for the ``lm_eval.tasks`` entry point). A failure
is one ``RuntimeWarning`` (``odu-bench: warning: lm-eval bridge: ...``, ``odu.io.console``), never an
error inside lm-eval.
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


def _warn(what: str, exc: BaseException) -> None:
    """One warning in the toolkit's voice (``odu.io.console``); Python's own ``RuntimeWarning`` when
    even that cannot be imported (a broken install may be what failed)."""
    import warnings

    message = f"lm-eval bridge: {what}: {exc!r} (set {ENV}=0 to silence)"
    try:
        from odu.io.console import LmEvalBridgeWarning, say_in_our_voice
    except Exception:
        warnings.warn(f"odu-bench: {message}", RuntimeWarning, stacklevel=2)
        return
    say_in_our_voice()
    warnings.warn(message, LmEvalBridgeWarning, stacklevel=2)


#: The prefix of our lm-eval model names (``odu.models.LM_EVAL_PREFIX``).
MODEL_PREFIX = "odu-"


def _register_models(module: "ModuleType") -> None:
    from importlib.metadata import distribution

    from lm_eval.api import registry

    if hasattr(registry, "load_plugins"):  # lm-eval reads lm_eval.models entry points itself (PR #4013)
        return
    for ep in distribution(DIST).entry_points:
        if ep.group == "lm_eval.models" and ep.name not in registry.model_registry:
            registry.model_registry.register(ep.name, target=ep.value)  # "module:Class", imported on first use


def _point_to_our_names(registry: "Any") -> None:
    """``--model openai`` (``odu-bench eval``'s spelling) fails naming ``odu-openai``, lm-eval's
    (``registry``: ``lm_eval.api.registry``, whose ``get_model`` lm-eval looks up at each call)."""
    import functools

    original = registry.get_model
    if getattr(original, "odu_bridge", False):
        return

    @functools.wraps(original)
    def get_model(model_name: str) -> "Any":
        try:
            return original(model_name)
        except ValueError as exc:
            ours = MODEL_PREFIX + str(model_name)
            if ours not in registry.model_registry:
                raise
            raise ValueError(
                f"{exc}\nodu-bench: the ODU-Bench backend {model_name!r} is --model {ours} in lm_eval "
                f"(odu-bench eval --model takes either spelling)"
            ) from exc

    get_model.odu_bridge = True  # type: ignore[attr-defined]
    registry.get_model = get_model


def _add_task_dir(module: "Any") -> None:
    manager = module.TaskManager  # in lm_eval.tasks (<= 0.4.11) or lm_eval.tasks.manager (>= 0.4.12)
    if hasattr(sys.modules[manager.__module__], "discover_plugin_task_paths"):  # task entry points (PR #4015)
        return
    # lm-eval: a later folder's task of a name wins; a command line asking for our tasks only skips its own
    from odu.harness.folders import task_dir

    _index_also(manager, str(task_dir()), first=True, ours_only=lambda: bool(_OURS_ONLY))


def _add_lmms_task_dir(module: "Any") -> None:
    from odu.harness.folders import lmms_task_dir

    _index_also(module.TaskManager, str(lmms_task_dir()), first=False)  # lmms-eval: the first folder's wins


def _index_also(manager: "Any", ours: str, first: bool, ours_only: "Callable[[], bool]" = lambda: False) -> None:
    """Make ``manager`` (a ``TaskManager`` class) index ``ours`` with the default tasks: before the
    user's ``include_path`` (``first``) or after it, so that the user's tasks win either way; without
    the default tasks while ``ours_only()``."""
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
            if ours_only():
                bound.arguments["include_defaults"] = False
        original(*bound.args, **bound.kwargs)

    manager.__init__ = __init__


# --- lm-eval's command line: only the index it needs, a quiet git lookup, caveats under the table ----

#: Set while lm-eval's command line builds the TaskManager of a run that asks for our tasks only.
_OURS_ONLY: "list[bool]" = []


def _ours_only(tasks: "Any", include_path: "Any") -> bool:
    """Whether every requested task is one of ours and no ``--include_path`` folder redefines it."""
    requested = [
        t.strip() for item in ([tasks] if isinstance(tasks, str) else tasks or []) for t in str(item).split(",")
    ]
    if not requested or not all(requested):
        return False
    from odu.harness.folders import task_dir, task_names

    ours = str(task_dir())
    if not set(requested) <= task_names(os.path.join(ours, "odu")):
        return False
    given = [] if include_path is None else include_path if isinstance(include_path, (list, tuple)) else [include_path]
    # odu-bench lm-eval passes our own folder as --include_path: only other folders can redefine a task
    theirs = [str(p) for p in given if os.path.realpath(str(p)) != os.path.realpath(ours)]
    return not any(set(requested) & task_names(p) for p in theirs)


def _index_only_ours(module: "Any") -> None:
    """``EvaluatorConfig.process_tasks`` builds its TaskManager without lm-eval's built-in tasks
    when the run asks for ours only (the user's ``--include_path`` is still indexed)."""
    import functools

    config = module.EvaluatorConfig
    original = config.process_tasks

    @functools.wraps(original)
    def process_tasks(self: "Any", *args: "Any", **kwargs: "Any") -> "Any":
        if not _ours_only(self.tasks, self.include_path):
            return original(self, *args, **kwargs)
        _OURS_ONLY.append(True)
        try:
            return original(self, *args, **kwargs)
        finally:
            _OURS_ONLY.pop()

    config.process_tasks = process_tasks


def _quiet_git(module: "Any") -> None:
    """lm-eval's ``get_git_commit_hash`` with git's stderr discarded (outside a checkout git prints
    ``fatal: not a git repository`` on the console); the same lookup and fallback otherwise."""
    import subprocess

    fallback = module.get_commit_from_path

    def get_git_commit_hash() -> "str | None":
        try:
            out = subprocess.check_output(["git", "describe", "--always"], stderr=subprocess.DEVNULL)
            return out.strip().decode()
        except (subprocess.CalledProcessError, FileNotFoundError):
            return fallback(os.getcwd())

    get_git_commit_hash.__doc__ = module.get_git_commit_hash.__doc__
    module.get_git_commit_hash = get_git_commit_hash


# --- the names a newcomer types: evaluate.load("odu_metric"), load_dataset("odu-bench") -------------

#: The metric's name (``odu.metric.door.METRIC_NAME``) and the dataset's bare name (the prepared folder).
METRIC_NAME, DATASET_NAME = "odu_metric", "odu-bench"


def _load_our_metric(module: "Any") -> None:
    """``evaluate.load("odu_metric")`` (no such folder or script here) loads the installed metric by path."""
    import functools

    original = module.load

    @functools.wraps(original)
    def load(path: "Any", *args: "Any", **kwargs: "Any") -> "Any":
        if path == METRIC_NAME and not os.path.exists(METRIC_NAME) and not os.path.exists(METRIC_NAME + ".py"):
            from odu.metric.door import metric_script

            path = str(metric_script().parent)
        return original(path, *args, **kwargs)

    module.load = load


def _refuse_a_missing_dataset_folder(module: "Any") -> None:
    """``datasets.load_dataset("odu-bench", ...)`` with no ``./odu-bench`` here: a clear error at once."""
    import functools

    original = module.load_dataset

    @functools.wraps(original)
    def load_dataset(path: "Any", *args: "Any", **kwargs: "Any") -> "Any":
        if path == DATASET_NAME and not os.path.exists(DATASET_NAME):
            raise FileNotFoundError(
                f"load_dataset({DATASET_NAME!r}): no folder ./{DATASET_NAME} in {os.getcwd()}. The bare name means "
                "a prepared folder of that name in the current folder; elsewhere datasets would ask the Hub (about "
                "25 s of retries) and then serve a copy it cached earlier, which may be stale. Pass the folder's "
                f"path: load_dataset('/path/to/{DATASET_NAME}', 'av_en', split='test') (odu-bench prepare and "
                f"download print it), or make one here: odu-bench prepare --sample --out {DATASET_NAME}"
            )
        return original(path, *args, **kwargs)

    module.load_dataset = load_dataset


def _wrapped_on_first_call(attribute: str, wrapper: str) -> "Callable[[ModuleType], None]":
    """A hook putting ``odu``'s wrapper (``"module:function"``, which takes the original and returns
    its replacement) around ``attribute`` of the hooked module (``"name"`` or ``"Class.name"``),
    once. The wrapper lives in the harness; it is imported at the first call, so a process that
    never calls it never imports ``odu``."""

    def hook(module: "ModuleType") -> None:
        import functools
        from importlib import import_module

        owner_name, _, name = attribute.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        original = getattr(owner, name)
        if getattr(original, "odu_bridge", False):
            return
        replacement: list[Callable[..., Any]] = []

        @functools.wraps(original)
        def call(*args: "Any", **kwargs: "Any") -> "Any":
            if not replacement:
                where, _, function = wrapper.partition(":")
                replacement.append(getattr(import_module(where), function)(original))
            return replacement[0](*args, **kwargs)

        call.odu_bridge = True  # type: ignore[attr-defined]
        setattr(owner, name, call)

    return hook


def _each(*hooks: "Callable[[ModuleType], None]") -> "Callable[[ModuleType], None]":
    """One hook running ``hooks`` in order; one that fails is one ``RuntimeWarning``, the others still apply."""

    def hook(module: "ModuleType") -> None:
        for one in hooks:
            try:
                one(module)
            except Exception as exc:  # never break lm-eval
                _warn(f"not applied on {module.__name__}", exc)

    return hook


_HOOKS: "dict[str, Callable[[ModuleType], None]]" = {
    "lm_eval.models": _register_models,
    "lm_eval.api.registry": _point_to_our_names,
    "lm_eval.tasks": _add_task_dir,
    "lmms_eval.tasks": _add_lmms_task_dir,
    "lmms_eval.evaluator": _wrapped_on_first_call("simple_evaluate", "odu.harness.lmms:noting_pitfalls"),
    "lm_eval.config.evaluate_config": _index_only_ours,
    "lm_eval.loggers.utils": _quiet_git,
    "lm_eval.utils": _wrapped_on_first_call("make_table", "odu.harness.annotate:with_table_note"),
    "lm_eval._cli.harness": _each(
        _wrapped_on_first_call("HarnessCLI.parse_args", "odu.harness.arguments:refusing_credentials"),
        _wrapped_on_first_call("HarnessCLI.execute", "odu.harness.errors:with_one_line_errors"),
    ),
    "lm_eval._cli.utils": _wrapped_on_first_call("try_parse_json", "odu.harness.arguments:json_errors_unshown"),
    "evaluate": _load_our_metric,
    "datasets": _refuse_a_missing_dataset_folder,
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
