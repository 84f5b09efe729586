"""What the SQL screen's workers post: a page read, a failure, the catalog, an export, the
history."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from haf_tui.reports import NamedQuery
from haf_tui.store.readers import SchemaColumn
from haf_tui.tui.sql_history import HistoryEntry
from haf_tui.tui.widgets.result_table import ResultPage


@dataclass
class SqlFailed(Message):
    """A query or an export of the SQL screen failed: one line, and DuckDB's whole text."""

    request: str
    message: str
    detail: str = ""


@dataclass
class PageRead(Message):
    """A page of the result was read (its cells' text as Arrow), whether more follow, and how
    long the query took (seconds)."""

    request: str
    page: ResultPage
    more: bool
    seconds: float = 0.0


@dataclass
class RowsCounted(Message):
    """The current result's rows were counted (None: not counted, or the count failed or
    was stopped)."""

    request: str
    rows: int | None


@dataclass
class CatalogLoaded(Message):
    """The named queries and the schema's columns were read."""

    queries: dict[str, NamedQuery]
    columns: list[SchemaColumn]


@dataclass
class ExportFinished(Message):
    """An export was written: where (the full path) and how many rows."""

    request: str
    path: Path
    rows: int


@dataclass
class ExportExists(Message):
    """The export's file exists: ask before replacing it."""

    path: Path


@dataclass
class HistoryRead(Message):
    """The query history was read (newest first)."""

    entries: list[HistoryEntry]
