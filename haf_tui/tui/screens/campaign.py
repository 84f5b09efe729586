"""Campaigns (``haf campaign``): a campaign's cells as a grid of models × datasets, with
each cell's status, progress and ETA; ``enter`` opens the cell's run, ``c`` compares the
campaign's runs, ``]``/``[`` go to the next/previous campaign."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Header, Static

from haf_tui.campaign import CellState
from haf_tui.tui.campaign_data import (
    LEGEND,
    CampaignGrid,
    campaign_line,
    cell_detail,
    cell_text,
    read_campaigns,
)
from haf_tui.tui.messages import QueryFinished
from haf_tui.tui.screens.base import HafScreen, failure_text
from haf_tui.tui.widgets.key_footer import KeyFooter

POLL_SECONDS = 3.0
"""How often the grid is read again while it is shown (a campaign running elsewhere moves)."""
NO_CAMPAIGNS = "no campaigns in this database: haf campaign run GRID.toml starts one"


class CampaignScreen(HafScreen[None]):
    """A campaign's grid: models down, datasets across."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open run", show=True),
        Binding("c", "compare", "Compare"),
        Binding("right_square_bracket", "step(1)", "Next campaign"),
        Binding("left_square_bracket", "step(-1)", "Previous"),
        Binding("r", "refresh", "Refresh"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, name: str | None = None) -> None:
        super().__init__()
        self.wanted = name
        self.grids: list[CampaignGrid] = []
        self.index = 0
        self._shown: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        """Header, the campaign's line, the grid, the cell's line, the legend, the footer."""
        yield Header()
        yield Static("Campaigns", classes="title")
        yield Static("loading …", id="campaign-line", classes="hint")
        yield DataTable(id="campaign-grid", cursor_type="cell", zebra_stripes=True)
        yield Static("", id="campaign-cell", classes="hint")
        yield Static(LEGEND, id="campaign-legend", classes="hint")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Read the campaigns, then again every few seconds while shown."""
        self._snapshot_taken = time.monotonic()
        self.load_campaigns()
        self.set_interval(POLL_SECONDS, self.poll)

    def poll(self) -> None:
        """Read again (a fresh snapshot at most every few seconds while another process
        writes)."""
        if self.poll_due():
            self.load_campaigns(poll=True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="campaigns")
    def load_campaigns(self, poll: bool = False) -> None:
        """The stored campaigns (thread worker: posts a message, touches no widget)."""
        reader = self.reader
        if not reader.path.exists():
            self.post_message(QueryFinished("campaigns", [], []))
            return
        with reader.reading(linger=not poll) as store:
            grids = read_campaigns(store)
        self.post_message(QueryFinished("campaigns", [], [(grid,) for grid in grids]))

    def worker_failed(self, group: str, error: BaseException) -> None:
        """The campaigns not read: said on their line ("loading …" there stayed for ever)."""
        if group == "campaigns":
            line = failure_text("read the campaigns", error)
            self.query_one("#campaign-line", Static).update(line)  # (until a read succeeds)

    @on(QueryFinished)
    def show_campaigns(self, message: QueryFinished) -> None:
        """Keep the campaigns read and draw the current one."""
        if message.request != "campaigns":
            return
        message.stop()
        self.grids = [row[0] for row in message.rows]
        if self.wanted is not None:
            names = [grid.name for grid in self.grids]
            if self.wanted in names:
                self.index = names.index(self.wanted)
            self.wanted = None
        self.index = min(self.index, max(len(self.grids) - 1, 0))
        self._draw()

    def current(self) -> CampaignGrid | None:
        """The campaign shown."""
        return self.grids[self.index] if self.grids else None

    def _draw(self) -> None:
        grid = self.current()
        table = self.query_one("#campaign-grid", DataTable)
        line = self.query_one("#campaign-line", Static)
        if grid is None:
            line.update(NO_CAMPAIGNS)
            table.clear(columns=True)
            self._shown = None
            self._show_cell()
            return
        which = f" ({self.index + 1} of {len(self.grids)}: ] next)" if len(self.grids) > 1 else ""
        # (a grid's name and labels are text, never markup: Text, not str)
        line.update(Text(campaign_line(grid) + which + (f" · {grid.note}" if grid.note else "")))
        rows = tuple(
            (model, *(cell_text(grid.cell(model, dataset)) for dataset in grid.datasets))
            for model in grid.models
        )
        shown = (grid.name, tuple(grid.datasets), rows)
        if shown == self._shown:
            return  # (a poll that found nothing new: the cursor stays)
        keep = table.cursor_coordinate if self._shown and self._shown[0] == grid.name else None
        self._shown = shown
        table.clear(columns=True)
        table.add_columns("model", *(Text(dataset) for dataset in grid.datasets))
        for model, *cells in rows:
            table.add_row(Text(model), *cells)
        if keep is not None and keep.row < table.row_count:
            table.move_cursor(row=keep.row, column=keep.column, animate=False)
        elif table.row_count and len(grid.datasets):
            table.move_cursor(row=0, column=1, animate=False)
        self._show_cell()

    def selected_cell(self) -> CellState | None:
        """The cell under the cursor (None on the model column or an empty grid)."""
        grid = self.current()
        table = self.query_one("#campaign-grid", DataTable)
        if grid is None or table.row_count == 0:
            return None
        row, column = table.cursor_coordinate.row, table.cursor_coordinate.column
        if column == 0 or row >= len(grid.models) or column > len(grid.datasets):
            return None
        return grid.cell(grid.models[row], grid.datasets[column - 1])

    def _show_cell(self) -> None:
        cell = self.selected_cell()
        text = cell_detail(cell) if cell is not None else ""
        self.query_one("#campaign-cell", Static).update(Text(text))

    @on(DataTable.CellHighlighted, "#campaign-grid")
    def cell_highlighted(self) -> None:
        """The cursor moved: say what the cell holds."""
        self._show_cell()

    @on(DataTable.CellSelected, "#campaign-grid")
    def cell_selected(self) -> None:
        """Enter on a cell opens its run."""
        self.action_open()

    def action_open(self) -> None:
        """The cell's run: its live progress while it runs, else the explorer."""
        cell = self.selected_cell()
        if cell is None or cell.run_id is None:
            self.notify("this cell has no run yet: haf campaign run GRID.toml", severity="warning")
            return
        self.open_run(cell.run_id, cell.status)

    def action_compare(self) -> None:
        """The comparison view on the campaign's runs."""
        grid = self.current()
        if grid is None or not grid.run_ids():
            self.notify("no run in this campaign yet", severity="warning")
            return
        from haf_tui.tui.screens.compare import CompareScreen

        self.app.push_screen(CompareScreen(grid.run_ids()))

    def action_step(self, step: int) -> None:
        """The next (or previous) campaign."""
        if len(self.grids) > 1:
            self.index = (self.index + step) % len(self.grids)
            self._draw()

    def action_refresh(self) -> None:
        """Read the database again (a fresh snapshot if another process writes)."""
        self.reader.refresh()
        self.load_campaigns()

    def action_back(self) -> None:
        """Back to the runs."""
        self.app.pop_screen()
