"""Output parsing (odu/core/parse.py, docs/scoring.md, "Parsing rules"): the malformed-output corpus, then one
precise test per rule.

The corpus (``fixtures/malformed_outputs.jsonl``, written by ``fixtures/make_malformed_outputs.py``)
is parsed case by case against its expectations and scored as a whole with the lexical judge on
clones of the real demo scenes: no exception anywhere, and the scene scores each rule implies.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from odu.core import constants as limits
from odu.core.constants import AUDIO_ONLY, AUDIO_VISUAL
from odu.core.parse import extract_json_object, parse_output, strip_wrappers
from odu.core.schema import Prediction, load_scenes, scene_from_dict
from odu.judge import LexicalJudge
from odu.runs.contract import read_run, write_run
from odu.runs.scoring import score_scenes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS = FIXTURES / "malformed_outputs.jsonl"
AV, AO = AUDIO_VISUAL, AUDIO_ONLY


def _generator():
    spec = importlib.util.spec_from_file_location("make_malformed_outputs", FIXTURES / "make_malformed_outputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _corpus() -> list[dict[str, Any]]:
    with CORPUS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


CASES = _corpus()


def _seg(**fields: Any) -> dict[str, Any]:
    base = {
        "start_ms": 100,
        "end_ms": 900,
        "transcript": "mute that",
        "structured_intent": "mute the phone",
        "required_context": [{"type": "audio", "description": "a chime"}],
        "user_in_frame": True,
        "user_gender": "male",
        "user_age_group": "adult",
    }
    return {k: v for k, v in {**base, **fields}.items() if v is not ...}


def _out(*segments: dict[str, Any], has_demand: Any = True) -> str:
    return json.dumps({"has_demand": has_demand, "segments": list(segments)})


def _one(text: str, modality: str = AV):
    p = parse_output(text, modality)
    assert not p.parse_error and len(p.segments) == 1, p
    return p.segments[0], p.issues


# --- the corpus -------------------------------------------------------------------------------


def test_corpus_file_is_what_the_generator_writes():
    gen = _generator()
    assert gen.render(gen.build_cases()) == CORPUS.read_text(encoding="utf-8"), (
        "malformed_outputs.jsonl is stale: run python tests/fixtures/make_malformed_outputs.py"
    )


def test_corpus_size_and_coverage():
    assert len(CASES) >= 200
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert {c["modality"] for c in CASES} == {AV, AO}
    assert sum(c["expect"]["parse_error"] for c in CASES) >= 50
    assert any(isinstance(c["output"], str) and len(c["output"]) >= 2**20 for c in CASES)  # a megabyte
    assert any(not isinstance(c["output"], str) for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_case_parses_as_expected(case):
    p = parse_output(case["output"], case["modality"])
    e = case["expect"]
    assert isinstance(p, Prediction)
    assert (p.parse_error, p.has_demand, len(p.segments)) == (e["parse_error"], e["has_demand"], e["segments"])
    for needle in e.get("issues", []):
        assert any(needle in issue for issue in p.issues), (needle, p.issues)
    if e.get("clean"):
        assert p.issues == ()
    if "spans" in e:
        assert [[s.start_ms, s.end_ms] if s.has_span else None for s in p.segments] == e["spans"]
    if "profile" in e:
        assert [{f: getattr(s, f) for f in want} for s, want in zip(p.segments, e["profile"])] == e["profile"]
    if p.parse_error:
        assert not p.has_demand and not p.segments and p.issues
    assert all(len(issue) < 300 for issue in p.issues)  # model values are quoted in bounded form


def test_corpus_scores_without_exceptions(tmp_path):
    """Every case scored as one run on a clone of its demo scene, written out and read back."""
    records = {r["scene_id"]: r for r in json.loads((FIXTURES / "demo_scenes.json").read_text(encoding="utf-8"))}
    scenes, outputs = [], {}
    for case in CASES:
        clone_id = f"{case['scene_id']}#{case['id']}"
        scenes.append(scene_from_dict({**records[case["scene_id"]], "scene_id": clone_id}))
        outputs[clone_id] = case["output"]
    run = score_scenes(scenes, outputs, LexicalJudge())
    write_run(run, tmp_path)
    rows = read_run(tmp_path).scenes
    assert len(rows) == len(CASES)
    for case, row in zip(CASES, rows):
        e = case["expect"]
        assert row["parse_error"] == e["parse_error"], case["id"]
        assert row["predicted_has_demand"] == e["has_demand"], case["id"]
        assert row["no_output"] == (case["output"] is None), case["id"]
        for name, value in e.get("scores", {}).items():
            assert row[name] == pytest.approx(value), (case["id"], name, row[name])
        if row["has_demand"]:
            for name in ("s2", "s3", "s4", "s5"):
                assert row[name] is None or 0.0 <= row[name] <= 1.0
        else:
            assert (row["s2"], row["s3"], row["s4"], row["s5"]) == (None, None, None, None)
    for modality in (AV, AO):
        block = run.summary[modality]
        assert block["parse_errors"] == sum(c["expect"]["parse_error"] for c in CASES if c["modality"] == modality)
        assert all(block[m] is None or 0.0 <= block[m] <= 1.0 for m in ("m1", "m2", "m3", "m4", "m5", "avg", "ftr"))
    assert run.summary["no_output"] == sum(c["output"] is None for c in CASES)


def test_random_byte_mutations_never_raise():
    """Seeded fuzzing: deletions, duplications and character swaps of valid corpus outputs."""
    rng = random.Random(20260501)
    valid = [c for c in CASES if c["id"].endswith("/valid")]
    alphabet = '{}[]":,.-0123456789eE \\ntrufalsNI<>/think`？“”\ud800'
    for _ in range(2000):
        case = rng.choice(valid)
        text = list(case["output"])
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(text))
            op = rng.random()
            if op < 0.4:
                del text[i : i + rng.randint(1, 5)]
            elif op < 0.7:
                text.insert(i, rng.choice(alphabet))
            else:
                j = rng.randrange(len(text))
                text[i:j] = text[i:j][::-1]
        p = parse_output("".join(text), case["modality"])
        _assert_well_formed(p)


def _assert_well_formed(p: Prediction) -> None:
    """What the parsing rules promise of any prediction: a boolean decision; a parse error is "no
    demand, no segments" with its reason; segments only with a demand, within the limits, each time
    an int in [0, MAX_TIME_MS) or None and start <= end, every text a string within MAX_TEXT_CHARS."""
    assert type(p.has_demand) is bool and not p.no_output
    if p.parse_error:
        assert not p.has_demand and p.segments == () and p.issues
    assert p.has_demand or p.segments == ()
    assert len(p.segments) <= limits.MAX_SEGMENTS
    for g in p.segments:
        for t in (g.start_ms, g.end_ms):
            assert t is None or (type(t) is int and 0 <= t < limits.MAX_TIME_MS)
        assert not g.has_span or g.start_ms <= g.end_ms
        texts = [g.transcript, g.structured_intent, *(c.description for c in g.required_context)]
        assert all(type(x) is str and len(x) <= limits.MAX_TEXT_CHARS for x in texts)
        assert len(g.required_context) <= limits.MAX_CONTEXT_ITEMS


def test_the_limits_are_the_values_the_parsing_rules_quote():
    """docs/scoring.md, "Parsing rules", quotes every limit with its value: the parser runs with those."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "scoring.md").read_text(encoding="utf-8")
    rules = text.split("## Parsing rules", 1)[1].split("\n## ", 1)[0]
    quoted = {name: int(value.replace("_", "")) for name, value in re.findall(r"`([A-Z_]+) = ([0-9_]+)`", rules)}
    limits_used = {"MAX_OUTPUT_CHARS", "MAX_JSON_CANDIDATES", "MAX_SEGMENTS", "MAX_CONTEXT_ITEMS", "MAX_TEXT_CHARS"}
    assert set(quoted) == limits_used | {"MAX_TIME_MS"}
    assert quoted == {name: getattr(limits, name) for name in quoted}


