"""Labels and label scores of a classification prompt (``docs/methods/rationales.md#1-stages``,
``docs/methods/rationales.md#32-the-prompts``, ``docs/methods/classify.md#2-label-scores``): pure,
no I/O.

Each label's spellings are teacher-forced as the start of the reply; lp(y) is the log-sum-exp
of its spellings' summed raw log-probabilities, p(y | x) = exp lp(y) / Σ exp lp(y'), ŷ the
most likely label (a tie goes to ``toxic``) and the label mass Σ exp lp(y') tells how much of
the model's reply lies in the label space at all (below 0.5: it wanted to say something else).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from haf_tui.messages import ChatMessage

Label = Literal["toxic", "non-toxic"]
LABELS: Final[tuple[Label, ...]] = ("toxic", "non-toxic")
SPELLINGS: Final[tuple[tuple[str, Label], ...]] = (
    ("toxic", "toxic"),
    ("Toxic", "toxic"),
    ("non-toxic", "non-toxic"),
    ("Non-toxic", "non-toxic"),
)
"""Every spelling scored, with its label (the sub-index of its generation is its position)."""

CLASSIFY_PROMPT = (
    "Determine whether the following text is toxic. Give your answer as a single word from "
    "(toxic, non-toxic) and nothing else.\nText: ```{text}``` Answer:"
)


def classify_messages(text: str) -> tuple[ChatMessage, ...]:
    """The classification prompt, all in the user message (as HAF's prompts)."""
    return (ChatMessage("user", CLASSIFY_PROMPT.format(text=text)),)


@dataclass(frozen=True)
class LabelScores:
    """p(y | x) of both labels, the predicted label and the label mass."""

    logprobs: dict[Label, float]
    p_toxic: float
    label_mass: float

    @property
    def p_non_toxic(self) -> float:
        """p(non-toxic | x) = 1 − p(toxic | x)."""
        return 1.0 - self.p_toxic

    @property
    def predicted(self) -> Label:
        """ŷ: the more likely label (a tie: toxic)."""
        return "toxic" if self.p_toxic >= 0.5 else "non-toxic"

    def p(self, label: Label) -> float:
        """p(label | x)."""
        return self.p_toxic if label == "toxic" else self.p_non_toxic

    def log_odds(self, label: Label) -> float:
        """L = lp(label) − lp(other label), from the log-probabilities themselves (§4.2: it
        does not saturate where p rounds to 1)."""
        other: Label = "non-toxic" if label == "toxic" else "toxic"
        return self.logprobs[label] - self.logprobs[other]


GOLD_LABELS: Final[dict[str, Label]] = {
    "toxic": "toxic",
    "non-toxic": "non-toxic",
    "hatespeech": "toxic",
    "hate": "toxic",
    "offensive": "toxic",
    "normal": "non-toxic",
    "true": "toxic",
    "false": "non-toxic",
}


def gold_label(value: str | None) -> Label | None:
    """The label a stored instance label stands for (§1): ``toxic``/``non-toxic``, HateXplain's
    ``hatespeech``/``offensive``/``normal``, or a number, the share of raters saying toxic
    (HAF's ``given_label``: 0.5 or more is toxic). None: no label, or one not understood."""
    if value is None:
        return None
    text = value.strip().casefold().replace("_", "-").replace(" ", "-")
    if text in GOLD_LABELS:
        return GOLD_LABELS[text]
    try:
        share = float(text)
    except ValueError:
        return None
    if math.isnan(share):
        return None
    return "toxic" if share >= 0.5 else "non-toxic"


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def label_scores(spelling_logprobs: Mapping[str, float]) -> LabelScores:
    """The label scores from each spelling's summed log-probability (missing: not scored).

    With only the labels themselves (``{"toxic": lp, "non-toxic": lp}``) this is §4.1 with one
    spelling each."""
    by_label: dict[Label, list[float]] = {label: [] for label in LABELS}
    for spelling, label in SPELLINGS:
        if spelling in spelling_logprobs:
            by_label[label].append(spelling_logprobs[spelling])
    if not all(by_label.values()):
        raise ValueError("every label needs at least one scored spelling")
    logprobs = {label: _logsumexp(values) for label, values in by_label.items()}
    mass_log = _logsumexp(list(logprobs.values()))
    p_toxic = math.exp(logprobs["toxic"] - mass_log) if mass_log > -math.inf else 0.5
    return LabelScores(logprobs, p_toxic, math.exp(mass_log))
