"""What an export needs beyond the runs (``odu-bench export`` options)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..report.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, MAX_RESAMPLES

#: ``source_metadata.evaluator_relationship`` of Every Eval Ever: who ran the evaluation, relative to
#: the model's developer.
EVALUATOR_RELATIONSHIPS: tuple[str, ...] = ("first_party", "third_party", "collaborative", "other")


@dataclass(frozen=True)
class ExportSettings:
    """What an export needs beyond the runs: the bootstrap of the EEE intervals (App E.1), the Hub
    dataset, the source link of Hub results, who ran the evaluation, and when the records were made."""

    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    dataset_id: str | None = None
    organization: str = ""
    relationship: str = "third_party"
    source_url: str | None = None
    retrieved: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if not 1 <= self.resamples <= MAX_RESAMPLES:
            raise ValueError(f"--resamples {self.resamples}: from 1 to {MAX_RESAMPLES:,} (MAX_RESAMPLES)")
        if self.relationship not in EVALUATOR_RELATIONSHIPS:
            raise ValueError(f"--relationship {self.relationship}: choose one of {', '.join(EVALUATOR_RELATIONSHIPS)}")

    def check_organization(self) -> str:
        """``--organization``, required for EEE (``source_organization_name`` is never written empty)."""
        if not self.organization.strip():
            raise ValueError(
                "--format eee needs --organization NAME: the organization that ran the evaluation "
                "(source_metadata.source_organization_name), e.g. --organization 'My Lab'"
            )
        return self.organization.strip()
