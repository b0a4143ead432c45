"""The bundled offline sample: a small synthetic ODU-Bench release we write ourselves.

21 scenes in the release schema (``odu/data/sample/scenes.jsonl`` + ``media/``): audio-visual and
audio-only, English and Mandarin, positives and negatives (every invalidation reason and signal
type of App B.3), multi-turn scenes with assistant replies, multi-segment scenes, generated and
human-recorded-style sources, all six taxonomy axes, key points with evidence sources and tiers,
and both ``annotations.en`` and ``annotations.zh``. Scene ids are in the 9xxxxx range so they can
never be mistaken for real benchmark ids. The data is ours and synthetic: the speech is
``espeak-ng``, the "video" is drawn shapes; it exercises the toolkit, it measures nothing.

Every spoken line is synthesised, trimmed of silence and placed in its clip; the reference
segments' ``start_ms``/``end_ms`` are the placed lines' measured bounds, so the annotations match
the media. Regenerating needs Debian's ``espeak-ng`` (voices ``en`` and ``cmn``)::

    python -m odu.sample --out odu/data/sample
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import numpy as np
import soundfile as sf

from .constants import AUDIO_ONLY, AUDIO_VISUAL, CHALLENGE_CATEGORIES, DEFAULT_AUDIO_SAMPLE_RATE
from .media import decode_audio
from .synth import Shape, VideoSettings, draw_frame, encode_mp4, person, synthesize_media, write_audio_file

SAMPLE_RATE = DEFAULT_AUDIO_SAMPLE_RATE
VIDEO = VideoSettings()  # 192x108, 8 fps, small H.264 + 32 kb/s AAC
#: espeak-ng words per minute: its default for English; Mandarin reads one syllable per "word",
#: so it runs faster to sound like ordinary speech.
SPEECH_WPM = {"en": 175, "cmn": 220}
SILENCE_THRESHOLD = 0.01
DEFAULT_SEED = 0
#: Sample scene numbers are offset into the 9xxxxx range, unused by the real benchmark.
SCENE_NUMBER_BASE = 900_000
#: Provenance file written next to ``scenes.jsonl``.
MANIFEST = "MANIFEST.json"

# --- scene specification ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One spoken line: ``at_ms`` from the clip start, or ``gap_ms`` after the previous line.
    ``kind``: "user" (near-field), "other" (another person, further away) or "media" (a TV or
    radio: band-limited and quieter)."""

    text: str
    voice: str
    at_ms: int | None = None
    gap_ms: int = 700
    kind: str = "user"
    gain: float = 0.8


@dataclass(frozen=True)
class Sound:
    """A non-speech event: "beep", "doorbell", "music" or "noise", from ``start_ms`` for ``ms``
    (``ms=None``: until the clip ends)."""

    kind: str
    start_ms: int = 0
    ms: int | None = None


@dataclass(frozen=True)
class ClipSpec:
    lines: tuple[Line, ...]
    replies: tuple[str, ...] = ()
    sounds: tuple[Sound, ...] = ()
    tail_ms: int = 1200


@dataclass(frozen=True)
class Context:
    type: str
    en: str
    zh: str
    why_en: str
    why_zh: str


@dataclass(frozen=True)
class Point:
    source: str  # "intent" or "required_context.<type>"
    en: str
    zh: str

    @property
    def tiers(self) -> list[str]:
        return ["T1"] if self.source == "intent" else ["T1", "T2"]


@dataclass(frozen=True)
class Demand:
    """A reference segment over lines ``lines`` (indices into the final clip's lines)."""

    lines: tuple[int, ...]
    intent_en: str
    intent_zh: str
    gender: str
    context: tuple[Context, ...] = ()
    points: tuple[Point, ...] = ()
    age: str = "adult"
    in_frame: bool | None = None


@dataclass(frozen=True)
class Picture:
    """What the camera sees: static shapes, and the user (and a companion) when in frame."""

    background: tuple[int, int, int]
    shapes: tuple[Shape, ...] = ()
    user_x: float | None = None  # the user is drawn here (mouth moves while the user speaks)
    user_shirt: tuple[int, int, int] = (60, 90, 160)
    other_x: float | None = None  # a second person, talking on "other" lines


@dataclass(frozen=True)
class SceneSpec:
    number: int
    language: str
    modality: str
    source: str  # "generated" | "human-recorded"
    title: str
    axes: tuple[str, str, str, str, str, str]  # codes; "" = not assigned
    clips: tuple[ClipSpec, ...]
    demands: tuple[Demand, ...] = ()
    negative: tuple[str, str, str] | None = None  # reason, signal, explanation ("", "" for none)
    picture: Picture | None = None
    summary: str = ""

    @property
    def scene_id(self) -> str:
        kind = "av" if self.modality == AUDIO_VISUAL else "ao"
        label = "n" if self.negative is not None else "p"
        src = "hr" if self.source == "human-recorded" else "gen"
        return f"{kind}{label}_{src}_{SCENE_NUMBER_BASE + self.number:06d}"


# --- taxonomy names --------------------------------------------------------------------------------

