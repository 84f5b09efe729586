"""SQL: the named-query library, an editor, paged results and CSV / Parquet export.

Paging wraps the editor's SQL as ``SELECT * FROM (<sql>) LIMIT 501 OFFSET n`` (DuckDB pushes the
limit down; the 501st row only says whether there is a next page). A statement that cannot be
wrapped (``SHOW``-like or several statements) runs as written on its own cursor, skipping
``n`` rows with ``fetchmany``. Every read runs in a thread worker; workers only post messages.

Safety: the SQL runs only through the store's SQL sandbox, as ``haf query``'s does
(``Store.query_user_page``, ``Store.export_user``): reading statements only, in a read-only
transaction on the locked-down database (no other file, no ATTACH of a file, no extensions or
settings). That holds on the app's read-only connection and equally once the app has started a
run and holds the file for writing (a second, read-only connection to the file cannot be opened
in the same process then; see ``store.connection.sandboxed_cursor``). A refused statement is one
line in the error line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Header, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from haf_tui import reports
from haf_tui.reports import NamedQuery, QueryError
from haf_tui.store.connection import runnable_sql
from haf_tui.tui.messages import QueryFinished
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.result_table import ResultTable

PAGE_SIZE = 500
"""Rows shown per page."""
CELL_WIDTH = 60
"""Longer cell text is cut (with "…") in the table; exports keep it whole."""
EXPORT_DIR = Path("exports")

_PARAM = re.compile(r"\$([A-Za-z_]\w*)")
_NOT_CODE = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.DOTALL)


def cell_text(value: Any) -> str:
    """A result cell as the table shows it (NULL "—", floats to 3 decimals, long text cut)."""
    text = reports.format_value(value)
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


def sql_params(sql: str) -> list[str]:
    """The ``$name`` parameters the SQL uses (outside comments and string literals), in order."""
    seen: dict[str, None] = {}
    for name in _PARAM.findall(_NOT_CODE.sub(" ", sql)):
        seen.setdefault(name)
    return list(seen)


def status_text(offset: int, shown: int, more: bool) -> str:
    """``rows 1–500 of more`` / ``rows 1–37`` / ``no rows``."""
    if shown == 0:
        return "no rows" if offset == 0 else f"no rows after row {offset}"
    return f"rows {offset + 1}–{offset + shown}" + (" of more" if more else "")


@dataclass
class SqlFailed(Message):
    """A query or an export of the SQL screen failed (shown in its error line)."""

    request: str
    message: str


@dataclass
class LibraryLoaded(Message):
    """The named queries were read."""

    queries: dict[str, NamedQuery]


@dataclass
class ExportFinished(Message):
    """An export was written."""

    request: str
    path: Path


class SqlScreen(HafScreen[None]):
    """Named queries on the left, the editor and paged results on the right."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # noqa: RUF012 - Screen's type
    DEFAULT_CSS = """
    SqlScreen #sql-main { height: 1fr; }
    SqlScreen #sql-library { width: 32; height: 1fr; border-right: vkey $primary-background; }
    SqlScreen.-narrow #sql-library { width: 22; }
    SqlScreen.-wide #sql-library { width: 44; }
    SqlScreen #sql-library.-hidden { display: none; }
    SqlScreen #library { height: 1fr; border: none; }
    SqlScreen #sql-work { width: 1fr; height: 1fr; }
    SqlScreen #sql-editor { height: 35%; min-height: 6; }
    SqlScreen #sql-results { height: 1fr; min-height: 4; }
    SqlScreen #sql-error { color: $error; padding: 0 1; }
    SqlScreen #sql-error.-empty { display: none; }
    SqlScreen #sql-status { padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run_query", "Run", priority=True),
        Binding("f5", "run_query", "Run", show=False, priority=True),
        Binding("ctrl+n", "next_page", "Next page", priority=True),
        Binding("ctrl+b", "previous_page", "Prev page", priority=True),
        Binding("ctrl+e", "export('csv')", "CSV", priority=True),
        Binding("ctrl+t,ctrl+shift+e", "export('parquet')", "Parquet", priority=True),
        Binding("ctrl+l", "toggle_library", "Library", priority=True),
        Binding("escape", "back", "Back", priority=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.library: dict[str, NamedQuery] = {}
        self.selected: NamedQuery | None = None
        self.result_sql: str | None = None
        self.result_params: dict[str, Any] = {}
        self.page_offset = 0
        self.more = False
        self.busy = False
        self._pending: tuple[str, int] | None = None
        self._counter = 0

    def compose(self) -> ComposeResult:
        """Header, the library, the editor, hint / error / status lines, results, footer."""
        yield Header()
        with Horizontal(id="sql-main"):
            with Vertical(id="sql-library"):
                yield Static("Queries", classes="title")
                yield OptionList(id="library")
            with Vertical(id="sql-work"):
                yield self._editor()
                yield Static(
                    "pick a query on the left or write SQL; ctrl+r runs it",
                    id="sql-hint",
                    classes="hint",
                )
                yield Static("", id="sql-error", classes="-empty")
                yield Static("", id="sql-status")
                yield ResultTable(id="sql-results", zebra_stripes=True)
        yield KeyFooter()

    @staticmethod
    def _editor() -> TextArea:
        if "sql" in TextArea().available_languages:
            return TextArea.code_editor(language="sql", id="sql-editor", soft_wrap=False)
        return TextArea(id="sql-editor", soft_wrap=False)

    def on_mount(self) -> None:
        """Read the library (in a worker) and focus the editor."""
        self.load_library()
        self.query_one("#sql-editor", TextArea).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="sql-library")
    def load_library(self) -> None:
        """Read the named queries (thread worker: posts a message, touches no widget)."""
        try:
            self.post_message(LibraryLoaded(reports.load_queries()))
        except QueryError as exc:
            self.post_message(SqlFailed("library", str(exc)))

    @on(LibraryLoaded)
    def fill_library(self, message: LibraryLoaded) -> None:
        """List the named queries."""
        self.library = message.queries
        options = self.query_one("#library", OptionList)
        options.add_options(Option(Text(name, style="bold"), id=name) for name in self.library)

    # ------------------------------------------------------------ lines

    @property
    def editor(self) -> TextArea:
        """The SQL editor."""
        return self.query_one("#sql-editor", TextArea)

    def show_error(self, message: str) -> None:
        """The red error line (empty hides it)."""
        line = self.query_one("#sql-error", Static)
        line.update(Text(message))
        line.set_class(not message, "-empty")

    def show_status(self, message: str) -> None:
        """The status line."""
        self.query_one("#sql-status", Static).update(Text(message))

    # ------------------------------------------------------------ library

    @on(OptionList.OptionHighlighted, "#library")
    def describe_query(self, event: OptionList.OptionHighlighted) -> None:
        """The highlighted query's title in the hint line (enter puts it in the editor)."""
        query = self.library.get(event.option.id or "")
        if query is not None:
            hint = f"{query.name}: {query.title} · enter puts it in the editor"
            self.query_one("#sql-hint", Static).update(Text(hint))

    @on(OptionList.OptionSelected, "#library")
    def pick_query(self, event: OptionList.OptionSelected) -> None:
        """Put a named query's SQL in the editor and say what its parameters are."""
        query = self.library.get(event.option.id or "")
        if query is None:
            return
        self.selected = query
        self.editor.load_text(query.sql)
        self.editor.focus()
        required = [p.name for p in query.param_specs if p.required]
        defaults = [f"{p.name}={p.default!r}" for p in query.param_specs if not p.required]
        parts = [f"{query.name}: {query.title}"]
        if required:
            parts.append("needs " + ", ".join(f"${n}" for n in required) + ": replace in the SQL")
        if defaults:
            parts.append("defaults " + ", ".join(defaults))
        parts.append("ctrl+r runs it")
        self.query_one("#sql-hint", Static).update(Text(" · ".join(parts)))
        self.show_error("")

    def parameters(self, sql: str) -> dict[str, Any]:
        """Values for the ``$name``s in ``sql``: defaults of the picked named query.

        QueryError (one line) for a parameter without a default.
        """
        values: dict[str, Any] = {}
        missing: list[str] = []
        for name in sql_params(sql):
            spec = None
            if self.selected is not None and name in self.selected.params:
                spec = self.selected.param(name)
            if spec is None or spec.required:
                missing.append(name)
                continue
            values[name] = reports.coerce_param(spec, spec.default, name)
        if missing:
            names = ", ".join(f"${n}" for n in missing)
            raise QueryError(f"parameter {names} has no value: replace it in the SQL")
        return values

    # ------------------------------------------------------------ running

    def action_run_query(self) -> None:
        """Run the editor's SQL from its first row."""
        sql = self.editor.text
        if not runnable_sql(sql):
            self.show_error("nothing to run: write a query first")
            return
        try:
            params = self.parameters(sql)
        except QueryError as exc:
            self.show_error(str(exc))
            return
        self.result_sql, self.result_params = sql, params
        self.load_page(0)

    def action_next_page(self) -> None:
        """The next page of the current result."""
        if self.result_sql is not None and self.more and not self.busy:
            self.load_page(self.page_offset + PAGE_SIZE)

    def action_previous_page(self) -> None:
        """The previous page of the current result."""
        if self.result_sql is not None and self.page_offset > 0 and not self.busy:
            self.load_page(max(self.page_offset - PAGE_SIZE, 0))

    def load_page(self, offset: int) -> None:
        """Fetch one page in a worker."""
        assert self.result_sql is not None
        self._counter += 1
        request = f"sql-page-{self._counter}"
        self._pending = (request, offset)
        self.busy = True
        self.show_status("running …")
        self.fetch_page(request, self.result_sql, dict(self.result_params), offset)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sql")
    def fetch_page(self, request: str, sql: str, params: dict[str, Any], offset: int) -> None:
        """Read one page (thread worker: posts a message, touches no widget)."""
        try:
            columns, rows = self._read_page(sql, params or None, offset)
        except Exception as exc:
            self.post_message(SqlFailed(request, _one_line(exc)))
            return
        more = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        total = None if more else offset + len(rows)
        self.post_message(QueryFinished(request, columns, rows, total))

    def _read_page(
        self, sql: str, params: dict[str, Any] | None, offset: int
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """One page of the user's SQL (and one row more, that says whether there is more)."""
        return self.reader.store().query_user_page(sql, params, offset, PAGE_SIZE + 1)

    @on(QueryFinished)
    def show_page(self, message: QueryFinished) -> None:
        """Fill the table with the page."""
        if self._pending is None or message.request != self._pending[0]:
            return
        _, offset = self._pending
        self._pending = None
        self.busy = False
        self.page_offset = offset
        self.more = message.total is None
        table = self.query_one("#sql-results", ResultTable)
        table.show(message.columns, [[cell_text(v) for v in row] for row in message.rows])
        self.show_error("")
        status = status_text(offset, len(message.rows), self.more)
        if self.more or offset:
            status += " · ctrl+n / ctrl+b pages"
        self.show_status(status)

    @on(SqlFailed)
    def show_failure(self, message: SqlFailed) -> None:
        """A failed query or export: the red line; the previous result stays."""
        if self._pending is not None and message.request == self._pending[0]:
            self._pending = None
            self.busy = False
            self.show_status("")
        self.show_error(message.message)

    # ------------------------------------------------------------ export

    def action_export(self, kind: str) -> None:
        """Write the whole current result (not just the page) to ``exports/``."""
        if self.result_sql is None:
            self.show_error("nothing to export: run a query first (ctrl+r)")
            return
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        path = EXPORT_DIR / f"query-{stamp}.{kind}"
        self._counter += 1
        self.show_status(f"exporting to {path} …")
        self.export_result(f"sql-export-{self._counter}", self.result_sql, self.result_params, path)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sql-export")
    def export_result(self, request: str, sql: str, params: dict[str, Any], path: Path) -> None:
        """The whole result of ``sql``, written by the tool to ``path`` (thread worker)."""
        fmt = "parquet" if path.suffix == ".parquet" else "csv"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.reader.store().export_user(runnable_sql(sql), params, path.resolve(), fmt)
        except Exception as exc:
            self.post_message(SqlFailed(request, "export failed: " + _one_line(exc)))
            return
        self.post_message(ExportFinished(request, path))

    @on(ExportFinished)
    def show_export(self, message: ExportFinished) -> None:
        """Say where the export went."""
        self.show_error("")
        self.show_status(f"wrote {message.path}")

    # ------------------------------------------------------------ layout

    def action_toggle_library(self) -> None:
        """Show or hide the query library."""
        self.query_one("#sql-library").toggle_class("-hidden")

    def action_back(self) -> None:
        """Back to the previous screen."""
        self.app.pop_screen()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
