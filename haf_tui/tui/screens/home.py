"""Home: the runs in the database, their progress and SoS/RS at a glance."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Header, Static

from haf_tui.reports import format_number
from haf_tui.store.annotations import parse_tags
from haf_tui.store.derived_runs import DerivedRun, derived_runs
from haf_tui.store.pending_annotations import PendingAnnotation, pending, pending_path
from haf_tui.store.readers import RunOverview, run_overviews, run_title, suites_text
from haf_tui.tui.read_ahead import FIRST_REST_SECONDS, REST_SECONDS, read_ahead
from haf_tui.tui.run_cache import DatabaseState, files_state
from haf_tui.tui.screens.base import failure_text
from haf_tui.tui.screens.run_rescore import RunRescoreScreen, nested
from haf_tui.tui.widgets.fit_columns import FitColumn, fit_widths
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.measured_table import MeasuredTable
from haf_tui.vocabulary import HafError, shown_text

COLUMNS = ("run", "status", "suites", "model", "dataset", "done", "started", "SoS", "RS")
FIT_COLUMNS = (
    FitColumn("run", min_width=10, rank=0, cut_middle=True),
    FitColumn("status", rank=1),
    FitColumn("suites", min_width=8, rank=2),
    FitColumn("model", min_width=10, rank=3),
    FitColumn("dataset", min_width=8, rank=7),
    FitColumn("done", rank=4),
    FitColumn("started", rank=8),
    FitColumn("SoS", rank=5),
    FitColumn("RS", rank=6),
)
"""The runs list's columns as they give way on a narrow screen: the long ones cut with "…"
(a run's name in its middle; its id never: :func:`fit_columns`), then started, the dataset,
RS, SoS … left out (``+`` shows every column in full; the list is newest first); the suites
tell a HAF run from a judge run of the same model."""


def fit_columns(run_ids: Sequence[str]) -> tuple[FitColumn, ...]:
    """:data:`FIT_COLUMNS` with the run's column cut no narrower than the longest run id: an id
    whole (it was cut to ``20261…-dca7`` at 80 columns), a label beside it cut instead."""
    widest = max((cell_len(run_id) for run_id in run_ids), default=0)
    run = replace(FIT_COLUMNS[0], min_width=max(widest, FIT_COLUMNS[0].min_width or 0))
    return (run, *FIT_COLUMNS[1:])


POLL_SECONDS = 3.0
"""How often the runs list reads the database again while it is shown (a CLI run appears)."""


def pending_title(overview: RunOverview, kept: list[PendingAnnotation]) -> str:
    """The run's title with its pending label and tags over the stored ones, marked ⧗."""
    label, tags, waiting = overview.label, overview.tags, False
    for item in kept:
        if item.run_id == overview.run_id and item.kind == "label":
            label, waiting = " ".join(item.text.split()) or None, True
        elif item.run_id == overview.run_id and item.kind == "tags":
            tags, waiting = parse_tags(item.text), True
    if not waiting:
        return overview.title
    return run_title(overview.run_id, label, tags) + " ⧗"


Sources = tuple[DatabaseState, tuple[tuple[int, int, int] | None, ...]]
"""What the runs list is read from, as it was on disk (:meth:`HomeScreen._sources`)."""


@dataclass
class RunsRead(Message):
    """The runs list's rows and what they were read from (None: that could not tell a change),
    in one message: the rows shown and the state kept for the next poll always go together."""

    rows: list[tuple[Any, ...]]
    sources: Sources | None = None


class HomeScreen(RunRescoreScreen):
    """The runs list: enter explores a run, ``s`` opens SQL, ``r`` refreshes (on a finished
    run: or re-scores it with another similarity model)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "app.new_run", "New evaluation"),
        Binding("enter", "open", "Open", show=True),
        Binding("e", "explore", "Explore"),
        Binding("m", "metrics", "Metrics"),
        Binding("c", "compare", "Compare"),
        Binding("s", "app.sql", "SQL"),
        Binding("R", "resume", "Resume"),
        Binding("r", "refresh", "Refresh"),
        Binding("L", "label_run", "Label"),  # (these three: run_admin.py)
        Binding("T", "tag_run", "Tag"),
        Binding("D", "delete_run", "Delete"),
        Binding("plus", "all_columns", "All columns"),
        Binding("k", "campaigns", "Campaigns"),
        Binding("C", "cancel", show=False),  # (a re-score waiting for the database: its line
    ]  # says so when it applies)
    DEFAULT_CSS = """
    HomeScreen #runs-work { height: auto; padding: 0 1; display: none; }
    HomeScreen #runs-work.-shown { display: block; }
    HomeScreen #runs-work.-failed { color: $error; }
    """

    def compose(self) -> ComposeResult:
        """Header, a hint line, the runs table and the footer."""
        yield Header()
        yield Static("Runs", classes="title")
        yield Static("loading …", id="runs-hint", classes="hint")
        yield Static("", id="runs-work", markup=False)  # (a re-score's state, in full)
        yield MeasuredTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        """Columns, then the rows from a worker."""
        self.query_one("#runs", DataTable).add_columns(*COLUMNS)
        self._shown_rows: list[tuple[object, ...]] | None = None
        self._pending_count = 0  # (annotations pending: the hint says how many)
        self._all_columns = False
        self._snapshot_taken = time.monotonic()
        self._resting: Timer | None = None  # (until reading ahead for the cursor's run)
        self._read_ahead_once = False  # (read ahead for the first run the list showed)
        self._first_read = True  # (the list's first read under way: a resume reads no more)
        self._read_sources: Sources | None = None
        """What the list shown was read from (:meth:`_sources`; None: read it again)."""
        self.load_runs()
        self.set_interval(POLL_SECONDS, self.poll_runs)

    def poll_runs(self) -> None:
        """While the list is shown, read it again (a run another process started appears);
        from a fresh snapshot at most every few seconds while another process writes. Not
        when neither the database nor the pending annotations have changed on disk since the
        list's last read (an idle list opened the store and read every run every 3 s)."""
        if not self.poll_due():
            return
        sources = self._sources()
        if sources is None or sources != self._read_sources:
            self.load_runs(poll=True)

    def _sources(self) -> Sources | None:
        """What the list is read from, as it is on disk now: the database file's state and the
        pending annotations file's inode, time and size; None when that cannot tell a change
        (either file written in the last moments, or the database read through a copy: a
        snapshot while another process writes, taken every few seconds)."""
        if self.reader.reads_copy:
            return None
        state = self.reader.database_state()  # (the file's own: not read through a copy)
        kept = files_state((pending_path(),))
        return None if state is None or kept is None else (state, kept)

    @work(thread=True, exclusive=True, exit_on_error=False, group="home")
    def load_runs(self, poll: bool = False) -> None:
        """Read the runs (thread worker: posts a message, touches no widget); a poll lets the
        file go at once."""
        reader = self.reader
        if not reader.path.exists():
            self.post_message(RunsRead([]))
            return
        sources = self._sources()  # (before reading: what is read is at least as new)
        with reader.reading(linger=not poll) as store:
            overviews = run_overviews(store)
            derived = {d.run_id: d for d in derived_runs(store)}
        kept = pending(reader.path)  # (annotations kept while another process writes)
        self._pending_count = len(kept)
        parents = {run_id: d.parent_run_id for run_id, d in derived.items()}
        rows = [
            (o.run_id, indent + pending_title(o, kept) + _g_of(derived, o.run_id), o.status,
             suites_text(o.suites), o.model_file, o.dataset_id, o.done, o.planned,
             o.created_at, o.sos, o.rs)
            for o, indent in nested(overviews, parents)
        ]  # fmt: skip
        self.post_message(RunsRead(rows, sources))

    @on(RunsRead)
    def show_runs(self, message: RunsRead) -> None:
        """Fill the table."""
        self._first_read = False
        self._read_sources = message.sources
        self._show_hint(len(message.rows))
        if message.rows == self._shown_rows:
            return  # (a poll that found nothing new: the cursor and scroll stay as they are)
        self._shown_rows = message.rows
        self._fill_table()

    def _fill_table(self) -> None:
        """The rows, at the columns that fit the table's width (all of them after ``+``)."""
        rows = self._shown_rows or []
        table = self.query_one("#runs", MeasuredTable)
        full: list[tuple[str, ...]] = [
            (str(title), str(status), str(suites), str(model), str(dataset), f"{done}/{planned}",
             f"{started:%Y-%m-%d %H:%M}", format_number(sos), format_number(rs))
            for _, title, status, suites, model, dataset, done, planned, started, sos, rs in rows
        ]  # fmt: skip
        shown = full
        keys = [str(row[0]) for row in rows]  # (run: label (id) #tags: L labels, T tags it)
        columns = fit_columns(keys)
        widths = fit_widths(columns, full, 10_000)  # (every column, as wide as its values)
        if not self._all_columns and table.fit_widths(columns, full) != widths:
            shown = [compact_row(row) for row in full]  # (something cut: compact values first)
            widths = table.fit_widths(columns, shown)
        keep = self.selected_run()
        table.fill_fitted(columns, shown, keys, widths=widths)
        if keep is not None and keep in table.rows:  # (the cursor stays on its run)
            table.move_cursor(row=table.get_row_index(keep), animate=False)

    def on_resize(self) -> None:
        """Another width: the columns fitted again."""
        if self._shown_rows is not None and not self._all_columns:
            self.call_after_refresh(self._fill_table)

    def action_all_columns(self) -> None:
        """Every column in full (→ scrolls sideways), or again the columns that fit."""
        self._all_columns = not self._all_columns
        self._fill_table()

    def worker_failed(self, group: str, error: BaseException) -> None:
        """The runs not read: said on the hint line ("loading …" there stayed for ever); the
        next read that succeeds says the runs again."""
        if group == "home":
            self._first_read = False
            self._read_sources = None  # (the next poll reads them again, changed or not)
            hint = failure_text("read the runs", error)
            self.query_one("#runs-hint", Static).update(hint)

    def _show_hint(self, count: int) -> None:
        reader = self.reader
        snapshot = " (snapshot: another process writes; read again every few s)"
        runs = "run" if count == 1 else "runs"
        hint = f"{count} {runs} in {reader.path.name}{snapshot if reader.snapshot else ''}"
        kept = self._pending_count
        if kept:
            hint += f" · ⧗ {kept} annotation{'s' if kept > 1 else ''} pending (stored once free)"
        self.query_one("#runs-hint", Static).update(
            hint if count else "no runs yet: n starts a new evaluation (or haf run --demo)"
        )

    def show_work(self, text: str, *, failed: bool = False) -> None:
        """The work line under the hint: a re-score's state, in full (it wraps)."""
        work_line = self.query_one("#runs-work", Static)
        work_line.update(shown_text(text))
        work_line.set_class(bool(text), "-shown")
        work_line.set_class(failed, "-failed")

    def pending_stored(self, stored: object) -> None:
        """Pending annotations were stored (the app's): read the list again."""
        self.load_runs()

    @on(DataTable.RowHighlighted, "#runs")
    def cursor_moved(self) -> None:
        """The cursor on a run: read ahead for it once it rests there (:mod:`read_ahead`)."""
        if self._resting is not None:
            self._resting.stop()
        rest = REST_SECONDS if self._read_ahead_once else FIRST_REST_SECONDS
        self._read_ahead_once = True  # (the list's first cursor: read ahead before a key)
        if rest <= 0:
            self.cursor_rested()
            return
        self._resting = self.set_timer(rest, self.cursor_rested)

    def cursor_rested(self) -> None:
        """Start reading ahead for the run under the cursor, if this screen is on top (not
        ``is_current``: that holds too under a screen pushed over it, which reads for itself)."""
        run_id = self.selected_run()
        if run_id is not None and self.app.screen is self:
            self.read_ahead_for(run_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="read-ahead")
    def read_ahead_for(self, run_id: str) -> None:
        """What the explorer and the metrics screen read first, kept (posts nothing; a read
        that fails is left to the screen that needs it, which says why)."""
        with contextlib.suppress(HafError):
            read_ahead(self.reader, run_id, lambda: self.app.screen is self)

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

    def run_title(self, run_id: str) -> str | None:
        """The run's whole name as listed (``label (id) #tags``; the cell may be cut)."""
        for row in self._shown_rows or []:
            if row[0] == run_id:
                return str(row[1])
        return None

    def selected_status(self) -> str | None:
        """The status column of the run under the cursor."""
        run_id = self.selected_run()
        for row in self._shown_rows or []:
            if row[0] == run_id:
                return str(row[2])
        return None

    def action_open(self) -> None:
        """A run still going opens its live progress; any other run, the explorer."""
        run_id = self.selected_run()
        if run_id is None:
            self.haf_app.action_new_run()
            return
        self.open_run(run_id, self.selected_status())

    @on(DataTable.RowSelected, "#runs")
    def row_selected(self) -> None:
        """Enter on a row opens it."""
        self.action_open()

    def action_metrics(self) -> None:
        """Metric panels (the selected run first; every run can be compared)."""
        from haf_tui.tui.screens.metrics import MetricsScreen

        run_id = self.selected_run()
        screen = self.haf_app.ahead.take(MetricsScreen)
        screen.initial_run_ids = [run_id] if run_id else []
        self.app.push_screen(screen)

    def action_compare(self) -> None:
        """Compare runs: the runs that share a suite with the one under the cursor chosen
        (space changes the choice there)."""
        from haf_tui.tui.screens.compare import CompareScreen

        self.app.push_screen(CompareScreen(around=self.selected_run()))

    def action_campaigns(self) -> None:
        """The campaigns' grids (haf campaign)."""
        from haf_tui.tui.screens.campaign import CampaignScreen

        self.app.push_screen(CampaignScreen())

    def action_resume(self) -> None:
        """Resume the selected run (interrupted, failed, or left running by a killed process)."""
        run_id = self.selected_run()
        if run_id is None or self.selected_status() == "finished":
            self.notify("pick an unfinished run to resume", severity="warning")
            return
        self.haf_app.resume_run(run_id)

    def refresh_live(self, *, status_changed: bool = False) -> None:
        """A run started here changed status: re-read the list."""
        if status_changed:
            self.load_runs()

    def on_screen_resume(self) -> None:
        """Back on the list: re-read it (runs may have been added or moved on); not as the app
        starts, while the list's first read is still under way (a second read beside it took
        the interpreter from a key pressed as the list appeared)."""
        if not getattr(self, "_first_read", False):
            self.load_runs()

    def refresh_list(self) -> None:
        """Re-read the database (a fresh snapshot if another process writes)."""
        self.reader.refresh()
        self.load_runs()


def _g_of(derived: dict[str, DerivedRun], run_id: str) -> str:
    """A derived run's similarity model, as its title ends in the list."""
    run = derived.get(run_id)
    return f" · g {run.similarity_model.rstrip('/').rsplit('/', 1)[-1]}" if run else ""


def compact_row(row: tuple[str, ...]) -> tuple[str, ...]:
    """A runs-list row as a narrow screen shows it: the model without ``.gguf``, the start
    without its year."""
    title, status, suites, model, dataset, done, started, sos, rs = row
    short = model.removesuffix(".gguf")
    return (title, status, suites, short, dataset, done, started[5:], sos, rs)
