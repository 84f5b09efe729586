"""A log whose lines wrap at its own width, and wrap again when the width changes: Textual's
RichLog draws every line at least 78 cells wide (cut at an 80-column terminal, where a border
and a scrollbar leave it 76) and keeps the wrapping of the width it was written at."""

from __future__ import annotations

from collections import deque
from typing import Self

from textual import events
from textual.widgets import RichLog


class WrappedLog(RichLog):
    """Plain-text lines (``add_line``), wrapped to the width, the last ``max_lines`` kept."""

    DEFAULT_CSS = "WrappedLog { scrollbar-gutter: stable; overflow-x: hidden; }"

    def __init__(self, *, id: str | None = None, max_lines: int = 500) -> None:
        super().__init__(id=id, wrap=True, markup=False, max_lines=max_lines, min_width=1)
        self.texts: deque[str] = deque(maxlen=max_lines)
        """The lines as added (wrapped again from these when the width changes)."""
        self._wrapped_at = 0

    def add_line(self, line: str) -> None:
        """One more line at the bottom."""
        self.texts.append(line)
        self.write(line)

    def clear(self) -> Self:
        """No lines."""
        self.texts.clear()
        return super().clear()

    def on_resize(self, event: events.Resize) -> None:
        """Wrap the kept lines at the new width (RichLog's own handler writes the lines added
        before the width was known)."""
        width = event.size.width
        if self._size_known and width and width != self._wrapped_at:
            super().clear()
            for line in self.texts:
                self.write(line)
        self._wrapped_at = width
