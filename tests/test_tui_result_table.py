"""The SQL screen's result table draws a page as fastdatatable would, at the cost of its text:
a cell of plain text that fits is written as one segment (the same characters in the same
styles as Rich's Padding and Styled give), any other cell is rendered by fastdatatable; and the
table knows its scrollable size once mounted (not at the app's next idle, which laid out and
drew the screen a second time)."""

from __future__ import annotations

from typing import Any

import pytest
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Region, Size
from textual.strip import Strip
from textual_fastdatatable import DataTable

from haf_tui.tui.widgets.result_table import (
    CELL_WIDTH,
    ResultTable,
    _MeasuredBackend,
    _PageTable,
    cell_text,
    result_page,
)
from tests.support import settle

COLUMNS = ["run_id", "stage", "n", "text", "[b]name[/b]", "wide", "tab"]
ROWS: list[tuple[Any, ...]] = [
    ("run-1", "internal", 3, "plain words", "[b]not bold[/b]", "漢字テキスト", "a\tb"),
    ("run-2", "external", None, "x" * 100, "ends in \\", "ｗｉｄｅ" * 20, "é"),
    ("run-3", "individual", 0.125, "", " lead and trail ", "e\u0301 combining", "\x1b[31m"),
    ("run-4", "justify", -1, "a \\[b] c \\[", "50%", "😀 emoji", "NBSP\u00a0here"),
]


class TwoTables(App[None]):
    """The page in the app's table and in fastdatatable's own, side by side."""

    CSS = "DataTable { width: 1fr; height: 1fr; }"

    def compose(self) -> ComposeResult:
        page = result_page(COLUMNS, ROWS)
        options: dict[str, Any] = {
            "zebra_stripes": True,
            "show_row_labels": False,
            "render_markup": False,
            "max_column_content_width": CELL_WIDTH,
        }
        with Horizontal():
            yield _PageTable(backend=_MeasuredBackend(page), id="ours", **options)
            yield DataTable(backend=_MeasuredBackend(page), id="theirs", **options)


def visible(line: list[Segment]) -> list[tuple[str, Style | None]]:
    """What a line shows: its characters and their styles, runs of one style joined."""
    return [(segment.text, segment.style) for segment in Segment.simplify(line)]


async def test_cells_are_drawn_as_fastdatatable_draws_them() -> None:
    async with TwoTables().run_test(size=(400, 12)) as pilot:
        await settle(pilot)
        ours = pilot.app.query_one("#ours", _PageTable)
        theirs = pilot.app.query_one("#theirs", DataTable)
        assert ours.size == theirs.size and ours.row_count == len(ROWS)
        for y in range(len(ROWS) + 1):  # the header and every row, as the screen shows them
            assert visible(list(ours.render_line(y))) == visible(list(theirs.render_line(y)))
        fast = 0
        base = Style(bgcolor="grey11")
        for row in range(len(ROWS)):
            for column, spec in enumerate(ours.ordered_columns):
                width = spec.render_width
                fast += ours._plain_text(row, column, width) is not None
                for cursor, hover in ((False, False), (True, False), (False, True)):
                    ours._cell_render_cache.clear()
                    theirs._cell_render_cache.clear()
                    drawn = ours._render_cell(row, column, base, width, cursor, hover)
                    rich = theirs._render_cell(row, column, base, width, cursor, hover)
                    assert [visible(line) for line in drawn] == [visible(line) for line in rich]
        # most cells take the short way; the long, tabbed and control-character ones do not
        assert 0 < fast < len(ROWS) * len(COLUMNS)
        assert ours._plain_text(0, COLUMNS.index("tab"), 40) is None
        assert ours._plain_text(1, COLUMNS.index("wide"), 40) is None  # (does not fit)
        assert ours._plain_text(0, COLUMNS.index("wide"), 14) == "漢字テキスト"
        assert ours._plain_text(0, COLUMNS.index("wide"), 13) is None  # 12 cells + 2 padding
        assert cell_text(ROWS[1][3]).endswith("…")


async def test_the_table_knows_its_size_when_first_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[Size] = []
    render_lines = _PageTable.render_lines

    def recorded(self: _PageTable, crop: Region) -> list[Strip]:
        sizes.append(self.virtual_size)
        return render_lines(self, crop)

    async def never(self: DataTable, event: events.Idle) -> None:  # a busy app: no idle
        return None

    monkeypatch.setattr(_PageTable, "render_lines", recorded)
    monkeypatch.setattr(DataTable, "_on_idle", never)  # (Textual calls each class's own)

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield ResultTable(id="results")

    async with One().run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        results = pilot.app.query_one(ResultTable)
        results.show(result_page(COLUMNS, ROWS))
        await settle(pilot)
        table = results.query_one(_PageTable)
        widths = sum(column.render_width for column in table.ordered_columns)
        assert sizes and set(sizes) == {Size(widths, len(ROWS) + 1)}  # (and the header)


async def test_a_cell_the_cursor_moves_to_or_from_is_drawn_again() -> None:
    """The cells are cached as fastdatatable caches them: the cursor leaving a cell, or
    coming to it, draws it again (not the cell as it was)."""
    async with TwoTables().run_test(size=(400, 12)) as pilot:
        await settle(pilot)
        ours = pilot.app.query_one("#ours", _PageTable)
        theirs = pilot.app.query_one("#theirs", DataTable)
        for row, column in ((0, 0), (1, 1), (2, 3), (0, 0)):
            for table in (ours, theirs):
                table.move_cursor(row=row, column=column)
            await settle(pilot)
            assert ours.cursor_coordinate == (row, column)
            for y in range(len(ROWS) + 1):
                drawn = visible(list(ours.render_line(y)))
                assert drawn == visible(list(theirs.render_line(y))), (row, column, y)