# --- inputs that are not a JSON object ----------------------------------------------------------


def test_none_is_no_output_not_a_parse_error():
    p = parse_output(None, AV)
    assert (p.has_demand, p.no_output, p.parse_error, p.issues) == (False, True, False, ("no output",))


@pytest.mark.parametrize("value", [b'{"has_demand": true}', 7, 2.5, ["x"], {"has_demand": True}, object()])
def test_non_text_is_a_parse_error(value):
    p = parse_output(value, AV)
    assert p.parse_error and not p.has_demand
    assert p.issues == (f"output is {type(value).__name__}, not text",)


@pytest.mark.parametrize(
    "text", ["", "   \n", "I cannot tell.", "[1, 2]", "{'has_demand': True}", '{"has_demand": true,}']
)
def test_no_usable_object_is_no_demand_and_a_parse_error(text):
    p = parse_output(text, AV)
    assert (p.has_demand, p.segments, p.parse_error) == (False, (), True)
    assert p.issues[-1] in ("no JSON object found", "has_demand: None is not a boolean")


def test_object_without_has_demand_is_a_parse_error():
    p = parse_output('{"segments": []}', AV)
    assert p.parse_error and p.issues == ("JSON object has no 'has_demand'", "has_demand: None is not a boolean")


# --- finding the object -----------------------------------------------------------------------


