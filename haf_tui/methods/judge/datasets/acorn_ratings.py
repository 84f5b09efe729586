"""How ACORN writes one rating (:mod:`.acorn` reads its files): the criterion a rating field
names, the file's integer encoding (:class:`Encoding`) and the §2 code of one rating value
(:func:`rating_code`), read liberally (see :mod:`.acorn`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from haf_tui.methods.judge.core.criteria import CRITERION_IDS, LETTERS, criterion
from haf_tui.methods.judge.core.parsing import parse_label

_KEY_ALIASES: Final[dict[str, str]] = {
    "support": "supports",
    "supported": "supports",
    "overall_rating": "overall",
    "rating": "overall",
    "wellwritten": "well_written",
    "well_writtenness": "well_written",
    "fluent": "well_written",
    "relevant": "related",
    "relevance": "related",
    "relatedness": "related",
    "facts": "factual",
    "factuality": "factual",
    "new_information": "new_info",
    "newinfo": "new_info",
    "unnecessary_information": "unnecessary_info",
    "unnecessary": "unnecessary_info",
    "unnecessaryinfo": "unnecessary_info",
    "contrast": "contrastive",
    "contrastiveness": "contrastive",
}
_TRUE: Final = frozenset({"true", "t", "y"})
_FALSE: Final = frozenset({"false", "f", "n"})
_NONE_SUPPORT: Final = frozenset({"none of the above", "none of them", "neither of them"})
_STARS_WORD = re.compile(r"\s*stars?$")
_INTEGER = re.compile(r"[+-]?[0-9]+(?:\.0*)?")


class UnreadableRatingError(Exception):
    """A rating value no rule maps to a code."""


def criterion_key(key: str) -> str | None:
    """The criterion id a rating field names (case, spaces and dashes ignored; a few
    spellings such as ``new information`` accepted), or None."""
    norm = re.sub(r"[\s\-]+", "_", str(key).strip().lower())
    norm = _KEY_ALIASES.get(norm, _KEY_ALIASES.get(norm.replace("_", ""), norm))
    return norm if norm in CRITERION_IDS else None


@dataclass(frozen=True)
class Encoding:
    """How a file writes integers, decided once per file (§5 "check the label encoding"):
    ``label_base`` / ``supports_base`` 0 or 1 (the first answer choice's index), and
    ``overall_base`` 1 (stars 1–5) or 0 (0–4, shifted up)."""

    label_base: int = 0
    supports_base: int = 0
    overall_base: int = 1

    def describe(self) -> dict[str, str]:
        """The decisions, as kept in the dataset's metadata."""
        return {
            "label": f"{self.label_base}-based index",
            "supports": f"{self.supports_base}-based index"
            + (", 0 or -1 = none" if self.supports_base else ", -1 = none"),
            "overall": "1-5" if self.overall_base == 1 else "0-4 (shifted to 1-5)",
        }


# ---------------------------------------------------------------- values


def integer_of(value: Any) -> int | None:
    """An integral number (int, integral float, or such a string), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(float(value.strip()))
    return None


def is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _supports_index(number: int, n_choices: int, base: int) -> int:
    if base == 1 and number in (0, -1):
        return -1
    if base == 0 and number == -1:
        return -1
    index = number - base
    if 0 <= index < n_choices:
        return index
    raise UnreadableRatingError(number)


def rating_code(
    criterion_id: str,
    value: Any,
    choices: Sequence[str] = (),
    encoding: Encoding | None = None,
) -> int | None:
    """The §2 code of one rating value; None for a missing one (null, empty, NaN).
    Raises ``ValueError`` when no rule reads it (the importer then keeps None and counts it).

    ``choices`` are the item's answer choices (Supports: their number bounds the letters and
    indices, and a choice's text names it)."""
    try:
        return code_of(criterion_id, value, choices, encoding or Encoding())
    except UnreadableRatingError as exc:
        raise ValueError(f"{criterion_id}: cannot read {value!r}") from exc


def code_of(
    criterion_id: str, value: Any, choices: Sequence[str], encoding: Encoding
) -> int | None:
    if is_missing(value):
        return None
    crit = criterion(criterion_id)
    n_choices = len(choices) or len(LETTERS)
    if isinstance(value, bool):
        if crit.names[-2:] == ("no", "yes"):  # binary criteria and Factual
            return int(value)
        raise UnreadableRatingError(value)
    number = integer_of(value)
    if number is not None:
        if criterion_id == "supports":
            return _supports_index(number, n_choices, encoding.supports_base)
        if criterion_id == "overall":
            number += 1 - encoding.overall_base
        if number in {label.code for label in crit.labels}:
            return number
        raise UnreadableRatingError(value)
    if not isinstance(value, str):
        raise UnreadableRatingError(value)
    text = " ".join(value.split())
    low = text.lower().strip(" .!*")
    if criterion_id == "supports":
        for index, choice in enumerate(choices):
            if low and low == " ".join(str(choice).split()).lower().strip(" .!*"):
                return index
        if low in _NONE_SUPPORT:
            return -1
    if criterion_id == "overall":
        text = _STARS_WORD.sub("", text)
    if crit.names[-2:] == ("no", "yes"):
        if low in _TRUE:
            return 1
        if low in _FALSE:
            return 0
    label = parse_label(crit, text, n_choices)
    if label is None:
        raise UnreadableRatingError(value)
    return crit.code(label)
