"""Reading a prompting-based rationale answer into a mask
(``docs/methods/rationales.md#34-reading-an-answer``): pure, and total — any text gives a result,
never an exception.

Two readings the spec leaves open, decided here *(decision)*:

- a **bulleted or numbered list** (two lines or more starting with ``-``, ``*``, ``•``,
  ``1.`` or ``1)``) is the answer's list: one item per bullet line; its other lines (a
  preamble, a closing remark such as "These key words are not only found in the text, but …")
  are not items, even when they hold a delimiter;
- the limit stays the spec's (§3.3: "the first k distinct in-text words in output order", so no
  top-k mask marks more than k words, as P2 says): a phrase listed as one key word ("those
  people") gives two words (§3.4 step 3), and an item whose in-text words are all past the
  first k is dropped ("beyond the first k").

Each item is kept or dropped with the reason (:class:`AnswerItem`), for the explorer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from haf_tui.methods.rationales.core.words import norm

DELIMITERS = ("|", ";", ",")
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)])\s*")

HEADING = "a line ending with ':'"
OUTSIDE_LIST = "not a line of the list"
BEFORE_COLON = "before the list's ':'"
NO_WORD = "no word"
REPEATED = "only words already named"
OUT_OF_TEXT = "not in the text"
BEYOND_K = "beyond the first k"


@dataclass(frozen=True)
class AnswerItem:
    """A piece of an answer: its text, its new normed words, those of them not in the text,
    and whether it marks the mask (else ``reason`` says why not)."""

    text: str
    words: tuple[str, ...] = ()
    out_of_text: tuple[str, ...] = ()
    reason: str = ""

    @property
    def kept(self) -> bool:
        """Whether the item's in-text words are marked."""
        return not self.reason


@dataclass(frozen=True)
class RationaleAnswer:
    """What an answer names: its words in the model's order (normed, distinct), those found
    in no token of the text, the mask (every occurrence of the first ``k`` in-text words), how
    many in-text words it named, whether that is ``k``, and every piece of the answer kept or
    dropped (``items``)."""

    words: tuple[str, ...]
    out_of_text: tuple[str, ...]
    mask: tuple[int, ...]
    in_text: int
    matches_k: bool
    items: tuple[AnswerItem, ...] = field(default=(), compare=False)


def _lines(answer: str) -> tuple[list[str], list[AnswerItem]]:
    """Step 1's lines: the non-empty ones, and the headings (ending with ':') dropped."""
    lines: list[str] = []
    dropped: list[AnswerItem] = []
    for raw in answer.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.endswith(":"):
            dropped.append(AnswerItem(line, reason=HEADING))
        else:
            lines.append(line)
    return lines, dropped


def answer_pieces(answer: str) -> tuple[list[str], list[AnswerItem]]:
    """Steps 1–2: the items of an answer (before splitting into words), and the lines or
    parts of lines that are not items, with why."""
    lines, dropped = _lines(answer)
    bullets = [line for line in lines if _BULLET.match(line)]
    if len(bullets) >= 2:  # a bulleted or numbered list (decision)
        dropped += [AnswerItem(line, reason=OUTSIDE_LIST) for line in lines if line not in bullets]
        return [_BULLET.sub("", line) for line in bullets], dropped
    remaining = "\n".join(lines)
    delimiter = next((d for d in DELIMITERS if d in remaining), None)
    if delimiter is None:
        if len(lines) > 1:
            return [_BULLET.sub("", line) for line in lines], dropped
        return (lines[0].split() if lines else []), dropped
    chosen = next(line for line in lines if delimiter in line)
    dropped += [AnswerItem(line, reason=OUTSIDE_LIST) for line in lines if line != chosen]
    head = chosen[: chosen.index(delimiter)]
    if ":" in head:
        cut = head.rindex(":") + 1
        dropped.append(AnswerItem(chosen[:cut].strip(), reason=BEFORE_COLON))
        chosen = chosen[cut:]
    return chosen.split(delimiter), dropped


def answer_items(answer: str) -> list[str]:
    """Steps 1–2: the items of an answer (before splitting into words)."""
    return answer_pieces(answer)[0]


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
    pieces, dropped = answer_pieces(answer)
    normed = [norm(token) for token in tokens]
    present = set(normed)
    words: list[str] = []
    items: list[AnswerItem] = []
    in_text: list[str] = []
    for piece in pieces:
        named = [w for w in dict.fromkeys(norm(raw) for raw in piece.split()) if w]
        new = [w for w in named if w not in words]
        words += new
        outside = tuple(w for w in new if w not in present)
        inside = [w for w in new if w in present]
        reason = ""
        if not named:
            reason = NO_WORD
        elif not new:
            reason = REPEATED
        elif not inside:
            reason = OUT_OF_TEXT
        elif k is not None and len(in_text) >= k:
            reason = BEYOND_K
        in_text += inside
        if piece.strip():
            items.append(AnswerItem(piece.strip(), tuple(new), outside, reason))
    marked = set(in_text if k is None else in_text[:k])
    out_of_text = tuple(w for w in words if w not in present)
    mask = tuple(1 if t in marked else 0 for t in normed)
    return RationaleAnswer(
        tuple(words),
        out_of_text,
        mask,
        len(in_text),
        k is None or len(in_text) == k,
        (*items, *dropped),
    )
