"""A long listing as aligned plain lines (a 300 × 300 campaign's 90,000 cells): the columns
and widths :func:`~haf_tui.cli.fit_table.fit_widths` keeps, values elided with "…", written
in blocks straight to the console's file (a rich table renders about a thousand rows a
second; these, a hundred thousand). Values are text: never markup, control characters shown
as escapes (``\\x1b``), other unprintable ones as "�"."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.cells import cell_len, set_cell_size
from rich.console import Console

from haf_tui.cli.fit_table import BORDER, Column, fit_widths
from haf_tui.vocabulary import shown_text

GAP = "  "
"""Between two columns."""
BLOCK_ROWS = 2000
"""Lines written at once."""


def _printable(value: str) -> str:
    if value.isprintable():
        return value
    shown = shown_text(value)  # control characters as escapes, other unprintables as "�"
    return "".join(c if c.isprintable() else "\N{REPLACEMENT CHARACTER}" for c in shown)


def _cell(value: str, width: int, column: Column) -> str:
    value = _printable(value)
    size = len(value) if value.isascii() else cell_len(value)
    if size > width:
        return (value[: width - 1] if value.isascii() else set_cell_size(value, width - 1)) + "…"
    pad = " " * (width - size)
    return pad + value if column.justify == "right" else value + pad


def plain_lines(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> Iterator[str]:
    """The heading and one line per row, at most ``width`` wide."""
    widths = fit_widths(columns, rows, width + BORDER * len(columns) - len(GAP) * len(columns))
    shown = sorted(widths)
    yield GAP.join(_cell(columns[k].name, max(widths[k], 1), columns[k]) for k in shown).rstrip()
    for row in rows:
        yield GAP.join(_cell(row[k], max(widths[k], 1), columns[k]) for k in shown).rstrip()


def print_plain_table(
    console: Console, title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]]
) -> None:
    """``title``, then :func:`plain_lines` at the console's width."""
    console.file.write(_printable(title) + "\n")
    block: list[str] = []
    for line in plain_lines(columns, rows, console.width):
        block.append(line)
        if len(block) >= BLOCK_ROWS:
            console.file.write("\n".join(block) + "\n")
            block.clear()
    if block:
        console.file.write("\n".join(block) + "\n")
    console.file.flush()
