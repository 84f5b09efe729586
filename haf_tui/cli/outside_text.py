"""Text from outside (a dataset's name, its columns and rows, a file's path, a model's answer)
as the CLI prints it: as text, never Rich markup (a dataset named ``[/]`` is shown as
``[/]``, not parsed), its control characters shown as escapes (:func:`shown_text`: an ESC
from a file never reaches the terminal as one)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from haf_tui.vocabulary import shown_text


def outside_text(value: object) -> Text:
    """``value`` as plain Rich text, its control characters escaped."""
    return Text(shown_text(str(value)))


class TextTable(Table):
    """A Rich table whose string headers, title and cells are :func:`outside_text`, never
    markup."""

    def __init__(self, *headers: Any, title: str | Text | None = None, **options: Any) -> None:
        shown_title = outside_text(title) if isinstance(title, str) else title
        super().__init__(*headers, title=shown_title, **options)  # (add_column: each header)

    def add_column(self, header: Any = "", *args: Any, **options: Any) -> None:
        super().add_column(outside_text(header) if isinstance(header, str) else header,
                           *args, **options)  # fmt: skip

    def add_row(self, *renderables: Any, **options: Any) -> None:
        cells = [outside_text(c) if isinstance(c, str) else c for c in renderables]
        super().add_row(*cells, **options)
