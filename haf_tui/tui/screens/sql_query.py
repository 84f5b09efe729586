"""The SQL screen's queries (:class:`~haf_tui.tui.screens.sql.SqlScreen` is one): running the
editor's SQL with the values of its parameter form, one page at a time in a thread worker,
stopping it (``ctrl+c``), showing the page or the error where it points, and exporting the
whole result; with the screen's error, hint and status lines. Once the catalog or a page is
shown, what is loaded is frozen out of the collector's full passes (``freeze_after_load``, as
the explorer does): on a paper-scale store those passes re-scanned ~130k long-lived objects
for 70-170 ms in the middle of a library pick or the history dialog, the slowest keys."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.timer import Timer
from textual.widgets import Static

from haf_tui.reports import NamedQuery, QueryError, QueryParam
from haf_tui.store import StatementInterrupt
from haf_tui.store.connection import runnable_sql
from haf_tui.tui import sql_history
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.sql_dialogs import (
    ExportScreen,
    param_fields,
    typed_params,
    with_run_ids,
)
from haf_tui.tui.sql_messages import PageRead, RowsCounted, SqlFailed
from haf_tui.tui.sql_text import error_notes, error_position, sql_params
from haf_tui.tui.widgets.result_table import result_page
from haf_tui.tui.widgets.sql_editor import SqlEditor
from haf_tui.tui.widgets.sql_params import ParamsForm, ParamsGiven
from haf_tui.tui.widgets.sql_results import SqlResults, status_text
from haf_tui.vocabulary import first_line

PAGE_SIZE = 500
"""Rows shown per page."""
RUNNING_SHOWN_AFTER = 0.15
"""Seconds a query runs before the screen says so (the running line, ``ctrl+c`` in the
footer): one that ends sooner shows its rows without them coming and going first (on a 2-core
machine that was ~50-70 ms of a quick query's key: the footer's keys moved, and the screen was
laid out and drawn twice, while DuckDB ran)."""
EXPORT_DIR = Path("exports")
query_clock = time.perf_counter
"""What a query's time is read from (a snapshot test holds it still)."""


