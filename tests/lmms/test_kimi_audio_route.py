"""The Kimi-Audio route (Table 3, AO): lmms-eval 0.7.3's own ``kimi_audio`` backend runs ``odu_ao``.

What cannot run here, and only that, is stood in for: the model runtime ``kimia_infer.api.kimia.KimiAudio``
(MoonshotAI/Kimi-Audio, not on PyPI; it loads 7B weights and calls ``torch.cuda.current_device()``
unconditionally) and ``torch.cuda.set_device`` (the backend's ``__init__`` calls it for its
``cuda:N`` device). The stand-in refuses what Kimi-Audio's prompt manager refuses
(``kimia_infer/api/prompt_manager.py`` ``get_prompt``: roles ``user`` / ``assistant`` only;
``tokenize_message``: ``message_type`` ``text`` or ``audio``, an audio message's content a wav path it
loads) and records the chats. lmms-eval's backend code — request loop, prompt assembly, the temporary
WAV files it writes from our audio arrays, generation settings — runs as released.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from support.lmms_lane import require_lmms
from support.process import fresh_env

from odu.data.sample import sample_dataset_dir
from odu.harness import lmms

#: The stand-in's answer for every scene (a valid no-demand answer).
ANSWER = '{"has_demand": false, "segments": []}'
STAND_IN = f'''
"""Stand-in for kimia_infer.api.kimia (tests/lmms/test_kimi_audio_route.py)."""
import soundfile as sf

CHATS = []


class _TextTokenizer:  # kimia_infer/models/tokenizer/glm4_tokenizer.py: encode(text, bos, eos), decode(ids)
    eos_token_id = 0

    def encode(self, text, bos=False, eos=False):
        return list(text.encode("utf-8"))

    def decode(self, ids):
        return ""


class _PromptManager:
    text_tokenizer = _TextTokenizer()


class KimiAudio:
    def __init__(self, model_path, load_detokenizer=True):
        self.prompt_manager = _PromptManager()

    def generate(self, chats, output_type="text", **settings):
        assert output_type in ("text", "both")
        seen = []
        for message in chats:
            if message["role"] not in ("user", "assistant"):
                raise NotImplementedError(f"role: {{message['role']}}")
            if message["message_type"] == "audio":
                info = sf.info(message["content"])  # the prompt manager loads the wav file
                message = dict(message, samplerate=info.samplerate, seconds=info.duration)
            elif message["message_type"] != "text":
                raise NotImplementedError(f"message_type: {{message['message_type']}}")
            seen.append(message)
        CHATS.append(seen)
        return None, {ANSWER!r}
'''


#: The run, in a child process (lmms-eval patches filelock and logging for the process it runs in):
#: lmms-eval's own ``kimi_audio`` class and ``simple_evaluate`` on ``odu_ao``, the chats and metrics out.
RUN = """
import json, sys, torch
torch.cuda.set_device = lambda index: None  # the backend's __init__ selects its cuda:N device
from lmms_eval.evaluator import simple_evaluate
from lmms_eval.models.simple.kimi_audio import KimiAudio
from lmms_eval.tasks import TaskManager
from odu.harness.folders import lmms_task_dir
lm = KimiAudio(pretrained="moonshotai/Kimi-Audio-7B-Instruct")
manager = TaskManager("ERROR", include_path=str(lmms_task_dir()), include_defaults=False, model_name="kimi_audio")
results = simple_evaluate(model=lm, tasks=["odu_ao"], task_manager=manager, log_samples=True)
from kimia_infer.api.kimia import CHATS
out = {"chats": CHATS, "metrics": results["results"]["odu_ao"], "samples": len(results["samples"]["odu_ao"])}
with open(sys.argv[1], "w", encoding="utf-8") as fh:
    json.dump(out, fh, default=str)
"""


def test_lmms_eval_kimi_audio_backend_runs_odu_ao(
    tmp_path: Path, hf_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    require_lmms()
    package = tmp_path / "stand-in" / "kimia_infer"
    (package / "api").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "api" / "__init__.py").write_text("", encoding="utf-8")
    (package / "api" / "kimia.py").write_text(textwrap.dedent(STAND_IN), encoding="utf-8")
    dataset = sample_dataset_dir(tmp_path / "sample")
    env = fresh_env(tmp_path, ODU_DATASET=str(dataset), HF_DATASETS_CACHE=hf_cache)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "stand-in"), env["PYTHONPATH"]])
    out = tmp_path / "run.json"
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(out)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = json.loads(out.read_text(encoding="utf-8"))

    def key(text: str, seconds: list[float]) -> tuple[str, tuple[int, ...]]:
        return text, tuple(round(x * 10) for x in seconds)  # the backend reorders requests: match by content

    monkeypatch.setenv("ODU_DATASET", str(dataset))
    monkeypatch.setenv("ODU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_cache)
    docs = lmms.process_docs("ao")(None)
    expected = Counter(key(lmms.doc_to_text(d), [c["duration_ms"] / 1000 for c in d["clips"]]) for d in docs)
    sent: Counter[tuple[str, tuple[int, ...]]] = Counter()
    for text, *audio in run["chats"]:
        # the backend's layout: the whole text first (as Kimi-Audio's own examples), then the clips in order
        assert text["role"] == "user" and text["message_type"] == "text"
        assert {a["message_type"] for a in audio} == {"audio"} and {a["samplerate"] for a in audio} == {16_000}
        sent[key(text["content"], [a["seconds"] for a in audio])] += 1
    assert sent == expected and run["samples"] == len(docs)
    metrics = run["metrics"]
    assert metrics["inference_errors,none"] == 0 and metrics["parse_errors,none"] == 0
    assert metrics["ftr,none"] == 0.0 and metrics["m2,none"] == 0.0  # a never-trigger answer, scored
