"""The SQL screen's results: a textual-fastdatatable table over an Arrow table of one page.

The page's cells are turned into one-line text, and its columns measured, in the worker that
read them (:func:`result_page`); the table renders only the rows on screen, so a page of any
size shows in a few milliseconds. The table
cannot be cleared in place: each result mounts a new one in this container."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual_fastdatatable import ArrowBackend, DataTable
from textual_fastdatatable.column import CELL_X_PADDING

from haf_tui import reports

CELL_WIDTH = 60
"""Longer cell text is cut (with "…") in the table; exports keep it whole."""


def cell_text(value: Any) -> str:
    """A result cell as the table shows it (NULL "—", floats to 3 decimals, long text cut to
    its first line and :data:`CELL_WIDTH` characters)."""
    text = reports.format_value(value).split("\n", 1)[0]
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


@dataclass(frozen=True)
class ResultPage:
    """A page of results as an Arrow table of its cells' text (duplicate names kept), and
    each column's widest cell (measured where the page was read, not while drawing)."""

    data: pa.Table
    widths: list[int]


def result_page(columns: list[str], rows: list[tuple[Any, ...]]) -> ResultPage:
    """The page of ``rows`` under ``columns``, as the table shows it."""
    cells = [[cell_text(row[index]) for row in rows] for index in range(len(columns))]
    arrays = [pa.array(column, type=pa.string()) for column in cells]
    widths = [max((cell_len(cell) for cell in column), default=0) for column in cells]
    return ResultPage(pa.Table.from_arrays(arrays, names=list(columns)), widths)


class _MeasuredBackend(ArrowBackend):
    """An Arrow backend whose columns' content widths are given: fastdatatable would
    measure every cell through Arrow compute functions on the UI thread (~40 ms a page)."""

    def __init__(self, page: ResultPage) -> None:
        super().__init__(page.data)
        self._widths = list(page.widths)

    @property
    def column_content_widths(self) -> list[int]:
        """Each column's widest cell."""
        return self._widths


class _PageTable(DataTable):
    """The DataTable a page is shown in, drawn at the cost of its text: it knows its size when
    mounted (fastdatatable sets it when the app is next idle, which laid out and drew the
    whole screen a second time) and writes a cell of plain text that fits as one segment
    (fastdatatable renders every cell through Rich's Padding and Styled: ~0.1 ms a cell, 20-40
    ms for a screen of them on a 2-core machine). Any other cell is rendered as before."""

    def on_mount(self) -> None:
        """Set the scrollable size now (the columns' widths are known)."""
        if self._require_update_dimensions:
            self._require_update_dimensions = False
            self._update_dimensions([])

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
        in_range: bool = False,
    ) -> list[list[Segment]]:
        text = self._plain_text(row_index, column_index, width)
        if text is None:
            return super()._render_cell(
                row_index, column_index, base_style, width, cursor, hover, in_range
            )
        key = (
            row_index,
            column_index,
            base_style,
            cursor,
            hover,
            in_range,
            self._show_hover_cursor,
            self._update_count,
            self._pseudo_class_state,
        )  # (fastdatatable's own cache key: a change it drops its cache for drops these)
        lines = self._cell_render_cache.get(key)
        if lines is None:
            component_style, post_style = self._get_styles_to_render_cell(
                row_index == -1,
                False,
                row_index < self.fixed_rows or column_index < self.fixed_columns,
                hover,
                cursor,
                in_range,
                self.show_cursor,
                self._show_hover_cursor,
                self.cursor_type == "range",
                self.cursor_foreground_priority == "css",
                self.cursor_background_priority == "css",
            )
            meta = Style.from_meta({"row": row_index, "column": column_index})
            style = base_style + meta + component_style + post_style
            pad = " " * (width - 1 - cell_len(text))
            lines = [[Segment(f" {text}{pad}", style)]]
            self._cell_render_cache[key] = lines
        return lines

    def _plain_text(self, row_index: int, column_index: int, width: int) -> str | None:
        """A data cell's text when it is plain (a string of printable characters that
        fastdatatable shows as they are: no ``[``, which it escapes as markup, nor a trailing
        backslash, which it shows twice) and fits in ``width`` with the cell's padding; else
        None."""
        if row_index < 0 or column_index < 0 or self.render_markup:
            return None
        value = self.get_cell_at(Coordinate(row_index, column_index))
        if not isinstance(value, str) or not value.isprintable():
            return None
        if "[" in value or value.endswith("\\"):
            return None
        return value if cell_len(value) <= width - CELL_X_PADDING else None


class ResultTable(Vertical):
    """The current result (or none): its column names, rows, and the table showing them."""

    DEFAULT_CSS = """
    ResultTable { height: 1fr; }
    ResultTable > DataTable { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data: pa.Table = pa.table({})

    @property
    def columns(self) -> list[str]:
        """The result's column names (none without a result)."""
        return list(self.data.column_names)

    @property
    def row_count(self) -> int:
        """The rows shown."""
        return int(self.data.num_rows)

    def get_row_at(self, index: int) -> list[str]:
        """One row's cells as shown."""
        return [str(column[index].as_py()) for column in self.data.columns]

    def show(self, page: ResultPage) -> None:
        """Replace the table with ``page`` (from :func:`result_page`)."""
        self.data = page.data
        self.remove_children()
        table = _PageTable(
            backend=_MeasuredBackend(page),
            zebra_stripes=True,
            show_row_labels=False,
            render_markup=False,
            max_column_content_width=CELL_WIDTH,
        )
        self.mount(table)

    def clear_result(self) -> None:
        """Show no result (after an error: nothing stale stays on screen)."""
        self.data = pa.table({})
        self.remove_children()
