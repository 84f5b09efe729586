"""The DuckDB store: one file holds many runs.

Concurrency: DuckDB lets one process open a file for writing, and no other process may open
it at all meanwhile. So:

- inside the writing process (the TUI browsing the run it is running), readers use
  :meth:`Store.reader`, a cursor on the writer's own database; SQL a user wrote runs on such
  a cursor in a read-only transaction (:meth:`Store.query_user`), never on the writer's;
- another process (``haf query`` while ``haf run`` writes) reads a *snapshot*: the file and
  its write-ahead log copied to a temporary folder and opened read-only
  (:func:`open_snapshot`), which DuckDB recovers to the last committed generation;
- readers let go soon (the workbench opens the file only while it reads), so an open for
  writing retries a locked file for a few seconds (:func:`open_store`), and while it holds the
  file it leaves a note next to it saying who it is and what it does, for the lock error.

Every finished generation is one transaction, so a killed run loses at most the generation
in flight, and :meth:`Store.generation_keys` tells a resumed run what is already there.
"""

from __future__ import annotations

import contextlib
import copy
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from haf_tui.defaults import haf_home, user_data_folder
from haf_tui.store.connection import (
    StatementInterrupt,
    StoreError,
    StoreLockedError,
    StoreWriteError,
    connect,
    damaged_file_error,
    is_damaged_file_error,
    name_the_original,
)
from haf_tui.store.holder import write_holder_note
from haf_tui.store.method_schema import (
    apply_method_migrations,
    missing_method_migrations,
    pending_method_migrations,
)
from haf_tui.store.migrations import LATEST_VERSION, MIGRATIONS
from haf_tui.store.result_rows import ResultRows
from haf_tui.store.run_rows import RunRows
from haf_tui.store.snapshots import copy_database
from haf_tui.store.user_sql import UserSql
from haf_tui.vocabulary import first_line


def default_db_path() -> Path:
    """``$HAF_DB``, else ``$HAF_HOME/haf.duckdb``."""
    override = os.environ.get("HAF_DB")
    return Path(override).expanduser() if override else haf_home() / "haf.duckdb"


def other_databases(missing: Path) -> list[Path]:
    """Databases haf may have written elsewhere: ``./.haf/haf.duckdb`` (where ``make run`` kept
    them before it used the user's data folder) and the user's data folder's, when they are
    not ``missing``."""
    candidates = [Path.cwd() / ".haf" / "haf.duckdb", user_data_folder() / "haf.duckdb"]
    seen = missing.resolve()
    return [c for c in candidates if c.is_file() and c.resolve() != seen]


def _where_runs_are(missing: Path) -> str:
    """What to do when ``missing`` is not there: where runs are, else how to make one."""
    found = other_databases(missing)
    if found:
        return f"runs are in {found[0]}: pass --db {found[0]} (or set HAF_DB to it)"
    return "run `haf run` first or pass --db"


@dataclass(frozen=True)
class SchemaState:
    """How far a file's schema is (:meth:`Store.schema_state`)."""

    version: int
    """The newest core migration applied (0: none, or a file haf-tui never wrote)."""
    method_migrations: frozenset[tuple[str, int]] | None
    """(method, version) of every method's migration applied; None without the table that
    records them (``method_migrations``, core migration 9)."""


_SCHEMA_STATE_SQL = """
SELECT 'core', NULL, max(version) FROM schema_migrations
UNION ALL SELECT 'method', method, version FROM method_migrations
"""
"""Both tables in one statement: a file this haf-tui wrote opens with one query (each apart,
after a look in ``information_schema`` for them, took 13 ms of a 33 ms opening, and in the
app each statement waits its turn for the interpreter)."""
_NO_SUCH_TABLE = (duckdb.CatalogException, duckdb.BinderException)
"""What DuckDB raises for a table that is not there (or a view of that name without the
columns: not haf's)."""


