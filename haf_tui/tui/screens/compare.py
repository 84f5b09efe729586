"""Compare runs: the runs with label and id, suites, model, quantisation, dataset, size, date
and status (chosen ones marked ●; the columns fitted to the width), each metric per chosen run
with a bootstrap interval, each run against the first chosen one as a paired difference with
Wilcoxon's test, and one instance across the chosen runs side by side.

Thread workers read the runs, then their instance values; compute the statistics when the
choice changes (those kept from an earlier opening, in any process, are shown before the values
are read: :func:`~haf_tui.tui.compare_data.kept_statistics`; the first choice's are looked up,
and with nothing kept its defined values read, by the worker that listed the runs, at once,
not after the event loop has handled the list); read one instance when it changes. Each posts
a message; the handlers only draw what they are given.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Header, Input, Static, TabbedContent, TabPane

from haf_tui.store import Store, StoreError
from haf_tui.store.comparison_readers import ComparedRun
from haf_tui.tui.compare_data import (
    CompareData,
    RunStatistics,
    first_choice,
    kept_statistics,
    list_runs,
    load_compare_data,
    read_defined,
    run_statistics,
    statistics_at_once,
)
from haf_tui.tui.read_ahead import stop_rows_ahead
from haf_tui.tui.screens.compare_instance import DRAW, InstancePane
from haf_tui.tui.screens.compare_messages import (
    CompareLoaded,
    FirstFound,
    RunsListed,
    StatisticsDrawn,
)
from haf_tui.tui.widgets.compare_tables import (
    RUN_COLUMNS,
    metric_definitions,
    run_rows,
    statistics_parts,
)
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.measured_table import MeasuredTable
from haf_tui.tui.widgets.panel_view import PanelView, render_strips

MAX_RUN_ROWS = 5
"""Runs shown at once (the list scrolls): the panes below keep the height."""
FIRST_DRAW_WAIT = 5.0
"""Seconds the values' read waits for the first statistics drawn (only catches "never")."""


