"""ODU-Bench as an ``evaluate`` metric: a door onto the core scorer (odu.core.parse / odu.runs.scoring / odu.judge).

Nothing is scored here: predictions and references are stored as JSON text
(:mod:`odu.metric.inputs`), and ``_compute`` hands them to :func:`odu.runs.scoring.score_scenes`, so the
numbers are those of ``odu-bench score``. ``evaluate.load("odu_metric")`` finds this script from any
folder after ``odu-bench install-metric``; ``evaluate.load("path/to/odu_metric")`` always does.
"""

import json

import datasets
import evaluate

# "# From: odu-bench": when odu is missing, evaluate.load says "pip install odu-bench"
from odu.core.citation import BIBTEX, PAPER_URL  # From: odu-bench
from odu.core.schema import load_scenes  # From: odu-bench
from odu.io.console import say_in_our_voice  # From: odu-bench
from odu.judge.spec import judge_from_spec  # From: odu-bench
from odu.metric.inputs import decode_prediction, encode_prediction, encode_reference  # From: odu-bench
from odu.runs.scoring import score_scenes  # From: odu-bench

_DESCRIPTION = """\
ODU-Bench (Omni Demand Understanding) asks whether an audio / audio-visual assistant can tell that
a user wants something (M1 demand detection, false-trigger rate) and infer what: key-point
coverage of intent and required context (M2, judged), segment localisation (M3), transcript
quality (M4) and user profile (M5), combined as Avg (App A, Eq. 6). Audio-visual and audio-only
scenes are reported separately, as in the paper's Table 3. Scores are fractions in [0, 1].
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one per scene. The model's raw output text (``str``; the JSON object is
        extracted leniently and validated strictly, exactly as ``odu-bench score`` does), or an
        already parsed prediction (``dict`` in the App A.1 schema: ``has_demand``, ``segments``),
        read by the same parser; ``None`` = no output (counted as ``no_output``). Each prediction is
        stored as the JSON text of its value (``Value("string")`` column; any Unicode, lone
        surrogates included, survives storage and gathering).
    references: one per scene: the scene record in the release schema (``dict``), a dataset row
        exactly as ``load_dataset("odu-bench", cfg)`` yields it (media bytes or lazy clips
        included: the metric keeps the record, never the media), an ``odu.core.schema.Scene``, or the
        JSON text of a record or row. Validated when added and stored as JSON text. Scene ids must
        be unique across everything added before ``compute``.
    judge: M2 key-point judge, a judge spec as ``$ODU_JUDGE`` takes it. ``"lexical"`` (default):
        offline and APPROXIMATE (its M2 and Avg are not comparable with the paper;
        ``result["judge"]["approximate"]`` is ``True``); ``"verdicts:PATH"``: stored verdicts
        (JSONL); ``"openai:MODEL"``: the paper's judge prompt on an OpenAI-compatible server,
        optionally followed by ``odu-bench score``'s ``--judge-*`` options.
    judge_options: ``dict`` of options for the judge, e.g. ``{"base_url":
        "http://localhost:8000/v1", "api_key_env": "OPENAI_API_KEY", "concurrency": 8}``; they win
        over options in ``judge``. The API key itself is never passed or returned: ``api_key_env``
        names the variable holding it.
    annotation_language: reference annotation to score against: ``"scene"`` (each scene's own
        language, default), ``"en"`` or ``"zh"``.

Returns:
    The ``summary.json`` of ``odu-bench score``: one entry per modality present
    (``"audio-visual"``, ``"audio-only"``) with ``m1``..``m5``, ``avg``, ``ftr`` (``None`` where
    undefined), ``n_scenes``, ``n_positive``, ``n_negative``, ``m2_errors_as_misses``,
    ``avg_errors_as_misses``, ``judge_error_points``, ``parse_errors``, ``no_output``; and at top level ``judge`` (name,
    model, approximate, prompt version, accounting), ``parse_errors``, ``no_output``,
    ``judge_errors``, ``annotation_language``.

Examples:
    >>> import evaluate
    >>> odu = evaluate.load("odu_metric")  # after odu-bench install-metric (or from the repository root)
    >>> segment = {"start_ms": 500, "end_ms": 2500, "transcript": "Turn off that lamp.",
    ...            "structured_intent": "The user wants the desk lamp turned off",
    ...            "required_context": [{"type": "visual", "description": "a desk lamp is on next to the user"}],
    ...            "user_in_frame": True, "user_gender": "female", "user_age_group": "adult",
    ...            "key_points": [{"qid": "kp01", "point": "turn off the desk lamp", "source": "intent"},
    ...                           {"qid": "kp02", "point": "the lamp stands next to the user",
    ...                            "source": "required_context.visual"}]}
    >>> def scene(sid, positive):
    ...     targets = {"has_demand": positive, "segments": [segment] if positive else []}
    ...     return {"scene_id": sid, "language": "en", "modality": "audio-visual", "source": "generated",
    ...             "label": "positive" if positive else "negative",
    ...             "clips": [{"id": "v1", "src": f"{sid}.mp4", "duration": 3.0}],
    ...             "annotations": {"en": {"evaluation_targets": targets}}}
    >>> output = ('```json\\n{"has_demand": true, "segments": [{"start_ms": 600, "end_ms": 2500, '
    ...           '"transcript": "Turn off that lamp", "structured_intent": "turn off the desk lamp", '
    ...           '"required_context": [], "user_in_frame": true, "user_gender": "female", '
    ...           '"user_age_group": "adult"}]}\\n```')
    >>> result = odu.compute(predictions=[output, {"has_demand": True, "segments": []}],
    ...                      references=[scene("demo_pos", True), scene("demo_neg", False)])
    >>> av = result["audio-visual"]
    >>> av["n_scenes"], av["m1"], av["m2"], av["m4"], av["ftr"]
    (2, 0.3333333333333333, 0.5, 1.0, 1.0)
    >>> round(av["m3"], 2), round(av["avg"], 3), result["judge"]["approximate"], result["parse_errors"]
    (0.95, 0.595, True, 0)

    In an evaluation loop, add batches as they come and compute once:

    >>> import json
    >>> for sid, positive, prediction in [("loop_a", True, output), ("loop_b", False, '{"has_demand": false}')]:
    ...     odu.add_batch(predictions=[prediction], references=[json.dumps(scene(sid, positive))])
    >>> odu.compute(judge="lexical", annotation_language="en")["audio-visual"]["m1"]
    1.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class OduMetric(evaluate.Metric):
    """ODU-Bench M1-M5, Avg and FTR per modality (App A of the paper)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BIBTEX,
            inputs_description=_KWARGS_DESCRIPTION,
            # Nested and mixed inputs are stored as JSON text: references are scene records,
            # predictions the JSON of a str (raw output), a dict (parsed) or None (no output).
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            reference_urls=[PAPER_URL],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """As :meth:`evaluate.Metric.add_batch`; inputs are stored as JSON text (see the card)."""
        if predictions is not None:
            predictions = [encode_prediction(p, i) for i, p in enumerate(predictions)]
        if references is not None:
            references = [encode_reference(r, i) for i, r in enumerate(references)]
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """As :meth:`evaluate.Metric.add`; inputs are stored as JSON text (see the card)."""
        return super().add(
            prediction=encode_prediction(prediction, 0), reference=encode_reference(reference, 0), **kwargs
        )

    def _compute(self, predictions, references, judge="lexical", judge_options=None, annotation_language="scene"):
        scenes = load_scenes([json.loads(ref) for ref in references])  # validated when added
        outputs = {scene.scene_id: decode_prediction(p) for scene, p in zip(scenes, predictions)}
        say_in_our_voice()  # a judge's warnings (a placeholder key) as one line: "odu-bench: warning: ..."
        scorer = judge_from_spec(judge, "judge", **(judge_options or {}))
        try:
            return score_scenes(scenes, outputs, scorer, annotation_language).summary
        finally:
            scorer.close()
