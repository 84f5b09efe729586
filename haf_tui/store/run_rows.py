"""The store's datasets and runs: a dataset and its instances stored once (streamed in, in one
transaction), a run's row created, read, updated, and the listing of runs with the ones whose
writer is gone shown ``interrupted`` (a part of :class:`~haf_tui.store.db.Store`)."""

from __future__ import annotations

import json
import os
import socket
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import duckdb

from haf_tui.store.connection import StoreError
from haf_tui.store.holder import pid_alive, update_holder_purpose
from haf_tui.store.records import InstanceRecord, RunRecord
from haf_tui.store.skips import skipped_payload, write_skipped
from haf_tui.store.store_base import StoreBase

INSTANCE_BATCH = 10_000
"""Instances inserted by one statement (and held until it runs: at 50,000 a 200 MB CSV's
import took 130 MB more, DuckDB's share of it too)."""


def _insert_instances(
    con: duckdb.DuckDBPyConnection, dataset_id: str, batch: Sequence[InstanceRecord]
) -> int:
    """Insert a batch of a dataset's instances (inside a transaction); returns how many."""
    if batch:
        # one statement of arrays (executemany is row by row, and slow); a batch at a time:
        # the arrays of a million instances at once took gigabytes (issue 42 §6)
        con.execute(
            "INSERT INTO instances SELECT ?, unnest(?::VARCHAR[]), unnest(?::INTEGER[]), "
            "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[])::JSON",
            [
                dataset_id,
                [i.instance_id for i in batch],
                [i.position for i in batch],
                [i.text for i in batch],
                [i.label for i in batch],
                [json.dumps(i.extra) for i in batch],
            ],
        )
    return len(batch)


class RunRows(StoreBase):
    """Datasets and runs."""

    def save_dataset(
        self,
        dataset_id: str,
        name: str,
        source: str,
        rows: Iterable[InstanceRecord | Sequence[Any]],
        meta: dict[str, Any] | Callable[[], dict[str, Any]] | None = None,
    ) -> bool:
        """Store a dataset and its rows once, in one transaction; False when the id is stored
        already (then ``rows`` are not read). ``rows``: its instances and its skipped rows
        ``(row, reason[, excerpt])``, in any order, read as they come and inserted
        :data:`INSTANCE_BATCH` at a time (a file's rows are never all held: issue 42 §6); an
        error or Ctrl-C while they are read leaves nothing. ``meta`` (or what it returns once
        ``rows`` are read), with the skipped rows it lists (``meta['skipped']``), is the
        dataset's metadata; ``skipped_counts`` counts every skipped row by reason."""
        with self.transaction() as con:
            if con.execute("SELECT 1 FROM datasets WHERE dataset_id = ?", [dataset_id]).fetchone():
                return False
            instances: list[InstanceRecord] = []
            skipped: list[Sequence[Any]] = []
            counts: Counter[str] = Counter()
            n_instances = 0
            for row in rows:
                if isinstance(row, InstanceRecord):
                    instances.append(row)
                    if len(instances) >= INSTANCE_BATCH:
                        n_instances += _insert_instances(con, dataset_id, instances)
                        instances = []
                else:
                    skipped.append(row)
                    counts[str(row[1])] += 1
                    if len(skipped) >= INSTANCE_BATCH:
                        write_skipped(con, dataset_id, skipped)
                        skipped = []
            n_instances += _insert_instances(con, dataset_id, instances)
            rest, listed = skipped_payload(meta() if callable(meta) else meta or {})
            write_skipped(con, dataset_id, [*skipped, *listed])
            every = Counter(str(s[1]) for s in listed) + counts
            if every:
                rest["skipped_counts"] = dict(every)
            con.execute(
                "INSERT INTO datasets (dataset_id, name, source, created_at, n_instances, meta) "
                "VALUES (?, ?, ?, current_timestamp, ?, ?)",
                [dataset_id, name, source, n_instances, json.dumps(rest)],
            )
        return True

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

    def run_ids_starting(self, prefix: str) -> list[str]:
        """The ids of the runs whose id starts with ``prefix``, in order."""
        rows = self.connection.execute(
            "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id", [prefix]
        ).fetchall()
        return [str(row[0]) for row in rows]

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
        with self.transaction() as con:
            self.update_run_in(
                con, run_id, status=status, seconds=seconds, error=error, chat_format=chat_format
            )

    def update_run_in(
        self,
        con: duckdb.DuckDBPyConnection,
        run_id: str,
        *,
        status: str | None = None,
        seconds: float = 0.0,
        error: str | None = None,
        chat_format: str | None = None,
    ) -> None:
        """:meth:`update_run` inside the caller's transaction ``con`` (a re-score's first and
        last writes carry the run's status: a transaction, a commit, less)."""
        writer = self.writer_for(run_id, status)
        con.execute(
            "UPDATE runs SET status = coalesce(?, status), "
            "seconds_running = seconds_running + ?, "
            "error = coalesce(?, error), chat_format = coalesce(?, chat_format), "
            "writer_pid = coalesce(?, writer_pid), writer_host = coalesce(?, writer_host), "
            "updated_at = current_timestamp WHERE run_id = ?",
            [status, seconds, error, chat_format, *writer, run_id],
        )

    def writer_for(self, run_id: str, status: str | None) -> tuple[int, str] | tuple[None, None]:
        """The writer (PID, host) a run set to ``status`` records: this process's when it is
        set running, else none (the last writer stays); the holder note says what this
        process does with the run."""
        if status is not None and not self.read_only:
            doing = "writing" if status == "running" else status
            update_holder_purpose(self.path, f"run {run_id}: {doing}")
        return (os.getpid(), socket.gethostname()) if status == "running" else (None, None)

    def account_unstored_time(self, run_id: str) -> float:
        """Add to a run's ``seconds_running`` the time a session worked after it last stored
        its time (a process killed before it could: SIGKILL, a crash): the span from the
        run's ``updated_at`` to its last generation stored after it. Called before a resume
        goes on; the seconds added (0 when none), counted once (``updated_at`` moves on)."""
        with self.transaction() as con:
            row = con.execute(
                "SELECT epoch(max(g.created_at)) - epoch(r.updated_at) FROM runs r "
                "JOIN generations g ON g.run_id = r.run_id AND g.created_at > r.updated_at "
                "WHERE r.run_id = ? GROUP BY r.updated_at",
                [run_id],
            ).fetchone()
            gap = float(row[0]) if row is not None and row[0] is not None else 0.0
            if gap <= 0:
                return 0.0
            con.execute(
                "UPDATE runs SET seconds_running = seconds_running + ?, "
                "updated_at = current_timestamp WHERE run_id = ?",
                [gap, run_id],
            )
        return gap

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
