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
import json
import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from haf_tui.defaults import haf_home, user_data_folder
from haf_tui.store.connection import (
    QueryInterruptedError,
    StatementInterrupt,
    StoreError,
    StoreLockedError,
    StoreWriteError,
    check_reading_sql,
    connect,
    copy_database,
    damaged_file_error,
    is_damaged_file_error,
    name_the_original,
    page_sql,
    pid_alive,
    sandboxed_cursor,
    update_holder_purpose,
    user_sql_error,
    write_holder_note,
)
from haf_tui.store.method_schema import (
    apply_method_migrations,
    insert_method_rows,
    pending_method_migrations,
)
from haf_tui.store.migrations import LATEST_VERSION, MIGRATIONS
from haf_tui.store.records import (
    GenerationRecord,
    InstanceRecord,
    InstanceResult,
    RunRecord,
)
from haf_tui.store.safe_files import export_result
from haf_tui.store.skips import skipped_payload, write_skipped
from haf_tui.vocabulary import first_line, null_for_nan


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


class Store:
    """Runs, datasets and everything a run produced, in one DuckDB file."""

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

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the connection (idempotent), then remove a snapshot's copy."""
        self.connection.close()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

    def foreign_tables(self) -> list[str]:
        """Tables of a file haf-tui never wrote (no ``schema_migrations``): not haf's to touch."""
        if self.schema_version() > 0:
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

    def schema_version(self) -> int:
        """The newest migration applied to this file (0 for an empty file)."""
        exists = self.connection.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
        ).fetchone()
        if not exists or not exists[0]:
            return 0
        row = self.connection.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def needs_migration(self) -> bool:
        """Whether the file lacks a core migration or a registered method's migration."""
        return self.schema_version() < LATEST_VERSION or bool(
            pending_method_migrations(self.connection)
        )

    def migrate(self) -> None:
        """Apply the migrations this file lacks, the core ones then every registered method's
        (:mod:`haf_tui.store.method_tables`), in one transaction; refuse a newer schema."""
        version = self.schema_version()
        if version > LATEST_VERSION:
            raise StoreError(
                f"database {self.path} has schema v{version}, newer than this haf-tui "
                f"(v{LATEST_VERSION}): upgrade haf-tui to use it"
            )
        if self.read_only or not self.needs_migration():
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

    # ------------------------------------------------------------ datasets

    def save_dataset(
        self,
        dataset_id: str,
        name: str,
        source: str,
        instances: Sequence[InstanceRecord],
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Store a dataset and its instances once (a second save of the same id is a no-op);
        ``meta['skipped']`` (rows ``(row, reason[, excerpt])``) goes to ``skipped_rows``."""
        rest, skipped = skipped_payload(meta or {})
        with self.transaction() as con:
            if con.execute("SELECT 1 FROM datasets WHERE dataset_id = ?", [dataset_id]).fetchone():
                return
            con.execute(
                "INSERT INTO datasets (dataset_id, name, source, created_at, n_instances, meta) "
                "VALUES (?, ?, ?, current_timestamp, ?, ?)",
                [dataset_id, name, source, len(instances), json.dumps(rest)],
            )
            write_skipped(con, dataset_id, skipped)
            if instances:  # one statement of arrays: executemany is row by row, and slow
                con.execute(
                    "INSERT INTO instances SELECT ?, unnest(?::VARCHAR[]), unnest(?::INTEGER[]), "
                    "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[])::JSON",
                    [
                        dataset_id,
                        [i.instance_id for i in instances],
                        [i.position for i in instances],
                        [i.text for i in instances],
                        [i.label for i in instances],
                        [json.dumps(i.extra) for i in instances],
                    ],
                )

    def instances(self, dataset_id: str, limit: int | None = None) -> list[InstanceRecord]:
        """A dataset's instances in order (the first ``limit``)."""
        sql = (
            "SELECT instance_id, position, text, label, extra FROM instances "
            "WHERE dataset_id = ? ORDER BY position"
        )
        rows = self.connection.execute(
            sql + (f" LIMIT {int(limit)}" if limit else ""), [dataset_id]
        ).fetchall()
        return [
            InstanceRecord(
                instance_id=r[0],
                position=r[1],
                text=r[2],
                label=r[3],
                extra=json.loads(r[4]) if r[4] else {},
            )
            for r in rows
        ]

    # ------------------------------------------------------------ runs

    def create_run(self, run: RunRecord) -> None:
        """Insert a new run row."""
        with self.transaction() as con:
            con.execute(
                "INSERT INTO runs (run_id, status, dataset_id, n_planned, config, model_file, "
                "model_size, model_sha256, model_arch, model_quant, chat_format, "
                "similarity_model, similarity_kind, offload_supported, n_gpu_layers, versions) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run.run_id,
                    run.status,
                    run.dataset_id,
                    run.n_planned,
                    run.config_json,
                    run.model_file,
                    run.model_size,
                    run.model_sha256,
                    run.model_arch,
                    run.model_quant,
                    run.chat_format,
                    run.similarity_model,
                    run.similarity_kind,
                    run.offload_supported,
                    run.n_gpu_layers,
                    json.dumps(run.versions),
                ],
            )

    def get_run(self, run_id: str) -> RunRecord:
        """A run by id (a unique prefix is enough)."""
        rows = self.connection.execute(
            "SELECT run_id, status, dataset_id, n_planned, config, model_file, model_size, "
            "model_sha256, model_arch, model_quant, chat_format, similarity_model, "
            "similarity_kind, offload_supported, n_gpu_layers, versions, seconds_running, error "
            "FROM runs WHERE run_id LIKE ? || '%'",
            [run_id],
        ).fetchall()
        if not rows:
            raise StoreError(f"no run {run_id!r} in {self.path}")
        exact = [row for row in rows if row[0] == run_id]  # (an id that prefixes another)
        if len(rows) > 1 and not exact:
            raise StoreError(f"run id prefix {run_id!r} is ambiguous in {self.path}")
        return RunRecord.from_row((exact or rows)[0])

    def update_run(
        self,
        run_id: str,
        *,
        status: str | None = None,
        seconds: float = 0.0,
        error: str | None = None,
        chat_format: str | None = None,
    ) -> None:
        """Change a run's status, add running time, record an error or the chat format; a run
        set running records this process (PID and host) as its writer."""
        writer = (os.getpid(), socket.gethostname()) if status == "running" else (None, None)
        if status is not None and not self.read_only:  # (the holder note says what it does)
            doing = "writing" if status == "running" else status
            update_holder_purpose(self.path, f"run {run_id}: {doing}")
        with self.transaction() as con:
            con.execute(
                "UPDATE runs SET status = coalesce(?, status), "
                "seconds_running = seconds_running + ?, "
                "error = coalesce(?, error), chat_format = coalesce(?, chat_format), "
                "writer_pid = coalesce(?, writer_pid), writer_host = coalesce(?, writer_host), "
                "updated_at = current_timestamp WHERE run_id = ?",
                [status, seconds, error, chat_format, *writer, run_id],
            )

    def orphaned_runs(self) -> set[str]:
        """Runs marked running whose writer is gone: a killed process. When this store holds the
        file itself no other process can be writing, so every run marked running but not by this
        process is orphaned; a snapshot (another process may write) checks the writer's PID on
        this host."""
        with self.reader() as cursor:  # (threads share the connection: a cursor each)
            rows = cursor.execute(
                "SELECT run_id, writer_pid, writer_host FROM runs WHERE status = 'running'"
            ).fetchall()
        host, own = socket.gethostname(), os.getpid()
        orphaned = set()
        for run_id, pid, writer_host in rows:
            if pid == own and writer_host == host:
                continue
            if not self.snapshot or (writer_host == host and (pid is None or not pid_alive(pid))):
                orphaned.add(str(run_id))
        return orphaned

    def shown_status(self, run_id: str, status: str) -> str:
        """The status to show: ``interrupted`` for a run whose writer is gone."""
        return "interrupted" if status == "running" and run_id in self.orphaned_runs() else status

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run with its progress, label, tags, suites (None: stored before suites) and
        mean SoS and RS, newest first (the one listing of runs: the CLI's ``haf runs``, the
        workbench's runs list and metrics screen)."""
        cursor = self.reader().execute(
            "SELECT r.run_id, r.created_at, r.status, r.model_file, r.dataset_id, r.n_planned, "
            "(SELECT count(*) FROM instance_results i WHERE i.run_id = r.run_id) AS n_done, "
            "(SELECT count(*) FROM generations g WHERE g.run_id = r.run_id) AS n_generations, "
            "r.similarity_model, r.seconds_running, r.label, r.tags, "
            "CAST(json_extract(r.config, '$.suites') AS VARCHAR[]) AS suites, "
            "(SELECT avg(value) FROM instance_metrics m WHERE m.run_id = r.run_id "
            "AND m.metric = 'sos') AS sos, "
            "(SELECT avg(value) FROM instance_metrics m WHERE m.run_id = r.run_id "
            "AND m.metric = 'rs') AS rs "
            "FROM runs r ORDER BY r.created_at DESC, r.run_id"
        )
        columns = [d[0] for d in cursor.description]
        runs = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        orphaned = self.orphaned_runs()
        for run in runs:
            if run["run_id"] in orphaned:
                run["status"] = "interrupted"
        return runs

    # ------------------------------------------------------------ results

    def generation_keys(self, run_id: str) -> set[tuple[str, str, int]]:
        """(instance, stage, sub_index) of every generation already stored for a run."""
        rows = self.connection.execute(
            "SELECT instance_id, stage, sub_index FROM generations WHERE run_id = ?", [run_id]
        ).fetchall()
        return {(r[0], r[1], int(r[2])) for r in rows}

    def finished_instances(self, run_id: str) -> set[str]:
        """Instances whose results (metrics) are stored: a resumed run skips them."""
        rows = self.connection.execute(
            "SELECT instance_id FROM instance_results WHERE run_id = ?", [run_id]
        ).fetchall()
        return {r[0] for r in rows}

    def instance_generations(self, run_id: str, instance_id: str) -> list[dict[str, Any]]:
        """An instance's stored generations with their reasons' texts and confidences and the
        sum of their tokens' logprobs."""
        cursor = self.connection.execute(
            "SELECT g.stage, g.sub_index, g.test, g.decision, g.decision_confidence, "
            "g.output_text, coalesce(list(r.text ORDER BY r.reason_index) "
            "FILTER (WHERE r.text IS NOT NULL), []) AS reason_texts, "
            "coalesce(list(r.confidence ORDER BY r.reason_index) "
            "FILTER (WHERE r.text IS NOT NULL), []) AS reason_confidences, "
            "(SELECT sum(t.logprob) FROM tokens t WHERE t.run_id = g.run_id AND "
            "t.instance_id = g.instance_id AND t.stage = g.stage AND t.sub_index = g.sub_index) "
            "AS logprob_sum "
            "FROM generations g LEFT JOIN reasons r USING (run_id, instance_id, stage, sub_index) "
            "WHERE g.run_id = ? AND g.instance_id = ? "
            "GROUP BY ALL ORDER BY g.stage, g.sub_index",
            [run_id, instance_id],
        )
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def save_generation(self, record: GenerationRecord) -> None:
        """One generation with its tokens, reasons and diagnostics, atomically."""
        g = record
        key = [g.run_id, g.instance_id, g.stage, g.sub_index]
        tokens = g.tokens
        with self.transaction() as con:
            con.execute(
                "INSERT INTO generations VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, current_timestamp)",
                [
                    *key,
                    g.test,
                    g.seed,
                    g.prompt_text,
                    g.prompt_tokens,
                    g.output_text,
                    len(tokens),
                    g.finish_reason,
                    g.decision,
                    g.decision_source,
                    g.decision_sentence,
                    g.decision_start,
                    g.decision_end,
                    null_for_nan(g.decision_confidence),
                    g.seconds,
                ],
            )
            if tokens:
                con.execute(
                    "INSERT INTO tokens SELECT ?, ?, ?, ?, unnest(?::INTEGER[]), "
                    "unnest(?::INTEGER[]), unnest(?::BLOB[]), unnest(?::VARCHAR[]), "
                    "unnest(?::INTEGER[]), unnest(?::INTEGER[]), unnest(?::DOUBLE[]), "
                    "unnest(?::INTEGER[][]), unnest(?::DOUBLE[][]), unnest(?::VARCHAR[][])",
                    [
                        *key,
                        list(range(len(tokens))),
                        [t.token_id for t in tokens],
                        [t.piece for t in tokens],
                        [t.text for t in tokens],
                        [t.byte_offset for t in tokens],
                        [t.char_offset for t in tokens],
                        [t.logprob for t in tokens],
                        [list(t.top_ids) for t in tokens],
                        [list(t.top_logprobs) for t in tokens],
                        [list(t.top_texts) for t in tokens],
                    ],
                )
            for r in g.reasons:
                con.execute(
                    "INSERT INTO reasons VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        *key,
                        r.reason_index,
                        r.text,
                        r.span_start,
                        r.span_end,
                        r.token_first,
                        r.token_count,
                        list(r.nll),
                        list(r.relevance),
                        null_for_nan(r.confidence),
                    ],
                )
            for kind, detail in g.diagnostics:
                con.execute(
                    "INSERT INTO parse_diagnostics VALUES (?, ?, ?, ?, ?, ?)", [*key, kind, detail]
                )

    def save_instance_result(self, result: InstanceResult) -> None:
        """An instance's stance, metrics and its suites' rows in their methods'
        tables (``result.rows``), atomically: marks the instance finished."""
        with self.transaction() as con:
            con.execute(
                "INSERT INTO instance_results VALUES (?, ?, ?, ?, ?, current_timestamp)",
                [
                    result.run_id,
                    result.instance_id,
                    result.stance,
                    result.n_reasons,
                    result.stopped,
                ],
            )
            if result.reason_metrics:
                con.executemany(
                    "INSERT INTO reason_metrics VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        [result.run_id, result.instance_id, *m[:4], null_for_nan(m[4])]
                        for m in result.reason_metrics
                    ],
                )
            if result.instance_metrics:
                con.executemany(
                    "INSERT INTO instance_metrics VALUES (?, ?, ?, ?, ?)",
                    [
                        [result.run_id, result.instance_id, m[0], null_for_nan(m[1]), m[2]]
                        for m in result.instance_metrics
                    ],
                )
            insert_method_rows(con, result.run_id, result.instance_id, result.rows)

    def query(
        self,
        sql: str,
        parameters: Sequence[Any] | dict[str, Any] | None = None,
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run SQL; returns (column names, rows)."""
        try:
            cursor = self.reader().execute(sql, parameters)
            if cursor.description is None:
                return [], []
            return [d[0] for d in cursor.description], cursor.fetchall()
        except duckdb.Error as exc:
            if is_damaged_file_error(exc):
                raise damaged_file_error(exc, self.path) from exc
            raise StoreError(f"query failed: {first_line(exc)}") from exc

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
            with sandboxed_cursor(self.connection) as cursor:
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
        foreign = store.foreign_tables()
        if foreign:
            shown = ", ".join(foreign[:4]) + (", …" if len(foreign) > 4 else "")
            raise StoreError(
                f"{db_path} is not a haf-tui database (it holds {shown}): pass another --db"
            )
        store.migrate()
        if read_only and store.needs_migration():
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
