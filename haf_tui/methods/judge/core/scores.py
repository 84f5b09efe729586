"""Label distributions and expected scores from per-label log-probabilities
(``docs/methods/judge.md`` §4.3, the pure part), and the Supports cross-check with the predicted
stance (§2, §4.1). Pure, no model: the caller teacher-forces each allowed label string after the
slot's prefix and passes lp(l) = Σ log-softmax over its tokens.

A label may have several spellings (token sequences); its log-probability is their
log-sum-exp. p(l) = exp lp(l) / Σ exp lp(l'); the chosen label is the argmax (ties: the first
in the criterion's label order *(decision)*); the mass is Σ exp lp(l') (low: the format forced
an answer the model did not want); E = Σ p(l)·code(l) for Overall, New information and the
binary criteria (E = P(yes)), none for the nominal Supports and Factual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from haf_tui.methods.judge.core.criteria import Criterion

LOW_MASS: Final = 0.5
"""A label mass below it is a warning: the format forced an answer the model did not want."""
STANCE_LETTERS: Final[dict[str, str]] = {"toxic": "a", "non-toxic": "b"}
"""The Supports letter each toxicity stance should get (§4.1; ``maybe`` is reported apart)."""


def logsumexp(values: Sequence[float]) -> float:
    """log Σ exp v, stable; −inf for no values or all −inf."""
    top = max(values, default=-math.inf)
    if top == -math.inf:
        return -math.inf
    if top == math.inf:
        return math.inf
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def label_logprob(spellings: float | Sequence[float]) -> float:
    """A label's log-probability from one value or from the values of its spellings."""
    if isinstance(spellings, int | float):
        return float(spellings)
    return logsumexp([float(v) for v in spellings])


def distribution(logprobs: Sequence[float]) -> tuple[list[float], float]:
    """(p, mass): the renormalised probabilities and Σ exp lp. ValueError when no label has a
    finite log-probability (nothing to renormalise)."""
    total = logsumexp(logprobs)
    if not math.isfinite(total):
        raise ValueError("no label with a finite log-probability")
    return [math.exp(v - total) for v in logprobs], math.exp(total)


@dataclass(frozen=True)
class LabelScores:
    """One slot's result: the labels asked for (in the criterion's order), their combined
    log-probabilities and probabilities, the chosen label and its code, the mass and the
    expected score (None for Supports and Factual)."""

    labels: tuple[str, ...]
    logprobs: tuple[float, ...]
    probs: tuple[float, ...]
    label: str
    code: int
    mass: float
    expected: float | None

    def prob(self, label: str) -> float:
        """p(label) (0 for a label not asked for)."""
        return dict(zip(self.labels, self.probs, strict=True)).get(label, 0.0)


def label_scores(crit: Criterion, logprobs: Mapping[str, float | Sequence[float]]) -> LabelScores:
    """The distribution, label, mass and expected score of ``crit`` from each allowed label's
    log-probability (or its spellings'). The labels are those given, e.g. a, b and none for a
    two-choice Supports; ValueError for a label outside the criterion's set."""
    unknown = set(logprobs) - set(crit.names)
    if unknown:
        raise ValueError(f"{crit.id}: unknown labels {sorted(unknown)}")
    labels = tuple(name for name in crit.names if name in logprobs)
    lps = [label_logprob(logprobs[name]) for name in labels]
    probs, mass = distribution(lps)
    best = max(range(len(labels)), key=lambda i: (probs[i], -i))
    codes = [crit.code(name) for name in labels]
    expected = (
        math.fsum(p * c for p, c in zip(probs, codes, strict=True)) if crit.expected else None
    )
    return LabelScores(labels, tuple(lps), tuple(probs), labels[best], codes[best], mass, expected)


def expected_score(crit: Criterion, probs: Mapping[str, float]) -> float | None:
    """E = Σ p(l)·code(l) over a given distribution (None for Supports and Factual)."""
    if not crit.expected:
        return None
    return math.fsum(p * crit.code(name) for name, p in probs.items())


def supports_matches(label: str | None, stance: str) -> bool | None:
    """Whether a Supports label matches the predicted stance (toxic → a, non-toxic → b);
    None for a missing label or a stance without a letter (``maybe``: reported apart). A
    mismatch means the explanation does not reflect the decision (necessary, not sufficient,
    for faithfulness)."""
    letter = STANCE_LETTERS.get(stance)
    if label is None or letter is None:
        return None
    return label == letter
