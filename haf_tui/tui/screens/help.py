"""``?``: the keys of every screen."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP_TEXT = """\
# haf-tui keys

| key | where | what |
|---|---|---|
| `?` | everywhere | this help |
| `h` | everywhere | back to the runs list |
| `q` | everywhere | quit |
| `ctrl+p` | everywhere | command palette |
| `enter` | runs list | explore the selected run |
| `s` | runs list | SQL on the stored runs |
| `r` | runs list | refresh (re-reads the database) |
| `escape` | any screen | back |

Runs come from the DuckDB file (`--db`, `$HAF_DB` or `$HAF_HOME/haf.duckdb`). While another
process writes to it, the app reads a snapshot: press `r` to see newer rows.
"""


class HelpScreen(ModalScreen[None]):
    """Keys and what each screen does."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80%; max-width: 100; height: 80%;
        border: round $accent; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        """The help text in a scrollable box."""
        with VerticalScroll():
            yield Markdown(HELP_TEXT)
