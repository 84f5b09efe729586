"""classify's views: its instance metrics with their definitions."""

from __future__ import annotations

import math
from typing import Any, Final

from haf_tui.methods.classify.core.labels import SPELLINGS, label_scores
from haf_tui.methods.declare import LOW_MASS_SIGN, ListColumn, MarkSpec, MetricSpec, NodeInput
from haf_tui.reports import format_number

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

LOW_LABEL_MASS: Final = 0.5
"""A label mass below it is marked ``low`` (as the judge view marks its own): the format, not
the model, chose the label."""

CLASSIFY_COLUMNS: Final[tuple[ListColumn, ...]] = (
    ListColumn("classify_p_toxic", "p(tox)", width=6, mass="classify_label_mass"),
)


def _log(probability: Any) -> float:
    return math.log(probability) if probability else -math.inf


def classify_node(node: NodeInput) -> list[str]:
    """The explorer's classify node: p(y | x), ŷ and the label mass (``low`` after it below
    :data:`LOW_LABEL_MASS`), then one line per forced spelling (in the order of
    ``node.generations``) with its probability; none when the instance has no spelling
    scored."""
    spellings = [g for g in node.generations if 0 <= int(g["sub_index"]) < len(SPELLINGS)]
    if not spellings:
        return []
    logprobs = {  # (a spelling's decision confidence is its probability)
        SPELLINGS[int(g["sub_index"])][0]: _log(g["decision_confidence"]) for g in spellings
    }
    try:
        scores = label_scores(logprobs)
        low = " low" if scores.label_mass < LOW_LABEL_MASS else ""
        title = (
            f"classify → {scores.predicted} (p(toxic) {format_number(scores.p_toxic, 2)}, "
            f"label mass {format_number(scores.label_mass, 2)}{low})"
        )
    except ValueError:
        title = "classify — incomplete"
    lines = [
        f"{SPELLINGS[int(g['sub_index'])][0]!r}: p {format_number(g['decision_confidence'], 3)}"
        for g in spellings
    ]
    return [title, *lines]


CLASSIFY_HELP: Final = """\
- **p(toxic)**: classify suite (`docs/methods/classify.md#2-label-scores`), p(y = toxic | x)
  from the label spellings' teacher-forced logprobs; **label mass**: the probability of
  answering with a label at all (below 0.5: the model wanted to say something else).
"""
"""What the ``?`` help says of its numbers."""

LOW_MASS_MARK: Final = MarkSpec(
    "low", "label mass below 0.5: the format forced the answer", "classify node", "mass < 0.5"
)
"""The mark its node draws by a low label mass."""
LOW_MASS_LIST_MARK: Final = MarkSpec(
    LOW_MASS_SIGN,
    "after a probability: its label mass is below 0.5, the model wanted to say something else",
    "explorer list",
    "p on a label mass < 0.5",
)
"""The mark the explorer's list puts after p(tox) (and the rationales' p(ŷ)) on a low mass."""
