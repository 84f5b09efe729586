"""Home: the runs in the database, their progress and SoS/RS at a glance."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Header, Static

from haf_tui.tui.messages import QueryFinished
from haf_tui.tui.screens.base import HafScreen

RUNS_SQL = """
SELECT r.run_id, r.status, r.model_file, r.dataset_id,
       (SELECT count(*) FROM instance_results i WHERE i.run_id = r.run_id) AS done,
       r.n_planned,
       strftime(r.created_at, '%Y-%m-%d %H:%M') AS started,
       (SELECT avg(value) FROM instance_metrics m WHERE m.run_id = r.run_id
          AND m.metric = 'sos') AS sos,
       (SELECT avg(value) FROM instance_metrics m WHERE m.run_id = r.run_id
          AND m.metric = 'rs') AS rs
FROM runs r ORDER BY r.created_at DESC
"""
COLUMNS = ("run", "status", "model", "dataset", "done", "started", "SoS", "RS")


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


class HomeScreen(HafScreen[None]):
    """The runs list: enter explores a run, ``s`` opens SQL, ``r`` refreshes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "explore", "Explore", show=True),
        Binding("s", "sql", "SQL"),
        Binding("r", "refresh", "Refresh"),
    ]

    def compose(self) -> ComposeResult:
        """Header, a hint line, the runs table and the footer."""
        yield Header()
        yield Static("Runs", classes="title")
        yield Static("loading …", id="runs-hint", classes="hint")
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        """Columns, then the rows from a worker."""
        self.query_one("#runs", DataTable).add_columns(*COLUMNS)
        self.load_runs()

    @work(thread=True, exclusive=True, exit_on_error=False, group="home")
    def load_runs(self) -> None:
        """Read the runs (thread worker: posts a message, touches no widget)."""
        reader = self.reader
        if not reader.path.exists():
            self.post_message(QueryFinished("runs", list(COLUMNS), []))
            return
        columns, rows = reader.query(RUNS_SQL)
        self.post_message(QueryFinished("runs", columns, rows))

    @on(QueryFinished)
    def show_runs(self, message: QueryFinished) -> None:
        """Fill the table."""
        if message.request != "runs":
            return
        table = self.query_one("#runs", DataTable)
        table.clear()
        for run_id, status, model, dataset, done, planned, started, sos, rs in message.rows:
            table.add_row(
                run_id,
                status,
                model,
                dataset,
                f"{done}/{planned}",
                started,
                _fmt(sos),
                _fmt(rs),
                key=run_id,
            )
        hint = self.query_one("#runs-hint", Static)
        reader = self.reader
        snapshot = " (snapshot: another process writes; r refreshes)" if reader.snapshot else ""
        hint.update(
            f"{len(message.rows)} runs in {reader.path.name}{snapshot}"
            if message.rows
            else "no runs yet: haf run --demo --limit 4"
        )

    def selected_run(self) -> str | None:
        """The run under the cursor."""
        table = self.query_one("#runs", DataTable)
        if table.row_count == 0:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def action_explore(self) -> None:
        """Open the explorer on the selected run."""
        run_id = self.selected_run()
        if run_id is not None:
            from haf_tui.tui.screens.explorer import ExplorerScreen

            self.app.push_screen(ExplorerScreen(run_id))

    @on(DataTable.RowSelected, "#runs")
    def row_selected(self) -> None:
        """Enter on a row explores it."""
        self.action_explore()

    def action_sql(self) -> None:
        """Open the SQL screen."""
        from haf_tui.tui.screens.sql import SqlScreen

        self.app.push_screen(SqlScreen())

    def action_refresh(self) -> None:
        """Re-read the database (a fresh snapshot if another process writes)."""
        self.reader.refresh()
        self.load_runs()
