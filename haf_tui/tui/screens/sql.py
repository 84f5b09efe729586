"""SQL: the named-query library, a schema browser, an editor with completion, history and
parameter forms, paged results and CSV / Parquet export.

Paging wraps the SQL as ``SELECT * FROM (<sql>) LIMIT 501 OFFSET n`` (the 501st row says whether
there is more); SQL that cannot be wrapped (``SHOW``, several statements) runs as written,
skipping ``n`` rows. Reads run in thread workers that only post messages; there a page becomes
Arrow text, which textual-fastdatatable shows rendering only the rows on screen. While a query
runs the screen stays usable and ``ctrl+c`` (shown then) stops it (DuckDB's ``interrupt()``).

Safety: the SQL runs only through the store's sandbox, as ``haf query``'s does
(``Store.query_user_page``, ``Store.export_user``): reading statements only, in a read-only
transaction on the locked-down database, whatever connection the app holds (see
``store.connection.sandboxed_cursor``). A refused statement is one line in the error line.

The editor's buffers and the queries run are kept under the HAF home (``tui/sql_history.py``);
buffers, ``.sql`` files and formatting are ``screens/sql_files.py``'s verbs.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Static

from haf_tui import reports
from haf_tui.reports import NamedQuery, QueryError, QueryParam
from haf_tui.store import StatementInterrupt, StoreError
from haf_tui.store.connection import runnable_sql
from haf_tui.store.readers import SchemaColumn, schema_columns
from haf_tui.tui import sql_history
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.sql_dialogs import (
    ExportScreen,
    HistoryScreen,
    param_fields,
    typed_params,
    with_run_ids,
)
from haf_tui.tui.screens.sql_files import SqlFileActions
from haf_tui.tui.screens.sql_own_text import OwnSqlHint
from haf_tui.tui.sql_messages import CatalogLoaded, PageRead, SqlFailed
from haf_tui.tui.sql_text import error_notes, error_position, sql_params
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.result_table import CELL_WIDTH, cell_text, result_page
from haf_tui.tui.widgets.sql_completion import CompletionChosen, CompletionList
from haf_tui.tui.widgets.sql_editor import CompletionsFound, SqlEditor
from haf_tui.tui.widgets.sql_params import ParamsForm, ParamsGiven
from haf_tui.tui.widgets.sql_results import SqlResults, status_text
from haf_tui.tui.widgets.sql_schema import NameChosen, QueryPicked, SqlSide, schema_names
from haf_tui.vocabulary import first_line

__all__ = ["CELL_WIDTH", "PAGE_SIZE", "SqlScreen", "cell_text", "sql_params", "status_text"]

PAGE_SIZE = 500
"""Rows shown per page."""
EXPORT_DIR = Path("exports")


class SqlScreen(OwnSqlHint, SqlFileActions, HafScreen[None]):
    """Named queries and the schema on the left, the editor and paged results on the right."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # noqa: RUF012 - Screen's type
    DEFAULT_CSS = """
    SqlScreen #sql-main { height: 1fr; }
    SqlScreen.-narrow .sql-side { width: 22; }
    SqlScreen.-wide .sql-side { width: 44; }
    SqlScreen #sql-work { width: 1fr; height: 1fr; }
    SqlScreen #sql-editor { height: 35%; min-height: 11; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run_query", "Run", priority=True),
        Binding("ctrl+c", "cancel_query", "Cancel query", priority=True),  # (while one runs)
        Binding("f5", "run_query", "Run", show=False, priority=True),
        Binding("ctrl+n", "next_page", "Next page", priority=True),
        Binding("ctrl+b", "previous_page", "Prev page", priority=True),
        Binding("ctrl+e", "export('csv')", "CSV", priority=True),
        Binding("ctrl+t,ctrl+shift+e", "export('parquet')", "Parquet", priority=True),
        Binding("ctrl+l", "toggle_library", "Library", priority=True),
        Binding("ctrl+o", "toggle_schema", "Schema", priority=True),
        Binding("ctrl+f", "history", "History", priority=True),
        Binding("ctrl+space,ctrl+@", "complete", "Complete", show=False, priority=True),
        Binding("ctrl+s", "save", "Save", show=False, priority=True),
        Binding("f2", "open_file", "Open", show=False, priority=True),
        Binding("f3", "next_buffer", "Next buffer", show=False, priority=True),
        Binding("f8", "new_buffer", "New buffer", show=False, priority=True),
        Binding("f4", "format_sql", "Format", show=False, priority=True),
        Binding("escape", "back", "Back", priority=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.library: dict[str, NamedQuery] = {}
        self.selected: NamedQuery | None = None
        self.result_sql: str | None = None
        self.result_params: dict[str, Any] = {}
        self.param_values: dict[str, str] = {}
        """The text last given for each parameter (the form starts with it)."""
        self.page_offset = 0
        self.more = False
        self.busy = False
        self.running: StatementInterrupt | None = None
        """Stops the query being read (None when none runs)."""
        self.opened_text = ""
        self._pending: tuple[str, int, str] | None = None
        self._asked: tuple[str, dict[str, QueryParam]] | None = None
        self._counter = 0

    def compose(self) -> ComposeResult:
        """Header, the library and schema, the editor, hint / error / status lines, results."""
        yield Header()
        with Horizontal(id="sql-main"):
            yield SqlSide(id="sql-side")
            with Vertical(id="sql-work"):
                yield SqlEditor(id="sql-editor")
                yield Static(
                    "pick a query on the left or write SQL; ctrl+r runs it",
                    id="sql-hint",
                    classes="hint",
                )
                yield ParamsForm(id="sql-params")
                yield SqlResults(id="sql-lower")
        yield CompletionList(id="sql-completion")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Bring back the last session's text, read the catalog (in a worker), focus."""
        self.opened_text = self.editor.restore()
        self.load_catalog()
        self.editor.focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="sql-library")
    def load_catalog(self) -> None:
        """Read the named queries and the schema (thread worker: posts a message)."""
        queries: dict[str, NamedQuery] = {}
        columns: list[SchemaColumn] = []
        try:
            queries = reports.load_queries()
            with self.reader.reading_if_exists() as store:
                columns = schema_columns(store) if store is not None else []
        except StoreError as exc:  # (QueryError is one)
            self.post_message(SqlFailed("catalog", str(exc)))
        self.post_message(CatalogLoaded(queries, columns))

    @on(CatalogLoaded)
    def fill_catalog(self, message: CatalogLoaded) -> None:
        """List the named queries; fill the schema browser."""
        self.library = message.queries
        self.query_one(SqlSide).fill(list(self.library), message.columns)
        self.editor.names = schema_names(message.columns)

    # ------------------------------------------------------------ lines

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

    # ------------------------------------------------------------ library and schema

    @on(QueryPicked)
    async def library_pick(self, message: QueryPicked) -> None:
        """A highlighted query's title in the hint line; a chosen one into the editor."""
        query = self.library.get(message.name)
        if message.chosen:
            await self.pick_query(message.name)
        elif query is not None:
            self.show_hint(f"{query.name}: {query.title} · enter puts it in the editor")

    async def pick_query(self, name: str) -> None:
        """Put a named query's SQL in the editor, and open the form for its parameters."""
        query = self.library.get(name)
        if query is None:
            return
        self.selected = query
        self.query_one(ParamsForm).close()
        self.editor.load_text(query.sql)
        self.editor.focus()
        run = (
            "enter / ctrl+r runs it with the parameters below" if query.params else "ctrl+r runs it"
        )
        self.show_hint(f"{query.name}: {query.title} · {run}")
        self.show_error("")
        if query.params:
            await self.ask_params(query.sql)

    @on(NameChosen)
    async def insert_name(self, message: NameChosen) -> None:
        """A schema name goes into the editor at the cursor; a named query is opened."""
        if message.query:
            await self.pick_query(message.name)
            return
        self.editor.insert(message.name)
        self.editor.focus()

    def action_toggle_library(self) -> None:
        """Show (and focus) the query library in the side panel, or hide it."""
        if not self.query_one(SqlSide).toggle("sql-library"):
            self.editor.focus()

    def action_toggle_schema(self) -> None:
        """Show (and focus) the schema browser in the side panel, or hide it."""
        if not self.query_one(SqlSide).toggle("sql-schema"):
            self.editor.focus()

    # ------------------------------------------------------------ completion

    def action_complete(self) -> None:
        """Complete the table or column name before the cursor (a list when several fit)."""
        self.show_hint(self.editor.complete())

    @on(CompletionsFound)
    def offer_completions(self, message: CompletionsFound) -> None:
        """Open the list of names under the cursor."""
        self.query_one("#sql-completion", CompletionList).offer(message.names, message.at)

    @on(CompletionChosen)
    def take_completion(self, message: CompletionChosen) -> None:
        """Put the chosen name in place of the word before the cursor."""
        self.editor.complete_with(message.name)

    # ------------------------------------------------------------ history

    def action_history(self) -> None:
        """Search the queries run before; the one taken goes into the editor."""

        def take(sql: str | None) -> None:
            if sql is not None:
                self.selected = None
                self.editor.load_text(sql)
            self.editor.focus()

        self.app.push_screen(HistoryScreen(), take)

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
        self.result_sql, self.result_params = sql, params
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
        self.results.show_status("running … ctrl+c cancels")
        sql, params = self.result_sql, dict(self.result_params)
        self.fetch_page(request, sql, params, offset, record, self.running)

    def set_busy(self, busy: bool) -> None:
        """Whether a query runs (the footer shows ctrl+c while it does)."""
        self.busy = busy
        if not busy:
            self.running = None
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``ctrl+c`` cancels only while a query runs (else it is the editor's copy)."""
        return self.busy if action == "cancel_query" else True

    def stop_running(self) -> None:
        """Stop the query being read, if one is."""
        if self.running is not None:
            self.running.interrupt()

    def on_unmount(self) -> None:
        """A query still running stops with the screen (leaving it, quitting the app)."""
        self.stop_running()

    def action_cancel_query(self) -> None:
        """Stop the running query; the screen says so when it has stopped."""
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
                columns, rows = store.query_user_page(
                    sql, params or None, offset, PAGE_SIZE + 1, interrupt=interrupt
                )
        except Exception as exc:
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            self.post_message(SqlFailed(request, first_line(exc), str(cause)))
            return
        more = len(rows) > PAGE_SIZE
        self.post_message(PageRead(request, result_page(columns, rows[:PAGE_SIZE]), more))

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
        self.results.show_page(message.page, offset, self.more)

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

    # ------------------------------------------------------------ leaving

    def action_back(self) -> None:
        """Close the completions or the parameter form if open; else back, keeping the
        editor's text (said when it was edited)."""
        completion = self.query_one("#sql-completion", CompletionList)
        form = self.query_one(ParamsForm)
        if completion.shown or form.shown:
            completion.close()
            form.close()
            self._asked = None
            self.editor.focus()
            return
        self.stop_running()
        text = self.editor.text
        self.editor.keep()
        if text.strip() and text != self.opened_text:
            self.notify("the SQL is kept: it is in the editor when you come back", timeout=4)
        self.app.pop_screen()
