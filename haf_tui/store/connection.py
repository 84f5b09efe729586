"""Opening DuckDB files safely: every connection locked down, user SQL sandboxed (bounded in
memory, interruptible); snapshots that leave nothing behind are :mod:`haf_tui.store.snapshots`,
who holds a file :mod:`haf_tui.store.holder`, exports ``safe_files``.

Every store connection (read-only or not) is locked down with DuckDB's own settings before
anything else runs on it: no access to files other than the database itself
(``enable_external_access = false``; ``allowed_directories`` for the folders a user asked to
read), no extension installed or loaded, and the configuration locked so no statement can
undo that; DuckDB's memory is bounded (:func:`memory_limit`). On top, SQL a user types
(``haf query``, the SQL screen, the query library) may only hold statements that read
(:data:`READING_STATEMENTS`, told apart by DuckDB's own parser): no COPY, ATTACH, INSTALL,
SET, DDL or DML; and it runs in a read-only transaction
(:func:`sandboxed_cursor`), so that DuckDB itself refuses a write hidden in a reading statement
(``WITH d AS (DELETE … RETURNING *) SELECT …``, ``EXPLAIN ANALYZE DELETE …``), even on the
connection of a run the app is writing.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import duckdb

from haf_tui.store.errors import QueryInterruptedError as QueryInterruptedError
from haf_tui.store.errors import StoreError as StoreError
from haf_tui.store.errors import StoreLockedError as StoreLockedError
from haf_tui.store.errors import StoreWriteError as StoreWriteError
from haf_tui.store.holder import describe_holder
from haf_tui.vocabulary import first_line

READING_STATEMENTS = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})
"""Statement kinds the SQL console runs: SELECT (DESCRIBE, SHOW, SUMMARIZE and FROM … are
SELECTs too) and EXPLAIN. Not CALL or PRAGMA: ``CHECKPOINT`` is a CALL that writes the file;
their read-only table functions are reachable by SELECT (``FROM pragma_table_info('runs')``)."""

MEMORY_LIMIT_ENV = "HAF_SQL_MEMORY_LIMIT"
"""Overrides the memory DuckDB may use per database (``2GB``, ``512MB``): a query that needs
more fails in one line instead of taking the machine."""


def memory_limit() -> str:
    """The memory DuckDB may use: ``$HAF_SQL_MEMORY_LIMIT``, else a quarter of the machine's
    memory (at least 512 MiB), in MiB."""
    given = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if given:
        return given
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 * 2**30
    return f"{max(total // 4, 512 * 2**20) // 2**20}MiB"


INTERRUPT_REPEAT_SECONDS = 0.05
"""How often :meth:`StatementInterrupt.interrupt` is repeated while its cursor is attached."""


class StatementInterrupt:
    """Lets another thread stop the statement a sandboxed cursor runs (DuckDB's
    ``interrupt()``): give it to :func:`sandboxed_cursor`, call :meth:`interrupt`."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # (a signal handler may call interrupt() mid-attach)
        self._cursor: duckdb.DuckDBPyConnection | None = None
        self._attached = 0  # (which attach the cursor is of: a repeat holds no cursor)
        self.interrupted = False

    def attach(self, cursor: duckdb.DuckDBPyConnection | None) -> None:
        """The cursor whose statement :meth:`interrupt` stops (None: none any more)."""
        with self._lock:
            self._cursor = cursor
            self._attached += 1
            if cursor is not None and self.interrupted:
                raise QueryInterruptedError("query interrupted")

    @property
    def attached(self) -> bool:
        """Whether a cursor is using it still (its statement has not ended)."""
        return self._cursor is not None

    def interrupt(self) -> None:
        """Stop the running statement (and any the cursor would run next). Repeated while
        the cursor stays attached: DuckDB clears its interrupt as it begins a statement, so
        one that lands after :meth:`attach` but before the statement starts (a busy
        machine's worker, late) would be forgotten and the statement run to its end."""
        with self._lock:
            self.interrupted = True
            if self._cursor is None:
                return
            self._cursor.interrupt()
            attached = self._attached
        threading.Thread(target=self._repeat, args=(attached,), daemon=True).start()

    def _repeat(self, attached: int) -> None:
        while True:
            time.sleep(INTERRUPT_REPEAT_SECONDS)
            with self._lock:
                if self._cursor is None or self._attached != attached:  # (let go: it ended)
                    return
                self._cursor.interrupt()


_DAMAGE_SIGNS = ("Could not read enough bytes", "Corrupt database file", "not a valid DuckDB")
"""How DuckDB says a file is damaged (truncated, overwritten) when it reads it."""


def is_damaged_file_error(exc: BaseException) -> bool:
    """Whether DuckDB failed because the database file is damaged (truncated or corrupt)."""
    if isinstance(exc, duckdb.SerializationException):
        return True
    return isinstance(exc, duckdb.Error) and any(sign in str(exc) for sign in _DAMAGE_SIGNS)