class CompareScreen(InstancePane):
    """Runs on top (``space`` chooses, ``a`` all/none); below, the statistics (``1``) and one
    instance across the chosen runs (``2``; ``]`` / ``[`` step, ``/`` finds an id)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("space", "toggle_run", "Toggle"),
        Binding("a", "all_runs", "All/none"),
        Binding("1", "pane('cmp-stats')", "Statistics", show=False),
        Binding("2", "pane('cmp-instance')", "Instance", show=False),
        Binding("right_square_bracket", "step_instance(1)", "Next"),
        Binding("left_square_bracket", "step_instance(-1)", "Previous"),
        Binding("slash", "search", "Search"),
    ]

    DEFAULT_CSS = """
    CompareScreen #cmp-runs { height: 3; }
    CompareScreen #cmp-status { height: 1; width: 1fr; padding: 0 1; color: $text-muted; }
    CompareScreen #cmp-tabs { height: 1fr; }
    CompareScreen #cmp-tabs TabPane { padding: 0; height: 1fr; }
    CompareScreen #cmp-search { dock: bottom; display: none; }
    CompareScreen #cmp-search.-shown { display: block; }
    """

    def __init__(self, run_ids: Sequence[str] | None = None, *, around: str | None = None) -> None:
        super().__init__()
        self.initial_run_ids = list(run_ids or [])
        self.around = around
        """The run under the runs list's cursor: those sharing a suite with it are chosen."""
        self.chosen: list[str] = []
        self.asked_width = 0  # (the width the statistics were last asked to be drawn at)
        self.drawn_key: tuple[tuple[str, ...], int] | None = None  # (of the statistics shown)
        self.runs_fitted_at: int | None = None  # (the width the runs' columns were fitted to)
        self.first_drawn = threading.Event()
        """Set when the first statistics are drawn, or found not kept: the values are read then
        (their read, mostly Python, would slow the drawing of what is kept)."""
        self.first_found: FirstFound | None = None
        """What was found of the runs first chosen, with the runs: taken once by the
        statistics' worker."""
        self.first_found_read = threading.Event()
        """Set when :attr:`first_found` is read (or its read failed)."""

    def compose(self) -> ComposeResult:
        """Header; runs; a status line; the two panes; the search box; the footer."""
        yield Header()
        yield MeasuredTable(id="cmp-runs", cursor_type="row", zebra_stripes=True)
        yield Static("loading …", id="cmp-status")
        with TabbedContent(initial="cmp-stats", id="cmp-tabs"):
            with TabPane("1 statistics", id="cmp-stats"):
                yield PanelView(id="cmp-stats-view", placeholder="")
            with TabPane("2 instance", id="cmp-instance"):
                yield PanelView(id="cmp-instance-view", placeholder="")
        yield Input(placeholder="instance id (enter finds it, esc closes)", id="cmp-search")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Columns; the data from a worker."""
        self.sub_title = "compare runs"
        self.load_data()

    # -- workers ---------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare-load")
    def load_data(self) -> None:
        """Read the runs (posts them), then every finished instance's metrics (posts them)."""
        stop_rows_ahead(self.reader)  # (the explorer's rows, read ahead: not beside these)
        with self.reader.reading() as store:
            listed = list_runs(store, str(self.reader.path.resolve()))
            self.post_message(RunsListed(listed))
            self.read_first_found(store, listed)
            self.first_drawn.wait(FIRST_DRAW_WAIT)
            data = load_compare_data(store, listed.database, listed)
        self.post_message(CompareLoaded(data))

    def read_first_found(self, store: Store, listed: CompareData) -> None:
        """The kept statistics of the runs the screen opens with (:func:`first_choice` of the
        runs listed, as :meth:`runs_listed` chooses them), else their defined values: read
        while the event loop handles the list (under load, it drew the screen for 50–110 ms
        before the statistics' worker started), the statistics' worker takes them; what
        failed, it raises (the values are read all the same)."""
        try:
            by_id = {run.run_id: run for run in listed.runs}
            chosen = first_choice(listed.runs, self.initial_run_ids, self.around)
            runs = [by_id[run_id] for run_id in chosen if run_id in by_id]
            ids = tuple(run.run_id for run in runs)
            try:
                kept = kept_statistics(runs, listed.versions, listed.database) if runs else None
            except Exception as exc:  # (whatever it is: its worker says it, the values come)
                self.first_found = FirstFound(ids, None, None, failed=exc)
                return
            found = FirstFound(ids, kept, None)
            if runs and kept is None:
                with contextlib.suppress(StoreError):  # (said by the statistics' own read)
                    found = FirstFound(ids, None, read_defined(store, runs))
            self.first_found = found
        finally:
            self.first_found_read.set()

    def take_first_found(self, runs: Sequence[ComparedRun]) -> FirstFound | None:
        """What was found with the runs if it is of ``runs`` (taken: None after), else None
        (another choice: look again)."""
        self.first_found_read.wait(FIRST_DRAW_WAIT)
        found, self.first_found = self.first_found, None
        if found is None or found.run_ids != tuple(run.run_id for run in runs):
            return None
        return found

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare-stats", description=DRAW)
    def compute_statistics(
        self,
        runs: list[ComparedRun],
        data: CompareData,
        width: int,
        known: list[RunStatistics] | None = None,
    ) -> None:
        """Bootstrap intervals and paired tests of the chosen runs (``known``: computed
        already, only to draw again), drawn (posts them); before the values are read, only
        those kept (none kept: nothing posted, the values' arrival computes them); what is not
        kept is posted first without its intervals (n and means, the intervals pending)."""
        stats = known
        key = (tuple(run.run_id for run in runs), width)
        if stats is None and not data.values_read:
            early = self.take_first_found(runs)
            if early is not None and early.failed is not None:
                raise early.failed  # (said once, on the status line: :meth:`worker_failed`)
            if early is not None:  # (looked up with the runs)
                stats, defined = early.kept, early.defined
            else:
                stats, defined = kept_statistics(runs, data.versions, data.database), None
            if stats is None:  # (not kept: the means and n at once, then the values are read)
                try:
                    if defined is None:
                        with self.reader.reading() as store:
                            defined = read_defined(store, runs)
                    stats = statistics_at_once(
                        runs, defined=defined, versions=data.versions, database=data.database
                    )
                finally:
                    self.first_drawn.set()
        if stats is not None and any(found.computing for found in stats):
            lines = render_strips(statistics_parts(stats), width)
            self.post_message(StatisticsDrawn(key, stats, lines))
            return
        if stats is None:
            at_once = statistics_at_once(
                runs, data.values, versions=data.versions, database=data.database
            )
            if not any(found.computing for found in at_once):
                stats = at_once  # (everything kept)
            else:  # (the paired differences' n and means too, the intervals still pending)
                lines = render_strips(statistics_parts(at_once), width)
                self.post_message(StatisticsDrawn(key, at_once, lines))
        if stats is None:  # (kept per run version: computed once while the runs do not change)
            stats = run_statistics(
                runs, data.values, versions=data.versions, database=data.database
            )
        lines = render_strips(statistics_parts(stats), width)
        self.post_message(StatisticsDrawn(key, stats, lines))

    # -- handlers --------------------------------------------------------------------------------

    @on(RunsListed)
    def runs_listed(self, message: RunsListed) -> None:
        """Choose the runs asked for (else those sharing a suite with the run the runs list's
        cursor was on; else every finished run; every run if fewer than two finished) and show
        them, the cursor on that run (their kept statistics, if any, come next)."""
        self.data = message.data
        self.chosen = first_choice(self.data.runs, self.initial_run_ids, self.around)
        self.fill_runs()
        table = self.query_one("#cmp-runs", DataTable)
        if self.around is not None and self.around in table.rows:
            table.move_cursor(row=table.get_row_index(self.around), animate=False)
        table.focus()
        self.choice_changed()

    @on(CompareLoaded)
    def data_loaded(self, message: CompareLoaded) -> None:
        """The instance values: the instances to step through, and the statistics of the chosen
        runs computed where they were not kept."""
        if self.data is None:  # (the runs' message comes first; this only if it went astray)
            self.runs_listed(RunsListed(message.data))
            return
        self.data = message.data
        ids = [run.run_id for run in self.chosen_runs()]
        if [found.run.run_id for found in self.stats] != ids or self.computing():
            self.choice_changed()  # (not kept: computed now)
            return
        self.order_instances(ids)  # (the kept statistics are shown: only the instances come)
        self.update_status()
        self.show_instance()

    def fill_runs(self) -> None:
        """The runs table, with the chosen runs marked and lettered."""
        if self.data is None:
            return
        table = self.query_one("#cmp-runs", MeasuredTable)
        row = table.cursor_row
        rows = run_rows(self.data.runs, self.chosen_runs())
        table.fill_fitted(RUN_COLUMNS, rows, [run.run_id for run in self.data.runs])
        self.runs_fitted_at = table.size.width or self.app.size.width
        table.styles.height = min(table.row_count, MAX_RUN_ROWS) + 2  # (header, scrollbar)
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))

    def chosen_runs(self) -> list[ComparedRun]:
        """The chosen runs in the order they were chosen: the first is the reference, each
        other run's Δ is it minus the reference (as ``compare-ci``'s first ``--run``)."""
        if self.data is None:
            return []
        by_id = {run.run_id: run for run in self.data.runs}
        return [by_id[run_id] for run_id in self.chosen if run_id in by_id]

    def choice_changed(self) -> None:
        """Recompute the statistics and the instance order, and say what is chosen."""
        if self.data is None:
            return
        runs = self.chosen_runs()
        ids = [run.run_id for run in runs]
        self.order_instances(ids)
        self.stats_failed = None  # (computed again)
        same = [f.run.run_id for f in self.stats] == ids and not self.computing()
        known = self.stats if same else None
        doing = "" if known is not None else "computing …"
        if not self.data.values_read:
            doing = self.reading_note()
        self.update_status(doing)
        width = self.asked_width = self.view_width("#cmp-stats-view")
        self.compute_statistics(runs, self.data, width, known)

    def update_status(self, doing: str | None = None) -> None:
        """The line under the runs (``doing`` None: what is computed, if anything)."""
        doing = self.computing_note() if doing is None else doing
        total = len(self.data.runs) if self.data is not None else 0
        line = f"runs {len(self.chosen)}/{total} chosen (space, a)"
        if self.instances:
            line += f" · instance {self.instance_index + 1}/{len(self.instances)} (] [ /)"
        status = self.query_one("#cmp-status", Static)
        status.update(f"{line} {doing}".rstrip(), layout=False)  # (one line, the full width)

    @on(StatisticsDrawn)
    def statistics_drawn(self, message: StatisticsDrawn) -> None:
        """Show the statistics (if of the chosen runs at the width asked last); the instance."""
        if message.key != (tuple(run.run_id for run in self.chosen_runs()), self.asked_width):
            return
        computing = any(found.computing for found in message.stats)
        if computing and self.drawn_key == message.key and not self.computing():
            return  # (a superseded worker's first numbers, after the computed ones)
        again = self.drawn_key == message.key  # (the intervals filled in: the same instance)
        self.stats, self.drawn_key = message.stats, message.key
        self.first_drawn.set()
        self.query_one("#cmp-stats-view", PanelView).show(message.lines, from_top=not again)
        reading = self.data is not None and not self.data.values_read
        self.update_status(self.reading_note() if reading else self.computing_note())
        if self.instance_shown_for != message.key:
            self.show_instance()

    def worker_failed(self, group: str, error: BaseException) -> None:
        """As the instance pane's (what failed, said), the statistics not computed forgotten
        and the values read at once (their arrival computes them again)."""
        if group == "compare-stats":
            self.first_drawn.set()
            self.drawn_key = None
        super().worker_failed(group, error)

    def computing(self) -> bool:
        """Whether an interval or a test shown is still being computed."""
        return any(found.computing for found in self.stats)

    def computing_note(self) -> str:
        """What the status line says while intervals are computed."""
        return "computing intervals …" if self.computing() else ""

    @on(DataTable.RowSelected, "#cmp-runs")
    def row_selected(self) -> None:
        """Enter on a run toggles it too."""
        self.action_toggle_run()

    def on_resize(self) -> None:
        """Fit the runs' columns and draw again at the new width."""
        self.call_after_refresh(self.refit_runs)
        self.call_after_refresh(self.width_changed)

    def refit_runs(self) -> None:
        """Fit the runs' columns again if the table's width is not the one they were fitted
        to (the screen's first resize, as it is laid out, mostly finds them fitted: filling
        the table again redrew it while the first statistics were read)."""
        table = self.query_one("#cmp-runs", MeasuredTable)
        if self.data is None:  # (no runs listed yet: they are fitted as they come)
            return
        if self.runs_fitted_at != (table.size.width or self.app.size.width):
            self.fill_runs()

    def width_changed(self) -> None:
        """Draw again if the panes' width is not the one last asked for (the screen's first
        resize, as it is laid out, asks for none: a second drawing would slow the first)."""
        if self.asked_width != self.view_width("#cmp-stats-view"):
            self.choice_changed()

    def definitions_markdown(self) -> str:
        """The compared metrics' definitions (the ``?`` help shows them on this screen)."""
        return metric_definitions(self.stats[0].metrics if self.stats else ())

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        """Close the search box, or go back."""
        search = self.query_one("#cmp-search", Input)
        if search.has_class("-shown"):
            search.remove_class("-shown")
            self.query_one("#cmp-runs", DataTable).focus()
            return
        self.app.pop_screen()

    def action_toggle_run(self) -> None:
        """Choose the run under the cursor (after those chosen), or drop it (dropping the
        reference makes the next chosen one the reference)."""
        table = self.query_one("#cmp-runs", DataTable)
        if self.data is None or table.row_count == 0:
            return
        run_id = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        if run_id in self.chosen:
            self.chosen.remove(run_id)
        else:
            self.chosen.append(run_id)
        self.fill_runs()
        self.choice_changed()

    def action_all_runs(self) -> None:
        """Choose every run (those chosen first, the reference kept), or none when all are."""
        if self.data is None:
            return
        every = list(dict.fromkeys([*self.chosen, *(run.run_id for run in self.data.runs)]))
        self.chosen = [] if len(self.chosen) == len(every) else every
        self.fill_runs()
        self.choice_changed()