def test_fences_and_prose():
    body = _out(_seg())
    assert parse_output(f"```json\n{body}\n```", AV).issues == ()
    p = parse_output(f"Here you go:\n```json\n{body}\n```\nHope it helps.", AV)
    assert not p.parse_error and p.issues == ("JSON object found inside other text",)


def test_first_object_with_has_demand_wins():
    first, second = _out(_seg(transcript="first")), _out(_seg(transcript="second"))
    assert _one(f"{first}\n{second}")[0].transcript == "first"
    seg, issues = _one('{"plan": "think"} ' + second)
    assert seg.transcript == "second" and issues == ("JSON object found inside other text",)


def test_without_has_demand_the_first_object_is_the_one_returned():
    """extract_json_object: no object has ``has_demand``, so the first object at all is returned."""
    obj, issues = extract_json_object('{"segments": []} then {"plan": "x"}')
    assert obj == {"segments": []} and issues == ["JSON object has no 'has_demand'"]


def test_a_fence_tag_in_any_case_is_dropped():
    body = _out(_seg())
    for tag in ("JSON", "Json", "jsonc", "json5", "JSON-lines"):
        assert parse_output(f"```{tag}\n{body}\n```", AV).issues == (), tag


def test_json_candidate_limit():
    body = _out(_seg())
    assert not parse_output("{" * (limits.MAX_JSON_CANDIDATES - 1) + body, AV).parse_error
    assert parse_output("{" * limits.MAX_JSON_CANDIDATES + body, AV).parse_error


def test_output_length_limit():
    body = _out(_seg())
    at_limit = body + " " * (limits.MAX_OUTPUT_CHARS - len(body))
    assert parse_output(at_limit, AV).issues == ()
    p = parse_output(at_limit + "x", AV)
    assert not p.parse_error and p.issues == (f"output longer than {limits.MAX_OUTPUT_CHARS} characters was cut",)
    p = parse_output(" " * limits.MAX_OUTPUT_CHARS + body, AV)  # the answer lies beyond the cut
    assert p.parse_error


def test_megabyte_outputs():
    body = _out(_seg())
    assert not parse_output(body + "na" * 2_000_000, AV).parse_error
    assert parse_output("x" * 4_000_000 + body, AV).parse_error
    assert parse_output(_out(_seg(transcript="é" * 3_000_000)), AV).parse_error


# --- <think> blocks -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wrapped, kept",
    [
        ("<think>plan {a}</think>ANSWER", "ANSWER"),
        ("<THINK>plan</Think>ANSWER", "ANSWER"),
        ("<think>a <think>b</think> c</think>ANSWER", "ANSWER"),  # nested
        ("reasoning without its opening tag</think>ANSWER", "ANSWER"),
        ("ANSWER<think>cut off", "ANSWER"),
        ("<think>cut off ANSWER", ""),
        ("İİİ</think>ANSWER", "ANSWER"),  # lower() changes the length of İ; the cut must not shift
        ("<think>x</think>ANSWER<think>y</think>", "ANSWER"),
    ],
)
def test_think_blocks(wrapped, kept):
    assert strip_wrappers(wrapped).strip() == kept


def test_text_up_to_the_last_stray_close_tag_is_dropped():
    """Two stray ``</think>`` (their opening tags swallowed): what lies before the last one is
    reasoning, decoy answers included."""
    decoy = _out(_seg(transcript="decoy"))
    seg, issues = _one(f"plan</think>{decoy}</think>{_out(_seg(transcript='answer'))}")
    assert seg.transcript == "answer" and issues == ()


def test_unclosed_think_yields_no_answer():
    p = parse_output("<think>maybe " + _out(_seg()), AV)
    assert p.parse_error and p.issues == ("no JSON object found",)


