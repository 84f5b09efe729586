"""Threads reading the store at once through the app's reader each get their own rows.

The reader shares one connection between the threads that read at the same time. A DuckDB
connection holds one pending result, so two threads executing on it at once were refused
("connection is busy with another call") or fetched each other's rows: the explorer opened as
the runs list read ahead failed, 1 time in about 50, with "zip() argument 2 is shorter than
argument 1" (a run's row read from another query's result). Each read is now on a cursor of
its own."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.store import Store
from haf_tui.tui.store_reader import StoreReader

ROUNDS = 150


@pytest.fixture(scope="module")
def bench_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("side-by-side") / "haf.duckdb"
    build_bench_db(path, n_instances=40, n_runs=2, seed=3)
    return path


def _side_by_side(reader: StoreReader, reads: list[Callable[[Store], object]]) -> list[str]:
    """Run each read ``ROUNDS`` times in a thread of its own, all at once (each round within
    one :meth:`StoreReader.reading`); what went wrong, as lines."""
    problems: list[str] = []
    start = threading.Barrier(len(reads))

    def reading(read: Callable[[Store], object]) -> None:
        start.wait()
        for _ in range(ROUNDS):
            try:
                with reader.reading() as store:
                    read(store)
            except Exception as exc:  # (gathered: the test says which)
                problems.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=reading, args=(read,)) for read in reads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return problems


def test_threads_reading_at_once_each_get_their_own_rows(bench_db: Path) -> None:
    reader = StoreReader(bench_db)
    with reader.reading() as store:
        run_ids = [str(row["run_id"]) for row in store.list_runs()]
        columns, instances = store.query("SELECT instance_id, text FROM instances")
    assert len(run_ids) == 2 and len(instances) >= 40 and columns == ["instance_id", "text"]

    def the_run(run_id: str) -> Callable[[Store], object]:
        def read(store: Store) -> None:
            assert store.get_run(run_id).run_id == run_id

        return read

    def the_instances(store: Store) -> None:
        assert store.query("SELECT instance_id, text FROM instances") == (columns, instances)

    try:
        reads = [the_run(run_ids[0]), the_run(run_ids[1]), the_instances, the_instances]
        assert _side_by_side(reader, reads) == []
    finally:
        reader.close()


def test_a_read_is_on_a_cursor_closed_after_it(bench_db: Path) -> None:
    """Each read gets a store of its own on the one connection, closed as the read ends; the
    reader's own store (and a snapshot's copy) is left as it was."""
    reader = StoreReader(bench_db)
    try:
        with reader.reading() as first, reader.reading() as second:
            assert first is not second and first.connection is not second.connection
            assert first.cursor_of is second.cursor_of is not None  # (one connection)
            assert first.path == second.path == bench_db
        with pytest.raises(Exception, match="closed"):
            first.query("SELECT 1")
        with reader.reading() as third:
            assert third.query("SELECT 1 AS one") == (["one"], [(1,)])
    finally:
        reader.close()
