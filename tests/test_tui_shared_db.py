"""The workbench and the CLI share one database (issue 18 §2): the app holds the file only
while it reads, a writer started meanwhile gets it, a run another process writes appears in
the runs list and its monitor follows it, and a locked file's error names its holder.

DuckDB's file locks are per process (opens inside one process share one instance), so the
other side is always a subprocess."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from benchmarks.benchdata import build_bench_db
from haf_tui.store import StoreError, StoreLockedError, open_store
from haf_tui.store.holder import HolderNote, holder_note_path, read_holder_note
from haf_tui.tui import app_runs as app_module
from haf_tui.tui import create_app
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.store_reader import StoreReader
from tests.support import settle

ROOT = Path(__file__).resolve().parent.parent

HOLDER = """\
import sys
from haf_tui.store import open_store

db, run_id = sys.argv[1], sys.argv[2]
with open_store(db, purpose="starting") as store:
    template = store.get_run(str(store.list_runs()[0]["run_id"]))
    store.create_run(template.model_copy(update={"run_id": run_id, "status": "created"}))
    store.update_run(run_id, status="running")
    print("ready", flush=True)
    sys.stdin.readline()
    store.update_run(run_id, status="finished")
print("done", flush=True)
"""
"""A CLI run in miniature: holds the file for writing with a run marked running until told
to finish it (a line on stdin)."""

WRITE_ONCE = """\
import sys
from haf_tui.store import open_store

with open_store(sys.argv[1]) as store:
    template = store.get_run(str(store.list_runs()[0]["run_id"]))
    store.create_run(template.model_copy(update={"run_id": sys.argv[2], "status": "finished"}))
print("written", flush=True)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _db(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "haf.duckdb"
    (run_id,) = build_bench_db(db, n_instances=3, n_runs=1, seed=1)
    return db, run_id


def _run_keys(pilot: Pilot[None]) -> list[str]:
    table = pilot.app.screen.query_one("#runs", DataTable)
    return [str(key.value) for key in table.rows]


async def _until(pilot: Pilot[None], ok: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < deadline, "the workbench did not catch up in time"
        await pilot.pause(0.2)


async def test_an_idle_workbench_lets_a_cli_run_write_and_shows_its_run(tmp_path: Path) -> None:
    db, first = _db(tmp_path)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert _run_keys(pilot) == [first]
        await _until(pilot, lambda: not app.reader.holds_file)  # (after its idle grace)
        script = _script(tmp_path, "write_once.py", WRITE_ONCE)
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, str(script), str(db), "from-cli"],
            capture_output=True,
            text=True,
            env=_env(),
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        await _until(pilot, lambda: "from-cli" in _run_keys(pilot))
        assert _run_keys(pilot) == ["from-cli", first]  # (newest first)
        assert isinstance(app.screen, HomeScreen) and app.screen.selected_run() == first
        with app.reader.reading() as store:
            assert store.get_run("from-cli").status == "finished"


async def test_a_run_another_process_writes_is_listed_and_followed(tmp_path: Path) -> None:
    db, first = _db(tmp_path)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert _run_keys(pilot) == [first]
        script = _script(tmp_path, "haf_holder.py", HOLDER)
        holder = await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            str(db),
            "cli-live",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=_env(),
        )
        try:
            assert holder.stdout is not None and holder.stdin is not None
            line = await asyncio.wait_for(holder.stdout.readline(), 30)
            assert line.decode().strip() == "ready"

            await _until(pilot, lambda: "cli-live" in _run_keys(pilot))
            home = app.screen
            assert isinstance(home, HomeScreen) and home.selected_run() == first
            assert app.reader.snapshot
            assert "snapshot" in str(home.query_one("#runs-hint", Static).render())
            table = home.query_one("#runs", DataTable)
            assert table.get_row_at(table.get_row_index("cli-live"))[1] == "running"

            with pytest.raises(StoreLockedError) as locked:  # who holds it, and what for
                open_store(db, read_only=True)
            message = str(locked.value)
            assert "\n" not in message
            assert f"PID {holder.pid}" in message, message
            assert "haf_holder.py" in message and "run cli-live: writing" in message, message
            note = read_holder_note(db)
            assert note is not None and note.pid == holder.pid

            await pilot.press("up")  # (the new run is listed first)
            assert home.selected_run() == "cli-live"
            await pilot.press("enter")
            await settle(pilot)
            monitor = app.screen
            assert isinstance(monitor, MonitorScreen)
            stats = monitor.query_one("#mon-stats", Static)
            await _until(pilot, lambda: str(stats.render()).startswith("running"))

            holder.stdin.write(b"finish\n")
            await holder.stdin.drain()
            assert (await asyncio.wait_for(holder.stdout.readline(), 30)).strip() == b"done"
            await asyncio.wait_for(holder.wait(), 30)
            await _until(pilot, lambda: str(stats.render()).startswith("finished"))
        finally:
            if holder.returncode is None:
                holder.kill()
                await holder.wait()
        assert not holder_note_path(db).exists()
        with app.reader.reading() as store:
            assert store.get_run("cli-live").status == "finished"


