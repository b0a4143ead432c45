"""The reported numbers as the exports name them: one task per modality and Table 3 column
(``av_avg`` ... ``ao_ftr``, the columns of ``table3.csv``), each on the dataset config of its
modality (``av`` / ``ao``, split ``test``), with what it measures (App A.3-A.4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.constants import METRIC_WEIGHTS, MODALITIES
from ..core.tables import TABLE3_COLUMNS, Table3Column
from ..data.dataset import MODALITY_CODES, SPLIT

#: What each Table 3 column measures, and over which scenes (App A.3-A.4).
METRIC_DESCRIPTIONS: dict[str, str] = {
    "avg": "Avg, weighted mean of the available M1-M5 (App A.4 Eq. 6; weights "
    + ", ".join(f"{m.upper()} {w:.2f}" for m, w in METRIC_WEIGHTS.items())
    + ")",
    "m1": "M1, demand detection: macro-F1 of has_demand over all scenes (App A.3 Eq. 1)",
    "m2": "M2, key-point coverage of the predicted intent and required context, decided by the judge, "
    "mean over demand scenes (App A.3 Eq. 2)",
    "m3": "M3, localisation: mean temporal IoU of matched segments over demand scenes (App A.3 Eq. 3)",
    "m4": "M4, transcript quality: 1 - pooled edit rate over demand scenes (App A.3 Eq. 4)",
    "m5": "M5, user-profile accuracy over demand scenes (App A.3 Eq. 5)",
    "ftr": "FTR, false-trigger rate: share of no-demand scenes predicted to carry a demand (App A.3 Eq. 1); "
    "lower is better",
}
#: Metrics whose value rests on the judge's verdicts (M2, and Avg through its weight 0.60).
JUDGED_METRICS: frozenset[str] = frozenset({"m2", "avg"})
#: The scenes each metric is a mean over (App A.3): all for M1 and Avg, the demand scenes for
#: M2-M5, the no-demand scenes for FTR; the count keys of a summary / headline block.
METRIC_POPULATION: dict[str, str] = {
    "avg": "n_scenes",
    "m1": "n_scenes",
    "m2": "n_positive",
    "m3": "n_positive",
    "m4": "n_positive",
    "m5": "n_positive",
    "ftr": "n_negative",
}
#: What those scenes are called in the exports' notes.
POPULATION_NAMES: dict[str, str] = {
    "n_scenes": "scenes",
    "n_positive": "demand scenes",
    "n_negative": "no-demand scenes",
}


@dataclass(frozen=True)
class Task:
    """One reported number: a modality's Table 3 column."""

    modality: str
    metric: Table3Column

    @property
    def config(self) -> str:
        """The dataset config holding the modality's scenes (``av`` / ``ao``)."""
        return MODALITY_CODES[self.modality]

    @property
    def id(self) -> str:
        """``av_avg`` ... ``ao_ftr``: the ``table3.csv`` column."""
        return f"{self.config}_{self.metric}"

    @property
    def lower_is_better(self) -> bool:
        return self.metric == "ftr"

    @property
    def description(self) -> str:
        return f"ODU-Bench {self.modality} scenes: {METRIC_DESCRIPTIONS[self.metric]}"

    def scenes(self, counts: Mapping[str, Any]) -> int:
        """How many scenes the number rests on (:data:`METRIC_POPULATION`), from a summary or
        headline block's counts."""
        return int(counts.get(METRIC_POPULATION[self.metric]) or 0)

    def scenes_text(self, counts: Mapping[str, Any]) -> str:
        """``7 demand scenes``: :meth:`scenes` with what they are."""
        return f"{self.scenes(counts)} {POPULATION_NAMES[METRIC_POPULATION[self.metric]]}"


#: Every reported number, modalities in reporting order (Table 3).
TASKS: tuple[Task, ...] = tuple(Task(m, c) for m in MODALITIES for c in TABLE3_COLUMNS)

__all__ = ["JUDGED_METRICS", "METRIC_DESCRIPTIONS", "METRIC_POPULATION", "SPLIT", "TASKS", "Task"]
