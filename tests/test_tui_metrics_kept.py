"""The metrics screen keeps what it read per state of the database (issue 44 §2): opened again
with no write since, it reads no report and bins no value again and shows the same panels;
after a write (a run gaining rows) it reads anew and shows the new numbers; a database written
within the last moments keeps nothing (a write in the same clock tick could look like none)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from haf_tui.reports import ReportResult, get_report, load_queries, run_report
from haf_tui.reports.charts import Histogram
from haf_tui.store import Store, open_store
from haf_tui.tui import create_app, metrics_data
from haf_tui.tui.metrics_data import RunInfo, bin_values, kept_report
from haf_tui.tui.run_cache import RECENT_SECONDS, RUN_CACHE, database_state
from haf_tui.tui.screens.metrics import MetricsScreen
from tests.support import settle
from tests.test_tui_metrics import shown
from tests.test_tui_metrics import template_db as template_db  # (the hand-made store)

AT_REST = time.time() - 600.0
"""When the files of a database at rest were last written, as the tests set it."""


def aged(path: Path, later: float = 0.0) -> None:
    """Make the file look written at :data:`AT_REST` (plus ``later`` seconds)."""
    os.utime(path, (AT_REST + later, AT_REST + later))


@pytest.fixture
def db(tmp_path: Path, template_db: Path) -> Path:
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    aged(path)
    return path


def test_the_state_changes_with_every_write_and_is_none_while_fresh(db: Path) -> None:
    state = database_state(db)
    assert state is not None and database_state(db) == state
    wal = db.with_name(db.name + ".wal")
    with open_store(db) as store:
        store.connection.execute("UPDATE runs SET label = 'x'")
        assert database_state(db) is None  # (just written)
        aged(db)
        aged(wal)  # the commit is in the log only: the file looks as it was
        in_log = database_state(db)
        assert in_log is not None and in_log != state
    aged(db, later=1.0)  # (the log written into the file as the writer closed)
    later = database_state(db)
    assert later is not None and later not in (state, in_log)
    now = time.time()
    os.utime(db, (now - RECENT_SECONDS + 0.5, now - RECENT_SECONDS + 0.5))
    assert database_state(db, now=now) is None
    assert database_state(db, now=now + 1.0) is not None
    assert database_state(db.with_name("none.duckdb")) is None


def test_another_file_moved_in_with_the_same_time_and_size_is_another_state(
    db: Path, tmp_path: Path
) -> None:
    """A database replaced by another file (``mv other.duckdb haf.duckdb``) of the same size
    and time is not the state kept for the one it replaced."""
    state = database_state(db)
    other = tmp_path / "other.duckdb"
    shutil.copyfile(db, other)
    aged(other)
    os.replace(other, db)
    moved_in = database_state(db)
    assert moved_in is not None and moved_in != state


async def _opened(db: Path) -> dict[str, str]:
    """Every panel of the metrics screen as drawn (each one shown in turn)."""
    app = create_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = MetricsScreen()
        app.push_screen(screen)
        await settle(pilot)
        drawn = {}
        for pane in screen.panels:
            screen.query_one("#mx-tabs", TabbedContent).active = pane
            await settle(pilot)
            drawn[pane] = shown(screen, pane)
        return drawn


async def test_opened_again_reads_nothing_until_the_database_is_written(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    RUN_CACHE.clear()
    read: list[str] = []
    binned: list[object] = []

    def counted_report(store: Store, name: str) -> ReportResult:
        read.append(name)
        return run_report(store, name)

    def counted_bin(
        store: Store, runs: list[RunInfo], metrics: list[str]
    ) -> dict[tuple[str, str], Histogram]:
        binned.append(metrics)
        return bin_values(store, runs, metrics)

    monkeypatch.setattr(metrics_data, "run_report", counted_report)
    monkeypatch.setattr(metrics_data, "bin_values", counted_bin)
    first = await _opened(db)
    assert read and binned
    read.clear()
    binned.clear()
    assert await _opened(db) == first  # the same panels
    assert read == [] and binned == []  # from what was kept
    with open_store(db) as store:  # a run gains a finished instance's metrics
        run_id, instance_id = store.query(
            "SELECT run_id, instance_id FROM instance_results ORDER BY run_id LIMIT 1"
        )[1][0]
        store.connection.execute(
            "UPDATE instance_metrics SET value = 0.123456 WHERE run_id = ? AND instance_id = ? "
            "AND metric = 'sos'",
            [run_id, instance_id],
        )
    aged(db)
    again = await _opened(db)
    assert read and binned  # read anew
    assert again != first  # with the new number
    RUN_CACHE.clear()
    read.clear()
    assert await _opened(db) == again  # what a fresh read shows


def test_a_report_whose_query_was_edited_is_read_again(db: Path) -> None:
    RUN_CACHE.clear()
    state = database_state(db)
    library = load_queries()
    name = get_report("table1").query
    edited = {**library, name: library[name].model_copy(update={"sql": library[name].sql + " "})}
    with open_store(db, read_only=True) as store:
        first = kept_report(store, "table1", state, library)
        computed = RUN_CACHE.computed
        assert kept_report(store, "table1", state, library) == first
        assert RUN_CACHE.computed == computed  # kept
        assert kept_report(store, "table1", state, edited) == first  # (the same numbers)
        assert RUN_CACHE.computed == computed + 1  # read again: its SQL is another
        assert kept_report(store, "table1", None, library) == first
        assert RUN_CACHE.computed == computed + 1  # (no state: read, not kept)
