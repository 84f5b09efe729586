"""The gold rationale of an instance from its annotators
(``docs/methods/rationales.md#5-ground-truth``,
``docs/methods/rationales.md#2-words-and-masks``): pure.

HateXplain keeps per post its ``post_tokens`` and ``rationales`` (0, 2 or 3 masks over the
tokens, not aligned with the annotators). The text under test must be the tokens joined by
single spaces, and its words the tokens (no token empty or holding a space: *decision*);
otherwise (counted whether or not the post has masks), or without masks, or with a mask of the
wrong length, the instance has no gold (the reason is kept, to be counted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from haf_tui.methods.rationales.core.metrics import hard_truth, soft_truth, union_truth

NO_MASKS = "no annotator rationales"
TEXT_MISMATCH = "text is not the post tokens joined by spaces"
BAD_LENGTH = "a rationale mask of the wrong length"


@dataclass(frozen=True)
class Gold:
    """An instance's word tokens and its annotators' masks with SOFT, HARD and UNION."""

    tokens: tuple[str, ...]
    masks: tuple[tuple[int, ...], ...]

    @property
    def soft(self) -> list[float]:
        """The share of annotators marking each token."""
        return soft_truth(self.masks)

    @property
    def hard(self) -> list[int]:
        """The tokens at least half the annotators mark."""
        return hard_truth(self.masks)

    @property
    def union(self) -> list[int]:
        """The tokens any annotator marks."""
        return union_truth(self.masks)


def gold_rationale(text: str, extra: Mapping[str, Any]) -> Gold | str:
    """The gold of an instance (its text and the ``extra`` a HateXplain import stores), or
    why it has none."""
    tokens = [str(t) for t in extra.get("post_tokens") or []]
    raw = extra.get("rationales") or []
    if not tokens:
        return NO_MASKS
    if " ".join(tokens) != text or text.split() != tokens:  # (an empty or spaced token)
        return TEXT_MISMATCH
    if not raw:
        return NO_MASKS
    masks = []
    for mask in raw:
        if not isinstance(mask, list | tuple) or len(mask) != len(tokens):
            return BAD_LENGTH
        masks.append(tuple(1 if value else 0 for value in mask))
    return Gold(tuple(tokens), tuple(masks))


@dataclass(frozen=True)
class WordUnits:
    """An instance's word tokens (§2) with its gold, or why it has none (None: it has one)."""

    tokens: tuple[str, ...]
    gold: Gold | None
    problem: str | None


def word_units(text: str, extra: Mapping[str, Any]) -> WordUnits:
    """The word tokens of an instance: HateXplain's ``post_tokens`` when they make the text
    (the annotators' gold is then theirs), else ``text.split()``."""
    found = gold_rationale(text, extra)
    if isinstance(found, Gold):
        return WordUnits(found.tokens, found, None)
    return WordUnits(tuple(text.split()), None, found)
