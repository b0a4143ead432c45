"""The run card: what makes one evaluation run reproducible, written beside its results.

``run_card.json`` holds the dataset fingerprint (source, config, revision, a content hash of the
scenes and clips evaluated, the prepared directory's manifest hash), the prompt version, the model
backend and its settings (server, model id, media handling: fps, max frames, audio sample rate,
audio-in-video handling; generation settings), the judge (model, prompt version, accounting), the
ASR source of text-only runs, package versions, and ``pitfalls``: settings known to make results
incomparable with Table 3 (audio dropped from video, sampling on, answers cut short, an
approximate judge, ...). Secrets never enter it: backends report the *name* of the variable that
holds a key, and URLs lose credentials.

The lm-eval tasks record what they load and how they score in :data:`RECORDER` (one per process);
the model part comes from lm-eval's ``results["config"]`` (our models' ``get_model_info``).
"""

from __future__ import annotations

import platform
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from ..core.prompts import PROMPT_VERSION, prompt_fingerprint
from ..io.jsonio import write_json
from ..io.scrub import scrub_value
from ..models import lm_eval_system_label
from ..runs.contract import RUN_CARD_NAME

#: Packages whose versions change results or their reading.
PACKAGES: tuple[str, ...] = (
    "odu-bench",
    "lm-eval",
    "datasets",
    "openai",
    "av",
    "soundfile",
    "numpy",
    "pyarrow",
    "rapidfuzz",
    "transformers",
    "torch",
)


@dataclass
class RunRecorder:
    """What the tasks of this process loaded and how they scored, keyed by task."""

    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    judges: dict[str, dict[str, Any]] = field(default_factory=dict)
    asr: dict[str, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, kind: str, key: str, info: Mapping[str, Any]) -> None:
        with self._lock:
            getattr(self, kind)[key] = dict(info)

    def clear(self, *kinds: str) -> None:
        """Forget what was recorded: ``kinds`` (``datasets``, ``judges``, ``asr``), or everything."""
        with self._lock:
            for kind in kinds or ("datasets", "judges", "asr"):
                getattr(self, kind).clear()


#: The recorder of this process.
RECORDER = RunRecorder()


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _public_args(model_args: Any) -> Any:
    """Model arguments with credentials dropped from any URL (lm-eval's own results keep them)."""
    return scrub_value(model_args) if isinstance(model_args, Mapping) else model_args


def _judge_pitfalls(judges: Mapping[str, Mapping[str, Any]]) -> list[str]:
    out = []
    for key, info in judges.items():
        if info.get("approximate"):
            out.append(
                f"{key}: M2 from the approximate {info.get('name')} judge, not the paper's LLM judge "
                "(App D.3): not comparable with Table 3"
            )
        if info.get("errors"):
            out.append(f"{key}: {info['errors']} judge error(s) remain (excluded from M2, reported apart)")
    return out


def build_run_card(
    results: Mapping[str, Any], recorder: RunRecorder = RECORDER, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The run card of an lm-eval ``results`` dict (``simple_evaluate``'s return value)."""
    config = results.get("config", {}) or {}
    model_args = config.get("model_args")
    backend = config.get("odu_backend")
    pitfalls = list(config.get("odu_pitfalls") or [])
    if backend is None:
        pitfalls.append(f"model {config.get('model')!r} is not an ODU-Bench backend: its settings are not recorded")
    tasks = {
        name: {
            "version": (cfg.get("metadata") or {}).get("version"),
            "generation_kwargs": cfg.get("generation_kwargs"),
            "n_samples": (results.get("n-samples", {}).get(name) or {}).get("effective"),
        }
        for name, cfg in (results.get("configs") or {}).items()
    }
    if config.get("limit"):
        pitfalls.append(f"--limit {config['limit']}: a subset of the scenes, not the benchmark")
    pitfalls += _judge_pitfalls(recorder.judges)
    date = results.get("date")
    if isinstance(date, (int, float)):
        date = datetime.fromtimestamp(date, tz=timezone.utc).isoformat(timespec="seconds")
    return {
        "format": "odu-bench-run-card/1",
        "system": lm_eval_system_label(config.get("model"), model_args),
        "date": date,
        "prompt": {"version": PROMPT_VERSION, "sha256": prompt_fingerprint()},
        "dataset": dict(recorder.datasets),
        "tasks": tasks,
        "model": {
            "name": config.get("model"),
            "model_args": _public_args(model_args),
            "backend": backend,
        },
        "judge": dict(recorder.judges),
        "asr": dict(recorder.asr) or None,
        "lm_eval": {
            "limit": config.get("limit"),
            "use_cache": config.get("use_cache"),
            "bootstrap_iters": config.get("bootstrap_iters"),
            "git_hash": results.get("git_hash"),
        },
        "packages": package_versions(),
        "pitfalls": pitfalls,
        **(dict(extra) if extra else {}),
    }


def write_run_card(
    results: Mapping[str, Any],
    out_dir: str | Path,
    recorder: RunRecorder = RECORDER,
    extra: Mapping[str, Any] | None = None,
    name: str = RUN_CARD_NAME,
) -> Path:
    """Write the run card of ``results`` as ``out_dir/name``; returns its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    write_json(
        path, scrub_value(build_run_card(results, recorder, extra)), default=str
    )  # replaced, never through a link
    return path


__all__ = ["RECORDER", "RunRecorder", "build_run_card", "package_versions", "write_run_card"]