class SqlQueryScreen(HafScreen[None]):
    """Runs, pages, stops and exports the SQL screen's queries (the screen composes the
    editor ``#sql-editor``, the hint ``#sql-hint``, the :class:`ParamsForm` and the
    :class:`SqlResults` it uses)."""

    def __init__(self) -> None:
        super().__init__()
        self.selected: NamedQuery | None = None
        """The named query in the editor (its parameters' types and defaults), if any."""
        self.result_sql: str | None = None
        self.result_params: dict[str, Any] = {}
        self.param_values: dict[str, str] = {}
        """The text last given for each parameter (the form starts with it)."""
        self.page_offset = 0
        self.more = False
        self.total_rows: int | None = None
        """The result's row count once counted or its last page was read (None: not yet)."""
        self.counting: StatementInterrupt | None = None
        """Stops the count of the result's rows (None when none runs)."""
        self._count_request: str | None = None
        self._count_started = False
        """Whether the result's rows were set counting (once a result: a stopped count stays
        stopped)."""
        self._counting_timer: Timer | None = None
        self._page_status: tuple[int, int, bool, float] = (0, 0, False, 0.0)
        """The page shown: its offset, rows, whether more follow, and the query's seconds."""
        self.busy = False
        self.cancel_shown = False
        """Whether ``ctrl+c`` (cancel) is offered: the query has run a while (busy, said)."""
        self._running_timer: Timer | None = None
        self.running: StatementInterrupt | None = None
        """Stops the query being read (None when none runs)."""
        self._pending: tuple[str, int, str] | None = None
        self._asked: tuple[str, dict[str, QueryParam]] | None = None
        self._counter = 0

    @property
    def editor(self) -> SqlEditor:
        """The SQL editor."""
        return self.query_one("#sql-editor", SqlEditor)

    @property
    def database_path(self) -> Path:
        """The open database's file."""
        return Path(self.reader.path)

    @property
    def results(self) -> SqlResults:
        """The error, status and result lines."""
        return self.query_one(SqlResults)

    def show_error(self, message: str) -> None:
        """The red error line (empty hides it)."""
        self.results.show_error(message)

    def show_hint(self, message: str) -> None:
        """The hint line."""
        self.query_one("#sql-hint", Static).update(Text(message))

    # ------------------------------------------------------------ running

    async def action_run_query(self) -> None:
        """Run the editor's SQL (the selection, else the statement under the cursor) from its
        first row; SQL with ``$parameters`` runs with the values of the parameter form (opened
        first when it is not open for this SQL)."""
        form = self.query_one(ParamsForm)
        sql, what = self.editor.sql_to_run()
        if what != "the whole text":
            self.show_hint(f"runs {what} · ctrl+a selects all")
        if not runnable_sql(sql):
            self.show_error("nothing to run: write a query first")
            return
        if not sql_params(sql):
            form.close()
            self.start_query(sql, {})
        elif form.shown and self._asked is not None and self._asked[0] == sql:
            form.submit()
        else:
            await self.ask_params(sql)

    async def ask_params(self, sql: str) -> None:
        """Open the parameter form for ``sql`` (a named query's types and defaults, or the
        values given last)."""
        specs = {p.name: p for p in self.selected.param_specs} if self.selected else {}
        title = f"Parameters of {self.selected.name}" if self.selected else "Parameters"
        self._asked = (sql, specs)
        fields = param_fields(sql_params(sql), specs, self.param_values)
        await self.query_one(ParamsForm).ask(title, fields)

    @on(ParamsGiven)
    def run_with(self, message: ParamsGiven) -> None:
        """Run the SQL the form is open for with the values given; the form stays open, to
        change a value and run again (a value that does not fit its type: the error)."""
        if self._asked is None:
            return
        sql, specs = self._asked
        self.param_values.update(message.values)
        try:
            params = typed_params(message.values, specs)
        except QueryError as exc:
            self.show_error(str(exc))
            return
        self.start_query(sql, params)
        self.editor.focus()  # (the form stays open; typing goes to the SQL again)

    def start_query(self, sql: str, params: dict[str, Any]) -> None:
        """Run ``sql`` with ``params`` from its first row (and add it to the history)."""
        self.stop_counting()  # (another result: a count of the last one is dropped)
        self.result_sql, self.result_params = sql, params
        self.total_rows = None
        self._count_started = False
        self.load_page(0, record=True)

    def action_next_page(self) -> None:
        """The next page of the current result."""
        if self.result_sql is not None and self.more and not self.busy:
            self.load_page(self.page_offset + PAGE_SIZE)

    def action_previous_page(self) -> None:
        """The previous page of the current result."""
        if self.result_sql is not None and self.page_offset > 0 and not self.busy:
            self.load_page(max(self.page_offset - PAGE_SIZE, 0))

    def load_page(self, offset: int, record: bool = False) -> None:
        """Fetch one page in a worker (a query still running is stopped first)."""
        assert self.result_sql is not None
        self._counter += 1
        request = f"sql-page-{self._counter}"
        self._pending = (request, offset, self.result_sql)
        self.stop_running()
        self.running = StatementInterrupt()
        self.set_busy(True)
        sql, params = self.result_sql, dict(self.result_params)
        self.fetch_page(request, sql, params, offset, record, self.running)

    def set_busy(self, busy: bool) -> None:
        """Whether a query runs; one still running :data:`RUNNING_SHOWN_AFTER` later is said
        (:meth:`say_running`), and what was said goes when it ends."""
        self.busy = busy
        if self._running_timer is not None:
            self._running_timer.stop()
            self._running_timer = None
        if busy:
            self._running_timer = self.set_timer(RUNNING_SHOWN_AFTER, self.say_running)
            return
        self.running = None
        if self.cancel_shown:
            self.cancel_shown = False
            self.refresh_bindings()

    def say_running(self) -> None:
        """The query still runs: the running line, and ``ctrl+c`` in the footer."""
        self._running_timer = None
        if self.busy:
            self.results.show_status("running … ctrl+c cancels")
            if not self.cancel_shown:
                self.cancel_shown = True
                self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``ctrl+c`` cancels while a query runs (else it is the editor's copy); it is shown
        only once the query is said to run, and before that it cancels unshown (pressed
        then, it stopped nothing and Textual said "press ctrl+q to quit")."""
        if action != "cancel_query":
            return True
        if not parameters:
            return self.cancel_shown
        return (self.busy and not self.cancel_shown) or (
            self.counting is not None and not self.busy
        )

    def stop_running(self) -> None:
        """Stop the query being read, if one is."""
        if self.running is not None:
            self.running.interrupt()

    def on_unmount(self) -> None:
        """A query still running stops with the screen (leaving it, quitting the app)."""
        self.stop_running()
        self.stop_counting()

    def action_cancel_query(self, when: str = "said") -> None:
        """Stop the running query (``when``: "unsaid" before it is said to run, from the
        footer's hidden binding), or else the count of the result's rows; the screen says so
        when it has stopped."""
        if self.running is None and self.counting is not None:
            self.stop_counting()
            self.show_page_status()
            return
        self.stop_running()
        self.results.show_status("cancelling …")

    @work(thread=True, exclusive=True, exit_on_error=False, group="sql")
    def fetch_page(
        self,
        request: str,
        sql: str,
        params: dict[str, Any],
        offset: int,
        record: bool,
        interrupt: StatementInterrupt,
    ) -> None:
        """Read one page (thread worker: posts a message, touches no widget)."""
        try:
            if record:
                sql_history.append_history(sql, self.reader.path)
                for notice in sql_history.take_notices():  # (the history set aside: said once)
                    self.app.call_from_thread(self.notify, notice, severity="warning", timeout=12)
            with self.reader.reading() as store:
                params = with_run_ids(store, params)
                started = query_clock()
                columns, rows = store.query_user_page(
                    sql, params or None, offset, PAGE_SIZE + 1, interrupt=interrupt
                )
                seconds = query_clock() - started
        except Exception as exc:
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            self.post_message(SqlFailed(request, first_line(exc), str(cause)))
            return
        more = len(rows) > PAGE_SIZE
        page = result_page(columns, rows[:PAGE_SIZE])
        self.post_message(PageRead(request, page, more, seconds))

    @on(PageRead)
    def show_page(self, message: PageRead) -> None:
        """Show the page."""
        if self._pending is None or message.request != self._pending[0]:
            return
        _, offset, _ = self._pending
        self._pending = None
        self.set_busy(False)
        self.page_offset = offset
        self.more = message.more
        if not message.more:  # (the last page: the whole count is known)
            self.total_rows = offset + message.page.data.num_rows
        self._page_status = (offset, message.page.data.num_rows, self.more, message.seconds)
        self.results.show_page(message.page, offset, self.more, message.seconds, self.total_rows)
        self.haf_app.freeze_after_load(self)  # (see the module)
        if self.more and self.total_rows is None and not self._count_started:
            self.start_count()

    # ------------------------------------------------------------ counting

    def start_count(self) -> None:
        """Count the result's rows in the background (a result longer than a page said "at
        least 501 rows" until its last page was read); said once it has run
        :data:`RUNNING_SHOWN_AFTER`, ``ctrl+c`` stops it, another query drops it."""
        assert self.result_sql is not None
        self._counter += 1
        self._count_started = True
        self._count_request = f"sql-count-{self._counter}"
        self.counting = StatementInterrupt()
        self._counting_timer = self.set_timer(RUNNING_SHOWN_AFTER, self.say_counting)
        sql, params = self.result_sql, dict(self.result_params)
        self.count_rows(self._count_request, sql, params, self.counting)

    def say_counting(self) -> None:
        """The count still runs: the status line says so."""
        self._counting_timer = None
        if self.counting is not None and not self.busy:
            self.show_page_status(" · counting … ctrl+c stops")

    def show_page_status(self, tail: str = "") -> None:
        """The status line of the page shown (with the total once counted)."""
        offset, shown, more, seconds = self._page_status
        self.results.show_status(status_text(offset, shown, more, seconds, self.total_rows) + tail)

    def stop_counting(self) -> None:
        """Stop the count of the result's rows, if one runs; its answer is dropped."""
        if self.counting is not None:
            self.counting.interrupt()
        self.counting = None
        self._count_request = None
        if self._counting_timer is not None:
            self._counting_timer.stop()
            self._counting_timer = None

    @work(thread=True, exclusive=True, exit_on_error=False, group="sql-count")
    def count_rows(
        self, request: str, sql: str, params: dict[str, Any], interrupt: StatementInterrupt
    ) -> None:
        """Count the rows of ``sql`` (thread worker: posts a message, touches no widget)."""
        try:
            with self.reader.reading() as store:
                params = with_run_ids(store, params)
                rows = store.count_user_rows(sql, params or None, interrupt=interrupt)
        except Exception:  # (stopped, or failed: the page's "at least" stays)
            rows = None
        self.post_message(RowsCounted(request, rows))

    @on(RowsCounted)
    def show_count(self, message: RowsCounted) -> None:
        """The result's rows, counted: the status line says how many."""
        if message.request != self._count_request:
            return  # (a count of a result since replaced, or stopped)
        said = self._counting_timer is None  # (its timer has fired: "counting …" is shown)
        if self._counting_timer is not None:
            self._counting_timer.stop()
            self._counting_timer = None
        self.counting = None
        if message.rows is not None and self.total_rows is None:
            self.total_rows = message.rows
        elif not said:
            return  # (not counted: the line stays as it is)
        if not self.busy:
            self.show_page_status()

    @on(SqlFailed)
    def show_failure(self, message: SqlFailed) -> None:
        """A failed query or export: the red line, and the line of the SQL it points at (the
        cursor goes there); a failed query leaves no stale result on screen."""
        if self._pending is None or message.request != self._pending[0]:
            if not message.request.startswith("sql-page-"):  # (not a query since replaced)
                self.show_error(message.message)
            return
        sql = self._pending[2]
        self._pending = None
        self.set_busy(False)
        self.result_sql = None
        self.more = False
        position = error_position(sql, message.detail)
        if position is not None and self.editor.text == sql:
            self.editor.cursor_location = (position.row, position.column)
        notes = error_notes(message.detail, keep_quote=position is None)
        self.results.show_failure("\n".join([message.message, *notes]), position)

    # ------------------------------------------------------------ export

    def action_export(self, kind: str) -> None:
        """Ask where to write the whole current result (not just the page), and write it."""
        if self.result_sql is None:
            self.show_error("nothing to export: run a query first (ctrl+r)")
            return
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        default = EXPORT_DIR / f"query-{stamp}.{kind}"
        sql, params = runnable_sql(self.result_sql), dict(self.result_params)

        def write(path: Path, overwrite: bool) -> int:  # (in the dialog's thread worker)
            with self.reader.reading() as store:
                params_given = with_run_ids(store, params) or None
                return store.export_user(sql, params_given, path, kind, overwrite=overwrite)

        def written(done: tuple[Path, int] | None) -> None:
            self.editor.focus()
            if done is not None:
                self.show_error("")
                self.results.show_status(f"wrote {done[1]} rows to {done[0]}")

        self.app.push_screen(ExportScreen(kind, default, Path.cwd(), write), written)
