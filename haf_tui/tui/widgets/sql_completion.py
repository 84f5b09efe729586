"""The SQL editor's completions: a small list under the cursor of the table and column names
that start with the word typed; ``enter`` takes one, ``escape`` closes it."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.geometry import Offset
from textual.message import Message
from textual.widgets import OptionList


@dataclass
class CompletionChosen(Message):
    """A completion was taken (replaces the word before the editor's cursor)."""

    name: str


class CompletionList(OptionList):
    """Names offered for the word before the cursor, shown over the screen under it."""

    DEFAULT_CSS = """
    CompletionList { overlay: screen; position: absolute; display: none; width: auto;
        min-width: 16; max-width: 48; height: auto; max-height: 8;
        border: round $primary; background: $surface; padding: 0; }
    CompletionList.-shown { display: block; }
    """

    def offer(self, names: list[str], at: Offset) -> None:
        """Show ``names`` with their top-left at ``at`` (screen cells) and take the focus."""
        self.clear_options()
        self.add_options(names)
        self.highlighted = 0
        self.styles.offset = (at.x, at.y)
        self.add_class("-shown")
        self.focus()

    @property
    def shown(self) -> bool:
        """Whether the list is open."""
        return self.has_class("-shown")

    def close(self) -> None:
        """Hide the list."""
        self.remove_class("-shown")

    @on(OptionList.OptionSelected)
    def take(self, event: OptionList.OptionSelected) -> None:
        """Ask for the chosen name to be inserted, and close."""
        event.stop()
        self.close()
        self.post_message(CompletionChosen(str(event.option.prompt)))
