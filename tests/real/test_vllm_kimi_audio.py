"""``--model openai`` against vLLM's own server on the tiny published Kimi-Audio layout (the vLLM lane,
docs/real-lane.md "vLLM"; ``tools/tiny_checkpoints.py --kind kimi_audio --for vllm``), started as
docs/providers.md's ``vllm serve`` line starts it (``--trust-remote-code``, the project's chat template):
the audio-only task answered scene by scene, and ``VllmFake`` shown answering as the real server does
(rules vllm.kimi-audio.one-audio, vllm.kimi-audio.chat-template)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from support.provider_fakes import VllmFake
from support.real_lane import run_eval
from support.vllm_lane import VllmServed, VllmServers, post, vllm_servers  # noqa: F401  (fixture)
from support.vllm_requests import chat_body, check_sample_run

from odu.models.hearing import tone_part

#: The bundled sample's audio-only scenes, and the one of them with two clips (one audio part on Kimi-Audio).
AO_SCENES = 9
TWO_CLIP_SCENE = "aop_hr_900015"

pytestmark = pytest.mark.usefixtures("openai_key", "prepared_sample")


@pytest.fixture(scope="module")
def kimi(vllm_servers: VllmServers) -> VllmServed:  # noqa: F811
    """vLLM on the tiny Kimi-Audio checkpoint, started as docs/providers.md's ``vllm serve`` line starts it."""
    return vllm_servers.get("kimi_audio")


def test_eval_sample_on_vllm_kimi_audio(kimi: VllmServed, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    """Every audio-only sample scene answered by vLLM's Kimi-Audio (0 refusals, 0 inference errors), the
    family found from the model name, the server check hearing the tone; the scene with two clips sent as one
    audio part (rule vllm.kimi-audio.one-audio); the audio-visual task refused before any request."""
    code, folder = run_eval(tmp_path / "ao", kimi, "odu_ao", max_tokens=8)
    err = capfd.readouterr().err
    assert code == 0, err[-3000:]
    check_sample_run(kimi, folder, {"odu_ao": AO_SCENES}, "kimi-audio", "vllm.kimi-audio.one-audio")
    assert "a scene's clips sent as one audio part" in err
    code, _ = run_eval(tmp_path / "av", kimi, "odu_av", max_tokens=8)
    lines = [ln for ln in capfd.readouterr().err.splitlines() if "error:" in ln]
    assert code == 2 and len(lines) == 1 and "takes audio only" in lines[0], lines


def test_the_fake_refuses_as_the_real_kimi_audio_server(kimi: VllmServed) -> None:
    """The same status and ``error`` from vLLM 0.32.0 and ``VllmFake`` (started alike) for text alone, one audio
    part, two audio parts (400 "At most 1 audio(s) ...": the model's limit wins over ``--limit-mm-per-prompt``)
    and ``stop: []``; a fake started without a chat template refuses as the real server started without
    ``--chat-template`` did (rule vllm.kimi-audio.chat-template, its message pinned in the fake). A 1 s tone adds
    prompt tokens (rule vllm.hearing)."""
    body = partial(chat_body, kimi.model)
    battery = {
        "text": body(),
        "one audio": body(tone_part()),
        "two audios": body(tone_part(), tone_part()),
        "stop: []": body(tone_part(), stop=[]),
    }
    answers = {}
    with VllmFake(models=(kimi.model,), limit_mm_per_prompt={"video": 8, "audio": 8}) as fake:
        for name, request in battery.items():
            real, mine = post(kimi.base_url, request), post(fake.base_url, request)
            assert real[0] == mine[0] and real[1].get("error") == mine[1].get("error"), (name, real, mine)
            answers[name] = real
    assert [name for name, (status, _) in answers.items() if status != 200] == ["two audios"]
    assert (
        answers["two audios"][1]["error"]["message"]
        == "At most 1 audio(s) may be provided in one prompt. (parameter=audio)"
    )
    heard = answers["one audio"][1]["usage"]["prompt_tokens"] - answers["text"][1]["usage"]["prompt_tokens"]
    assert heard > 0, heard
    with VllmFake(models=(kimi.model,), chat_template=False) as bare:
        status, answer = post(bare.base_url, battery["text"])
    assert status == 400 and answer["error"]["message"].startswith("As of transformers v4.44, default chat template")
