"""Listings that fit the terminal: one line per row, the columns that matter most kept, long
values elided with "…" (``haf runs``) or folded whole (``haf models``' file names), the least
important columns left out when the terminal is too narrow for them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.table import Table
from rich.text import Text

from haf_tui.vocabulary import shown_text

BORDER = 3
"""Terminal columns each column of a rich table costs besides its text (padding, rule)."""


@dataclass(frozen=True)
class Column:
    """A listing's column: its heading, its rank (0 is kept longest) and how narrow it may
    get: ``shrink_to`` characters with "…" (None: never shortened); ``fold``: a value too long
    for the terminal wraps onto more lines instead of losing characters."""

    name: str
    rank: int
    shrink_to: int | None = None
    justify: Literal["left", "right"] = "left"
    fold: bool = False


def _cell(value: str, width: int, *, fold: bool) -> Text:
    """A cell; a folded value too long for ``width`` broken after a hyphen, dot, slash,
    underscore or space where it can (a file name keeps its parts whole), elsewhere where it
    must."""
    value = shown_text(value)  # (a value from outside: its control characters as escapes)
    if not fold or len(value) <= width or width < 1:
        return Text(value)
    lines: list[str] = []
    line = ""
    for part in filter(None, re.findall(r"[^-./_ ]*[-./_ ]?", value)):
        if line and len(line) + len(part.rstrip()) > width:
            lines.append(line)
            line = ""
        while len(part) > width:  # longer than a line on its own
            lines.append(part[:width])
            part = part[width:]
        line += part
    lines.append(line)
    return Text("\n".join(text.rstrip() for text in lines if text.strip()))


def fit_widths(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> dict[int, int]:
    """The kept columns (by index) and their widths in a table of ``rows`` at most ``width``
    wide (see :func:`fit_table`)."""
    natural = [max([len(c.name), *(len(row[k]) for row in rows)]) for k, c in enumerate(columns)]
    floor = [
        min(natural[k], c.shrink_to) if c.shrink_to is not None else natural[k]
        for k, c in enumerate(columns)
    ]
    kept = sorted(range(len(columns)), key=lambda k: columns[k].rank)

    def needed(indices: list[int]) -> int:
        return sum(floor[k] for k in indices) + BORDER * len(indices) + 1

    while len(kept) > 1 and needed(kept) > width:
        kept.pop()
    widths = {k: floor[k] for k in kept}
    spare = width - needed(kept)
    for k in sorted(kept, key=lambda k: not columns[k].fold):  # folded first, then by rank
        grow = min(max(spare, 0), natural[k] - widths[k])
        widths[k] += grow
        spare -= grow
    return widths


def fit_table(
    title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> tuple[Table, list[str]]:
    """A rich table of ``rows`` at most ``width`` wide, and the names of the columns left out
    (least important first dropped). Each kept column gets a fixed width: at least its
    ``shrink_to``, then what remains goes to the shrinkable columns, up to their
    longest value: first to the folded ones (fewer lines), then to the elided ones in the
    order of their rank."""
    widths = fit_widths(columns, rows, width)
    table = Table(title=title)
    shown = sorted(widths)
    for k in shown:
        column = columns[k]
        table.add_column(
            Text(column.name),
            justify=column.justify,
            no_wrap=not column.fold,
            overflow="fold" if column.fold else "ellipsis",
            width=max(widths[k], 1) if not column.fold or len(shown) > 1 else None,
        )
    for row in rows:
        table.add_row(*(_cell(row[k], widths[k], fold=columns[k].fold) for k in shown))
    left_out = [columns[k].name for k in range(len(columns)) if k not in widths]
    return table, left_out
