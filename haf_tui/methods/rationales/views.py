"""The rationales method's views: its instance metrics with their definitions and its panel.
Per-rationale values (plausibility, faithfulness, complexity) are in its ``rationales`` table
and reports."""

from __future__ import annotations

import math
from typing import Any, Final

from haf_tui.methods.classify.core.labels import SPELLINGS, label_scores
from haf_tui.methods.declare import ListColumn, MetricSpec, NodeInput, PanelSpec
from haf_tui.methods.rationales.suite.plan import CLASSIFY, PROMPT
from haf_tui.reports import format_number

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


def _log(probability: Any) -> float:
    return math.log(probability) if probability else -math.inf


def rationales_node(node: NodeInput) -> list[str]:
    """The explorer's rationales node: ŷ and p(toxic) on the full text, then one line per
    rationale prompt answered (in the order of ``node.generations``); none when the label
    spellings were not scored."""
    spellings = {
        int(g["sub_index"]): g for g in node.generations
        if g["stage"] == CLASSIFY and 0 <= int(g["sub_index"]) < len(SPELLINGS)
    }  # fmt: skip
    if not spellings:
        return []
    logprobs = {SPELLINGS[sub][0]: _log(g["decision_confidence"]) for sub, g in spellings.items()}
    try:
        scores = label_scores(logprobs)
        title = f"rationales → {scores.predicted} (p(toxic) {format_number(scores.p_toxic, 2)})"
    except ValueError:
        title = "rationales → incomplete"
    asked = [
        f"asked why {g['decision'] or '—'}: the answer"
        for g in node.generations
        if g["stage"] == PROMPT
    ]
    return [title, *asked]
