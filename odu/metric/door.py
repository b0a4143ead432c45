"""The ``evaluate`` metric door (``odu_metric/``): where its script is, installing it so that
``evaluate.load("odu_metric")`` resolves from any folder, and publishing it as a Hub community metric.

* :func:`metric_script`: ``odu_metric/odu_metric.py`` of the installed package (found without
  importing it), the path ``evaluate.load`` takes;
* :func:`install_metric` (``odu-bench install-metric``): ``evaluate`` resolves a bare name through
  the Hub (``evaluate-metric/<name>``) and, when the Hub does not answer or has no such module,
  falls back to its module cache, ``<HF_MODULES_CACHE>/evaluate_modules/metrics/evaluate-metric--<name>/<sha256>/<name>.py``
  (``evaluate.loading.CachedEvaluationModuleFactory``: directory names of exactly 64 characters,
  newest script wins). Writing the script there is all the literal call needs, offline or not;
* :func:`upload_metric` (``odu-bench upload-metric ORG/NAME``): a Space holding ``NAME.py`` (evaluate
  fetches ``{HF_ENDPOINT}/spaces/ORG/NAME/resolve/<revision>/NAME.py``: the script must be named
  after the repo), the metric card with the Space's front matter, and for a ``gradio`` Space
  evaluate's widget (``app.py``, ``requirements.txt``), as ``evaluate-cli create`` lays it out.

``evaluate`` and ``huggingface_hub`` are imported inside the functions.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from importlib.util import find_spec
from pathlib import Path

#: The metric's name: the door's folder and script, and the name ``evaluate.load`` resolves.
METRIC_NAME = "odu_metric"
#: Space SDKs a metric can be published with (of ``huggingface_hub``'s ``SPACES_SDK_TYPES``):
#: ``static`` (the default) hosts the files, all ``evaluate.load`` reads, and is free for everyone;
#: ``gradio`` also runs evaluate's widget, which needs compute: the Hub answers 402 (payment
#: required) to a free account creating one (``HfApi.create_repo``'s documentation and code).
SPACE_SDKS: tuple[str, ...] = ("gradio", "static")
#: ``sdk_version`` of a gradio Space (the Hub requires one; evaluate's widget runs on gradio 4 and 5).
GRADIO_SDK_VERSION = "4.44.1"


def metric_dir() -> Path:
    """The installed ``odu_metric`` folder (its script, card and package marker)."""
    spec = find_spec(METRIC_NAME)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {METRIC_NAME} folder is not installed (reinstall odu-bench)")
    return Path(next(iter(spec.submodule_search_locations)))


def metric_script() -> Path:
    """``odu_metric/odu_metric.py``: ``evaluate.load(str(metric_script().parent))`` loads it from anywhere."""
    script = metric_dir() / f"{METRIC_NAME}.py"
    if not script.is_file():
        raise FileNotFoundError(f"{script}: the metric script is missing (reinstall odu-bench)")
    return script


def install_metric(script: Path | None = None) -> Path:
    """Put the metric script where ``evaluate.load("odu_metric")`` finds it; returns the written file.

    Older copies (other hashes) are removed, so the bare name always loads this version. The
    location follows ``HF_HOME`` / ``HF_MODULES_CACHE``: run again after changing them.
    """
    from evaluate.loading import init_dynamic_modules

    source = script or metric_script()
    data = source.read_bytes()
    root = Path(init_dynamic_modules())  # <HF_MODULES_CACHE>/evaluate_modules, with its __init__.py
    family = root / "metrics" / f"evaluate-metric--{METRIC_NAME}"
    target = family / hashlib.sha256(data).hexdigest()
    for old in family.glob("*") if family.is_dir() else ():
        if old.is_dir() and old != target:
            shutil.rmtree(old)
    target.mkdir(parents=True, exist_ok=True)
    for package in (root / "metrics", family, target):
        (package / "__init__.py").touch()
    written = target / f"{METRIC_NAME}.py"
    written.write_bytes(data)
    return written


def space_files(repo_id: str, sdk: str = "static") -> dict[str, bytes]:
    """The files of the metric's Space ``repo_id``: ``<name>.py``, ``README.md`` and, for gradio, the widget."""
    if sdk not in SPACE_SDKS:
        raise ValueError(f"space SDK must be one of {SPACE_SDKS}, got {sdk!r}")
    name = repo_id.rsplit("/", 1)[-1]
    card = (metric_dir() / "README.md").read_text(encoding="utf-8")
    front, body = _split_front_matter(card)
    settings = [f"sdk: {sdk}", *([f"sdk_version: {GRADIO_SDK_VERSION}", "app_file: app.py"] if sdk == "gradio" else [])]
    files = {
        f"{name}.py": metric_script().read_bytes(),
        "README.md": ("---\n" + front + "\n".join([*settings, "pinned: false"]) + "\n---\n" + body).encode(),
    }
    if sdk == "gradio":
        files["app.py"] = (
            "import evaluate\nfrom evaluate.utils import launch_gradio_widget\n\n"
            f'module = evaluate.load("{repo_id}")\nlaunch_gradio_widget(module)\n'
        ).encode()
        files["requirements.txt"] = b"odu-bench\nevaluate\ngradio\n"
    return files


def _split_front_matter(card: str) -> tuple[str, str]:
    """``(front matter lines, body)`` of a card that starts with ``---`` YAML front matter."""
    if not card.startswith("---\n") or "\n---\n" not in card[4:]:
        raise ValueError("the metric card has no YAML front matter")
    front, body = card[4:].split("\n---\n", 1)
    return front + "\n", body


def upload_metric(
    repo_id: str,
    *,
    sdk: str = "static",
    private: bool | None = None,
    token: str | bool | None = None,
    commit_message: str = "Upload the ODU-Bench metric (odu-bench upload-metric)",
) -> str:
    """Create (if needed) the Space ``repo_id`` and commit the metric's files to it; returns the commit URL.
    ``evaluate.load(repo_id)`` then loads the metric (with ``odu-bench`` installed where it runs)."""
    from ..data.hub import push_folder

    if repo_id.count("/") != 1:
        raise ValueError(f"{repo_id}: a community metric lives in a Space ORG/NAME")
    files = space_files(repo_id, sdk)
    with tempfile.TemporaryDirectory(prefix="odu-metric-space-") as tmp:
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
        return push_folder(
            tmp,
            repo_id,
            "space",
            token=token,
            private=private,
            create={"space_sdk": sdk},
            commit_message=commit_message,
        )


__all__ = [
    "GRADIO_SDK_VERSION",
    "METRIC_NAME",
    "SPACE_SDKS",
    "install_metric",
    "metric_dir",
    "metric_script",
    "space_files",
    "upload_metric",
]
