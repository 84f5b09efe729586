"""SQL on the store: the app's own (:meth:`UserSql.query`) and a user's (``haf query``, the
SQL screen, the query library: reading statements only, in a read-only transaction of the
store's locked-down connection; whole, streamed in batches, a page, or exported to a file)
(a part of :class:`~haf_tui.store.db.Store`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from haf_tui.store.connection import (
    QueryInterruptedError,
    StatementInterrupt,
    StoreError,
    check_reading_sql,
    count_sql,
    damaged_file_error,
    is_damaged_file_error,
    page_sql,
    runnable_sql,
    sandboxed_cursor,
    user_sql_error,
)
from haf_tui.store.safe_files import export_result
from haf_tui.store.store_base import StoreBase
from haf_tui.vocabulary import first_line


class UserSql(StoreBase):
    """The app's SQL and a user's, sandboxed."""

    def query(
        self,
        sql: str,
        parameters: Sequence[Any] | dict[str, Any] | None = None,
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run SQL; returns (column names, rows)."""
        try:
            with self.interruptible_cursor() as cursor:
                cursor.execute(sql, parameters)
                if cursor.description is None:
                    return [], []
                return [d[0] for d in cursor.description], cursor.fetchall()
        except duckdb.Error as exc:
            raise self._app_sql_error(exc) from exc

    def query_columns(self, sql: str, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run the app's SQL; returns each column as a numpy array, by name (no Python value
        per cell: many rows of numbers at once)."""
        try:
            with self.interruptible_cursor() as cursor:
                return dict(cursor.execute(sql, parameters).fetchnumpy())
        except duckdb.Error as exc:
            raise self._app_sql_error(exc) from exc

    def _app_sql_error(self, exc: duckdb.Error) -> StoreError:
        """The app's SQL failing: a damaged file named as such, else the query's one line."""
        if is_damaged_file_error(exc):
            return damaged_file_error(exc, self.path)
        return StoreError(f"query failed: {first_line(exc)}")

    def query_user(
        self,
        sql: str,
        parameters: Sequence[Any] | dict[str, Any] | None = None,
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run SQL a user wrote (``haf query``, the SQL screen, the query library): reading
        statements only, in a read-only transaction (:func:`sandboxed_cursor`), whatever this
        store's connection may do."""
        check_reading_sql(sql)
        try:
            with sandboxed_cursor(self.connection, self.interruption) as cursor:
                cursor.execute(sql, parameters)
                if cursor.description is None:
                    return [], []
                return [d[0] for d in cursor.description], cursor.fetchall()
        except duckdb.Error as exc:
            raise user_sql_error(exc, self.path) from exc

    @contextmanager
    def stream_user(
        self,
        sql: str,
        parameters: Sequence[Any] | dict[str, Any] | None = None,
        *,
        interrupt: StatementInterrupt | None = None,
        batch_rows: int = 1000,
    ) -> Iterator[tuple[list[str], Iterator[list[tuple[Any, ...]]]]]:
        """A user's reading SQL as its columns and its rows in batches, fetched as they are
        read (never the whole result in memory); sandboxed as :meth:`query_user`;
        ``interrupt`` stops it from another thread (:class:`QueryInterruptedError`)."""
        check_reading_sql(sql)
        try:
            with sandboxed_cursor(self.connection, interrupt) as cursor:
                cursor.execute(sql, parameters)
                columns = [d[0] for d in cursor.description or ()]

                def batches() -> Iterator[list[tuple[Any, ...]]]:
                    while columns:
                        if interrupt is not None and interrupt.interrupted:
                            raise QueryInterruptedError("query interrupted")
                        try:
                            rows = cursor.fetchmany(batch_rows)
                        except duckdb.Error as exc:
                            raise user_sql_error(exc) from exc
                        if not rows:
                            return
                        yield rows

                yield columns, batches()
        except duckdb.Error as exc:
            raise user_sql_error(exc) from exc

    def query_user_page(
        self,
        sql: str,
        parameters: dict[str, Any] | None,
        offset: int,
        limit: int,
        *,
        interrupt: StatementInterrupt | None = None,
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """``limit`` rows of a user's reading SQL from row ``offset``: wrapped in a paging
        SELECT, or, when it cannot be wrapped (SHOW, several statements), run as written;
        sandboxed as :meth:`query_user`; ``interrupt`` stops it from another thread."""
        check_reading_sql(sql)  # as typed: reading statements only, whatever the connection
        try:
            with self.stream_user(
                page_sql(sql, offset, limit), parameters, interrupt=interrupt, batch_rows=limit
            ) as (columns, batches):
                return columns, next(batches, [])
        except StoreError as exc:
            if "Parser Error" not in str(exc):
                raise
        try:
            with sandboxed_cursor(self.connection, interrupt) as cursor:
                cursor.execute(sql, parameters)
                if cursor.description is None:
                    return [], []
                columns = [d[0] for d in cursor.description]
                if offset:
                    cursor.fetchmany(offset)
                return columns, cursor.fetchmany(limit)
        except duckdb.Error as exc:
            raise user_sql_error(exc, self.path) from exc

    def count_user_rows(
        self,
        sql: str,
        parameters: dict[str, Any] | None,
        *,
        interrupt: StatementInterrupt | None = None,
    ) -> int | None:
        """How many rows a user's query gives, counted by DuckDB (``SELECT count(*) FROM
        (<sql>)``: no row is fetched, so memory stays bounded as the query's own), sandboxed as
        :meth:`query_user`; ``interrupt`` stops it from another thread. None (not run) unless
        the SQL is one SELECT (FROM …, WITH …, SHOW and DESCRIBE are SELECTs): an EXPLAIN,
        several statements or SQL that cannot be wrapped run only as written. A SELECT runs
        in a read-only transaction (a write hidden in one is refused), so counting it is one
        more read, as each page is."""
        check_reading_sql(sql)
        try:
            statements = duckdb.extract_statements(runnable_sql(sql))
        except duckdb.Error:
            return None
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            return None
        try:
            with sandboxed_cursor(self.connection, interrupt) as cursor:
                row = cursor.execute(count_sql(sql), parameters).fetchone()
        except duckdb.ParserException:
            return None  # (SQL that cannot be wrapped)
        except duckdb.Error as exc:
            raise user_sql_error(exc, self.path) from exc
        return None if row is None else int(row[0])

    def export_user(
        self, sql: str, parameters: Any, target: Path, fmt: str, *, overwrite: bool = False
    ) -> int:
        """Write the result of a user's reading SQL to ``target`` (parquet or csv), sandboxed
        as :meth:`query_user`: never over this database's files, over an existing file only
        with ``overwrite``, atomically (``store.safe_files``); returns the number of rows."""
        return export_result(
            self.connection,
            sql,
            parameters,
            target,
            fmt,
            databases=[self.path, self.file],
            overwrite=overwrite,
        )
