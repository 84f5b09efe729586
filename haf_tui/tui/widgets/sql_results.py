"""The SQL screen's lower half: the error line (and the SQL line it points at), the status
line and the result table."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from haf_tui.tui.sql_text import ErrorPosition
from haf_tui.tui.widgets.result_table import ResultPage, ResultTable


def status_text(
    offset: int, shown: int, more: bool, seconds: float, total: int | None = None
) -> str:
    """How many rows the query gave and how long it took, and the rows shown when paged:
    ``37 rows in 0.04 s``; ``at least 501 rows in 0.12 s · rows 1–500`` while the last page
    is unread (a page reads one row more than it shows); ``1234 rows in …`` once it was read
    (``total``)."""
    if total is not None:
        count = f"{total} row{'' if total == 1 else 's'}"
    elif more:
        count = f"at least {offset + shown + 1} rows"
    else:
        count = f"{offset + shown} row{'' if offset + shown == 1 else 's'}"
    text = f"{count} in {seconds:.2f} s"
    if shown == 0 and offset:
        return f"{text} · none after row {offset}"
    if more or offset:
        text += f" · rows {offset + 1}–{offset + shown}"
    return text


def pointer_text(position: ErrorPosition) -> str:
    """The SQL line an error points at, and a caret under the place."""
    head = f"line {position.row + 1}: "
    return f"{head}{position.line}\n{' ' * (len(head) + position.column)}^"


class SqlResults(Vertical):
    """Error, pointer, status, and the current page of the result."""

    DEFAULT_CSS = """
    SqlResults { height: 1fr; }
    SqlResults #sql-error, SqlResults #sql-where { color: $error; padding: 0 1; }
    SqlResults #sql-error.-empty, SqlResults #sql-where.-empty { display: none; }
    SqlResults #sql-status { padding: 0 1; }
    SqlResults #sql-results { height: 1fr; min-height: 4; }
    """

    def compose(self) -> ComposeResult:
        """The lines, then the table."""
        yield Static("", id="sql-error", classes="-empty")
        yield Static("", id="sql-where", classes="-empty")
        yield Static("", id="sql-status")
        yield ResultTable(id="sql-results")

    def show_error(self, message: str, where: str = "") -> None:
        """The red error line, and the pointer under it (empty hides them)."""
        for widget_id, text in (("#sql-error", message), ("#sql-where", where)):
            line = self.query_one(widget_id, Static)
            line.update(Text(text, no_wrap=widget_id == "#sql-where", overflow="crop"))
            line.set_class(not text, "-empty")

    def show_status(self, message: str) -> None:
        """The status line."""
        self.query_one("#sql-status", Static).update(Text(message))

    def show_page(
        self, page: ResultPage, offset: int, more: bool, seconds: float, total: int | None
    ) -> None:
        """A page of the result from row ``offset``, read in ``seconds``; no error."""
        self.query_one("#sql-results", ResultTable).show(page)
        self.show_error("")
        # (one line at 80 columns: the footer shows ctrl+n / ctrl+b while there are pages)
        self.show_status(status_text(offset, page.data.num_rows, more, seconds, total))

    def show_failure(self, message: str, position: ErrorPosition | None) -> None:
        """A failed query: no stale result, the error and where it points."""
        self.query_one("#sql-results", ResultTable).clear_result()
        self.show_status("")
        self.show_error(message, pointer_text(position) if position else "")