class Store(RunRows, ResultRows, UserSql):
    """Runs, datasets and everything a run produced, in one DuckDB file: its lifecycle and
    schema here; its datasets and runs (:class:`RunRows`), what runs produced
    (:class:`ResultRows`) and SQL on it (:class:`UserSql`) in modules of their own."""

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection,
        path: Path,
        read_only: bool,
        *,
        on_close: Callable[[], None] | None = None,
        file: Path | None = None,
    ):
        self.connection = connection
        self.path = path
        """The database file the user gave (errors name it; never written over)."""
        self.file = file or path
        """The file open: ``path``, or a temporary copy of it (a snapshot, an upgraded copy)."""
        self.read_only = read_only
        self._on_close = on_close
        """Run once after the connection closes (a snapshot removes its copy)."""
        self.snapshot = False
        """Whether this is a copy of a file another process may be writing."""
        self.copied = False
        """Whether this reads a temporary copy (a snapshot, an older file upgraded): it holds
        no lock on the file."""
        self.interruption: StatementInterrupt | None = None
        """Stops this store's reads from another thread, once :meth:`interruptible` made it."""
        self.cursor_of: Store | None = None
        """The store whose connection this one's is a cursor of (:meth:`on_cursor`); None for
        a store on a connection of its own."""

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the connection (idempotent), then remove a snapshot's copy."""
        self.connection.close()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

    def on_cursor(self) -> Store:
        """This store on a cursor of its connection (the same database, a transaction context
        of its own), for one thread to read beside others: a DuckDB connection holds one
        pending result, so two threads executing on it at once can fetch each other's rows.
        Close the cursor with :meth:`close_cursor`, never :meth:`close` (that would run this
        store's own closing)."""
        view = copy.copy(self)
        view.connection = self.connection.cursor()
        view.interruption = None
        view._on_close = None
        view.cursor_of = self
        return view

    def close_cursor(self) -> None:
        """Close the cursor of a store made by :meth:`on_cursor`."""
        self.connection.close()

    def interruptible(self) -> StatementInterrupt:
        """Let another thread stop what this store reads from now on (a store made by
        :meth:`on_cursor`: its own reads only): the :class:`StatementInterrupt` its queries
        attach their cursors to; its ``interrupt()`` stops the statement running (a
        :class:`StoreError`) and refuses the next (:class:`QueryInterruptedError`)."""
        if self.interruption is None:
            self.interruption = StatementInterrupt()
        return self.interruption

    def foreign_tables(self, state: SchemaState | None = None) -> list[str]:
        """Tables of a file haf-tui never wrote (no ``schema_migrations``): not haf's to touch.
        ``state``: the file's :meth:`schema_state`, when read already."""
        if (state or self.schema_state()).version > 0:
            return []
        rows = self.connection.execute(
            "SELECT table_name FROM information_schema.tables ORDER BY table_name"
        ).fetchall()
        return [str(r[0]) for r in rows]

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, trace: object) -> None:
        """Close; an error on the way out names the user's file, not a temporary copy, and a
        damaged file (DuckDB failing to read it, in any command) is one line."""
        self.close()
        if exc is None:
            return
        name_the_original(exc, self.file, self.path)
        if isinstance(exc, duckdb.Error) and is_damaged_file_error(exc):
            raise damaged_file_error(exc, self.path) from exc

    def schema_state(self) -> SchemaState:
        """The core migrations and the methods' migrations this file has: one query for a file
        this haf-tui wrote, two or three for an older one or one it never wrote. Read outside
        a transaction (as the store opens): a table missing is a failed statement, which would
        end a transaction under way."""
        try:
            rows = self.connection.execute(_SCHEMA_STATE_SQL).fetchall()
        except _NO_SUCH_TABLE:
            return SchemaState(self._core_version(), None)
        version = next(value for kind, _, value in rows if kind == "core")
        applied = frozenset((str(m), int(v)) for kind, m, v in rows if kind == "method")
        return SchemaState(int(version) if version is not None else 0, applied)

    def _core_version(self) -> int:
        """The newest core migration of a file without ``method_migrations`` (0: none)."""
        try:
            row = self.connection.execute("SELECT max(version) FROM schema_migrations").fetchone()
        except _NO_SUCH_TABLE:
            return 0
        return int(row[0]) if row and row[0] is not None else 0

    def schema_version(self) -> int:
        """The newest migration applied to this file (0 for an empty file)."""
        return self.schema_state().version

    def needs_migration(self, state: SchemaState | None = None) -> bool:
        """Whether the file lacks a core migration or a registered method's migration
        (``state``: its :meth:`schema_state`, when read already)."""
        state = state or self.schema_state()
        return state.version < LATEST_VERSION or bool(
            missing_method_migrations(state.method_migrations)
        )

    def migrate(self, state: SchemaState | None = None) -> None:
        """Apply the migrations this file lacks, the core ones then every registered method's
        (:mod:`haf_tui.store.method_tables`), in one transaction; refuse a newer schema
        (``state``: the file's :meth:`schema_state`, when read already)."""
        state = state or self.schema_state()
        version = state.version
        if version > LATEST_VERSION:
            raise StoreError(
                f"database {self.path} has schema v{version}, newer than this haf-tui "
                f"(v{LATEST_VERSION}): upgrade haf-tui to use it"
            )
        if self.read_only or not self.needs_migration(state):
            return
        with self.transaction() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                "description VARCHAR, applied_at TIMESTAMP DEFAULT current_timestamp)"
            )
            for number, description, sql in MIGRATIONS:
                if number > version:
                    con.execute(sql)
                    con.execute(
                        "INSERT INTO schema_migrations (version, description) VALUES (?, ?)",
                        [number, description],
                    )
            apply_method_migrations(con, pending_method_migrations(con))

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A transaction that commits on success and rolls back on any error; DuckDB failing to
        write (a full disk, a file size limit) raises :class:`StoreWriteError`."""
        try:
            self.connection.execute("BEGIN TRANSACTION")
            try:
                yield self.connection
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    self.connection.execute("ROLLBACK")
                raise
            self.connection.execute("COMMIT")
        except (duckdb.IOException, duckdb.TransactionException, duckdb.FatalException) as exc:
            raise StoreWriteError(
                f"cannot write to database {self.path}: {first_line(exc)}"
            ) from exc

    def reader(self) -> duckdb.DuckDBPyConnection:
        """A cursor for reading while this process writes (same database, own transaction)."""
        return self.connection.cursor()


WRITER_WAIT_SECONDS = 5.0
"""How long an open for writing waits for the file's readers (a workbench between two reads)."""


