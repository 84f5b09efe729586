"""A label cell as read: whether it holds a value at all (:func:`is_missing`: empty, NaN,
``NA``, ``null``), the value as compared (:func:`normalize`: case, spaces and invisible
characters set aside) and as a number (:func:`number`: finite, or None). The rules of
:mod:`haf_tui.datasets.labels` read every cell through these."""

from __future__ import annotations

import math
import unicodedata
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
