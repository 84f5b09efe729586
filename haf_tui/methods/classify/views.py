"""classify's views: its instance metrics with their definitions."""

from __future__ import annotations

from typing import Final

from haf_tui.methods.declare import ListColumn, MetricSpec

CLASSIFY_METRICS: Final[tuple[MetricSpec, ...]] = (
    MetricSpec(
        "classify_p_toxic",
        "p(toxic)",
        "p(toxic | x): the toxic spellings' share of the four label spellings' probability "
        "mass, by teacher forcing",
        better=None,
    ),
    MetricSpec(
        "classify_label_mass",
        "mass",
        "the probability the model gives the four label spellings together (below 0.5: the "
        "format, not the model, chose the label)",
    ),
    MetricSpec(
        "classify_toxic",
        "ŷ toxic",
        "1 when the predicted label ŷ is toxic, else 0",
        value_range="0 or 1",
        better=None,
    ),
)

CLASSIFY_COLUMNS: Final[tuple[ListColumn, ...]] = (ListColumn("classify_p_toxic", "p(tox)"),)
