"""How a face writes a stage's count and a run's rate: ``12/40``, ``12/≥40`` (a total that may
still grow), ``12/≈55`` (an estimate); ``38.2 tok/s · 12.5 prompts/s``. Plain text, shared by
the CLI's bars and the workbench's monitor."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Final

RATE_LABELS: Final = {"tokens": "tok/s", "texts": "prompts/s"}
"""What each rate unit reads as: generated tokens, or forced replies scored (a prompt each:
a classify text is 4 of them, its label spellings), never texts of the dataset."""


@dataclass(frozen=True)
class StageTotal:
    """A stage's total as shown: ``mark`` is "" (exact), "≥" (at least) or "≈" (estimated);
    ``total`` None: unknown."""

    total: int | None
    mark: str = ""

    def count(self, done: int) -> str:
        """``done/total`` with the mark (a total below ``done`` is raised to it)."""
        if self.total is None:
            return str(done)
        return f"{done}/{self.mark}{max(self.total, done)}"


def stage_total(
    stage: str,
    planned: Mapping[str, int],
    growing: Collection[str],
    expected: Mapping[str, int],
) -> StageTotal:
    """A stage's total: exact when planned and not growing; else the estimate when it says
    more than what is planned, else at least what is planned."""
    known = planned.get(stage)
    if known is not None and stage not in growing:
        return StageTotal(known)
    estimate = expected.get(stage)
    if estimate and estimate > (known or 0):
        return StageTotal(estimate, "≈")
    if known:
        return StageTotal(known, "≥")
    return StageTotal(None)


def rate_text(rates: Mapping[str, float]) -> str:
    """The measured rates, e.g. ``38.2 tok/s · 12.5 prompts/s`` (none measured yet: "")."""
    return " · ".join(
        f"{value:.1f} {RATE_LABELS.get(unit, unit + '/s')}"
        for unit, value in rates.items()
        if value > 0
    )
