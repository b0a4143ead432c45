"""What qualifies a run's numbers: said next to them wherever they are printed, and stored with them.

A caveat is ``{"kind": KIND, "text": ...}``; the kinds, each from the fact that makes it:

* ``limit`` — ``--limit N``: the first N scenes of each task, not the benchmark;
* ``shard`` — ``--shard K/N``: one part of the dataset (``odu-bench merge`` joins the parts);
* ``approximate_judge`` — M2 (60 % of Avg) from an approximate judge (the offline lexical one);
* ``truncated`` — answers the server cut at the output-token limit (``finish_reason: length``),
  which then read as parse errors;
* ``small_sample`` — a modality with fewer than :data:`SMALL_SAMPLE_SCENES` scenes: one scene moves
  its numbers by several points, and a scene-bootstrap interval says little (a single scene gives
  ``[100.0, 100.0]``).

``odu-bench eval`` and ``odu-bench score`` store them in ``summary.json`` (``"caveats"``) and print them
under their table (:func:`shown_caveats`);
plain ``lm_eval`` / ``odu-bench lm-eval`` store them in ``results.json`` (``"odu"``) and print them
under lm-eval's table (:mod:`odu.harness.annotate`); ``odu-bench report`` and ``view`` show those
of each run and the small-sample caveat of each interval they draw.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..io.console import inert
from .constants import MODALITIES

#: Below this many scenes in a modality, its numbers carry the ``small_sample`` caveat: the normal
#: approximation behind a 95 % interval is commonly taken to need about 30 observations, and with
#: fewer, one scene moves a rate over them by more than 1/30, over 3 points (docs/reports.md).
SMALL_SAMPLE_SCENES = 30

LIMIT, SHARD, APPROXIMATE_JUDGE, TRUNCATED, SMALL_SAMPLE = (
    "limit",
    "shard",
    "approximate_judge",
    "truncated",
    "small_sample",
)
#: The mark after a system's name (or a task's) in a printed table whose numbers carry caveats.
CAVEAT_MARK = "*"

Caveat = dict[str, str]


def _caveat(kind: str, text: str) -> Caveat:
    return {"kind": kind, "text": text}


def small_sample(n_scenes: int, what: str = "") -> Caveat | None:
    """The ``small_sample`` caveat of ``n_scenes`` scenes (of ``what``, e.g. a modality), if that is small.

    >>> small_sample(1, "audio-visual")["text"]
    '1 audio-visual scene: a small sample (< 30); one scene moves M1 and FTR by many points, and intervals say little'
    >>> small_sample(30) is None
    True
    """
    if n_scenes >= SMALL_SAMPLE_SCENES:
        return None
    scenes = f"{n_scenes} {what + ' ' if what else ''}scene{'' if n_scenes == 1 else 's'}"
    return _caveat(
        SMALL_SAMPLE,
        f"{scenes}: a small sample (< {SMALL_SAMPLE_SCENES}); one scene moves M1 and FTR by many points, "
        "and intervals say little",
    )


def run_caveats(
    judge: Mapping[str, Any],
    counts: Mapping[str, int],
    *,
    limit: int | float | None = None,
    shard: str | None = None,
    truncated: int = 0,
    n_total: int | None = None,
) -> list[Caveat]:
    """The caveats of a run: ``judge`` is its judge block (``summary.json``'s ``"judge"``),
    ``counts`` the scenes scored per modality (or per task); then how it was run: ``limit``
    (``--limit``), ``shard`` (``"K/N"``), ``truncated`` (answers cut at the output-token limit),
    ``n_total`` (the scenes the limit chose from)."""
    out: list[Caveat] = []
    n_run = sum(counts.values())
    if limit:
        of = f" ({n_run} of {n_total} scenes)" if n_total else f" ({n_run} scenes)"
        if limit < 1:  # lm-eval reads a limit below 1 as a fraction of each task
            chosen = f"--limit {limit}: the first {limit:.0%} of each task's scenes"
        else:
            chosen = f"--limit {int(limit)}: the first {int(limit)} scenes of each task"
        out.append(_caveat(LIMIT, f"{chosen}{of}, not the benchmark"))
    if shard:
        out.append(
            _caveat(
                SHARD, f"--shard {shard}: one part of the dataset ({n_run} scenes); odu-bench merge joins the parts"
            )
        )
    if judge.get("approximate"):
        out.append(
            _caveat(
                APPROXIMATE_JUDGE,
                f"M2 and Avg from the approximate {judge.get('name')} judge: not comparable with Table 3 "
                "(an LLM judge: --judge openai:MODEL, or $ODU_JUDGE for lm_eval; docs/judges.md)",
            )
        )
    if truncated:
        out.append(
            _caveat(
                TRUNCATED,
                f"{truncated} answer(s) cut at the output-token limit (finish_reason: length), read as parse "
                "errors: raise the limit (lm_eval: --gen_kwargs max_gen_toks=N) and run again",
            )
        )
    out += [caveat for what, n in counts.items() if (caveat := small_sample(n, what))]
    return out


def summary_counts(summary: Mapping[str, Any]) -> dict[str, int]:
    """Scenes per modality of a ``summary.json``."""
    return {m: int(block.get("n_scenes") or 0) for m in MODALITIES if isinstance(block := summary.get(m), Mapping)}


def caveat_lines(caveats: Mapping[str, Iterable[Mapping[str, str]]]) -> list[str]:
    """Lines to print under a table: ``* NAME: text`` for each caveat of each named row, each made
    inert (:func:`odu.io.console.inert`: a run's name and a stored caveat are text from outside).

    >>> caveat_lines({"never": [{"kind": "limit", "text": "--limit 2: ..."}], "always": []})
    ['* never: --limit 2: ...']
    """
    return [inert(f"{CAVEAT_MARK} {name}: {c['text']}") for name, items in caveats.items() for c in items]


def marked(name: str, caveats: Iterable[Any]) -> str:
    """``name`` with :data:`CAVEAT_MARK` when it has caveats."""
    return f"{name} {CAVEAT_MARK}" if any(True for _ in caveats) else name


#: The line above the caveats printed under a table of runs.
CAVEATS_HEADING = 'Caveats of these numbers (stored in summary.json "caveats"):'


def shown_caveats(
    summaries: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, Mapping[str, Any]], list[str]]:
    """What a printed table of runs (``odu-bench eval``, ``score``) shows of the caveats each
    ``summary.json`` stores: the summaries keyed by their names, :func:`marked`, and the lines under
    the table (none without a caveat). The approximate judge is left to the judge's own line.

    >>> rows, lines = shown_caveats({"run": {"caveats": [small_sample(12, "audio-visual")]}})
    >>> list(rows), lines[1]
    (['run *'], '* run: 12 audio-visual scenes: a small sample (< 30); one scene moves M1 and FTR by many points, and intervals say little')
    """
    caveats = {
        name: [c for c in summary.get("caveats") or () if c["kind"] != APPROXIMATE_JUDGE]
        for name, summary in summaries.items()
    }
    lines = caveat_lines(caveats)
    return {marked(name, caveats[name]): summary for name, summary in summaries.items()}, (
        [CAVEATS_HEADING, *lines] if lines else []
    )


__all__ = [
    "APPROXIMATE_JUDGE",
    "CAVEATS_HEADING",
    "CAVEAT_MARK",
    "LIMIT",
    "SHARD",
    "SMALL_SAMPLE",
    "SMALL_SAMPLE_SCENES",
    "TRUNCATED",
    "Caveat",
    "caveat_lines",
    "marked",
    "run_caveats",
    "shown_caveats",
    "small_sample",
    "summary_counts",
]
