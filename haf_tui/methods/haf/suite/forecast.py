"""How many generations one instance of a HAF run may need, before its JUSTIFY answer: one
JUSTIFY; each follow-up stage none (the answer has no clear stance with reasons: the instance
stops) up to one, INDIVIDUAL one per reason (:data:`ASSUMED_REASONS` assumed)."""

from __future__ import annotations

from haf_tui.config import RunConfig
from haf_tui.methods.haf.suite.suite import HAF
from haf_tui.store.records import InstanceRecord

ASSUMED_REASONS = 3
"""Reasons per instance assumed before any is known (the paper's models give 2 to 5)."""

FORECAST_NOTE = (
    f"HAF: an instance whose JUSTIFY answer has no clear stance with reasons stops there; one "
    f"that goes on is counted with {ASSUMED_REASONS} reasons (INDIVIDUAL asks one per reason)."
)


def haf_forecast(instance: InstanceRecord, config: RunConfig) -> dict[str, tuple[int, int | None]]:
    """Per stage of the run: (least, most) generations of one instance."""
    bounds: dict[str, tuple[int, int | None]] = {}
    for stage in HAF.run_stages(config):
        if stage == "justify":
            bounds[stage] = (1, 1)
        else:
            bounds[stage] = (0, ASSUMED_REASONS if stage == "individual" else 1)
    return bounds
