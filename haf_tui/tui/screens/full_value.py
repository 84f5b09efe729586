"""A value shown in full: a tree row, a panel's table cells, anything a screen shows cut with
"…" (harlequin: truncated in place, the whole value on demand)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class FullValueScreen(ModalScreen[None]):
    """One value in full, wrapped and scrollable; `escape` or `enter` closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "close", "Close"),
    ]
    DEFAULT_CSS = """
    FullValueScreen { align: center middle; }
    FullValueScreen > Vertical { width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1; }
    FullValueScreen #fv-title { text-style: bold; }
    FullValueScreen #fv-scroll { height: auto; max-height: 1fr; }
    FullValueScreen #fv-keys { color: $text-muted; }
    """

    def __init__(self, title: str, value: str) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        """The whole value (what a copy key copies)."""

    def compose(self) -> ComposeResult:
        """The title, the value and the keys."""
        with Vertical():
            yield Static(Text(self.title_text), id="fv-title")
            with VerticalScroll(id="fv-scroll"):
                yield Static(Text(self.value), id="fv-value")
            yield Static("esc / enter close", id="fv-keys")

    def action_close(self) -> None:
        """Back to the screen underneath."""
        self.dismiss(None)
