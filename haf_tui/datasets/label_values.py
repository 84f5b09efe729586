"""A label cell as read: whether it holds a value at all (:func:`is_missing`: empty, NaN,
``NA``, ``null``), the value as compared (:func:`normalize`: case, spaces and invisible
characters set aside) and as a number (:func:`number`: finite, or None). The rules of
:mod:`haf_tui.datasets.labels` read every cell through these, and a whole column through
:class:`ColumnValues` (what the rules ask of it, gathered a value at a time: a file's column
is never held)."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

MISSING_WORDS: Final = frozenset({"nan", "-nan", "na", "n/a", "#n/a", "null", "<na>"})
"""Cells that say "no value" (pandas writes NaN so; a NaN float too): a row without gold,
never a class."""


def _visible(text: str) -> str:
    """``text`` without its invisible format characters (zero-width space and joiners, the
    BOM, direction marks: Unicode category Cf), which no one sees in a printed rule."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def normalize(value: Any) -> str:
    """A label value as compared: lower case, spaces and underscores as dashes, invisible
    format characters (zero-width ones) dropped; a boolean as ``true``/``false``; a whole
    float as its integer (``1.0`` is ``1``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "-".join(_visible(str(value)).strip().casefold().replace("_", " ").split())


def number(value: Any) -> float | None:
    """A label value as a number (None: not a finite number, one too large for a float
    such as a JSON ``1e400`` or 10^400; booleans are not numbers)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        result = (
            float(_visible(str(value)).strip())
            if not isinstance(value, int | float)
            else float(value)
        )
    except (ValueError, OverflowError):
        return None
    return result if math.isfinite(result) else None


def is_missing(value: Any) -> bool:
    """Whether a label cell holds no value: None, blank, a NaN float, or a word for "no
    value" (``NaN``, ``NA``, ``null``, :data:`MISSING_WORDS`). Its row has no gold."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str):
        key = normalize(value)
        return not key or key in MISSING_WORDS
    return False


KEPT_KEYS: Final = 10_000
"""Different values :class:`ColumnValues` keeps (past it, a column only counts as having more:
no label has so many, and a preview's rows are fewer)."""


@dataclass
class ColumnValues:
    """What the label rules ask of a column's values, gathered one value at a time in bounded
    memory (an import's first pass over a whole file, issue 42 §6): how many hold a value,
    the first, how many are numbers (their range, whether all are 0 or 1), whether one is a
    boolean, the first that is not a number, the longest as text, and the different values
    (:func:`normalize`; the first :data:`KEPT_KEYS`, ``more_keys`` past them)."""

    n_present: int = 0
    first: Any = None
    n_numbers: int = 0
    low: float = math.inf
    high: float = -math.inf
    only_01: bool = True
    any_bool: bool = False
    first_non_number: Any = None
    longest: int = 0
    keys: set[str] = field(default_factory=set)
    more_keys: bool = False

    @classmethod
    def of(cls, values: Iterable[Any]) -> ColumnValues:
        """The summary of ``values`` (read once, as they come)."""
        seen = cls()
        for value in values:
            seen.add(value)
        return seen

    def add(self, value: Any) -> None:
        """Count one cell (a missing one, :func:`is_missing`, counts for nothing)."""
        if is_missing(value):
            return
        if not self.n_present:
            self.first = value
        self.n_present += 1
        self.any_bool = self.any_bool or isinstance(value, bool)
        self.longest = max(self.longest, len(str(value)))
        score = number(value)
        if score is None:
            if self.first_non_number is None:
                self.first_non_number = value
        else:
            self.n_numbers += 1
            self.low, self.high = min(self.low, score), max(self.high, score)
            self.only_01 = self.only_01 and score in (0.0, 1.0)
        if not self.more_keys:
            self.keys.add(normalize(value))
            self.more_keys = len(self.keys) > KEPT_KEYS

    def shown_count(self) -> str:
        """How many different values, as said (``25``, ``more than 10,000``)."""
        return f"more than {KEPT_KEYS:,}" if self.more_keys else str(len(self.keys))
