"""The SQL screen's editor: a TextArea (SQL highlighting when tree-sitter has it) that completes
table and column names before the cursor, and keeps its text under the HAF home between
sessions (written a moment after typing pauses, and when it closes)."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.geometry import Offset
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea

from haf_tui.tui import sql_history
from haf_tui.tui.sql_text import completions, word_before

KEEP_DELAY = 0.5
"""Seconds after the last change before the text is written."""


@dataclass
class CompletionsFound(Message):
    """More than one name fits the word before the cursor: offer them at ``at`` (screen)."""

    names: list[str]
    at: Offset


class SqlEditor(TextArea):
    """The editor; :attr:`names` are what it completes."""

    def __init__(self, *, id: str | None = None) -> None:
        if "sql" in TextArea().available_languages:
            super().__init__(
                language="sql",
                id=id,
                soft_wrap=False,
                tab_behavior="indent",
                show_line_numbers=True,
                theme="monokai",
            )
        else:
            super().__init__(id=id, soft_wrap=False)
        self.names: list[str] = []
        """Table, view and column names of the schema."""
        self._kept = ""
        self._keep_timer: Timer | None = None

    def restore(self) -> str:
        """Load the text of the last session (returned)."""
        self._kept = sql_history.load_buffer()
        self.load_text(self._kept)
        return self._kept

    @on(TextArea.Changed)
    def _changed(self) -> None:
        self._kept = self.text
        if self._keep_timer is None:
            self._keep_timer = self.set_timer(KEEP_DELAY, self.keep)
        else:
            self._keep_timer.reset()

    def keep(self) -> None:
        """Write the text now (the next session starts with it)."""
        if self._keep_timer is not None:
            self._keep_timer.stop()
            self._keep_timer = None
        sql_history.save_buffer(self._kept)

    def on_unmount(self) -> None:
        """A change not yet written (the app closing): write it."""
        if self._keep_timer is not None:
            self.keep()

    def complete(self) -> str:
        """Complete the word before the cursor: in place when one name fits, else post
        :class:`CompletionsFound`; returns what to tell the user ("" when done)."""
        row, column = self.cursor_location
        prefix = word_before(self.document.get_line(row), column)
        found = completions(prefix, self.names)
        if not found:
            return f"no table or column name starts with {prefix!r}" if prefix else ""
        if len(found) == 1:
            self.complete_with(found[0])
        else:
            at = self.cursor_screen_offset
            self.post_message(CompletionsFound(found, Offset(at.x, at.y + 1)))
        return ""

    def complete_with(self, name: str) -> None:
        """Replace the stem before the cursor (after any ``alias.``) with ``name``."""
        row, column = self.cursor_location
        stem = word_before(self.document.get_line(row), column).rsplit(".", 1)[-1]
        self.replace(name, (row, column - len(stem)), (row, column))
        self.focus()
