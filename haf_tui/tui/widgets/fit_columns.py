"""Columns fitted to a width (issue 25 §3): the columns that matter most shown first, long
values cut with "…" rather than widening the table, the least important left out when even
the cut values do not fit. Pure layout: the runs list builds its table from it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text


@dataclass(frozen=True)
class FitColumn:
    """A column: its heading, how narrow its values may be cut (None: never cut) and its rank
    (0 is shown first and left out last)."""

    label: str
    min_width: int | None = None
    rank: int = 0
    cut_middle: bool = False
    """Cut out of the middle (``2026…-ab12``: a run id's unique end stays), not the end."""


Cell = str | Text
"""A value of a fitted table: plain or styled text."""


def cell_width(value: Cell) -> int:
    """The cells ``value`` takes on one line."""
    return value.cell_len if isinstance(value, Text) else cell_len(value)


def elide(value: Cell, width: int, *, middle: bool = False) -> Cell:
    """``value`` in at most ``width`` cells: cut with "…" when longer (at the end, or
    ``middle``: out of the middle of a plain value)."""
    if cell_width(value) <= width:
        return value
    if middle and isinstance(value, str) and width >= 5 and len(value) == cell_len(value):
        head = (width - 1) // 2
        return value[:head] + "…" + value[len(value) - (width - 1 - head) :]
    text = value.copy() if isinstance(value, Text) else Text(value)
    text.truncate(max(1, width), overflow="ellipsis")
    return text if isinstance(value, Text) else text.plain


def fit_widths(
    columns: Sequence[FitColumn], rows: Sequence[Sequence[Cell]], available: int, padding: int = 2
) -> list[int | None]:
    """Each column's width in ``available`` cells (``padding`` more each), None for a column
    left out: every column at its values' width when that fits; else the cuttable ones cut
    (down to their ``min_width``), the spare cells shared out among them again, and the
    highest-ranked columns left out until the rest fit. The first-ranked column always shows."""
    natural = [
        max([cell_len(column.label), *(cell_width(row[index]) for row in rows)])
        for index, column in enumerate(columns)
    ]
    narrowest = [
        min(width, max(cell_len(column.label), column.min_width))
        if column.min_width is not None
        else width
        for column, width in zip(columns, natural, strict=True)
    ]
    shown = sorted(range(len(columns)), key=lambda index: columns[index].rank)
    while len(shown) > 1 and sum(narrowest[i] + padding for i in shown) > available:
        shown.pop()  # (the highest rank: the least important)
    widths: list[int | None] = [None] * len(columns)
    for index in shown:
        widths[index] = narrowest[index]
    spare = available - sum(narrowest[i] + padding for i in shown)
    growing = [i for i in shown if narrowest[i] < natural[i]]
    while spare > 0 and growing:  # (one cell at a time to each cut column, in rank order)
        for index in list(growing):
            width = widths[index]
            assert width is not None
            if spare == 0:
                break
            widths[index] = width + 1
            spare -= 1
            if width + 1 >= natural[index]:
                growing.remove(index)
    return widths
