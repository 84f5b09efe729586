"""What the :class:`~haf_tui.store.db.Store`'s groups of queries (:mod:`~haf_tui.store.run_rows`,
:mod:`~haf_tui.store.result_rows`, :mod:`~haf_tui.store.user_sql`) use of the store: its
connection, the files it names, and its transactions (declared here, defined by the Store)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:
    from haf_tui.store.connection import StatementInterrupt


class StoreBase:
    """The store's connection and files; the Store defines :meth:`transaction` and
    :meth:`reader`."""

    connection: duckdb.DuckDBPyConnection
    path: Path
    file: Path
    read_only: bool
    snapshot: bool
    interruption: StatementInterrupt | None

    @contextmanager
    def interruptible_cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A reading cursor (:meth:`reader`) that :attr:`interruption`, when the store has
        one, stops from another thread while the block runs."""
        cursor = self.reader()
        interruption = self.interruption
        if interruption is None:
            yield cursor
            return
        try:
            interruption.attach(cursor)  # (refused, already interrupted: let go all the same)
            yield cursor
        finally:
            interruption.attach(None)

    if TYPE_CHECKING:

        def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
            """A transaction that commits on success and rolls back on any error."""
            ...

        def reader(self) -> duckdb.DuckDBPyConnection:
            """A cursor for reading while this process writes."""
            ...