#: Axis 5 and 6 category names (App B.2); audio-only scenes read 5.2 as acoustic perception.
AXIS5 = {
    "5.1": "Information Seeking and Retrieval", "5.2": "Visual Perception and Recognition",
    "5.3": "Action Execution", "5.4": "Guidance and Explanation",
    "5.5": "Recommendation and Decision Support", "5.6": "Monitoring and Reminder",
    "5.7": "Recording and Summarization", "5.8": "Social and Emotional Interaction",
    "5.9": "Translation and Language Conversion", "5.10": "Content Creation",
}
AXIS6 = {
    "6.1": "Home and Daily Life", "6.2": "Cooking and Dining", "6.3": "Shopping and Commerce",
    "6.4": "Travel and Navigation", "6.5": "Tourism and Exploration", "6.6": "Learning and Education",
    "6.7": "Office and Collaboration", "6.8": "Sports and Fitness", "6.9": "Health and Medical Care",
    "6.10": "DIY and Repair", "6.11": "Driving and In-vehicle Contexts",
    "6.12": "Creative Work and Content Production", "6.13": "Social Gatherings",
    "6.14": "Outdoor and Nature", "6.15": "Childcare and Caregiving", "6.16": "Fashion and Beauty",
    "6.17": "Public Transit and Commuting", "6.18": "Entertainment and Leisure",
    "6.19": "Safety and Emergency",
}
#: Audio-only Axis 1 codes in the audio-visual vocabulary used by ``taxonomy_axes``.
AO_AXIS1_AS_AV = {"1.1": "1.1", "1.2": "1.3"}


def _axis_name(modality: str, axis: int, code: str) -> str:
    if not code:
        return "Not assigned"
    if axis == 5:
        return "Acoustic Perception and Recognition" if modality == AUDIO_ONLY and code == "5.2" else AXIS5[code]
    if axis == 6:
        return AXIS6[code]
    return CHALLENGE_CATEGORIES.get(modality, {}).get(code) or CHALLENGE_CATEGORIES[""][code]


# --- the scenes ------------------------------------------------------------------------------------

EN_M, EN_F, EN_WHISPER = "en-us", "en-us+f3", "en-us+whisper"
ZH_M, ZH_F = "cmn", "cmn+f3"
WOOD, WALL, NIGHT = (150, 110, 70), (205, 200, 185), (25, 30, 55)

