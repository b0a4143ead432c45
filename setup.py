"""What setup.cfg cannot say: the doors' folders inside the package, and the lm-eval bridge's ``.pth``.

* ``lm_eval_tasks/`` (the task YAMLs) is the source folder of the package ``odu.harness.lm_eval_tasks``,
  so a wheel holds the tasks inside ``odu`` while the repository keeps them at its top level, where
  ``lm_eval --include_path lm_eval_tasks`` finds them from a checkout; ``lmms_eval_tasks/`` (the
  lmms-eval task YAMLs) likewise becomes ``odu.harness.lmms_eval_tasks``;
* ``odu_lm_eval_bridge.pth`` goes to the root of site-packages (see ``odu_lm_eval_bridge.py``).
"""

from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

PTH = "odu_lm_eval_bridge.pth"


class BuildPyWithPth(build_py):
    """build_py that also copies the bridge's ``.pth`` next to the packages: into ``build_lib`` for a
    wheel, into the editable wheel itself for ``pip install -e`` (PEP 660 ignores ``build_lib`` there)."""

    def run(self) -> None:
        super().run()
        root = self.get_finalized_command("install").install_lib if self.editable_mode else self.build_lib
        self.copy_file(str(Path(__file__).parent / PTH), str(Path(root) / PTH))


setup(
    packages=[
        *find_packages(include=["odu", "odu.*"]),
        "odu.harness.lm_eval_tasks",
        "odu.harness.lmms_eval_tasks",
        "odu_metric",
    ],
    package_dir={"odu.harness.lm_eval_tasks": "lm_eval_tasks", "odu.harness.lmms_eval_tasks": "lmms_eval_tasks"},
    cmdclass={"build_py": BuildPyWithPth},
)