def open_store(
    path: str | Path | None = None,
    *,
    read_only: bool = False,
    allow_read: Sequence[Path] = (),
    purpose: str = "writing",
    wait_seconds: float = WRITER_WAIT_SECONDS,
) -> Store:
    """Open (and, for writing, migrate) the store. A read-only open never creates or changes
    the file: an older haf-tui file is read through an upgraded temporary copy. A DuckDB file
    with other tables and no haf schema is refused. ``allow_read``: folders user SQL may read.

    An open for writing retries a locked file for ``wait_seconds`` (readers hold it briefly)
    and leaves a note saying ``purpose`` next to the file while it holds it."""
    db_path = Path(path).expanduser() if path else default_db_path()
    if read_only and not db_path.is_file():
        raise StoreError(f"no database at {db_path}: {_where_runs_are(db_path)}")
    if db_path.is_dir():
        raise StoreError(f"{db_path} is a folder, not a database file")
    if not read_only:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    if read_only:
        store = Store(connect(db_path, True, allow_read=allow_read), db_path, True)
    else:
        connection = _connect_waiting(db_path, allow_read, wait_seconds)
        remove_note = write_holder_note(db_path, purpose)
        store = Store(connection, db_path, False, on_close=remove_note)
    try:
        state = store.schema_state()  # (read once: the checks below all look at it)
        foreign = store.foreign_tables(state)
        if foreign:
            shown = ", ".join(foreign[:4]) + (", …" if len(foreign) > 4 else "")
            raise StoreError(
                f"{db_path} is not a haf-tui database (it holds {shown}): pass another --db"
            )
        store.migrate(state)
        if read_only and store.needs_migration(state):
            store.close()
            return _upgraded_copy(db_path, allow_read)
    except duckdb.Error as exc:
        store.close()
        if is_damaged_file_error(exc):
            raise damaged_file_error(exc, db_path) from exc
        raise
    except BaseException:
        store.close()
        raise
    return store


def _connect_waiting(
    db_path: Path, allow_read: Sequence[Path], wait_seconds: float
) -> duckdb.DuckDBPyConnection:
    """A connection for writing, retrying while another process holds the file."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            return connect(db_path, False, allow_read=allow_read)
        except StoreLockedError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def _upgraded_copy(db_path: Path, allow_read: Sequence[Path]) -> Store:
    """An older (or empty) haf-tui file, read through a migrated copy: reads never write."""
    copy, remove = copy_database(db_path)
    try:
        with Store(connect(copy, False), db_path, False, file=copy) as writer:
            writer.migrate()
        store = Store(
            connect(copy, True, allow_read=allow_read), db_path, True, on_close=remove, file=copy
        )
    except BaseException:
        remove()
        raise
    store.copied = True
    return store


def open_snapshot(path: str | Path | None = None, *, allow_read: Sequence[Path] = ()) -> Store:
    """A read-only copy of a database another process may be writing (file + WAL), removed
    when the store is closed (or, if this process dies, by the next snapshot)."""
    db_path = Path(path).expanduser() if path else default_db_path()
    if not db_path.is_file():
        raise StoreError(f"no database at {db_path}")
    copy, remove = copy_database(db_path)
    try:
        store = open_store(copy, read_only=True, allow_read=allow_read)
    except BaseException as exc:
        remove()
        name_the_original(exc, copy, db_path)  # (the user's file, not the copy)
        raise
    store.snapshot = store.copied = True
    store.path = db_path  # (errors name the user's file; store.file is the copy)
    previous = store._on_close

    def close_all() -> None:
        if previous is not None:
            previous()
        remove()

    store._on_close = close_all
    return store
