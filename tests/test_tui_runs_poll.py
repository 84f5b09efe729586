"""The runs list's poll reads the runs again only when what they are read from may have changed:
the database file (or its write-ahead log) or the pending annotations' file; a database
written in the last moments, read through a copy (another process writes), or a last read that
failed is read again at every poll."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.store import StoreError
from haf_tui.store.pending_annotations import pending_path
from haf_tui.store.readers import run_overviews
from haf_tui.tui import create_app
from haf_tui.tui.screens import home as home_screen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.store_reader import StoreReader
from tests.support import settle

NEVER = 10_000.0
"""A time no timer reaches in a test (the polls are made by the test itself)."""
AN_HOUR = 3600


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runs-poll") / "template.duckdb"
    build_bench_db(path, n_instances=4, n_runs=2, seed=3)
    return path


@pytest.fixture
def db(template_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy written an hour ago, a HAF home of the test's own (its pending annotations'
    file); the list polled only when the test says (no read ahead)."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    _written(path, AN_HOUR)
    for name in ("POLL_SECONDS", "REST_SECONDS", "FIRST_REST_SECONDS"):
        monkeypatch.setattr(home_screen, name, NEVER)
    return path


def _written(path: Path, seconds_ago: float) -> None:
    at = time.time() - seconds_ago
    os.utime(path, (at, at))


def _reads(monkeypatch: pytest.MonkeyPatch, fail: list[bool]) -> list[str]:
    """The list's reads (one entry each); while ``fail`` holds True, each fails."""
    reads: list[str] = []

    def counted(store: Any) -> Any:
        reads.append("runs")
        if fail[0]:
            raise StoreError("a planted failure")
        return run_overviews(store)

    monkeypatch.setattr(home_screen, "run_overviews", counted)
    return reads


async def _polled(pilot: Any, home: HomeScreen) -> None:
    home.poll_runs()
    await settle(pilot)


async def test_an_unchanged_database_is_not_read_again(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail = [False]
    reads = _reads(monkeypatch, fail)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen) and reads == ["runs"]
        await _polled(pilot, home)
        await _polled(pilot, home)
        assert reads == ["runs"]  # (nothing changed: the store not even opened)
        _written(db, 60)  # (written since, a while ago)
        await _polled(pilot, home)
        assert len(reads) == 2
        await _polled(pilot, home)
        assert len(reads) == 2
        _written(db, 0)  # (written just now: its state is not trusted yet)
        await _polled(pilot, home)
        await _polled(pilot, home)
        assert len(reads) == 4
        _written(db, 30)
        pending_path().parent.mkdir(parents=True, exist_ok=True)
        await _polled(pilot, home)
        assert len(reads) == 5
        pending_path().write_text("a\n")  # (the pending annotations' file, written just now:
        await _polled(pilot, home)  # read at every poll until it is a few seconds old)
        await _polled(pilot, home)
        assert len(reads) == 7
        _written(pending_path(), 60)
        await _polled(pilot, home)
        await _polled(pilot, home)
        assert len(reads) == 8
        pending_path().write_text("b\n")  # (rewritten, the same size, a while ago)
        _written(pending_path(), 50)
        await _polled(pilot, home)
        assert len(reads) == 9
        await _polled(pilot, home)
        assert len(reads) == 9


async def test_a_change_made_during_a_read_is_read_at_the_next_poll(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the list is read from is taken before the read: the pending annotations' file
    rewritten while the runs are being read is read again at the next poll."""
    fail = [False]
    reads = _reads(monkeypatch, fail)
    rewrite = [False]
    real_pending = home_screen.pending

    def rewritten_meanwhile(path: Path) -> Any:
        found = real_pending(path)
        if rewrite[0]:
            rewrite[0] = False
            pending_path().write_text("changed during the read\n")
            _written(pending_path(), 40)
        return found

    monkeypatch.setattr(home_screen, "pending", rewritten_meanwhile)
    pending_path().parent.mkdir(parents=True, exist_ok=True)
    pending_path().write_text("\n")
    _written(pending_path(), 60)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen) and reads == ["runs"]
        rewrite[0] = True
        home.load_runs()
        await settle(pilot)
        assert len(reads) == 2 and not rewrite[0]
        await _polled(pilot, home)
        assert len(reads) == 3
        await _polled(pilot, home)
        assert len(reads) == 3


async def test_a_hidden_list_is_not_read_even_after_a_change(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail = [False]
    reads = _reads(monkeypatch, fail)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen) and reads == ["runs"]
        monkeypatch.setattr(home, "poll_due", lambda: False)  # (under a full screen)
        _written(db, 60)
        await _polled(pilot, home)
        assert reads == ["runs"]


async def test_a_failed_read_is_made_again_at_the_next_poll(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail = [False]
    reads = _reads(monkeypatch, fail)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen) and reads == ["runs"]
        fail[0] = True
        home.load_runs()  # (as a return to the list reads it: nothing changed on disk)
        await settle(pilot)
        assert str(home.query_one("#runs-hint").render()).startswith("could not read")
        fail[0] = False
        await _polled(pilot, home)  # (nothing changed since, but the last read failed)
        assert len(reads) == 3
        assert str(home.query_one("#runs-hint").render()).startswith("2 runs")


async def test_a_database_read_through_a_copy_is_read_at_every_poll(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail = [False]
    reads = _reads(monkeypatch, fail)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen) and reads == ["runs"]
        monkeypatch.setattr(StoreReader, "reads_copy", property(lambda self: True))
        monkeypatch.setattr(app.reader, "refresh", lambda: None)  # (no snapshot to take)
        await _polled(pilot, home)
        await _polled(pilot, home)
        assert len(reads) == 3
