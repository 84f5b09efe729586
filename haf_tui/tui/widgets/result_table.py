"""The SQL screen's results: a DataTable of one-line cells with their widths given."""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from rich.markup import escape
from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey


class ResultTable(DataTable[str]):
    """The results: one-line cells (never read as markup) in columns as wide as their longest
    cell, measured here: DataTable would render every cell of the page once through the
    console to measure it (~0.3 s for 500 rows)."""

    def show(self, columns: list[str], rows: list[list[str]]) -> None:
        """Replace the table with ``rows`` under ``columns``."""
        lines = [[_first_line(cell) for cell in row] for row in rows]
        self.clear(columns=True)
        for index, name in enumerate(columns):
            label = Text(name, no_wrap=True, end="")
            width = max([label.cell_len, *(cell_len(row[index]) for row in lines)])
            self.add_column(label, width=width)
        self.add_rows([escape(cell) for cell in row] for row in lines)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """Every column has its width: only the virtual size is left to compute."""
        super()._update_dimensions(())


def _first_line(text: str) -> str:
    """What a one-line cell shows of ``text``."""
    return text.split("\n", 1)[0]