def test_thousands_of_think_tags():
    # A degenerate generation repeating "<think>": handled in one pass (this was quadratic).
    assert parse_output("<think>" * 28_000, AV).parse_error
    assert not parse_output("<think>.</think>" * 12_000 + _out(_seg()), AV).parse_error


def test_decoy_object_inside_think_is_ignored():
    p = parse_output('<think>{"has_demand": false, "segments": []}</think>' + _out(_seg()), AV)
    assert p.has_demand and p.issues == ()


# --- has_demand and segments ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [(True, True), (False, False), ("true", True), (" False ", False), (" TRUE ", True), ("\ttrue\n", True)],
)
def test_has_demand_booleans(value, expected):
    p = parse_output(_out(has_demand=value), AV)
    assert p.has_demand is expected and not p.parse_error
    assert p.issues == (() if isinstance(value, bool) else (f"has_demand: string {value!r} read as a boolean",))


@pytest.mark.parametrize("value", ["yes", 1, 0, None, [True], {"value": True}])
def test_has_demand_not_boolean_is_a_parse_error(value):
    p = parse_output(_out(_seg(), has_demand=value), AV)
    assert (p.has_demand, p.segments, p.parse_error) == (False, (), True)
    assert p.issues[-1].startswith("has_demand: ") and p.issues[-1].endswith("is not a boolean")


@pytest.mark.parametrize("segments", [{"start_ms": 1}, "the whole clip", 3, True])
def test_segments_not_a_list(segments):
    p = parse_output(json.dumps({"has_demand": True, "segments": segments}), AV)
    assert p.has_demand and p.segments == () and p.issues == ("segments: not a list; ignored",)
    assert not p.parse_error


def test_segments_missing_or_null():
    for text in ('{"has_demand": true}', '{"has_demand": true, "segments": null}'):
        p = parse_output(text, AV)
        assert p.has_demand and p.segments == () and p.issues == ()


def test_segments_with_has_demand_false_are_ignored():
    p = parse_output(_out(_seg(), has_demand=False), AV)
    assert not p.has_demand and p.segments == () and p.issues == ("segments given with has_demand=false; ignored",)


def test_non_object_segments_are_dropped():
    p = parse_output(_out(_seg(transcript="a"), "b", _seg(transcript="c")), AV)
    assert [s.transcript for s in p.segments] == ["a", "c"]
    assert p.issues == ("segments[1]: not an object; dropped",)


def test_segment_limit_keeps_the_first():
    segs = [_seg(transcript=f"t{i}") for i in range(limits.MAX_SEGMENTS + 1)]
    assert parse_output(_out(*segs[: limits.MAX_SEGMENTS]), AV).issues == ()
    p = parse_output(_out(*segs), AV)
    assert [s.transcript for s in p.segments] == [f"t{i}" for i in range(limits.MAX_SEGMENTS)]
    assert p.issues == (f"segments: {limits.MAX_SEGMENTS + 1} given, kept the first {limits.MAX_SEGMENTS}",)


# --- times --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start, end, span, issue",
    [
        (100, 900, (100, 900), None),
        (900, 100, (100, 900), "segments[0]: start_ms > end_ms; swapped"),
        (-50, 900, (0, 900), "segments[0].start_ms: negative time clamped to 0"),
        (-900, -50, (0, 0), "segments[0].end_ms: negative time clamped to 0"),
        (100.4, 899.5, (100, 900), "segments[0].start_ms: fractional milliseconds rounded"),
        ("100", " 900 ", (100, 900), "segments[0].end_ms: numeric string read as a number"),
        (500, 500, (500, 500), None),
        (0, limits.MAX_TIME_MS - 1, (0, limits.MAX_TIME_MS - 1), None),
        (-(limits.MAX_TIME_MS - 1), 10, (0, 10), "negative time clamped to 0"),
        (0, limits.MAX_TIME_MS, None, f"segments[0].end_ms: {limits.MAX_TIME_MS} is not a usable time"),
        pytest.param(0, 10**400, None, "is not a usable time", id="int-too-large-for-a-float"),
        (-(limits.MAX_TIME_MS), 10, None, "segments[0].start_ms: -86400000 is not a usable time"),
        ("1.2s", 900, None, "segments[0].start_ms: '1.2s' is not a number"),
        (True, 900, None, "segments[0].start_ms: missing or not a number"),
        ([100], 900, None, "segments[0].start_ms: missing or not a number"),
        (..., 900, None, "segments[0]: only one usable time; span dropped"),
        (..., ..., None, "segments[0].end_ms: missing or not a number"),
    ],
)
def test_time_rules(start, end, span, issue):
    seg, issues = _one(_out(_seg(start_ms=start, end_ms=end)))
    assert ((seg.start_ms, seg.end_ms) if seg.has_span else None) == span
    assert seg.has_span == (seg.start_ms is not None) == (seg.end_ms is not None)
    assert issues == () if issue is None else any(issue in i for i in issues), issues


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_json_numbers(literal):
    seg, issues = _one('{"has_demand": true, "segments": [{"start_ms": 0, "end_ms": ' + literal + "}]}")
    assert not seg.has_span
    assert any(i.endswith("is not a usable time") for i in issues)
    assert "segments[0]: only one usable time; span dropped" in issues


