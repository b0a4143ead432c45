"""``odu_lm_eval_bridge``: plain ``lm_eval`` finds the ``odu-*`` models and the ``odu*`` tasks.

Its hooks one by one (models registered lazily and never over a known name, our task folder
before the user's ``--include_path``, stepping aside on lm-eval releases with entry-point discovery
(upstream PRs #4013 / #4015, simulated by their marker functions), one warning on failure), then
the installed ``.pth`` in child processes: the off switch, and ``odu`` imported only when one of
our models is asked for. The wheel itself is exercised in ``tests/doors/test_wheel_acceptance.py``.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import types
import warnings
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import pytest

import odu_lm_eval_bridge as bridge
from odu.harness.folders import lmms_task_dir, task_dir

REPO = Path(__file__).resolve().parents[2]


def test_entry_points_name_the_registered_classes_exactly() -> None:
    """lm-eval 0.4.13 upgrades a ``"module:Class"`` placeholder to the class ``@register_model``
    decorates only when the string is exactly ``f"{cls.__module__}:{cls.__name__}"`` (else: "already
    registered"); PR #4013 does the same for entry points."""
    from odu.harness.models import MODELS

    declared = {ep.name: ep.value for ep in distribution(bridge.DIST).entry_points if ep.group == "lm_eval.models"}
    assert declared == {name: f"{cls.__module__}:{cls.__name__}" for name, cls in MODELS.items()}
    [tasks] = [ep for ep in distribution(bridge.DIST).entry_points if ep.group == "lm_eval.tasks"]
    assert tasks.value == "odu.harness.lm_eval_tasks"


def test_the_task_folder_of_a_checkout_is_the_top_level_door() -> None:
    """The checkout's ``odu`` reads the checkout's task folders, installed editable or from a wheel
    (``tests/doors/test_newcomer.py`` runs this test there): the folders are found from the package,
    and the bridge asks the package."""
    assert task_dir() == REPO / "lm_eval_tasks"
    assert (task_dir() / "odu" / "odu_av.yaml").is_file()
    assert lmms_task_dir() == REPO / "lmms_eval_tasks"
    assert not hasattr(bridge, "task_dir") and not hasattr(bridge, "TASK_DIRS")  # one owner: odu.harness.folders


def test_models_are_registered_lazily_and_never_over_a_known_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval.api import registry

    fresh = registry.Registry("model")
    fresh.register("odu-never", target="somewhere.else:Mine")  # a name the user registered first
    monkeypatch.setattr(registry, "model_registry", fresh)
    bridge._register_models(types.ModuleType("lm_eval.models"))
    assert fresh._objs["odu-never"] == "somewhere.else:Mine"  # kept as it was (not materialised here)
    from odu.harness.models import MODELS

    assert fresh.get("odu-openai") is MODELS["odu-openai"]  # the placeholder materialises on use

    empty = registry.Registry("model")
    monkeypatch.setattr(registry, "model_registry", empty)
    monkeypatch.setattr(registry, "load_plugins", lambda *a: None, raising=False)  # lm-eval with PR #4013
    bridge._register_models(types.ModuleType("lm_eval.models"))
    assert len(empty) == 0


class _Index:
    """Stands for lm-eval's TaskIndex: records the roots it is asked to index, indexes nothing."""

    roots: list[list[Path]] = []

    def build(self, paths: list[Path]) -> dict:
        self.roots.append(list(paths))
        return {}


def _hooked_manager(monkeypatch: pytest.MonkeyPatch, module_attrs: dict | None = None) -> type:
    import lm_eval.tasks.manager as manager

    monkeypatch.setattr(manager, "TaskIndex", _Index)
    _Index.roots = []
    base = manager.TaskManager.__init__
    unhooked = getattr(base, "__wrapped__", base)  # this process may run the bridge already (.pth)
    cls = type("TaskManager", (manager.TaskManager,), {"__module__": "hooked_manager", "__init__": unhooked})
    holder = types.ModuleType("hooked_manager")
    holder.__dict__.update(module_attrs or {})
    monkeypatch.setitem(sys.modules, "hooked_manager", holder)
    bridge._add_task_dir(types.SimpleNamespace(TaskManager=cls))
    return cls


def test_our_task_folder_comes_with_the_defaults_and_before_the_users(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = _hooked_manager(monkeypatch)
    ours = task_dir()
    manager()
    manager(include_path="/mine")
    manager(include_path=["/a", "/b"])
    manager(include_path=str(ours))  # given explicitly: not twice
    manager(include_path="/mine", include_defaults=False)  # no defaults: nothing added (odu-bench eval's way)
    builtin = _Index.roots[0][0]
    assert _Index.roots == [
        [builtin, ours],
        [builtin, ours, Path("/mine")],
        [builtin, ours, Path("/a"), Path("/b")],
        [builtin, ours],
        [Path("/mine")],
    ]


def test_the_task_hook_steps_aside_when_lm_eval_reads_task_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = _hooked_manager(monkeypatch, {"discover_plugin_task_paths": lambda: []})  # lm-eval with PR #4015
    manager()
    assert _Index.roots == [[_Index.roots[0][0]]]


@pytest.mark.parametrize("console", ["ours", "unimportable"])
def test_a_failing_hook_is_one_warning_and_the_module_still_loads(
    console: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One warning in the toolkit's voice (odu.io.console); Python's own RuntimeWarning when a broken
    install keeps even that from importing."""
    if console == "unimportable":
        monkeypatch.setitem(sys.modules, "odu.io.console", None)
    ran = []

    class Loader:
        def create_module(self, spec: object) -> None:
            return None

        def exec_module(self, module: types.ModuleType) -> None:
            ran.append(module.__name__)

    def broken(module: types.ModuleType) -> None:
        raise ModuleNotFoundError("package 'odu' not found")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bridge._Loader(Loader(), broken).exec_module(types.ModuleType("lm_eval.tasks"))
    assert ran == ["lm_eval.tasks"]
    [warning] = caught
    assert issubclass(warning.category, RuntimeWarning) and "ODU_LM_EVAL_BRIDGE=0" in str(warning.message)
    assert (warning.category is RuntimeWarning) == (console == "unimportable")
    said = (
        "odu-bench: lm-eval bridge: " if console == "unimportable" else "lm-eval bridge: "
    )  # the voice says odu-bench
    assert str(warning.message).startswith(said)


def _installed() -> bool:
    return any(Path(p, "odu_lm_eval_bridge.pth").is_file() for p in site.getsitepackages())


def _child(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != bridge.ENV} | env
    proc = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.skipif(not _installed(), reason="the .pth comes with pip install (-e) only")
def test_the_pth_installs_the_finder_unless_switched_off() -> None:
    probe = "import sys; print(any(type(f).__name__ == '_Finder' for f in sys.meta_path))"
    assert _child(probe) == "True"
    assert _child(probe, ODU_LM_EVAL_BRIDGE="0") == "False"


@pytest.mark.skipif(not _installed(), reason="the .pth comes with pip install (-e) only")
def test_odu_is_imported_only_when_one_of_our_models_is_asked_for() -> None:
    code = (
        "import json, sys\n"
        "from lm_eval.api.registry import get_model\n"
        "get_model('dummy'); before = 'odu' in sys.modules\n"
        "cls = get_model('odu-never')\n"
        "print(json.dumps([before, f'{cls.__module__}:{cls.__name__}']))"
    )
    assert json.loads(_child(code)) == [False, "odu.harness.models:OduNeverTrigger"]
    off = "from lm_eval.api.registry import get_model\ntry:\n    get_model('odu-never')\nexcept ValueError:\n    print('refused')"
    assert _child(off, ODU_LM_EVAL_BRIDGE="0") == "refused"


# --- issue 21: what a newcomer meets through the bridge ---------------------------------------------


def test_a_run_of_our_tasks_only_indexes_no_builtin_task(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """lm-eval's command line asking for ``odu*`` tasks only builds its TaskManager without lm-eval's
    ~14,700 built-in names (benchmarks/bench_startup.py); any other task, or one of ours redefined
    under ``--include_path``, gets the full index."""
    assert bridge._ours_only("odu_av,odu_ao", None) and bridge._ours_only(["odu"], None)
    assert not bridge._ours_only("odu_av,hellaswag", None) and not bridge._ours_only("", None)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "t.yaml").write_text("task: my_task\n", encoding="utf-8")
    assert bridge._ours_only("odu_av", [str(mine)]) and bridge._ours_only("odu_av", str(task_dir()))
    (mine / "odu_av.yaml").write_text("task: odu_av\n", encoding="utf-8")  # the user's odu_av overrides ours
    assert not bridge._ours_only("odu_av", [str(mine)])

    manager = _hooked_manager(monkeypatch)
    bridge._OURS_ONLY.append(True)
    try:
        manager(include_path="/mine")
    finally:
        bridge._OURS_ONLY.pop()
    assert _Index.roots == [[task_dir(), Path("/mine")]]  # no built-in folder

    config = types.SimpleNamespace(
        EvaluatorConfig=type("Config", (), {"process_tasks": lambda self: bool(bridge._OURS_ONLY)})
    )
    bridge._index_only_ours(config)
    ours, theirs = config.EvaluatorConfig(), config.EvaluatorConfig()
    ours.tasks, ours.include_path, theirs.tasks, theirs.include_path = "odu_av", None, "arc_easy", None
    assert ours.process_tasks() is True and theirs.process_tasks() is False and not bridge._OURS_ONLY


def test_the_git_lookup_is_quiet_and_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd) -> None:
    import lm_eval.loggers.utils as loggers

    module = types.SimpleNamespace(get_git_commit_hash=lambda: None, get_commit_from_path=loggers.get_commit_from_path)
    bridge._quiet_git(module)
    monkeypatch.chdir(tmp_path)  # no checkout here: git fails, the fallback reads no .git either
    assert module.get_git_commit_hash() is None
    assert "fatal" not in capfd.readouterr().err
    monkeypatch.chdir(REPO)
    if (REPO / ".git").exists():
        expected = subprocess.run(["git", "describe", "--always"], capture_output=True, text=True).stdout.strip()
        assert module.get_git_commit_hash() == expected


def test_lm_eval_s_table_ends_with_our_note_only_under_our_results() -> None:
    module = types.SimpleNamespace(make_table=lambda result_dict, column="results": "|table|\n")
    bridge._HOOKS["lm_eval.utils"](module)
    bridge._HOOKS["lm_eval.utils"](module)  # once
    caveat = {"kind": "limit", "text": "--limit 2: ..."}
    ours = {"odu": {"datasets": {"odu_av": {"source": "/d", "n_scenes": 2}}, "caveats": {"odu_av": [caveat]}}}
    assert module.make_table(ours) == (
        '|table|\nodu-bench: odu_av read /d (2 scenes)\nCaveats of these numbers (stored in results.json under "odu"):\n'
        "* odu_av: --limit 2: ...\n"
    )
    assert module.make_table(ours, "groups") == module.make_table({"results": {}}) == "|table|\n"


def test_eval_s_model_names_are_pointed_to_from_lm_eval() -> None:
    calls = []
    fake = types.SimpleNamespace(model_registry={"odu-openai": object()})

    def get_model(name: str):
        calls.append(name)
        raise ValueError(f"Attempted to load model '{name}'")

    fake.get_model = get_model
    bridge._point_to_our_names(fake)
    with pytest.raises(ValueError, match=r"(?s)model 'openai'.*is --model odu-openai in lm_eval"):
        fake.get_model("openai")
    with pytest.raises(ValueError, match=r"^Attempted to load model 'gpt9'$"):
        fake.get_model("gpt9")
    assert calls == ["openai", "gpt9"]


def test_the_metric_loads_by_name_and_a_missing_dataset_folder_fails_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from odu.metric.door import metric_script

    loaded = []
    evaluate = types.SimpleNamespace(load=lambda path, *a, **k: loaded.append(path))
    datasets = types.SimpleNamespace(load_dataset=lambda path, *a, **k: loaded.append(path))
    bridge._load_our_metric(evaluate)
    bridge._refuse_a_missing_dataset_folder(datasets)
    monkeypatch.chdir(tmp_path)
    evaluate.load("odu_metric")
    evaluate.load("ORG/odu_metric")
    with pytest.raises(FileNotFoundError, match=r"no folder \./odu-bench in .*Pass the folder's path"):
        datasets.load_dataset("odu-bench", "av_en")
    (tmp_path / "odu-bench").mkdir()  # from its parent folder the bare name is the folder: datasets' own way
    datasets.load_dataset("odu-bench", "av_en")
    assert loaded == [str(metric_script().parent), "ORG/odu_metric", "odu-bench"]


# --- issue 31: an error of ours is one line on lm-eval's command line too ----------------------------


@pytest.mark.skipif(not _installed(), reason="the .pth comes with pip install (-e) only")
@pytest.mark.parametrize("door", ["-m", "script"])
def test_plain_lm_eval_says_a_dead_server_in_one_line(door: str, tmp_path: Path) -> None:
    """``lm_eval --model odu-openai`` with no server: what ``odu-bench eval`` says (one line, exit 2),
    not lm-eval's 20-line traceback; through ``python -m lm_eval`` and the ``lm_eval`` script."""
    from support.openai_server import dead_url

    url = dead_url()
    script = Path(sys.executable).parent / "lm_eval"
    command = [sys.executable, "-m", "lm_eval"] if door == "-m" else [str(script)]
    args = ["--tasks", "odu_av", "--model", "odu-openai", "--model_args", f"model=m,base_url={url}", "--limit", "1"]
    environ = {k: v for k, v in os.environ.items() if k != bridge.ENV} | {"OPENAI_API_KEY": "sk-hunter2-1234"}
    proc = subprocess.run([*command, *args], env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "hunter2" not in proc.stdout + proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if "error" in line.lower()]
    assert line.startswith(f"lm-eval: error: preflight: model server {url} (model 'm'): cannot reach")
    assert line == proc.stderr.splitlines()[-1]


class _Cli:
    """Stands for lm-eval's ``HarnessCLI``: ``execute`` runs the subcommand, here ``args`` itself;
    ``parse_args`` gives no arguments."""

    _parser = types.SimpleNamespace(prog="lm-eval")

    def parse_args(self) -> Any:
        return types.SimpleNamespace()

    def execute(self, args: Any) -> Any:
        return args()


def _raise_in_odu(exc: Exception) -> None:
    """Raise ``exc`` from a frame of the package (as a model's constructor would)."""
    from odu.harness import models

    code = compile("def fail(exc):\n    raise exc\n", models.__file__, "exec")
    scope: dict[str, Any] = {}
    exec(code, scope)
    scope["fail"](exc)


def test_only_our_errors_become_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from odu.harness.errors import error_line
    from odu.transport.server_check import PreflightError

    module = types.SimpleNamespace(HarnessCLI=type("HarnessCLI", (_Cli,), {}))
    bridge._HOOKS["lm_eval._cli.harness"](module)
    bridge._HOOKS["lm_eval._cli.harness"](module)  # once
    cli = module.HarnessCLI()
    assert cli.execute(lambda: "ran") == "ran"
    with pytest.raises(SystemExit) as exited:
        cli.execute(lambda: _raise_in_odu(PreflightError("preflight: model server http://u:pw@h/v1: refused")))
    assert exited.value.code == 2
    assert capsys.readouterr().err == "lm-eval: error: preflight: model server http://h/v1: refused\n"
    with pytest.raises(KeyError):  # a bug of ours keeps its traceback
        cli.execute(lambda: _raise_in_odu(KeyError("m2")))

    def lm_eval_s_own() -> None:
        raise ValueError("Attempted to load model 'gpt9'")

    with pytest.raises(ValueError, match="gpt9"):  # lm-eval's own error: lm-eval's way
        cli.execute(lm_eval_s_own)
    try:
        _raise_in_odu(FileNotFoundError("no dataset at /d"))
    except FileNotFoundError as exc:
        assert error_line(exc) == "no dataset at /d"