SCENES: tuple[SceneSpec, ...] = (
    SceneSpec(
        1, "en", AUDIO_VISUAL, "generated", "Which one is ripe?",
        ("1.2", "2.1", "3.2", "4.1", "5.2", "6.2"),
        (ClipSpec((Line("Which of these two is ripe enough to eat today?", EN_F, at_ms=1200),)),),
        (Demand((0,), "The user wants to know which of the two fruits on the table is ripe enough to eat today.",
                "用户想知道桌上两个水果中哪一个今天已经熟到可以吃了", "female",
                (Context("visual", "Two fruits lie on the table: a green one on the left, a yellow one on the right.",
                         "桌上放着两个水果：左边是绿色的，右边是黄色的",
                         "Without seeing the table, 'these two' cannot be resolved.",
                         "看不到桌面就无法确定“这两个”指什么"),),
                (Point("intent", "The user wants to know which fruit is ripe enough to eat.", "用户想知道哪个水果可以吃了"),
                 Point("required_context.visual", "The user is referring to the green and the yellow fruit on the table.",
                       "用户指的是桌上绿色和黄色的两个水果")),
                in_frame=True),),
        picture=Picture(WOOD, (Shape("disc", (90, 170, 60), 0.18, 0.72, 0.28), Shape("disc", (235, 205, 40), 0.38, 0.72, 0.28)),
                        user_x=0.75, user_shirt=(170, 60, 90)),
        summary="A deictic question about two fruits on the table.",
    ),
    SceneSpec(
        2, "en", AUDIO_VISUAL, "generated", "And the blue one?",
        ("1.2", "2.3", "3.2", "4.1", "5.1", "6.3"),
        (
            ClipSpec((Line("How much does the red backpack cost?", EN_M, at_ms=900),),
                     ("The red backpack is forty-five dollars, and it has a padded laptop sleeve.",)),
            ClipSpec((Line("Does it come with a warranty?", EN_M, at_ms=700),),
                     ("Yes, it comes with a two-year warranty against defects.",)),
            ClipSpec((Line("And what about the blue one?", EN_M, at_ms=1000),)),
        ),
        (Demand((0,), "The user wants to know the price and the warranty of the blue backpack.",
                "用户想知道蓝色背包的价格和保修情况", "male",
                (Context("visual", "A blue backpack hangs on the shelf next to the red one.",
                         "货架上红色背包旁边挂着一个蓝色背包",
                         "Without the shelf in view, 'the blue one' has no referent.",
                         "看不到货架就不知道“蓝色那个”指什么"),
                 Context("dialogue_history", "The user asked for the red backpack's price and warranty in the previous turns.",
                         "前两轮用户询问了红色背包的价格和保修",
                         "Without the history, it is unclear what the user wants to know about it.",
                         "没有前文就不知道用户想了解它的哪些信息")),
                (Point("intent", "The user wants to know about the blue backpack.", "用户想了解蓝色背包"),
                 Point("required_context.visual", "'The blue one' is the blue backpack next to the red one on the shelf.",
                       "“蓝色那个”是货架上红色背包旁的蓝色背包"),
                 Point("required_context.dialogue_history", "The user wants the same details as for the red backpack: price and warranty.",
                       "用户想知道与红色背包相同的信息：价格和保修")),
                in_frame=True),),
        picture=Picture(WALL, (Shape("rect", (200, 40, 40), 0.08, 0.25, 0.16, 0.35), Shape("rect", (40, 70, 200), 0.3, 0.25, 0.16, 0.35),
                               Shape("rect", (110, 80, 50), 0.04, 0.6, 0.46, 0.05)),
                        user_x=0.75),
        summary="Three turns about backpacks; the last question leans on the first two and on the shelf.",
    ),
    SceneSpec(
        3, "en", AUDIO_VISUAL, "generated", "Light, then a timer",
        ("1.1", "2.1", "3.1", "4.2", "5.3", "6.2"),
        (ClipSpec((Line("Turn on the light above the stove.", EN_M, at_ms=800),
                   Line("And set a timer for ten minutes.", EN_M, gap_ms=2600)),
                  sounds=(Sound("noise"),)),),
        (
            Demand((0,), "The user wants the light above the stove turned on.", "用户想打开灶台上方的灯", "male",
                   points=(Point("intent", "The user wants the light above the stove turned on.", "用户想打开灶台上方的灯"),),
                   in_frame=False),
            Demand((1,), "The user wants a ten-minute timer set.", "用户想设置一个十分钟的计时器", "male",
                   points=(Point("intent", "The user wants a timer set for ten minutes.", "用户想设一个十分钟的计时器"),),
                   in_frame=False),
        ),
        picture=Picture((90, 90, 95), (Shape("rect", (40, 40, 45), 0.15, 0.55, 0.7, 0.45), Shape("disc", (160, 160, 170), 0.4, 0.52, 0.3),
                                       Shape("disc", (250, 230, 120), 0.5, 0.12, 0.16))),
        summary="Two requests separated by a long pause: two reference segments.",
    ),
    SceneSpec(
        4, "zh", AUDIO_VISUAL, "human-recorded", "再亮一点",
        ("1.1", "2.3", "3.6", "4.1", "5.3", "6.6"),
        (
            ClipSpec((Line("帮我把台灯调亮一点。", ZH_F, at_ms=800),), ("好的，已经把台灯亮度调到百分之七十。",)),
            ClipSpec((Line("再亮一点，然后提醒我九点休息。", ZH_F, at_ms=900),)),
        ),
        (Demand((0,), "The user wants the desk lamp brighter than the current 70% and a reminder to rest at nine.",
                "用户想把台灯调得比现在的百分之七十更亮，并在九点提醒自己休息", "female",
                (Context("dialogue_history", "In the previous turn the assistant set the lamp to 70% brightness.",
                         "上一轮助手已把台灯亮度调到百分之七十",
                         "Without it, 'brighter still' has no reference level.", "没有上一轮就不知道“再亮一点”以什么为基准"),),
                (Point("intent", "The user wants the desk lamp brighter.", "用户想把台灯调亮"),
                 Point("intent", "The user wants a reminder to rest at nine o'clock.", "用户想在九点被提醒休息"),
                 Point("required_context.dialogue_history", "Brighter means above the 70% set in the previous turn.",
                       "更亮是指高于上一轮设定的百分之七十")),
                in_frame=True),),
        picture=Picture(WALL, (Shape("rect", (120, 90, 60), 0.0, 0.7, 1.0, 0.3), Shape("disc", (255, 240, 160), 0.2, 0.35, 0.22),
                               Shape("rect", (60, 60, 60), 0.19, 0.42, 0.02, 0.28), Shape("rect", (230, 230, 240), 0.3, 0.62, 0.15, 0.08)),
                        user_x=0.7, user_shirt=(200, 120, 40)),
        summary="A follow-up that only makes sense after the first turn, with two requests.",
    ),
    SceneSpec(
        5, "zh", AUDIO_VISUAL, "human-recorded", "这个能直接喝吗",
        ("1.2", "2.1", "3.2", "4.1", "5.2", "6.1"),
        (ClipSpec((Line("这个绿色瓶子里的东西能直接喝吗？", ZH_M, at_ms=1100),)),),
        (Demand((0,), "The user wants to know whether the liquid in the green bottle can be drunk as it is.",
                "用户想知道绿色瓶子里的液体能否直接饮用", "male",
                (Context("visual", "The user holds up a green bottle in front of the camera.", "用户在镜头前举着一个绿色瓶子",
                         "Without seeing it, 'this' cannot be identified.", "看不到画面就不知道“这个”是什么"),),
                (Point("intent", "The user wants to know if the contents can be drunk directly.", "用户想知道里面的东西能否直接喝"),
                 Point("required_context.visual", "The user is asking about the green bottle they are holding.", "用户问的是手里的绿色瓶子")),
                in_frame=True),),
        picture=Picture((180, 200, 210), (Shape("rect", (30, 150, 70), 0.22, 0.3, 0.1, 0.45), Shape("rect", (30, 150, 70), 0.245, 0.22, 0.05, 0.1)),
                        user_x=0.6, user_shirt=(90, 90, 90)),
    ),
    SceneSpec(
        6, "zh", AUDIO_VISUAL, "generated", "刚才什么在响",
        ("1.3", "2.2", "3.6", "4.1", "5.1", "6.2"),
        (ClipSpec((Line("刚才是什么在响？帮我看看是不是烤箱好了。", ZH_F, at_ms=3000),),
                  sounds=(Sound("beep", 600, 1500),)),),
        (Demand((0,), "The user wants to know what just beeped and whether the oven is done.",
                "用户想知道刚才是什么在响，以及烤箱是否已经好了", "female",
                (Context("audio", "A series of beeps sounded in the kitchen just before the user spoke.", "用户说话前厨房里响起了一串提示音",
                         "Without hearing the beeps, 'what was beeping' has no referent.", "没听到提示音就不知道“什么在响”指什么"),
                 Context("user_activity", "The user is busy at the counter and cannot check the oven.", "用户正在案台边忙碌，腾不出手查看烤箱",
                         "It explains why the assistant should check instead of the user.", "这说明了为何需要助手代为查看")),
                (Point("intent", "The user wants to know what made the sound.", "用户想知道是什么发出了声音"),
                 Point("intent", "The user wants to know whether the oven is done.", "用户想知道烤箱是否好了"),
                 Point("required_context.audio", "The sound in question is the beeping just before the request.", "所问的声音是请求前的那串提示音"),
                 Point("required_context.user_activity", "The user is busy and cannot check the oven.", "用户正忙，没法自己查看烤箱")),
                in_frame=False),),
        picture=Picture(WALL, (Shape("rect", (70, 70, 75), 0.55, 0.35, 0.35, 0.5), Shape("rect", (20, 20, 25), 0.6, 0.45, 0.25, 0.3),
                               Shape("rect", (170, 120, 80), 0.0, 0.8, 0.5, 0.2))),
        summary="The request points back at a sound that happened before it.",
    ),
    SceneSpec(
        7, "zh", AUDIO_VISUAL, "generated", "哪个音箱在响",
        ("1.4", "2.1", "3.6", "4.5", "5.3", "6.18"),
        (ClipSpec((Line("哪个音箱在放歌？把它声音关小一点。", ZH_M, at_ms=2000),), sounds=(Sound("music"),)),),
        (Demand((0,), "The user wants the speaker that is playing music turned down.", "用户想把正在放歌的那个音箱音量调小", "male",
                (Context("audio", "Music is playing in the room.", "房间里正在放音乐",
                         "Without the music, it is unclear which sound to turn down.", "没有音乐就不知道要调小什么声音"),
                 Context("visual", "Two speakers stand in the room; the red one's light is on.", "房间里有两个音箱，红色音箱的指示灯亮着",
                         "Without seeing the speakers, 'which one' cannot be answered.", "看不到音箱就无法回答“哪个”")),
                (Point("intent", "The user wants the playing speaker turned down.", "用户想调小正在播放的音箱的音量"),
                 Point("required_context.audio", "The sound in question is the music playing in the room.", "所指的声音是房间里播放的音乐"),
                 Point("required_context.visual", "The playing speaker is the red one with its light on.", "正在播放的是指示灯亮着的红色音箱")),
                in_frame=True),),
        picture=Picture((60, 60, 80), (Shape("rect", (190, 40, 40), 0.1, 0.35, 0.12, 0.45), Shape("disc", (120, 255, 120), 0.16, 0.4, 0.06),
                                       Shape("rect", (40, 60, 190), 0.35, 0.35, 0.12, 0.45)),
                        user_x=0.75, user_shirt=(40, 140, 120)),
        summary="Both the music and the picture are needed to know which speaker is meant.",
    ),
    SceneSpec(
        8, "en", AUDIO_VISUAL, "generated", "Talking to the dog",
        ("", "", "", "4.1", "", "6.1"),
        (ClipSpec((Line("Hey buddy, do you want to go outside? Where is your ball?", EN_F, at_ms=1000),)),),
        negative=("target_mismatch", "linguistic_signal", "The questions are addressed to the dog, not to the assistant."),
        picture=Picture((120, 170, 110), (Shape("disc", (140, 90, 50), 0.3, 0.75, 0.3), Shape("disc", (140, 90, 50), 0.2, 0.6, 0.2),
                                          Shape("disc", (230, 60, 60), 0.45, 0.9, 0.1, dx=0.02)),
                        user_x=0.72, user_shirt=(200, 170, 60)),
        summary="Request-like questions for a pet.",
    ),
    SceneSpec(
        9, "en", AUDIO_VISUAL, "generated", "The TV advert",
        ("", "", "", "4.5", "", "6.18"),
        (ClipSpec((Line("Call now and order your new blender today!", EN_M, at_ms=1200, kind="media"),), sounds=(Sound("music", 0, 1100),)),),
        negative=("source_mismatch", "prosodic_signal", "The command comes from a TV advert, not from the user."),
        picture=Picture((70, 55, 50), (Shape("rect", (15, 15, 20), 0.2, 0.15, 0.6, 0.55), Shape("rect", (90, 160, 220), 0.24, 0.2, 0.52, 0.45),
                                       Shape("disc", (240, 240, 240), 0.35, 0.42, 0.25, dx=0.03))),
        summary="An imperative in command-like voice, spoken by the television.",
    ),
    SceneSpec(
        10, "zh", AUDIO_VISUAL, "generated", "算了，我看到了",
        ("", "", "", "4.1", "", "6.1"),
        (ClipSpec((Line("帮我查一下明天……", ZH_M, at_ms=900), Line("算了，我看到了，日历上写着呢。", ZH_M, gap_ms=600)),),),
        negative=("demand_incomplete", "contextual_signal", "The user starts a request and withdraws it after finding the answer on the calendar."),
        picture=Picture(WALL, (Shape("rect", (250, 250, 250), 0.15, 0.15, 0.3, 0.4), Shape("rect", (220, 40, 40), 0.15, 0.15, 0.3, 0.08),
                               Shape("rect", (220, 40, 40), 0.25, 0.35, 0.05, 0.08)),
                        user_x=0.7),
        summary="A started and withdrawn request.",
    ),
    SceneSpec(
        11, "zh", AUDIO_VISUAL, "human-recorded", "和朋友聊天",
        ("", "", "", "4.3", "", "6.13"),
        (ClipSpec((Line("你周末去爬山了吗？", ZH_M, at_ms=800), Line("去了，山顶风景特别好。", ZH_F, gap_ms=500, kind="other", gain=0.6),
                   Line("照片拍得真好看。", ZH_M, gap_ms=500)),),),
        negative=("", "", "Two friends chat about a hike; nothing is asked of the assistant."),
        picture=Picture((200, 215, 225), user_x=0.3, user_shirt=(60, 90, 160), other_x=0.72),
        summary="Small talk between two people (human-recorded negatives carry no reason or signal in the release).",
    ),
    SceneSpec(
        12, "en", AUDIO_VISUAL, "generated", "Nice, that was quick",
        ("", "", "", "4.1", "", "6.1"),
        (
            ClipSpec((Line("Set an alarm for six thirty tomorrow.", EN_F, at_ms=800),),
                     ("Done. Your alarm is set for six thirty tomorrow morning.",)),
            ClipSpec((Line("Nice, that was quick. You are getting good at alarms.", EN_F, at_ms=900),)),
        ),
        negative=("function_not_directed", "interactive_signal", "The user gives feedback on the alarm the assistant set; no new request."),
        picture=Picture((170, 190, 215), (Shape("rect", (50, 50, 60), 0.12, 0.4, 0.2, 0.2), Shape("rect", (120, 255, 140), 0.15, 0.45, 0.14, 0.1)),
                        user_x=0.7, user_shirt=(150, 50, 50)),
        summary="A reply in a request-response rhythm that asks for nothing.",
    ),
    SceneSpec(
        13, "en", AUDIO_ONLY, "generated", "Call the pharmacy",
        ("1.1", "2.1", "3.1", "4.1", "5.6", "6.9"),
        (ClipSpec((Line("Remind me to call the pharmacy at four this afternoon.", EN_M, at_ms=900),)),),
        (Demand((0,), "The user wants a reminder at 4 pm today to call the pharmacy.", "用户想在今天下午四点被提醒给药房打电话", "male",
                points=(Point("intent", "The user wants a reminder to call the pharmacy.", "用户想被提醒给药房打电话"),
                        Point("intent", "The reminder is for four o'clock this afternoon.", "提醒时间是今天下午四点"))),),
        summary="A direct request with everything stated.",
    ),
    SceneSpec(
        14, "en", AUDIO_ONLY, "generated", "Was that the door?",
        ("1.2", "2.2", "3.6", "4.1", "5.3", "6.1"),
        (ClipSpec((Line("Was that the front door? Can you show me who is there?", EN_F, at_ms=2600),), sounds=(Sound("doorbell", 500, 1200),)),),
        (Demand((0,), "The user wants to know whether the doorbell rang and to see who is at the front door.",
                "用户想确认是否有人按门铃，并查看前门外是谁", "female",
                (Context("audio", "A doorbell chimed just before the user spoke.", "用户说话前门铃响了",
                         "Without the chime, 'that' has no referent.", "没听到门铃就不知道“那个”指什么"),),
                (Point("intent", "The user wants to see who is at the front door.", "用户想看看前门外是谁"),
                 Point("required_context.audio", "The sound the user asks about is the doorbell that just rang.", "用户问的声音是刚响的门铃"))),),
        summary="An acoustic event before the request gives it its meaning.",
    ),
    SceneSpec(
        15, "zh", AUDIO_ONLY, "human-recorded", "要带伞吗",
        ("1.1", "2.3", "3.6", "4.1", "5.5", "6.1"),
        (
            ClipSpec((Line("明天上海天气怎么样？", ZH_M, at_ms=700),), ("明天上海多云转小雨，气温十八到二十三度。",)),
            ClipSpec((Line("那我需要带伞吗？顺便提醒我早上出门带上。", ZH_M, at_ms=800),)),
        ),
        (Demand((0,), "The user wants to know whether to take an umbrella given tomorrow's light rain in Shanghai, and a morning reminder to take it.",
                "用户想知道明天上海有小雨是否需要带伞，并希望早上出门时被提醒带伞", "male",
                (Context("dialogue_history", "The assistant said tomorrow in Shanghai will be cloudy turning to light rain.",
                         "助手上一轮说明天上海多云转小雨",
                         "Without the forecast, the umbrella question has no basis.", "没有天气预报就无法判断是否要带伞"),),
                (Point("intent", "The user wants to know whether to take an umbrella.", "用户想知道是否需要带伞"),
                 Point("intent", "The user wants a reminder in the morning to take it.", "用户想在早上出门时被提醒带伞"),
                 Point("required_context.dialogue_history", "The question follows the forecast of light rain in Shanghai tomorrow.",
                       "问题基于明天上海有小雨的预报"))),),
        summary="A follow-up decision based on the previous answer.",
    ),
    SceneSpec(
        16, "zh", AUDIO_ONLY, "generated", "空调和窗帘",
        ("1.1", "2.1", "3.1", "4.3", "5.3", "6.1"),
        (ClipSpec((Line("把客厅空调调到二十六度。", ZH_F, at_ms=700), Line("我去倒杯水。", ZH_M, gap_ms=900, kind="other", gain=0.5),
                   Line("再把窗帘拉上。", ZH_F, gap_ms=1300)),),),
        (
            Demand((0,), "The user wants the living-room air conditioner set to 26 degrees.", "用户想把客厅空调调到二十六度", "female",
                   points=(Point("intent", "The user wants the living-room air conditioner set to 26 degrees.", "用户想把客厅空调调到二十六度"),)),
            Demand((2,), "The user wants the curtains closed.", "用户想拉上窗帘", "female",
                   points=(Point("intent", "The user wants the curtains closed.", "用户想拉上窗帘"),)),
        ),
        summary="Two requests split by another speaker's unrelated words.",
    ),
    SceneSpec(
        17, "en", AUDIO_ONLY, "generated", "Can't sleep",
        ("1.1", "2.5", "3.2", "4.4", "5.3", "6.1"),
        (ClipSpec((Line("I can't sleep again. Could you play something calm, really quietly?", EN_WHISPER, at_ms=1000, gain=0.3),)),),
        (Demand((0,), "The user wants calming audio played at a very low volume to help them fall asleep.",
                "用户想以很低的音量播放舒缓的声音帮助入睡", "unknown",
                (Context("user_emotion", "The user sounds tired and frustrated at not sleeping.", "用户因失眠显得疲惫又烦躁",
                         "It tells the assistant to choose soothing content.", "这决定了助手应选择舒缓的内容"),
                 Context("scene_condition", "It is night and the user whispers.", "夜里，用户在低声说话",
                         "The volume must stay very low.", "音量必须很低")),
                (Point("intent", "The user wants something calm played.", "用户想播放舒缓的内容"),
                 Point("required_context.user_emotion", "The user is tired and cannot sleep.", "用户疲惫且睡不着"),
                 Point("required_context.scene_condition", "It is night, so the volume should be very low.", "现在是夜里，音量应很低"))),),
        summary="A whispered request shaped by the user's state (the whisper hides the speaker's gender).",
    ),
    SceneSpec(
        18, "en", AUDIO_ONLY, "generated", "Radio ad",
        ("", "", "", "4.5", "", "6.11"),
        (ClipSpec((Line("Need a ride? Book a taxi in seconds with our new app!", EN_F, at_ms=1000, kind="media"),), sounds=(Sound("noise"),)),),
        negative=("source_mismatch", "linguistic_signal", "The question and imperative come from a radio advert."),
        summary="A radio advert asks and commands; the user says nothing.",
    ),
    SceneSpec(
        19, "zh", AUDIO_ONLY, "generated", "语音助手挺方便",
        ("", "", "", "4.1", "", "6.13"),
        (ClipSpec((Line("我昨天用语音助手定了个闹钟，还挺方便的。", ZH_F, at_ms=800),
                   Line("是吗，我也想试试。", ZH_M, gap_ms=500, kind="other", gain=0.6)),),),
        negative=("function_not_directed", "semantic_signal", "The user tells a friend about using the assistant; it is not a request."),
        summary="An assistant function mentioned in conversation.",
    ),
    SceneSpec(
        20, "zh", AUDIO_ONLY, "generated", "面试排练",
        ("", "", "", "4.1", "", "6.7"),
        (ClipSpec((Line("明天面试我就说：请给我一个机会，帮我看看这份方案。", ZH_M, at_ms=900), Line("嗯，这样说应该可以。", ZH_M, gap_ms=700)),),),
        negative=("intent_not_real", "linguistic_signal", "The request is a rehearsed line for tomorrow's interview."),
        summary="A quoted, rehearsed request.",
    ),
    SceneSpec(
        21, "en", AUDIO_ONLY, "human-recorded", "On the phone",
        ("", "", "", "4.2", "", "6.1"),
        (ClipSpec((Line("Honey, can you grab some milk on your way home?", EN_M, at_ms=900),
                   Line("Great, thanks, see you soon.", EN_M, gap_ms=1500)),
                  sounds=(Sound("noise"),)),),
        negative=("target_mismatch", "contextual_signal", "The user asks their partner on the phone, not the assistant."),
        summary="A request to someone on a phone call.",
    ),
)


