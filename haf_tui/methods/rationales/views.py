"""The rationales method's views: its instance metrics with their definitions and its panel.
Per-rationale values (plausibility, faithfulness, complexity) are in its ``rationales`` table
and reports."""

from __future__ import annotations

from typing import Final

from haf_tui.methods.declare import ListColumn, MetricSpec, PanelSpec

RATIONALE_METRICS: Final[tuple[MetricSpec, ...]] = (
    MetricSpec(
        "rationale_p_predicted",
        "p(ŷ)",
        "p(ŷ | x): the predicted label's share of the label spellings' mass on the full text",
        better=None,
    ),
    MetricSpec(
        "rationale_label_mass",
        "mass",
        "the probability of the four label spellings together on the full text",
    ),
    MetricSpec(
        "rationale_toxic",
        "ŷ toxic",
        "1 when the predicted label ŷ is toxic, else 0",
        value_range="0 or 1",
        better=None,
    ),
    MetricSpec(
        "rationale_has_gold",
        "gold",
        "1 when the annotators marked words (plausibility is scored), else 0",
        value_range="0 or 1",
        better=None,
    ),
    MetricSpec(
        "rationale_annotator_iou",
        "ann IoU",
        "agreement of the annotators' masks: mean pairwise IoU",
    ),
    MetricSpec(
        "rationale_alignment_f1",
        "align F1",
        "token F1 between the prompted rationale and the occlusion rationale (§6.4)",
        undefined_when="undefined for the unbound strategy or an empty occlusion rationale",
    ),
)

RATIONALE_PANELS: Final[tuple[PanelSpec, ...]] = (
    PanelSpec("rationales", "Rationales", ("rationales",)),
)

RATIONALE_COLUMNS: Final[tuple[ListColumn, ...]] = (
    ListColumn("rationale_p_predicted", "p(ŷ)"),
    ListColumn("rationale_alignment_f1", "align"),
)
