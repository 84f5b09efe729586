"""Words, masks and matching (``docs/methods/rationales.md#2-words-and-masks``): pure, no
I/O.

The unit is the word token: HateXplain's ``post_tokens`` as given, else ``text.split()`` with
character offsets. A rationale is a 0/1 mask over the n tokens (hard) or one score per token
(soft). A named word marks every occurrence of it (the presence rule of P2 §4.1).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Mask = list[int]
"""A hard rationale: 1 for each word token in it, 0 otherwise."""

_EXTRA_STRIP = set("`<>'\"")


@dataclass(frozen=True)
class WordToken:
    """A word of the text under test and where it lies in it."""

    text: str
    start: int
    end: int


def word_tokens(text: str) -> list[WordToken]:
    """The text's whitespace-separated words with their character offsets."""
    return [WordToken(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _strippable(char: str) -> bool:
    return char in _EXTRA_STRIP or unicodedata.category(char).startswith("P")


def norm(word: str) -> str:
    """NFKC, casefold, then leading and trailing punctuation, quotes, backticks and ``<>``
    stripped (spec §2)."""
    folded = unicodedata.normalize("NFKC", word).casefold()
    start, end = 0, len(folded)
    while start < end and _strippable(folded[start]):
        start += 1
    while end > start and _strippable(folded[end - 1]):
        end -= 1
    return folded[start:end]


def presence_mask(words: Iterable[str], tokens: Sequence[str]) -> Mask:
    """1 for every token whose ``norm`` is among ``words`` (already normed): every
    occurrence of a named word is marked."""
    wanted = set(words)
    return [1 if norm(token) in wanted else 0 for token in tokens]


def mask_size(mask: Sequence[int]) -> int:
    """How many tokens a hard mask marks."""
    return sum(1 for value in mask if value)


def without(tokens: Sequence[str], mask: Sequence[int], mode: str = "delete") -> str:
    """The text with the marked tokens removed (§4.3): deleted and the rest re-joined with
    single spaces (the HateXplain reference's way), or each replaced by ``_``. An empty
    remainder is the empty text."""
    if mode not in ("delete", "underscore"):
        raise ValueError(f"removal mode must be delete or underscore, got {mode!r}")
    kept = [
        ("_" if mode == "underscore" else None) if marked else token
        for token, marked in zip(tokens, mask, strict=True)
    ]
    return " ".join(token for token in kept if token is not None)


def only(tokens: Sequence[str], mask: Sequence[int]) -> str:
    """The text of the marked tokens alone, in their original order ("only R")."""
    return " ".join(token for token, marked in zip(tokens, mask, strict=True) if marked)