# --- speech and sounds -----------------------------------------------------------------------------


def _espeak_exe() -> str:
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise RuntimeError("regenerating the sample needs espeak-ng (Debian: apt-get install espeak-ng)")
    return exe


def espeak_version() -> str | None:
    """``"eSpeak NG text-to-speech: 1.51"``, or None when espeak-ng is not installed."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        return None
    out = subprocess.run([exe, "--version"], check=True, capture_output=True, text=True).stdout
    return out.split("Data at:")[0].strip()


def generator_versions() -> dict[str, str | None]:
    """What the sample's bytes depend on besides this module and the seed."""
    return {"espeak_ng": espeak_version(), "av": av.__version__, "libavcodec": ".".join(map(str, av.library_versions["libavcodec"])),
            "soundfile": sf.__version__, "libsndfile": sf.__libsndfile_version__}


def _espeak(text: str, voice: str, workdir: Path) -> np.ndarray:
    """``text`` spoken by espeak-ng, at 16 kHz mono, leading and trailing silence removed."""
    exe = _espeak_exe()
    wav = workdir / "line.wav"
    speed = SPEECH_WPM["cmn" if voice.startswith("cmn") else "en"]
    subprocess.run([exe, "-v", voice, "-s", str(speed), "-w", str(wav), text], check=True, capture_output=True)
    audio = decode_audio(wav, SAMPLE_RATE)
    voiced = np.flatnonzero(np.abs(audio) > SILENCE_THRESHOLD)
    if not len(voiced):
        raise RuntimeError(f"espeak-ng produced silence for {text!r}")
    return audio[voiced[0] : voiced[-1] + 1] / max(1e-6, float(np.abs(audio).max()))