def damaged_file_error(exc: BaseException, path: Path | None = None) -> StoreError:
    """One line for a database file DuckDB cannot read (truncated or corrupt)."""
    which = f"database {path}" if path is not None else "the database"
    return StoreError(
        f"{which} is damaged (truncated or corrupt) and cannot be read: {first_line(exc)}"
    )


def name_the_original(exc: BaseException, copy: Path, original: Path) -> BaseException:
    """``exc`` with the path of a temporary copy in its message replaced by the file the user
    gave (an error reading a snapshot names the user's file); returns ``exc``."""
    if exc.args and isinstance(exc.args[0], str) and str(copy) in exc.args[0]:
        exc.args = (exc.args[0].replace(str(copy), str(original)), *exc.args[1:])
    return exc


def lock_down(
    connection: duckdb.DuckDBPyConnection, *, allow_read: Sequence[Path] = (), spill: bool = True
) -> None:
    """No file but the database (and the folders in ``allow_read``), no extensions, settings
    locked. ``spill=False`` also keeps DuckDB from writing temporary files. One thread at a
    time: two connections of this process to one file share its settings, and another
    thread's lock between the check and the settings failed the second opening."""
    with _LOCKING_DOWN:
        _lock_down(connection, allow_read=allow_read, spill=spill)


_LOCKING_DOWN = threading.Lock()
"""Held while a connection is locked down (the check and the settings as one step)."""


def _lock_down(
    connection: duckdb.DuckDBPyConnection, *, allow_read: Sequence[Path], spill: bool
) -> None:
    locked = connection.execute("SELECT current_setting('lock_configuration')").fetchone()
    if locked and locked[0]:
        return  # another connection of this process to the same file locked it down already
    folders = [str(Path(p).expanduser().resolve()) + os.sep for p in allow_read]
    connection.execute("SET autoinstall_known_extensions = false")
    connection.execute("SET autoload_known_extensions = false")
    if not spill:
        connection.execute("SET temp_directory = ''")
    try:
        connection.execute("SET memory_limit = ?", [memory_limit()])
    except duckdb.Error as exc:
        raise StoreError(f"{MEMORY_LIMIT_ENV}: {first_line(exc)}") from exc
    if folders:
        connection.execute("SET allowed_directories = ?", [folders])
    connection.execute("SET enable_external_access = false")
    connection.execute("SET enable_progress_bar = false")  # (it drew over the terminal)
    connection.execute("SET lock_configuration = true")


_LEADING_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
_EXPLAIN = re.compile(r"EXPLAIN\b(?:\s+ANALY[SZ]E\b|\s*\([^()]*\))?", re.IGNORECASE)


def _explained_sql(statement_sql: str) -> str | None:
    """What an EXPLAIN statement explains (its text after ``EXPLAIN [ANALYZE | (options)]``),
    or None when it does not read as one."""
    text = _LEADING_COMMENTS.sub("", statement_sql, count=1)
    found = _EXPLAIN.match(text)
    return text[found.end() :] if found else None


_FIRST_WORDS = re.compile(r"(?:FORCE\s+)?[A-Za-z]+", re.IGNORECASE)


def _written_kind(statement_sql: str, parsed: str) -> str:
    """The statement's kind as the user wrote it: its first word (``INSTALL``, which DuckDB's
    parser files as a LOAD), or DuckDB's kind where the first word says little (``WITH …``)."""
    text = _LEADING_COMMENTS.sub("", statement_sql, count=1)
    found = _FIRST_WORDS.match(text)
    written = " ".join(found.group().upper().split()) if found else ""
    return parsed if written in ("", "WITH") else written


def _refused(kind: str) -> StoreError:
    return StoreError(
        f"refused: {kind} statements are not allowed here (the SQL console only reads; "
        "export results with the export command instead of COPY)"
    )


def check_reading_sql(sql: str) -> None:
    """Refuse SQL that holds any statement other than a read (one line saying which).

    An EXPLAIN must explain one SELECT: ``EXPLAIN ANALYZE`` runs what it explains, and
    ``EXPLAIN ANALYZE COMMIT`` would end the read-only transaction the SQL runs in."""
    try:
        statements = duckdb.extract_statements(sql)
        _ = [statement.type for statement in statements]  # (may raise ValueError: see below)
    except duckdb.Error as exc:
        raise StoreError(f"query failed: {first_line(exc)}") from exc
    except ValueError as exc:  # a kind DuckDB's Python API has no name for (UPDATE EXTENSIONS)
        raise StoreError(
            "refused: statements of a kind DuckDB does not name (such as UPDATE EXTENSIONS) "
            "are not allowed here (the SQL console only reads)"
        ) from exc
    for statement in statements:
        if statement.type not in READING_STATEMENTS:
            raise _refused(_written_kind(statement.query, statement.type.name))
        if statement.type == duckdb.StatementType.EXPLAIN:
            explained = _explained_sql(statement.query)
            try:
                inner = duckdb.extract_statements(explained) if explained else []
            except duckdb.Error:
                inner = []
            if len(inner) != 1 or inner[0].type != duckdb.StatementType.SELECT:
                kind = inner[0].type.name if len(inner) == 1 else "this"
                raise StoreError(
                    f"refused: EXPLAIN of {kind} statements is not allowed here (the SQL "
                    "console only reads: EXPLAIN [ANALYZE] SELECT …)"
                )


