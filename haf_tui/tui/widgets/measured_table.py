"""Textual's DataTable, drawn again once it has measured its rows.

A DataTable measures new rows and changed cells when its message queue runs empty, and widens
its columns then; but a cell it rendered before keeps its cached rendering at the old width
(the cache's key has no width). So a frame drawn between ``add_row`` and that measurement left
every row cut at the header's widths until something else redrew it: one start in ten of the
runs list at 200x60 on this machine (``bench-s7-run1`` shown as ``ben``).

In a table with a row cursor, ``home`` / ``end`` move the cursor to the first / last row
(DataTable's own scroll sideways there, leaving the cursor where it was).

A DataTable reads a string cell as Rich markup; the values of :meth:`fill_fitted` are names
and texts from users and files (a run labelled ``[/]`` stopped the workbench at its start),
so each is escaped: shown as typed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.markup import escape
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from haf_tui.tui.widgets.fit_columns import Cell, FitColumn, elide, fit_widths


class MeasuredTable(DataTable[Any]):
    """A DataTable that drops its cached cells once it has measured new rows or cells."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first", "First row", show=False),
        Binding("end", "last", "Last row", show=False),
    ]

    def fit_widths(
        self, columns: Sequence[FitColumn], rows: Sequence[Sequence[Cell]]
    ) -> list[int | None]:
        """The columns' widths in this table's width (:func:`fit_columns.fit_widths`)."""
        available = (self.size.width or self.app.size.width) - 2  # (a scrollbar's room)
        return fit_widths(columns, rows, available)

    def fill_fitted(
        self,
        columns: Sequence[FitColumn],
        rows: Sequence[Sequence[Cell]],
        keys: Sequence[str] | None = None,
        *,
        widths: Sequence[int | None] | None = None,
    ) -> None:
        """The table anew with ``rows`` at the columns that fit its width (or at ``widths``;
        None there: left out), long values cut with "…" rather than widening it."""
        widths = list(widths) if widths is not None else self.fit_widths(columns, rows)
        self.clear(columns=True)
        for column, width in zip(columns, widths, strict=True):
            if width is not None:
                self.add_column(column.label, width=width, key=column.label)
        for index, row in enumerate(rows):
            self.add_row(
                *(
                    as_text(elide(value, width, middle=column.cut_middle))
                    for column, value, width in zip(columns, row, widths, strict=True)
                    if width is not None
                ),
                key=keys[index] if keys is not None else None,
            )

    def action_first(self) -> None:
        """The first row (a row cursor), else the first column."""
        if self.cursor_type == "row" and self.show_cursor:
            self.move_cursor(row=0, animate=False)
        else:
            self.action_scroll_home()

    def action_last(self) -> None:
        """The last row (a row cursor), else the last column."""
        if self.cursor_type == "row" and self.show_cursor:
            self.move_cursor(row=max(0, self.row_count - 1), animate=False)
        else:
            self.action_scroll_end()

    def on_idle(self) -> None:
        """Runs before DataTable's own idle handler (which measures): after it, redraw."""
        if getattr(self, "_require_update_dimensions", False) or getattr(
            self, "_updated_cells", None
        ):
            self.call_later(self.notify_style_update)


def as_text(value: Cell) -> Cell:
    """A cell shown as it reads: a string's Rich markup escaped (a ``Text`` is text already)."""
    return escape(value) if isinstance(value, str) else value