def _media_voice(audio: np.ndarray) -> np.ndarray:
    """A TV/radio loudspeaker: high-passed (no bass) and low-passed (about 3 kHz)."""
    high = np.diff(audio, prepend=audio[:1])
    kernel = np.ones(3, dtype=np.float32) / 3
    return np.convolve(high, kernel, mode="same") * 2.0


def _sound(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(n) / SAMPLE_RATE
    if kind == "beep":
        return (0.25 * np.sin(2 * np.pi * 2000 * t) * ((t % 0.3) < 0.15)).astype(np.float32)
    if kind == "doorbell":
        ding = np.sin(2 * np.pi * 659 * t) * np.exp(-3 * t) * (t < 0.5)
        later = np.clip(t - 0.5, 0, None)
        dong = np.sin(2 * np.pi * 523 * later) * np.exp(-2.5 * later) * (t >= 0.5)
        return (0.35 * (ding + dong)).astype(np.float32)
    if kind == "music":
        notes = np.array([262, 330, 392, 523, 392, 330])
        freq = notes[(t * 4).astype(int) % len(notes)]
        phase = 2 * np.pi * np.cumsum(freq) / SAMPLE_RATE
        return (0.08 * (np.sin(phase) + 0.3 * np.sin(2 * phase)) * (0.6 + 0.4 * np.cos(2 * np.pi * 4 * t))).astype(np.float32)
    if kind == "noise":
        white = rng.standard_normal(n)
        return (0.015 * np.convolve(white, np.ones(8) / 8, mode="same")).astype(np.float32)
    raise ValueError(f"unknown sound {kind!r}")


@dataclass
class _RenderedClip:
    audio: np.ndarray
    duration_s: float
    spans_ms: list[tuple[int, int]]  # per line, as placed
    kinds: list[str]  # per line: user / other / media


def _render_clip(spec: ClipSpec, speech: Sequence[np.ndarray], rng: np.random.Generator) -> _RenderedClip:
    spans, cursor = [], 0
    for line, voice in zip(spec.lines, speech):
        start = line.at_ms if line.at_ms is not None else cursor + line.gap_ms
        end = start + round(len(voice) * 1000 / SAMPLE_RATE)
        spans.append((start, end))
        cursor = end
    sound_end = max((s.start_ms + (s.ms or 0) for s in spec.sounds), default=0)
    duration_ms = max(cursor, sound_end) + spec.tail_ms
    n = round(duration_ms * SAMPLE_RATE / 1000)
    audio = np.zeros(n, dtype=np.float32)
    for sound in spec.sounds:
        i0 = round(sound.start_ms * SAMPLE_RATE / 1000)
        i1 = n if sound.ms is None else min(n, i0 + round(sound.ms * SAMPLE_RATE / 1000))
        audio[i0:i1] += _sound(sound.kind, i1 - i0, rng)
    for line, voice, (start, _) in zip(spec.lines, speech, spans):
        signal = _media_voice(voice) * 0.35 if line.kind == "media" else voice * line.gain
        i0 = round(start * SAMPLE_RATE / 1000)
        audio[i0 : i0 + len(signal)] += signal
    return _RenderedClip(np.clip(audio, -1, 1), duration_ms / 1000, spans, [line.kind for line in spec.lines])


def _frames(picture: Picture, rendered: _RenderedClip) -> Iterator[np.ndarray]:
    def speaking(t: float, kinds: set[str]) -> bool:
        return any(a <= t * 1000 < b for (a, b), k in zip(rendered.spans_ms, rendered.kinds) if k in kinds)

    k = 0
    while True:
        t = k / VIDEO.fps
        shapes = list(picture.shapes)
        if picture.user_x is not None:
            shapes += person(picture.user_x, picture.user_shirt, speaking(t, {"user"}))
        if picture.other_x is not None:
            shapes += person(picture.other_x, (120, 120, 60), speaking(t, {"other"}))
        yield draw_frame(VIDEO.width, VIDEO.height, picture.background, shapes, t)
        k += 1


# --- records ---------------------------------------------------------------------------------------


def _axes(spec: SceneSpec) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    axes = [{"axis": f"axis{i}", "code": code, "name": _axis_name(spec.modality, i, code)} for i, code in enumerate(spec.axes, 1)]
    if spec.negative is not None:
        return axes, []
    taxonomy = []
    for i, code in enumerate(spec.axes[:4], 1):
        if i == 1 and spec.modality == AUDIO_ONLY:
            code = AO_AXIS1_AS_AV[code]
        taxonomy.append({"axis": f"axis{i}", "code": code, "name": _axis_name(AUDIO_VISUAL, i, code)})
    return axes, taxonomy


def _segment(spec: SceneSpec, demand: Demand, final: ClipSpec, spans: Sequence[tuple[int, int]], lang: str) -> dict[str, Any]:
    zh = lang == "zh"
    joiner = "" if spec.language == "zh" else " "
    out: dict[str, Any] = {
        "start_ms": spans[demand.lines[0]][0],
        "end_ms": spans[demand.lines[-1]][1],
        "transcript": joiner.join(final.lines[i].text for i in demand.lines),
        "structured_intent": demand.intent_zh if zh else demand.intent_en,
        "required_context": [
            {"type": c.type, "description": c.zh if zh else c.en, "necessity": c.why_zh if zh else c.why_en}
            for c in demand.context
        ],
    }
    if spec.modality == AUDIO_VISUAL:
        out["user_in_frame"] = bool(demand.in_frame)
    out |= {
        "user_gender": demand.gender,
        "user_age_group": demand.age,
        "key_points": [
            {"qid": f"kp{i:02d}", "point": p.zh if zh else p.en, "source": p.source, "tiers": p.tiers}
            for i, p in enumerate(demand.points, 1)
        ],
    }
    return out


def _record(spec: SceneSpec, rendered: Sequence[_RenderedClip]) -> dict[str, Any]:
    sid = spec.scene_id
    # Audio-only clips are WAV as in the release; the human-recorded-style ones FLAC, so that both
    # soundfile formats go through the toolkit.
    suffix = ".mp4" if spec.modality == AUDIO_VISUAL else ".flac" if spec.source == "human-recorded" else ".wav"
    axes, taxonomy = _axes(spec)
    final, spans = spec.clips[-1], rendered[-1].spans_ms
    annotations = {
        lang: {"evaluation_targets": {"has_demand": bool(spec.demands),
                                      "segments": [_segment(spec, d, final, spans, lang) for d in spec.demands]}}
        for lang in ("en", "zh")
    }
    record: dict[str, Any] = {
        "scene_id": sid,
        "title": spec.title,
        "summary": spec.summary,
        "language": spec.language,
        "modality": spec.modality,
        "source": spec.source,
        "label": "negative" if spec.negative is not None else "positive",
        "axes": axes,
        "taxonomy_axes": taxonomy,
        "annotations": annotations,
        "clips": [
            {"id": f"v{i}", "src": f"media/{sid}__clip_v{i}{suffix}", "duration": r.duration_s, "replies": list(c.replies)}
            for i, (c, r) in enumerate(zip(spec.clips, rendered), 1)
        ],
        "negative_reason": spec.negative[0] if spec.negative else "",
        "negative_signal": spec.negative[1] if spec.negative else "",
    }
    if spec.negative is not None:
        spoken = ("" if spec.language == "zh" else " ").join(line.text for line in final.lines)
        record["negative_explanation"] = spec.negative[2]
        record["scene_transcripts"] = {"en": spoken, "zh": spoken}
    return record


def build_sample(out_dir: str | Path, seed: int = DEFAULT_SEED, progress: bool = False) -> list[dict[str, Any]]:
    """Synthesise the sample into ``out_dir``: ``scenes.jsonl``, ``media/`` and ``MANIFEST.json``
    (seed, tool versions, sha256 of every file); returns the records.

    Byte-for-byte deterministic for a given ``seed`` and the versions in the manifest. Needs
    ``espeak-ng``.
    """
    from tqdm import tqdm

    out_dir = Path(out_dir)
    (out_dir / "media").mkdir(parents=True, exist_ok=True)
    for stale in (out_dir / "media").glob("*__clip_v*.*"):  # clips of an earlier build
        stale.unlink()
    rng = np.random.default_rng(seed)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in tqdm(SCENES, desc="sample scenes", disable=not progress):
            rendered = []
            for clip in spec.clips:
                speech = [_espeak(line.text, line.voice, Path(tmp)) for line in clip.lines]
                rendered.append(_render_clip(clip, speech, rng))
            record = _record(spec, rendered)
            for clip, r in zip(record["clips"], rendered):
                path = out_dir / clip["src"]
                if spec.modality == AUDIO_VISUAL:
                    assert spec.picture is not None, spec.scene_id
                    encode_mp4(path, _frames(spec.picture, r), r.audio, r.duration_s, sample_rate=SAMPLE_RATE, settings=VIDEO)
                else:
                    write_audio_file(path, r.audio, SAMPLE_RATE)
            records.append(record)
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    (out_dir / "scenes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    files = sorted(p for p in out_dir.rglob("*") if p.is_file() and p.name != MANIFEST)
    manifest = {
        "seed": seed,
        "versions": generator_versions(),
        "sha256": {p.relative_to(out_dir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return records


def sample_dir() -> Path:
    """The bundled sample release: ``scenes.jsonl`` and ``media/`` (clip ``src`` relative to it)."""
    return Path(__file__).resolve().parent / "data" / "sample"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m odu.sample", description="Regenerate the bundled ODU-Bench sample.")
    parser.add_argument("--out", type=Path, default=sample_dir(), help="output folder (default: the bundled one)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    records = build_sample(args.out, seed=args.seed, progress=True)
    size = sum(p.stat().st_size for p in (args.out / "media").iterdir())
    print(f"{len(records)} scenes, {size / 1e6:.2f} MB of media -> {args.out}")
    return 0


__all__ = ["SCENES", "build_sample", "sample_dir", "synthesize_media"]

if __name__ == "__main__":
    raise SystemExit(main())
