"""What the workbench keeps from a read is keyed by the state of what it read (issue 44 §2's
kept reads): while another process holds the database, reads go to a snapshot, and the
snapshot's contents are the file's when it was copied, not the file's now. A value read from
the snapshot and kept under the live file's newer state was shown again after the snapshot
was taken anew (until the next write changed the state). The other process is real: a second
Python process holding the DuckDB file for writing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.store import Store, StoreLockedError, open_store
from haf_tui.store import open_snapshot as real_open_snapshot
from haf_tui.tui import store_reader
from haf_tui.tui.run_cache import RunCache, database_state
from haf_tui.tui.store_reader import StoreReader
from tests.test_tui_metrics_kept import aged

ROOT = Path(__file__).resolve().parent.parent

HOLDER = """\
import sys
from haf_tui.store import open_store

db, run_id = sys.argv[1], sys.argv[2]
with open_store(db, purpose="run: writing") as store:
    template = store.get_run(str(store.list_runs()[0]["run_id"]))
    store.create_run(template.model_copy(update={"run_id": run_id, "status": "created"}))
    store.update_run(run_id, status="running")
    print("ready", flush=True)
    sys.stdin.readline()
    store.update_run(run_id, status="finished")
    print("written", flush=True)
    sys.stdin.readline()
"""
"""A CLI run in miniature: holds the file for writing, marks its run finished when told, and
holds on until told again."""


def _age(db: Path, later: float) -> None:
    """The file and its write-ahead log as if last written long ago (``later`` s apart)."""
    for part in (db, db.with_name(db.name + ".wal")):
        if part.exists():
            aged(part, later)


def test_what_is_kept_from_a_snapshot_is_keyed_by_the_snapshot_s_state(tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=2, n_runs=1, seed=1)
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    holder = subprocess.Popen(
        [sys.executable, str(script), str(db), "r-other"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    reader = StoreReader(db)
    kept = RunCache()

    def shown() -> str:
        """The other process's run's status, read and kept as a screen keeps what it reads
        (the state taken before reading)."""
        state = reader.database_state()
        assert state is not None
        with reader.reading() as store:
            assert reader.snapshot
            return kept.computed_once((state, "r-other"), lambda: store.get_run("r-other").status)

    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "ready"
        _age(db, 0.0)
        copied = database_state(db)
        assert shown() == "running"
        assert reader.database_state() == copied  # (the snapshot's)
        holder.stdin.write("finish\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "written"
        _age(db, 60.0)  # (at rest again: its state trusted)
        live = database_state(db)
        assert live is not None and live != copied
        # the snapshot is read until it is taken anew: what is read from it is the copy's
        assert reader.database_state() == copied
        assert shown() == "running"
        reader.refresh()  # (the file changed: a new snapshot next)
        assert reader.database_state() == live
        assert shown() == "finished"  # (was "running", kept under the live state just above)
        assert kept.computed == 2
    finally:
        reader.close()
        holder.kill()
        holder.wait()


def test_the_screens_take_the_state_from_the_reader_not_from_the_file() -> None:
    """The explorer, the metrics screen and the read-ahead key what they keep by
    ``StoreReader.database_state`` (a snapshot's when reads go to one); only the reader asks
    the file itself."""
    tui = ROOT / "haf_tui" / "tui"
    asking = sorted(
        str(path.relative_to(tui))
        for path in tui.rglob("*.py")
        if re.search(r"(?<![.\w])database_state\(", path.read_text())
    )
    assert asking == ["run_cache.py", "store_reader.py"]


DEADLINE = 120.0  # (generous: only "never" fails)


def test_the_state_asked_while_a_snapshot_is_being_copied_is_the_copy_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A screen asking the state while another thread is still opening a snapshot gets the
    state of the file the snapshot was copied from, not the file's now: another process may
    have written it since the copy (it got the live file's newer state, and kept the older
    copy's values under it until the next write)."""
    db = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(db, n_instances=2, n_runs=1, seed=1)
    _age(db, 0.0)
    copied, go = threading.Event(), threading.Event()

    def held(*_: Any, **__: Any) -> Store:
        raise StoreLockedError("held by a run", holder="PID 1")

    def slow_snapshot(path: Path) -> Store:
        snapshot = real_open_snapshot(path)
        copied.set()  # (copied: the other process writes now, before the copy is opened)
        assert go.wait(DEADLINE)
        return snapshot

    monkeypatch.setattr(store_reader, "open_store", held)
    monkeypatch.setattr(store_reader, "open_snapshot", slow_snapshot)
    reader = StoreReader(db)
    waiting = threading.Event()

    class Noted(threading.Condition):
        """The reader's lock, saying when a thread waits on it."""

        def wait(self, timeout: float | None = None) -> bool:
            waiting.set()
            return super().wait(timeout)

    lock = threading.RLock()  # (the closer's condition is on the reader's lock too)
    reader._state, reader._idle_wake = Noted(lock), threading.Condition(lock)
    before = database_state(db)
    statuses: list[str] = []

    def first_reader() -> None:
        with reader.reading() as store:
            statuses.append(store.get_run(run_id).status)

    opening = threading.Thread(target=first_reader)
    opening.start()
    try:
        assert copied.wait(DEADLINE)
        with open_store(db) as writer:  # (the other process's write, after the copy)
            writer.update_run(run_id, status="interrupted")
        _age(db, 60.0)
        live = database_state(db)
        assert before is not None and live is not None and live != before
        asked: list[Any] = []
        asking = threading.Thread(target=lambda: asked.append(reader.database_state()))
        asking.start()
        deadline = time.monotonic() + DEADLINE
        while not (asked or waiting.is_set()):  # (answered at once, or waiting for the copy)
            assert time.monotonic() < deadline
            waiting.wait(0.05)
        go.set()
        asking.join(DEADLINE)
        opening.join(DEADLINE)
        assert statuses and statuses[0] != "interrupted"  # (the copy is the file before)
        assert asked == [before]
    finally:
        go.set()
        opening.join(DEADLINE)
        reader.close()


def test_what_is_kept_from_an_upgraded_copy_is_keyed_by_the_copy_s_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of an older schema is read through an upgraded copy, kept until the file
    changes: a CLI migrating the file meanwhile does not change the copy, so what is read from
    it is keyed by the file's state when it was copied until the copy is taken anew."""
    from haf_tui.store import db as store_db
    from haf_tui.store.migrations import MIGRATIONS

    path = tmp_path / "old.duckdb"
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:1])
    monkeypatch.setattr(store_db, "LATEST_VERSION", 1)
    open_store(path).close()
    monkeypatch.undo()
    _age(path, 0.0)
    copied = database_state(path)
    reader = StoreReader(path)
    try:
        with reader.reading():
            assert reader.reads_copy and not reader.snapshot
        migrated = subprocess.run(
            [sys.executable, "-c", "import sys; from haf_tui.store import open_store; "
             "from haf_tui.methods.loader import load_methods; load_methods(); "
             "open_store(sys.argv[1], wait_seconds=0).close()", str(path)],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=DEADLINE,
        )  # fmt: skip
        assert migrated.returncode == 0, migrated.stderr
        _age(path, 60.0)
        live = database_state(path)
        assert copied is not None and live is not None and live != copied
        assert reader.database_state() == copied  # (the copy is still read)
        reader.refresh()  # (the file changed: read itself next)
        assert reader.database_state() == live
    finally:
        reader.close()
