"""The haf-tui application: screens, key bindings, and the one handler for worker errors."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from haf_tui.tui.data import StoreReader
from haf_tui.tui.messages import WorkFailed
from haf_tui.tui.screens.help import HelpScreen
from haf_tui.tui.screens.home import HomeScreen


class HafApp(App[None]):
    """Browse stored HAF runs, explore explanations, and query them with SQL."""

    TITLE = "haf-tui"
    SUB_TITLE = "Human-Aligned Faithfulness workbench"
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help"),
        Binding("h", "home", "Runs"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, reader: StoreReader):
        super().__init__()
        self.reader = reader

    def on_mount(self) -> None:
        """Start on the runs list."""
        self.push_screen(HomeScreen())

    def action_home(self) -> None:
        """Back to the runs list."""
        while len(self.screen_stack) > 2:
            self.pop_screen()

    def action_help(self) -> None:
        """Keys and what the screens do."""
        self.push_screen(HelpScreen())

    def on_work_failed(self, message: WorkFailed) -> None:
        """The one handler for worker errors (screens forward theirs): a notification."""
        self.notify(message.message, title="error", severity="error", timeout=8)

    def on_unmount(self) -> None:
        """Close the database."""
        self.reader.close()


def create_app(db_path: str | Path | None = None) -> HafApp:
    """The app factory shared by ``haf`` and the tests."""
    return HafApp(StoreReader(db_path))
