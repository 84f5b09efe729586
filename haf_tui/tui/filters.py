"""The explorer's filter language, pure (no textual): stance, UNCLEAR, contradictions, metric
ranges (``sos>=0.5 rs<0.2``), text search, and sorting by any metric, over the rows of the
``instances`` query."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from haf_tui.vocabulary import METRIC_LABELS

Row = dict[str, Any]

SORT_KEYS: tuple[str, ...] = (
    "position", "sos", "dis", "uii", "uei", "rs", "rn", "n_reasons", "confidence",
)  # fmt: skip
"""What ``o`` cycles through; "position" is the dataset order."""
METRIC_COLUMNS: dict[str, str] = {
    "sos": "sos",
    "dis": "dis",
    "uii": "uii",
    "uei": "uei",
    "rs": "rs",
    "rn": "rn",
    "n_reasons": "n_reasons",
    "confidence": "justify_confidence",
}
"""Metric names (as typed in a range and shown) → columns of the ``instances`` query."""
ALIASES = {"n": "n_reasons", "reasons": "n_reasons", "c": "confidence", "conf": "confidence"}
LABELS: dict[str, str] = dict(METRIC_LABELS) | {"n_reasons": "#r", "confidence": "C"}
LABELS["position"] = "dataset order"
STANCES: tuple[str, ...] = ("all", "toxic", "maybe", "non-toxic", "unclear")
"""What ``s`` cycles through: the JUSTIFY stance shown."""

_TERM = re.compile(r"([A-Za-z_]+)\s*(<=|>=|==|!=|<|>|=)\s*([-+]?(?:\d+\.?\d*|\.\d+))")
_OPS = {
    "<": float.__lt__,
    "<=": float.__le__,
    ">": float.__gt__,
    ">=": float.__ge__,
    "=": float.__eq__,
    "==": float.__eq__,
    "!=": float.__ne__,
}


class FilterError(ValueError):
    """A metric range that cannot be read (the message is one line for the user)."""


@dataclass(frozen=True)
class Range:
    """One condition ``metric op value``; an undefined (NULL) metric never matches."""

    metric: str
    op: str
    value: float

    def test(self, row: Row) -> bool:
        """Whether the row's metric satisfies the condition."""
        value = row.get(METRIC_COLUMNS[self.metric])
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        return bool(_OPS[self.op](float(value), self.value))

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}"


def parse_ranges(text: str) -> tuple[Range, ...]:
    """``"sos>0.5 rs<=0.3"`` → ranges (all must hold); :class:`FilterError` when unreadable."""
    ranges, position = [], 0
    for match in _TERM.finditer(text):
        _check_gap(text[position : match.start()])
        position = match.end()
        name = match.group(1).lower()
        metric = ALIASES.get(name, name)
        if metric not in METRIC_COLUMNS:
            known = ", ".join(METRIC_COLUMNS)
            raise FilterError(f"unknown metric {name!r}: use {known}")
        ranges.append(Range(metric, match.group(2), float(match.group(3))))
    _check_gap(text[position:])
    return tuple(ranges)


def _check_gap(gap: str) -> None:
    rest = gap.replace(",", " ").split()
    if any(word.lower() != "and" for word in rest):
        raise FilterError(
            f"cannot read {' '.join(rest)!r}: write metric>value, e.g. sos>0.5 rs<0.3"
        )


def _sort_value(row: Row, key: str) -> float:
    value = row.get(METRIC_COLUMNS.get(key, key))
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan
    return float(value)


@dataclass(frozen=True)
class InstanceFilter:
    """What the list shows: filters (all must hold) and the order."""

    text: str = ""
    stance: str = "all"
    unclear_only: bool = False
    contradictions_only: bool = False
    bookmarked_only: bool = False
    ranges: tuple[Range, ...] = field(default_factory=tuple)
    sort_key: str = "position"
    reverse: bool = False
    """Flip the natural order (dataset order; metrics highest first)."""

    def matches(self, row: Row) -> bool:
        """Whether the row passes every filter."""
        if self.stance != "all" and row.get("stance") != self.stance:
            return False
        if self.unclear_only and not row.get("n_unclear"):
            return False
        if self.contradictions_only and not row.get("n_contradictions"):
            return False
        if self.bookmarked_only and not row.get("bookmarked"):
            return False
        needle = self.text.strip().lower()
        if needle and needle not in row.get("_haystack", ""):
            return False
        return all(r.test(row) for r in self.ranges)

    def apply(self, rows: list[Row]) -> list[Row]:
        """The matching rows in the chosen order (undefined values last either way)."""
        shown = [row for row in rows if self.matches(row)]
        if self.sort_key == "position":
            return shown[::-1] if self.reverse else shown
        defined = [
            (v, row) for row in shown if not math.isnan(v := _sort_value(row, self.sort_key))
        ]
        undefined = [row for row in shown if math.isnan(_sort_value(row, self.sort_key))]
        defined.sort(key=lambda pair: pair[0], reverse=not self.reverse)
        return [row for _, row in defined] + undefined

    def changed(self, change: str) -> InstanceFilter:
        """The filter after one key: ``sort`` (next metric), ``reverse``, ``stance`` (next
        stance), ``unclear`` / ``contradictions`` / ``bookmarked`` (on/off), ``clear`` (all
        off, order kept)."""
        if change == "sort":
            index = (SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)
            return replace(self, sort_key=SORT_KEYS[index])
        if change == "reverse":
            return replace(self, reverse=not self.reverse)
        if change == "stance":
            index = (STANCES.index(self.stance) + 1) % len(STANCES)
            return replace(self, stance=STANCES[index])
        if change == "unclear":
            return replace(self, unclear_only=not self.unclear_only)
        if change == "contradictions":
            return replace(self, contradictions_only=not self.contradictions_only)
        if change == "bookmarked":
            return replace(self, bookmarked_only=not self.bookmarked_only)
        if change == "clear":
            return InstanceFilter(sort_key=self.sort_key, reverse=self.reverse)
        raise ValueError(f"unknown filter change {change!r}")

    def sort_label(self) -> str:
        """``SoS ↓`` / ``dataset order``."""
        if self.sort_key == "position":
            return "dataset order" + (" (reversed)" if self.reverse else "")
        return f"{LABELS[self.sort_key]} {'↑' if self.reverse else '↓'}"

    def describe(self) -> str:
        """The active filters and the order, in one line."""
        parts = [] if self.stance == "all" else [f"stance {self.stance}"]
        parts += ["UNCLEAR"] if self.unclear_only else []
        parts += ["contradictions"] if self.contradictions_only else []
        parts += ["★ bookmarked"] if self.bookmarked_only else []
        parts += [str(r) for r in self.ranges]
        parts += [f"“{self.text.strip()}”"] if self.text.strip() else []
        return " · ".join([*parts, f"sort {self.sort_label()}"])


def prepare(rows: list[Row]) -> list[Row]:
    """Add what filtering needs once per row (the lower-cased searchable text)."""
    for row in rows:
        row["_haystack"] = f"{row['instance_id']} {row.get('text') or ''}".lower()
    return rows
