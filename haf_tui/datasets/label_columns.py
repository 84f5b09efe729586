"""Which column of a file is its label: one named ``label`` (:data:`LABEL_COLUMNS`), else
one named like a label (``is_toxic``, ``toxicity``, ``hate``, ``class``, ...:
:data:`LIKELY_LABEL_COLUMNS`) whose values are a label whose rule can be guessed; what each
column would be as the label (:func:`column_label`); and, when none was chosen, the columns
that look like labels (:func:`label_candidates`) and the line saying so
(:func:`no_label_note`)."""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel

from haf_tui.datasets.label_values import ColumnValues
from haf_tui.datasets.labels import (
    MAX_LABEL_VALUES,
    NUMERIC_SHARE,
    LabelRule,
    NotALabelError,
    stated_rule,
)
from haf_tui.datasets.model import DatasetError
from haf_tui.datasets.readers import Record

LABEL_COLUMNS: Final = ("label", "given_label", "labels")
"""Columns taken as the label by their name alone (their rule checked on reading)."""
LIKELY_LABEL_COLUMNS: Final = (
    *("is_toxic", "toxic", "toxicity", "toxic_label", "is_hate", "hate", "hateful"),
    *("hate_speech", "hatespeech", "is_offensive", "offensive", "abusive", "class", "target"),
    *("gold", "gold_label", "y"),
)
"""Columns taken as the label when their values are a label whose rule can be guessed (0/1,
booleans, a score in 0..1, toxic/normal...): ``target`` of hate-speech sets often names the
group a post targets, which is no label."""


class ColumnLabel(BaseModel):
    """What a column would be as the label: its rule, or why it cannot be one (``asks``:
    the rule must be stated, the column itself could be a label)."""

    rule: LabelRule | None = None
    problem: str | None = None
    asks: bool = False

    def line(self) -> str:
        """One line: the rule, or the problem."""
        return f"label: {self.rule.describe()}" if self.rule else f"label: {self.problem}"


def column_label(values: list[Any], column: str) -> ColumnLabel:
    """The label rule ``column``'s values call for, or why it cannot be a label."""
    try:
        return ColumnLabel(rule=stated_rule(values, column))
    except NotALabelError as exc:
        return ColumnLabel(problem=str(exc))
    except DatasetError as exc:
        return ColumnLabel(problem=str(exc), asks=True)


def guess_label(columns: list[str], rows: list[Record]) -> str | None:
    """The label column by its name: one of :data:`LABEL_COLUMNS`, else the first of
    :data:`LIKELY_LABEL_COLUMNS` whose values (in ``rows``) have a rule that can be guessed."""
    lowered = {c.lower(): c for c in columns}
    certain = next((lowered[c] for c in LABEL_COLUMNS if c in lowered), None)
    if certain is not None:
        return certain
    for name in LIKELY_LABEL_COLUMNS:
        column = lowered.get(name)
        if column is not None and column_label([r.get(column) for r in rows], column).rule:
            return column
    return None


def _looks(values: list[Any], check: ColumnLabel) -> str | None:
    """What a column's values look like as a label (``0/1``, ``a score``, ``few strings``),
    or None: nothing a label could be (free text, ids: every value different)."""
    if check.rule is not None:
        return {"binary": "0/1", "boolean": "true/false", "score": "a score"}.get(
            check.rule.kind, "label words"
        )
    if not check.asks:
        return None
    seen = ColumnValues.of(values)
    if not 1 < len(seen.keys) <= MAX_LABEL_VALUES or len(seen.keys) == seen.n_present:
        return None  # (one value, many, or every value different: ids, texts)
    numeric = seen.n_numbers >= NUMERIC_SHARE * seen.n_present
    return "numbers" if numeric else "few strings"


def label_candidates(
    values: dict[str, list[Any]], taken: tuple[str | None, ...] = ()
) -> list[tuple[str, str]]:
    """The columns (of ``values``: each column's first values; not ``taken``) that look like
    labels, with what they hold (0/1, true/false, a score, few strings)."""
    found: list[tuple[str, str]] = []
    for column, column_values in values.items():
        if column in taken:
            continue
        looks = _looks(column_values, column_label(column_values, column))
        if looks is not None:
            found.append((column, looks))
    return found


def no_label_note(candidates: list[tuple[str, str]], pick: str = "--label-column NAME") -> str:
    """The line said when no label column was chosen: no gold, and the columns that look
    like labels with how to pick one."""
    if not candidates:
        return "no label column: no gold (no column looks like a label)"
    shown = ", ".join(f"{column} ({looks})" for column, looks in candidates)
    return (
        f"no label column chosen: no gold; columns that look like labels: {shown}; pick one "
        f"with {pick}"
    )
