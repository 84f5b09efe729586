"""Laying out report tables and charts in a width: a table that fits (one line per row, or
transposed; cells cut), how many panels fit side by side and how wide each is, and panels in
equal columns that wrap onto further rows. Pure functions over rich renderables (no Textual);
the charts themselves are :mod:`haf_tui.reports.charts`."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from haf_tui.reports import table_width, to_rich_table, to_rich_table_transposed
from haf_tui.reports.queries import Row

CELL_WIDTH = 40
"""The widest a table cell is shown; a longer value is cut with "…" (enter shows it whole)."""


def fit_table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Row],
    *,
    width: int,
    max_transposed: int = 6,
) -> Table:
    """A report table as it fits ``width``: one line per result row, or transposed (one column
    per result row) when too wide and at most ``max_transposed`` rows; a cell is cut with "…"
    past :data:`CELL_WIDTH` and never wraps (a panel wider than the screen scrolls)."""
    if rows and len(rows) <= max_transposed and table_width(columns, rows) > width:
        table = to_rich_table_transposed(title, columns, rows)
    else:
        table = to_rich_table(title, columns, rows)
    for column in table.columns:
        column.max_width = CELL_WIDTH
        column.no_wrap = True
        column.overflow = "ellipsis"
    table.title_justify = "left"
    table.title_style = "bold"
    return table


def columns_that_fit(count: int, width: int, min_width: int) -> int:
    """How many of ``count`` panels fit side by side in ``width`` at ``min_width`` each."""
    return max(1, min(count, width // max(1, min_width)))


def panel_width(total: int, columns: int, gap: int = 2) -> int:
    """The width of each of ``columns`` panels side by side in ``total`` cells."""
    return max(10, (total - gap * (columns - 1)) // max(1, columns))


def drawn_width(renderable: RenderableType, console: Console | None = None) -> int:
    """The cells ``renderable`` needs without squeezing a table or chart in it (its text
    wraps, so it counts for nothing)."""
    console = console or Console(width=400, file=io.StringIO(), legacy_windows=False)
    if isinstance(renderable, Text):
        return 0
    if isinstance(renderable, Group):
        return max((drawn_width(part, console) for part in renderable.renderables), default=0)
    return Measurement.get(console, console.options, renderable).maximum


def side_by_side(
    panels: Sequence[RenderableType], per_row: int, gap: int = 2, each: int | None = None
) -> Table:
    """``panels`` in ``per_row`` equal columns, wrapping onto further rows. With ``each``, a
    column is ``each`` cells wide, or as wide as its widest table or chart: a long line of
    text wraps instead of widening it, a table is never squeezed."""
    per_row = max(1, per_row)
    grid = Table.grid(padding=(0, gap, 0, 0), expand=True)
    console = Console(width=400, file=io.StringIO(), legacy_windows=False)
    for column in range(per_row):
        if each is None:
            grid.add_column(ratio=1)
        else:
            widths = [drawn_width(panel, console) for panel in panels[column::per_row]]
            grid.add_column(width=max(each, *widths))
    for start in range(0, len(panels), per_row):
        if start:
            grid.add_row(*([""] * per_row))
        cells = list(panels[start : start + per_row])
        grid.add_row(*cells, *([""] * (per_row - len(cells))))
    return grid
