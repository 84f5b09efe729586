"""Messages that thread workers post to the app (workers never touch widgets directly)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class QueryFinished(Message):
    """A read query finished: its columns and rows (or one page of them)."""

    request: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    total: int | None = None


@dataclass
class WorkFailed(Message):
    """A worker failed; ``message`` is one line for the user."""

    message: str
