"""Reading a prompting-based rationale answer into a mask (spec ``RATIONALES.md`` §3.4): pure,
and total — any text gives a result, never an exception."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from haf_tui.rationales.words import norm

DELIMITERS = ("|", ";", ",")
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)])\s*")


@dataclass(frozen=True)
class RationaleAnswer:
    """What an answer names: its words in the model's order (normed, distinct), those found
    in no token of the text, the mask (every occurrence of the first ``k`` in-text words), and
    whether it named exactly ``k`` in-text words."""

    words: tuple[str, ...]
    out_of_text: tuple[str, ...]
    mask: tuple[int, ...]
    in_text: int
    matches_k: bool


def answer_items(answer: str) -> list[str]:
    """Steps 1–2: the items of an answer (before splitting into words)."""
    lines = [
        line.strip()
        for line in answer.splitlines()
        if line.strip() and not line.strip().endswith(":")
    ]
    remaining = "\n".join(lines)
    delimiter = next((d for d in DELIMITERS if d in remaining), None)
    if delimiter is None:
        if len(lines) > 1:
            return [_BULLET.sub("", line) for line in lines]
        return lines[0].split() if lines else []
    chosen = next(line for line in lines if delimiter in line)
    head = chosen[: chosen.index(delimiter)]
    if ":" in head:
        chosen = chosen[head.rindex(":") + 1 :]
    return chosen.split(delimiter)


def answer_words(answer: str) -> list[str]:
    """Step 3: the normed distinct words of an answer, in its order."""
    words: list[str] = []
    for item in answer_items(answer):
        for raw in item.split():
            word = norm(raw)
            if word and word not in words:
                words.append(word)
    return words


def parse_rationale(answer: str, tokens: Sequence[str], k: int | None = None) -> RationaleAnswer:
    """The words, out-of-text words and mask of an answer over the text's word ``tokens``;
    with ``k``, only the first ``k`` distinct in-text words mark (all their occurrences)."""
    words = answer_words(answer)
    normed = [norm(token) for token in tokens]
    present = set(normed)
    in_text = [w for w in words if w in present]
    out_of_text = tuple(w for w in words if w not in present)
    kept = set(in_text if k is None else in_text[:k])
    mask = tuple(1 if t in kept else 0 for t in normed)
    return RationaleAnswer(
        tuple(words), out_of_text, mask, len(in_text), k is None or len(in_text) == k
    )