def test_integer_beyond_python_digit_limit_is_a_parse_error():
    # json refuses ints over 4,300 digits with a ValueError (not a JSONDecodeError): not usable JSON.
    p = parse_output('{"has_demand": true, "segments": [{"start_ms": 0, "end_ms": %s}]}' % ("9" * 5000), AV)
    assert p.parse_error


# --- text fields, context, profile ------------------------------------------------------------


def test_text_fields():
    seg, issues = _one(_out(_seg(transcript=None, structured_intent=12, required_context=...)))
    assert (seg.transcript, seg.structured_intent) == ("", "")
    assert issues == ("segments[0].structured_intent: int is not a string; ignored",)
    seg, issues = _one(_out(_seg(transcript="a" * limits.MAX_TEXT_CHARS)))
    assert issues == ()
    seg, issues = _one(_out(_seg(transcript="a" * (limits.MAX_TEXT_CHARS + 1))))
    assert seg.transcript == "a" * limits.MAX_TEXT_CHARS
    assert issues == (f"segments[0].transcript: cut to {limits.MAX_TEXT_CHARS} characters",)


def test_unpaired_surrogates_are_replaced():
    seg, issues = _one(_out(_seg(transcript="mute \ud83d", structured_intent="ok \ud83d\ude00")))
    assert seg.transcript == "mute \ufffd" and seg.structured_intent == "ok \U0001f600"
    assert issues == ("segments[0].transcript: unpaired surrogate replaced by U+FFFD",)
    seg.transcript.encode("utf-8")


@pytest.mark.parametrize(
    "context, expected, issue",
    [
        ([{"type": " Visual ", "description": "a phone"}], [("visual", "a phone")], None),
        ({"type": "audio", "description": "a chime"}, [("audio", "a chime")], "an object, read as a one-item list"),
        ("a chime", [], "required_context: not a list; ignored"),
        (["a chime"], [("", "a chime")], "required_context[0]: a bare string, read as a description without type"),
        ([3, None, {"type": "audio"}], [("audio", "")], "required_context[1]: not an object; dropped"),
        ([{"type": "smell", "description": "x"}], [("smell", "x")], "required_context[0].type: 'smell' is not one of"),
        ([{"type": 5, "description": "x"}], [("", "x")], "required_context[0].type: 5 is not one of"),
        (None, [], None),
    ],
)
def test_context_rules(context, expected, issue):
    seg, issues = _one(_out(_seg(required_context=context)))
    assert [(c.type, c.description) for c in seg.required_context] == expected
    assert issues == () if issue is None else any(issue in i for i in issues), issues


def test_context_item_limit():
    items = [{"type": "audio", "description": f"d{i}"} for i in range(limits.MAX_CONTEXT_ITEMS + 1)]
    seg, issues = _one(_out(_seg(required_context=items[: limits.MAX_CONTEXT_ITEMS])))
    assert len(seg.required_context) == limits.MAX_CONTEXT_ITEMS and issues == ()
    seg, issues = _one(_out(_seg(required_context=items)))
    assert [c.description for c in seg.required_context] == [f"d{i}" for i in range(limits.MAX_CONTEXT_ITEMS)]
    assert issues == (
        f"segments[0].required_context: {limits.MAX_CONTEXT_ITEMS + 1} items, kept the first {limits.MAX_CONTEXT_ITEMS}",
    )