@contextlib.contextmanager
def sandboxed_cursor(
    connection: duckdb.DuckDBPyConnection, interrupt: StatementInterrupt | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor for SQL a user wrote: a new connection to the same (locked-down) database, in a
    read-only transaction that is rolled back and closed afterwards.

    Why a transaction, not another connection: DuckDB opens a file with one configuration per
    process, so while the app holds the file for writing a read-only connection to it cannot be
    opened, and a snapshot copies the whole file (stale at once, and slow for a big store). A
    ``BEGIN TRANSACTION READ ONLY`` cursor on the database already open is refused every write
    by DuckDB's transaction manager (DML, DDL, also inside a reading statement); the database's
    locked configuration refuses files, ATTACH of a file, extensions and settings; and
    :func:`check_reading_sql` lets no statement through that could end the transaction.
    ``interrupt`` stops its statements from another thread."""
    cursor = connection.cursor()
    try:
        cursor.execute("BEGIN TRANSACTION READ ONLY")
        if interrupt is not None:
            interrupt.attach(cursor)
        yield cursor
    finally:
        if interrupt is not None:
            interrupt.attach(None)
        with contextlib.suppress(duckdb.Error):
            cursor.execute("ROLLBACK")
        cursor.close()


def user_sql_error(exc: duckdb.Error, path: Path | None = None) -> StoreError:
    """One line for a user's SQL that DuckDB refused or could not run (on database ``path``)."""
    if is_damaged_file_error(exc):
        return damaged_file_error(exc, path)
    if isinstance(exc, duckdb.InterruptException):
        return QueryInterruptedError("query interrupted")
    if isinstance(exc, duckdb.OutOfMemoryException):
        return StoreError(
            f"the query needs more memory than the sandbox's limit of {memory_limit()} "
            f"(${MEMORY_LIMIT_ENV} sets it)"
        )
    writes = (duckdb.TransactionException, duckdb.InvalidInputException)
    if isinstance(exc, writes) and "read-only mode" in str(exc):  # (transaction; database)
        return StoreError(
            "refused: this query would write to the database (the SQL console only reads)"
        )
    if isinstance(exc, duckdb.PermissionException):
        return StoreError(f"refused: {first_line(exc)} (the SQL console reads the database only)")
    return StoreError(f"query failed: {first_line(exc)}")


def runnable_sql(sql: str) -> str:
    """The SQL without trailing whitespace and semicolons (so that it can be wrapped)."""
    return sql.strip().rstrip(";").rstrip()


def count_sql(sql: str) -> str:
    """How many rows ``sql`` gives, counted in DuckDB (no row leaves it)."""
    return f"SELECT count(*) FROM (\n{runnable_sql(sql)}\n)"


def page_sql(sql: str, offset: int, limit: int) -> str:
    """``limit`` rows of ``sql`` from row ``offset`` (DuckDB pushes the limit down)."""
    return f"SELECT * FROM (\n{runnable_sql(sql)}\n) LIMIT {int(limit)} OFFSET {int(offset)}"


def connect(
    path: Path, read_only: bool, *, allow_read: Sequence[Path] = ()
) -> duckdb.DuckDBPyConnection:
    """A locked-down connection to ``path`` (a locked file raises :class:`StoreLockedError`)."""
    try:
        connection = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        message = str(exc)
        if "lock" in message.lower():
            pid = re.search(r"PID (\d+)", message)
            holder = describe_holder(path, int(pid.group(1)) if pid else None)
            advice = (
                "read it with --snapshot, or wait" if read_only else "wait, or use another --db"
            )
            raise StoreLockedError(
                f"database {path} is locked by {holder}: {advice}", holder=holder
            ) from exc
        raise StoreError(f"cannot open database {path}: {first_line(exc)}") from exc
    except duckdb.Error as exc:
        raise StoreError(f"cannot open database {path}: {first_line(exc)}") from exc
    try:
        lock_down(connection, allow_read=allow_read, spill=not read_only)
    except BaseException:
        connection.close()
        raise
    return connection
