"""From per-token attribution scores to per-word scores (``docs/methods/rationales.md``,
attribution): pure, no I/O, no torch.

P2's three attribution methods (Attention, Saliency, Input×Gradient) score the tokens of the
classification prompt; only the tokens that overlap the text's characters count, a word's
score is the largest of its tokens' (Inseq's ``ContiguousSpanAggregator``, "absmax"), and the
words' scores are normalised to sum 1 (the ranking is unchanged).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

Attribution = Literal["occlusion", "attention", "saliency", "input_x_gradient"]
ATTRIBUTIONS: Final[tuple[Attribution, ...]] = (
    "occlusion",
    "attention",
    "saliency",
    "input_x_gradient",
)
"""Every attribution source a run may compute, in the order reports show them."""
GRADIENT_METHODS: Final[tuple[Attribution, ...]] = ("attention", "saliency", "input_x_gradient")
"""The methods of the ``rationale_gradient`` stage: one forward and one backward pass in torch."""

Span = tuple[int, int]
"""Character offsets [start, end) in a string."""


def word_spans(text: str, words: Sequence[str]) -> list[Span]:
    """Where each word lies in ``text``, searched in order (the words are the text's own,
    separated by whitespace). A word not found: ValueError."""
    spans: list[Span] = []
    cursor = 0
    for word in words:
        start = text.find(word, cursor)
        if start < 0:
            raise ValueError(f"word {word!r} is not in the text after offset {cursor}")
        spans.append((start, start + len(word)))
        cursor = start + len(word)
    return spans


def overlaps(a: Span, b: Span) -> bool:
    """Whether two half-open spans share a character."""
    return a[0] < b[1] and b[0] < a[1]


def word_scores(
    token_scores: Sequence[float], token_spans: Sequence[Span], spans: Sequence[Span]
) -> list[float]:
    """Each word's score: the largest absolute score of the tokens overlapping its characters
    (0 for a word no token overlaps), then normalised over the words to sum 1 (all zero stays
    all zero). ``token_spans`` and ``spans`` are offsets in the same string."""
    if len(token_scores) != len(token_spans):
        raise ValueError("one span per token score")
    raw: list[float] = []
    for span in spans:
        found = [
            abs(s) for s, t in zip(token_scores, token_spans, strict=True) if overlaps(t, span)
        ]
        raw.append(max(found, default=0.0))
    total = sum(raw)
    return [value / total for value in raw] if total > 0 else raw


def gap_summary(gaps: Sequence[float]) -> tuple[float, float] | None:
    """The quantisation gap of a run: (mean, max) of |torch lp − llama.cpp lp| (None: no
    instance has both)."""
    if not gaps:
        return None
    absolute = [abs(g) for g in gaps]
    return sum(absolute) / len(absolute), max(absolute)


def skewness(values: Sequence[float]) -> float | None:
    """Fisher–Pearson coefficient of skewness g1 = m3 / m2^1.5 (population moments; P2's
    Figure 4 via scipy.stats.skew's default); None for fewer than 3 values or zero spread."""
    n = len(values)
    if n < 3:
        return None
    mean = sum(values) / n
    m2 = sum((v - mean) ** 2 for v in values) / n
    if m2 <= 0:
        return None
    m3 = sum((v - mean) ** 3 for v in values) / n
    return float(m3 / m2**1.5)
