"""What the :class:`~haf_tui.store.db.Store`'s groups of queries (:mod:`~haf_tui.store.run_rows`,
:mod:`~haf_tui.store.result_rows`, :mod:`~haf_tui.store.user_sql`) use of the store: its
connection, the files it names, and its transactions (declared here, defined by the Store)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb


class StoreBase:
    """The store's connection and files; the Store defines :meth:`transaction` and
    :meth:`reader`."""

    connection: duckdb.DuckDBPyConnection
    path: Path
    file: Path
    read_only: bool
    snapshot: bool

    if TYPE_CHECKING:

        def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
            """A transaction that commits on success and rolls back on any error."""
            ...

        def reader(self) -> duckdb.DuckDBPyConnection:
            """A cursor for reading while this process writes."""
            ...
