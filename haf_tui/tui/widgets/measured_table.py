"""Textual's DataTable, drawn again once it has measured its rows.

A DataTable measures new rows and changed cells when its message queue runs empty, and widens
its columns then; but a cell it rendered before keeps its cached rendering at the old width
(the cache's key has no width). So a frame drawn between ``add_row`` and that measurement left
every row cut at the header's widths until something else redrew it: one start in ten of the
runs list at 200x60 on this machine (``bench-s7-run1`` shown as ``ben``)."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable


class MeasuredTable(DataTable[Any]):
    """A DataTable that drops its cached cells once it has measured new rows or cells."""

    def on_idle(self) -> None:
        """Runs before DataTable's own idle handler (which measures): after it, redraw."""
        if getattr(self, "_require_update_dimensions", False) or getattr(
            self, "_updated_cells", None
        ):
            self.call_later(self.notify_style_update)