async def test_a_run_started_here_holds_the_file_only_while_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R on an unfinished run: the app takes the writer (with its note) for the run, then lets
    the file go, so a CLI writer gets it (the model and the pipeline are stand-ins)."""
    db, first = _db(tmp_path)
    with open_store(db) as store:
        store.update_run(first, status="interrupted")
    seen: dict[str, Any] = {}

    def start(store: Any, request: Any) -> Any:
        models = SimpleNamespace(backend=SimpleNamespace(close=lambda: None))
        return SimpleNamespace(run_id=request.resume_run_id, config=None, models=models)

    def execute(store: Any, run_id: str, config: Any, models: Any, **_: Any) -> Any:
        store.update_run(run_id, status="running")
        seen["note"], seen["read_only"] = read_holder_note(db), store.read_only
        store.update_run(run_id, status="finished")
        return SimpleNamespace(status="finished")

    monkeypatch.setattr(app_module, "start_or_resume", start)
    monkeypatch.setattr(app_module, "execute_run", execute)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await _until(pilot, lambda: app.session is not None and not app.session.active)
        await settle(pilot)
        assert app.session is not None and app.session.runs[0].status == "finished"
        assert seen["read_only"] is False
        note = seen["note"]
        assert note is not None and note.pid == os.getpid()
        assert note.purpose == f"run {first}: writing"
        assert not holder_note_path(db).exists()  # (the writer is gone)
        await _until(pilot, lambda: not app.reader.holds_file)
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", "import sys; from haf_tui.store import open_store; "
             "s = open_store(sys.argv[1]); print(s.get_run(sys.argv[2]).status)",
             str(db), first],
            capture_output=True, text=True, env=_env(), timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "finished"


def test_the_lock_error_names_the_holder_and_ignores_a_stale_note(tmp_path: Path) -> None:
    db, _ = _db(tmp_path)
    stale = HolderNote(
        pid=2**22 + 7, command="haf run", purpose="gone-xyz", started_at=datetime(2026, 1, 1)
    )
    holder_note_path(db).write_text(stale.model_dump_json())
    assert read_holder_note(db) is None  # (a dead PID: ignored)
    script = _script(tmp_path, "haf_holder.py", HOLDER)
    holder = subprocess.Popen(
        [sys.executable, str(script), str(db), "ab12cd"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "ready"
        started = time.monotonic()
        with pytest.raises(StoreLockedError) as locked:
            open_store(db, wait_seconds=0.5)  # a writer waits, then names the holder
        assert time.monotonic() - started >= 0.5
        message = str(locked.value)
        assert message.startswith(f"database {db} is locked by PID {holder.pid} ")
        assert "(`haf_holder.py " in message and ", run ab12cd: writing, since " in message
        assert "\n" not in message and "gone-xyz" not in message
        with pytest.raises(StoreError, match=f"in use by PID {holder.pid} "):
            StoreReader(db).writable()  # the app starting a run says the same
        holder.stdin.write("finish\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "done"
    finally:
        holder.kill()
        holder.wait()
    assert not holder_note_path(db).exists()


def test_reads_share_one_connection_and_let_the_file_go_when_idle(tmp_path: Path) -> None:
    db, first = _db(tmp_path)
    # (a long grace first: "in quick succession" holds however slow the machine; then a
    # short one, waited out with a generous deadline, not a sleep a loaded machine overruns)
    reader = StoreReader(db, idle_seconds=60)
    try:
        with reader.reading() as store:
            assert store.get_run(first).status == "finished"
        with reader.reading() as again:  # (keys in quick succession: the same connection)
            assert again.cursor_of is store.cursor_of and reader.holds_file
        reader.idle_seconds = 0.3
        with reader.reading() as once_more:
            assert once_more.cursor_of is store.cursor_of
        deadline = time.monotonic() + 30
        while reader.holds_file and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not reader.holds_file
        with reader.reading(linger=False):
            pass
        assert not reader.holds_file
        writer = reader.writable("run x: writing")
        with reader.reading() as through:  # (a run here writes: reads use its connection)
            assert through.cursor_of is writer and not through.read_only
        note = read_holder_note(db)
        assert note is not None and note.pid == os.getpid() and note.purpose == "run x: writing"
        reader.release_writer()
        assert not reader.holds_file and not holder_note_path(db).exists()
    finally:
        reader.close()
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from haf_tui.store import open_store; "
         "open_store(sys.argv[1], wait_seconds=0).close()", str(db)],
        capture_output=True, text=True, env=_env(), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_reads_in_a_row_start_one_thread_to_let_the_file_go(tmp_path: Path) -> None:
    """A read's end starts no thread of its own (each read of a screen opening waited for one
    to start): one waits to let the file go, moved on by each read's end, and ends with it."""
    db, first = _db(tmp_path)
    reader = StoreReader(db, idle_seconds=60)

    def closers() -> int:  # (this reader's: another test's may still be waiting)
        return sum(t.name == f"store-idle {id(reader):x}" for t in threading.enumerate())

    try:
        for _ in range(20):
            with reader.reading() as store:
                store.get_run(first)
        assert closers() == 1 and reader.holds_file
        reader.idle_seconds = 0.2  # (sooner than the deadline it waits for: woken for it)
        with reader.reading():
            pass
        deadline = time.monotonic() + 30
        while (reader.holds_file or closers()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not reader.holds_file and closers() == 0
        reader.idle_seconds = 60
        with reader.reading():
            pass
        assert closers() == 1
        reader.close()  # (the file let go now: the closer waiting ends with it)
        deadline = time.monotonic() + 10
        while closers() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not reader.holds_file and closers() == 0
    finally:
        reader.close()


def test_an_older_file_is_read_from_a_copy_that_locks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of an older schema is read through an upgraded copy: kept (no lock on the file)
    until the file changes, so it is not copied again for every read."""
    from haf_tui.store import db as store_db
    from haf_tui.store.migrations import MIGRATIONS

    path = tmp_path / "old.duckdb"
    monkeypatch.setattr(store_db, "MIGRATIONS", MIGRATIONS[:1])
    monkeypatch.setattr(store_db, "LATEST_VERSION", 1)
    open_store(path).close()
    monkeypatch.undo()
    reader = StoreReader(path, idle_seconds=0.1)
    try:
        with reader.reading() as copy:
            assert copy.copied and reader.reads_copy and not reader.holds_file
        time.sleep(0.3)
        reader.refresh()  # (the file did not change: the copy stays)
        with reader.reading() as again:
            assert again.cursor_of is copy.cursor_of
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from haf_tui.store import open_store; "
             "from haf_tui.methods.loader import load_methods; load_methods(); "
             "open_store(sys.argv[1], wait_seconds=0).close()", str(path)],
            capture_output=True, text=True, env=_env(), timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr  # (the CLI migrates the file meanwhile)
        reader.refresh()
        with reader.reading() as fresh:
            assert fresh.cursor_of is not copy.cursor_of and not fresh.copied and reader.holds_file
    finally:
        reader.close()
