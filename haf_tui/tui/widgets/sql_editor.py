"""The SQL screen's editor: a TextArea (SQL highlighting when tree-sitter has it) that completes
table and column names before the cursor, selects all on ``ctrl+a`` (as DBeaver and harlequin
do), gives the SQL to run (the selection, else the statement under the cursor), and keeps its
text under the HAF home between sessions (written a moment after typing pauses, and when it
closes). The buffers are written in a thread worker, newest last: each write flushes two files
to disk, which took tens of milliseconds of a key (a library query opened) on the UI thread;
what is still unwritten when the editor closes is written there and then."""

from __future__ import annotations

import threading
from collections.abc import Collection
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.geometry import Offset
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea

from haf_tui.tui import sql_history
from haf_tui.tui.sql_text import completions, statement_at, word_before

KEEP_DELAY = 0.5
"""Seconds after the last change before the text is written."""


class BuffersKept(Message):
    """A thread worker wrote the buffers (its notices, if any, are to be said)."""


@dataclass
class CompletionsFound(Message):
    """More than one name fits the word before the cursor: offer them at ``at`` (screen)."""

    names: list[str]
    at: Offset


class SqlEditor(TextArea):
    """The editor; :attr:`names` are what it completes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+a", "select_all", "Select all", show=False),
    ]

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
        self.buffers = sql_history.SqlBuffers(buffers=[sql_history.SqlBuffer()])
        """Every buffer; the one shown is ``buffers.current``."""
        self._keeps = 0
        """How many times the buffers were handed to be written (a number for each)."""
        self._written = 0
        """The number of the newest buffers written (an older write coming later is skipped)."""
        self._write_lock = threading.Lock()
        self._kept = ""
        self._keep_timer: Timer | None = None

    def restore(self) -> str:
        """Load the buffers of the last session; returns the text of the one shown."""
        self.buffers = sql_history.load_buffers()
        self.say_notices()
        self._show(self.buffers.current)
        return self._kept

    @property
    def buffer(self) -> sql_history.SqlBuffer:
        """The buffer shown."""
        return self.buffers.buffers[self.buffers.current]

    def _show(self, index: int) -> None:
        self.buffers.current = index
        self._kept = self.buffer.text
        self.load_text(self._kept)
        self._title()

    def _title(self) -> None:
        count = len(self.buffers.buffers)
        name = Path(self.buffer.path).name if self.buffer.path else "not saved"
        self.border_title = f"buffer {self.buffers.current + 1}/{count} · {name}"

    def new_buffer(self, text: str = "", path: str | None = None) -> None:
        """Open a new buffer (with ``text`` from ``path``), after the others."""
        self.buffer.text = self.text
        self.buffers.buffers.append(sql_history.SqlBuffer(text=text, path=path))
        self._show(len(self.buffers.buffers) - 1)
        self.keep()

    def open_text(self, text: str, disposable: Collection[str] = ()) -> bool:
        """Show ``text`` without losing the user's: in the buffer shown when that holds nothing
        of theirs (empty, or one of ``disposable`` unchanged, and no ``.sql`` file of its own),
        else in a new buffer after the others. Returns whether a new buffer was opened."""
        shown = self.text
        if self.buffer.path is None and (not shown.strip() or shown in disposable):
            self.load_text(text)
            return False
        self.new_buffer(text)
        return True

    def next_buffer(self) -> None:
        """Show the next buffer (after the last: the first); an empty buffer left is closed."""
        buffers = self.buffers.buffers
        if len(buffers) < 2:
            return
        index = self.buffers.current
        if not self.text.strip() and self.buffer.path is None:
            del buffers[index]
            index -= 1
        else:
            self.buffer.text = self.text
        self._show((index + 1) % len(buffers))
        self.keep()

    def saved_as(self, path: Path) -> None:
        """The buffer now belongs to ``path``."""
        self.buffer.path = str(path)
        self._title()
        self.keep()

    @on(TextArea.Changed)
    def _changed(self) -> None:
        self._kept = self.text
        if self._keep_timer is None:
            self._keep_timer = self.set_timer(KEEP_DELAY, self.keep)
        else:
            self._keep_timer.reset()

    def keep(self, *, now: bool = False) -> None:
        """Write the buffers as they are now (the next session starts with them): in a thread
        worker, or here and now (``now``)."""
        if self._keep_timer is not None:
            self._keep_timer.stop()
            self._keep_timer = None
        self.buffer.text = self._kept
        self._keeps += 1
        write = partial(self._write, self.buffers.model_copy(deep=True), self._keeps)
        if now:
            write()
            self.say_notices()
        else:
            self.run_worker(write, thread=True, group="sql-keep", exit_on_error=False)

    def _write(self, kept: sql_history.SqlBuffers, number: int) -> None:
        """Write ``kept`` unless newer buffers were written already (one write at a time)."""
        with self._write_lock:
            if number <= self._written:
                return
            sql_history.save_buffers(kept)
            self._written = number
        self.post_message(BuffersKept())  # (from this thread: Textual hands it over)

    @on(BuffersKept)
    def _buffers_kept(self) -> None:
        self.say_notices()

    def say_notices(self) -> None:
        """Say what happened to a file of the buffers or history (set aside, not writable)."""
        for notice in sql_history.take_notices():
            self.app.notify(notice, severity="warning", timeout=12)

    def on_unmount(self) -> None:
        """A change not yet written (the app closing), or not yet by its worker: write it."""
        if self._keep_timer is not None or self._written < self._keeps:
            self.keep(now=True)

    def sql_to_run(self) -> tuple[str, str]:
        """The SQL ``ctrl+r`` runs and what it is: the selection when there is one, else the
        statement under the cursor when the text holds several, else the whole text."""
        selected = self.selected_text
        if selected.strip():
            return selected, "the selection"
        text = self.text
        row, column = self.cursor_location
        newline = len(self.document.newline)
        offset = sum(len(line) + newline for line in self.document.lines[:row]) + column
        statement = statement_at(text, offset)
        return statement, ("the whole text" if statement == text else "the statement here")

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
