"""lmms-eval's own code on the tiny checkpoints (docs/lmms-eval.md "Tests").

lmms-eval is installed beside odu-bench by ``scripts/install_lmms_eval.sh`` (its ``av<16`` pin
cannot be resolved next to our ``av>=17``). Without it, or without the real lane's ``[torch]``
extra, these tests skip; under ``ODU_REQUIRE_LMMS_EVAL=1`` (CI, ``.ci/run``) a skip is a failure.

lmms-eval 0.7.3's ``qwen2_5_omni`` backend runs on transformers 4 (it calls
``generate(return_audio=False)`` after ``disable_talker()``, which transformers 5 refuses): the runs put
the script's transformers 4 layer (:data:`TRANSFORMERS4`) first on ``PYTHONPATH``, and the tiny
checkpoint goes in the spelling transformers 4 reads (:func:`transformers4_checkpoint`). Two things
the backend needs that this machine lacks are supplied here, and nothing else:

* its processor comes from the Hub id ``Qwen/Qwen2.5-Omni-7B`` whatever ``pretrained`` says
  (``models/simple/qwen2_5_omni.py``: ``Qwen2_5OmniProcessor.from_pretrained("Qwen/Qwen2.5-Omni-7B")``):
  :func:`seed_processor` puts the tiny checkpoint's processor files in a private Hugging Face cache
  under that id, read with ``HF_HUB_OFFLINE=1``;
* it moves every input to ``"cuda"`` when ``device_map="auto"`` (and loads the model on
  ``cuda:N`` otherwise): :data:`CPU_RUNNER` starts lmms-eval's own CLI with ``BatchFeature.to`` sending
  ``"cuda"`` to the CPU when no GPU is present — the model, processor and backend code are lmms-eval's.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from support.real_lane import LANE_MODULES, missing_modules, skip_or_fail

#: Set by CI: lmms-eval must be installed, a missing package fails instead of skipping.
REQUIRED = os.environ.get("ODU_REQUIRE_LMMS_EVAL") == "1"
#: What lmms-eval's CLI and its Qwen2.5-Omni backend import, beside the real lane's packages.
LMMS_MODULES = ("lmms_eval", "qwen_omni_utils", "moviepy", "librosa", "loguru")
#: The transformers 4 layer ``scripts/install_lmms_eval.sh`` installs beside the environment.
TRANSFORMERS4 = Path(sys.prefix) / "odu-lmms-eval-transformers4"
#: The Hub id lmms-eval 0.7.3's qwen2_5_omni loads its processor from, and a made-up commit for it.
PROCESSOR_REPO = "Qwen/Qwen2.5-Omni-7B"
SEEDED_COMMIT = "0" * 39 + "1"
#: ``python -c`` program: lmms-eval's CLI, with inputs sent to "cuda" kept on the CPU when there is no
#: GPU; with ``$ODU_TEST_PROMPTS`` set, each model input's ``input_ids`` are appended there as a JSON
#: line (what reached the model, as the processor tokenised it).
CPU_RUNNER = """
import json, os, sys, torch
from transformers.feature_extraction_utils import BatchFeature
_to = BatchFeature.to
def _to_device(self, *args, **kwargs):
    if not torch.cuda.is_available():
        args = tuple("cpu" if a == "cuda" else a for a in args)
        kwargs = {k: "cpu" if v == "cuda" else v for k, v in kwargs.items()}
    log = os.environ.get("ODU_TEST_PROMPTS")
    if log and "input_ids" in self and args and isinstance(args[0], str):
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(self["input_ids"][0].tolist()) + "\\n")
    return _to(self, *args, **kwargs)
BatchFeature.to = _to_device
from lmms_eval.cli.dispatch import main
sys.argv[0] = "lmms-eval"
sys.exit(main())
"""


def require_lmms() -> None:
    """Skip (fail under :data:`REQUIRED`) when lmms-eval, its transformers 4 layer or the real lane's
    packages are missing."""
    missing = missing_modules((*LANE_MODULES, *LMMS_MODULES))
    if not (TRANSFORMERS4 / "transformers").is_dir():
        missing.append(f"the transformers 4 layer ({TRANSFORMERS4})")
    fix = "scripts/install_lmms_eval.sh (docs/lmms-eval.md)"
    skip_or_fail(missing, REQUIRED, "ODU_REQUIRE_LMMS_EVAL", "the lmms-eval tests need", fix)


def _rope_for_transformers4(node: Any) -> None:
    if isinstance(node, dict):
        rope = node.get("rope_parameters")
        if isinstance(rope, dict) and "mrope_section" in rope:
            node["rope_scaling"] = {"mrope_section": rope["mrope_section"], "rope_type": "default", "type": "default"}
            node["rope_theta"] = rope.get("rope_theta", 10000.0)
        for value in node.values():
            _rope_for_transformers4(value)


def transformers4_checkpoint(checkpoint: Path, out: Path) -> Path:
    """``checkpoint`` (saved by transformers 5) as transformers 4 reads it — the spelling of the published
    ``Qwen/Qwen2.5-Omni-7B`` files, which transformers 4 wrote: M-RoPE sections as ``rope_scaling`` (5
    writes ``rope_parameters``; 4 would fall back to the 7B's sections) and the named special tokens as
    an ``extra_special_tokens`` mapping (5 writes a list). Same weights, same processor values."""
    shutil.copytree(checkpoint, out)
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    _rope_for_transformers4(config)
    (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    tokenizer = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer["extra_special_tokens"] = {
        k: v
        for k, v in tokenizer.items()
        if k.endswith("_token") and k.split("_")[0] in ("audio", "image", "video", "vision")
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer, indent=2), encoding="utf-8")
    return out


def seed_processor(hub_cache: Path, checkpoint: Path, repo: str = PROCESSOR_REPO) -> Path:
    """A Hugging Face cache entry for ``repo`` (branch ``main``) holding ``checkpoint``'s processor
    files (everything but the weights), as ``huggingface_hub`` lays out a download; returns its folder."""
    entry = hub_cache / f"models--{repo.replace('/', '--')}"
    snapshot = entry / "snapshots" / SEEDED_COMMIT
    snapshot.mkdir(parents=True, exist_ok=True)
    for path in checkpoint.iterdir():
        if path.is_file() and path.suffix not in (".safetensors", ".bin", ".pt"):
            shutil.copy2(path, snapshot / path.name)
    (entry / "refs").mkdir(exist_ok=True)
    (entry / "refs" / "main").write_text(SEEDED_COMMIT, encoding="utf-8")
    return snapshot
