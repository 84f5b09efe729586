"""SQL: the named-query library, a schema browser, an editor with completion, history and
parameter forms, paged results and CSV / Parquet export.

Paging wraps the SQL as ``SELECT * FROM (<sql>) LIMIT 501 OFFSET n`` (the 501st row says whether
there is more); SQL that cannot be wrapped (``SHOW``, several statements) runs as written,
skipping ``n`` rows. Reads run in thread workers that only post messages; there a page becomes
Arrow text, which textual-fastdatatable shows rendering only the rows on screen. While a query
runs the screen stays usable and ``ctrl+c`` stops it (DuckDB's ``interrupt()``); once it has
run 0.15 s it is said to run, and ``ctrl+c`` is shown. A result longer than a page is counted in
the background once its first page is shown (``Store.count_user_rows``: one SELECT only; a
count said after 0.15 s, stopped by ``ctrl+c``, dropped when another query starts).

Safety: the SQL runs only through the store's sandbox, as ``haf query``'s does
(``Store.query_user_page``, ``Store.count_user_rows``, ``Store.export_user``): reading
statements only, in a read-only transaction on the locked-down database, whatever connection
the app holds (see ``store.connection.sandboxed_cursor``). A refused statement is one line in
the error line.

The editor's buffers and the queries run are kept under the HAF home (``tui/sql_history.py``);
buffers, ``.sql`` files and formatting are ``screens/sql_files.py``'s verbs.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Static

from haf_tui import reports
from haf_tui.reports import NamedQuery
from haf_tui.store import StoreError
from haf_tui.store.readers import SchemaColumn, schema_columns
from haf_tui.tui.screens.sql_dialogs import HistoryScreen
from haf_tui.tui.screens.sql_files import SqlFileActions
from haf_tui.tui.screens.sql_own_text import OwnSqlHint
from haf_tui.tui.screens.sql_query import PAGE_SIZE, SqlQueryScreen
from haf_tui.tui.sql_messages import CatalogLoaded, SqlFailed
from haf_tui.tui.sql_text import sql_params
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.result_table import CELL_WIDTH, cell_text
from haf_tui.tui.widgets.sql_completion import CompletionChosen, CompletionList
from haf_tui.tui.widgets.sql_editor import CompletionsFound, SqlEditor
from haf_tui.tui.widgets.sql_params import ParamsForm
from haf_tui.tui.widgets.sql_results import SqlResults, status_text
from haf_tui.tui.widgets.sql_schema import NameChosen, QueryPicked, SqlSide, schema_names

__all__ = ["CELL_WIDTH", "PAGE_SIZE", "SqlScreen", "cell_text", "sql_params", "status_text"]


class SqlScreen(OwnSqlHint, SqlFileActions, SqlQueryScreen):
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
        Binding("ctrl+c", "cancel_query('unsaid')", show=False, priority=True),  # (before)
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
        self.opened_text = ""

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
        """Focus the editor; as the screen is shown (see ``when_shown``), bring back the last
        session's text and read the catalog (in a worker)."""
        self.editor.focus()
        self.when_shown(self._restore_and_read)

    def _restore_and_read(self) -> None:
        self.opened_text = self.editor.restore()
        self.load_catalog()

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
        self.haf_app.freeze_after_load(self)  # (see sql_query)

    # ------------------------------------------------------------ library and schema

    @on(QueryPicked)
    async def library_pick(self, message: QueryPicked) -> None:
        """A highlighted query's title in the hint line; a chosen one opened (the focus stays
        in the library when it was clicked there)."""
        query = self.library.get(message.name)
        if message.chosen:
            await self.pick_query(message.name, stay=message.clicked)
        elif query is not None:
            self.show_hint(f"{query.name}: {query.title} · enter opens it")

    async def pick_query(self, name: str, *, stay: bool = False) -> None:
        """Open a named query's SQL, in a new buffer when the one shown holds the user's own
        text (never over it), and the form for its parameters; the focus goes to the form or
        the editor, or stays in the library (``stay``: it was clicked there)."""
        query = self.library.get(name)
        if query is None:
            return
        self.selected = query
        self.query_one(ParamsForm).close()
        editor = self.editor
        before = editor.buffers.current
        opened = editor.open_text(query.sql, {q.sql for q in self.library.values()})
        run = (
            "enter / ctrl+r runs it with the parameters below" if query.params else "ctrl+r runs it"
        )
        kept = f"your SQL is in buffer {before + 1} (f3) · " if opened else ""  # (first: whole)
        self.show_hint(f"{kept}{query.name}: {query.title} · {run}")
        self.show_error("")
        if query.params:
            await self.ask_params(query.sql)
        if stay:
            self.query_one("#library").focus()
        elif not query.params:
            editor.focus()

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
            if sql is None:  # cancelled: the focus stays where it was (moving it re-laid the
                return  # footer's keys and the screen, ~50 ms of esc at paper scale)
            self.selected = None
            before = self.editor.buffers.current
            if self.editor.open_text(sql, {q.sql for q in self.library.values()}):
                self.show_hint(f"from the history · your SQL is in buffer {before + 1} (f3)")
            self.editor.focus()

        self.app.push_screen(HistoryScreen(), take)

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