def test_audio_only_context_excludes_visual():
    seg, issues = _one(_out(_seg(required_context=[{"type": "visual", "description": "x"}])), AO)
    assert seg.required_context[0].type == "visual"  # kept for the judge, flagged
    assert any("'visual' is not one of" in i for i in issues)


@pytest.mark.parametrize(
    "field, value, parsed, flagged",
    [
        ("user_gender", "Male", "male", False),
        ("user_gender", " FEMALE ", "female", False),
        ("user_gender", "Man", "man", True),
        ("user_gender", "unknown", "unknown", False),
        ("user_gender", None, None, True),
        ("user_age_group", "young adult", "young adult", True),
        ("user_age_group", "senior", "senior", True),
        ("user_age_group", "Elderly", "elderly", False),
        ("user_age_group", 30, None, True),
    ],
)
def test_closed_sets(field, value, parsed, flagged):
    seg, issues = _one(_out(_seg(**{field: value})))
    assert getattr(seg, field) == parsed
    assert bool(issues) == flagged
    if flagged:
        assert issues[0].startswith(f"segments[0].{field}: ") and "is not one of" in issues[0]


@pytest.mark.parametrize(
    "value, parsed", [(True, True), (False, False), ("true", True), ("yes", None), (1, None), (..., None)]
)
def test_user_in_frame_audio_visual(value, parsed):
    seg, issues = _one(_out(_seg(user_in_frame=value)))
    assert seg.user_in_frame is parsed
    assert bool(issues) == (not isinstance(value, bool))


@pytest.mark.parametrize("value", [True, "yes", {"x": 1}, ...])
def test_user_in_frame_ignored_for_audio_only(value):
    seg, issues = _one(_out(_seg(user_in_frame=value)), AO)
    assert seg.user_in_frame is None and issues == ()


def test_issue_text_quotes_model_values_in_bounded_form():
    p = parse_output(json.dumps({"has_demand": "x" * 100_000}), AV)
    assert p.parse_error and len(p.issues[0]) < 100
    deep = json.loads("[" * 500 + "]" * 500)
    seg, issues = _one(_out(_seg(user_gender=deep, user_in_frame=deep)))
    assert all(len(i) < 120 for i in issues)


def test_deep_nesting():
    assert parse_output('{"has_demand": true, "segments": ' + "[" * 100_000 + "]" * 100_000 + "}", AV).parse_error
    p = parse_output('{"has_demand": true, "segments": [' + "[" * 300 + "]" * 300 + "]}", AV)
    assert p.has_demand and p.segments == () and p.issues == ("segments[0]: not an object; dropped",)


def test_extract_json_object_reports_where_it_found_it():
    obj, issues = extract_json_object('text {"has_demand": false}')
    assert obj == {"has_demand": False} and issues == ["JSON object found inside other text"]
    assert extract_json_object("nothing here") == (None, [])


# --- scoring consequences ---------------------------------------------------------------------


def test_out_of_set_profile_is_scored_wrong_not_crashed():
    scene = next(s for s in load_scenes(FIXTURES / "demo_scenes.json") if s.scene_id == "avp_gen_000003")
    ref = scene.annotation().segments[0]
    seg = _seg(
        start_ms=ref.start_ms,
        end_ms=ref.end_ms,
        transcript=ref.transcript,
        user_in_frame=ref.user_in_frame,
        user_gender="young man",
        user_age_group=ref.user_age_group.upper(),
    )
    row = score_scenes([scene], {scene.scene_id: _out(seg)}, LexicalJudge()).scenes[0]
    assert row["s5"] == pytest.approx(2 / 3) and row["s3"] == 1.0 and row["s4"] == 1.0
    assert any("user_gender: 'young man' is not one of" in i for i in row["issues"])


def test_parse_error_scores_like_no_demand():
    scene = next(s for s in load_scenes(FIXTURES / "demo_scenes.json") if s.scene_id == "avp_gen_000003")
    rows = score_scenes([scene], {scene.scene_id: "```json\n{'has_demand': True}\n```"}, LexicalJudge()).scenes
    assert rows[0]["parse_error"] and not rows[0]["predicted_has_demand"]
    assert (rows[0]["s2"], rows[0]["s3"], rows[0]["s4"], rows[0]["s5"]) == (0.0, 0.0, 0.0, 0.0)
    assert all(k["hit"] is False and not k["matched"] for k in rows[0]["key_points"])
