"""The SQL editor's completions: a small list under the cursor of the table and column names
that start with the word typed, kept on screen (above the cursor near the bottom, moved left
near the right edge); ``enter`` takes one, ``escape`` or leaving it closes it."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.geometry import Offset, Size
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
        """Show ``names`` under ``at`` (the screen cell below the cursor), kept inside the
        screen, and take the focus."""
        self.clear_options()
        self.add_options(names)
        self.highlighted = 0
        place = popup_place(at, names, self.screen.size)
        self.styles.offset = (place.x, place.y)
        self.add_class("-shown")
        self.focus()

    def on_blur(self) -> None:
        """Leaving the list closes it (it never keeps the keys out of sight)."""
        self.close()

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


POPUP_MIN_WIDTH, POPUP_MAX_WIDTH, POPUP_MAX_HEIGHT = 16, 48, 8
"""The list's size limits (as its CSS), borders included."""


def popup_place(at: Offset, names: list[str], screen: Size) -> Offset:
    """Where the list's top-left goes for the cell ``at`` under the cursor: there when it fits,
    else moved left to end at the screen's right edge, and above the cursor's line when it
    would pass the bottom; never outside the screen."""
    widest = max((len(name) for name in names), default=0) + 4  # borders and padding
    width = min(max(widest, POPUP_MIN_WIDTH), POPUP_MAX_WIDTH)
    height = min(len(names) + 2, POPUP_MAX_HEIGHT)
    x = max(0, min(at.x, screen.width - width))
    y = at.y if at.y + height <= screen.height else at.y - 1 - height
    return Offset(x, max(0, min(y, screen.height - height)))
