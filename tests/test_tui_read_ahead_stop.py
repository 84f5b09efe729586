"""A screen that reads other things stops the runs list's read ahead (issue 44 §2): a metrics
screen or a comparison opened as the list first appears found the explorer's rows being read
ahead beside its own reads (the metrics screen waited for them, then for the panel). The read
ahead begun before the stop reads no rows if it has not begun them, has the statement reading
them interrupted if it has, and reads nothing after them; rows an explorer waits for are never
stopped; a read ahead begun after the stop goes on. Real DuckDB files and a real interruption
of a running statement."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.tui import create_app, instance_reader, metrics_data
from haf_tui.tui import filters as filters_module
from haf_tui.tui import read_ahead as read_ahead_module
from haf_tui.tui.read_ahead import read_ahead, stop_rows_ahead, want_rows
from haf_tui.tui.screens import compare as compare_screen
from haf_tui.tui.screens import home as home_screen
from haf_tui.tui.screens import metrics as metrics_screen
from haf_tui.tui.screens.compare import CompareScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.store_reader import StoreReader
from tests.support import settle, until
from tests.support.store_copy import store_copy

NEVER = 10_000.0
ENDLESS = "SELECT sum(a.range * b.range) FROM range(1000000) a, range(200000) b"
"""A statement that runs for minutes unless interrupted (2·10¹¹ products)."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("read-ahead-stop") / "template.duckdb"
    build_bench_db(path, n_instances=20, n_runs=2, seed=7)
    return path


@pytest.fixture
def db(template_db: Path, tmp_path: Path) -> Path:
    """A copy of the store written an hour ago (what is read from it is kept)."""
    return store_copy(template_db, tmp_path)


def _first_run(reader: StoreReader) -> str:
    with reader.reading() as store:
        return str(store.list_runs()[0]["run_id"])


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the explorer's rows read and the metrics panels read."""
    calls = {"rows": 0, "panels": 0}
    rows, panel = instance_reader.run_rows, metrics_data.load_metrics_data

    def counted_rows(*args: Any, **kwargs: Any) -> Any:
        calls["rows"] += 1
        return rows(*args, **kwargs)

    def counted_panel(*args: Any, **kwargs: Any) -> Any:
        calls["panels"] += 1
        return panel(*args, **kwargs)

    monkeypatch.setattr(instance_reader, "run_rows", counted_rows)
    monkeypatch.setattr(metrics_data, "load_metrics_data", counted_panel)
    return calls


def _stopped_on_call(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, reader: StoreReader
) -> Any:
    """Make ``owner.name`` stop the read ahead on ``reader`` before it runs (a screen opening
    as the read ahead reaches that step); the original, to put back."""
    original = getattr(owner, name)

    def stopped_meanwhile(*args: Any) -> Any:
        stop_rows_ahead(reader)
        return original(*args)

    monkeypatch.setattr(owner, name, stopped_meanwhile)
    return original


def test_a_read_ahead_stopped_before_its_rows_reads_nothing_and_the_next_one_reads(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = StoreReader(db, idle_seconds=0.0)
    run_id = _first_run(reader)
    calls = _counting(monkeypatch)
    schema = _stopped_on_call(monkeypatch, filters_module, "list_schema", reader)
    assert read_ahead(reader, run_id) is False
    assert calls == {"rows": 0, "panels": 0}
    assert not read_ahead_module._rows_under_way and not read_ahead_module._ahead_under_way
    monkeypatch.setattr(filters_module, "list_schema", schema)
    assert read_ahead(reader, run_id) is True  # (begun after the stop: reads)
    assert calls == {"rows": 1, "panels": 1}
    reader.close()


def test_a_read_ahead_stopped_after_its_rows_keeps_them_and_reads_no_panel(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A screen that stops the read ahead once its rows are in gets no panel read beside its
    own reads (the metrics screen then reads its panel itself, waiting for none)."""
    reader = StoreReader(db, idle_seconds=0.0)
    run_id = _first_run(reader)
    calls = _counting(monkeypatch)
    _stopped_on_call(monkeypatch, instance_reader, "kept_opening", reader)  # (instances next)
    assert read_ahead(reader, run_id) is True  # (rows kept)
    assert calls == {"rows": 1, "panels": 0}
    assert not read_ahead_module._ahead_under_way
    reader.close()


@pytest.mark.parametrize("how", ["query_user", "query"])
def test_the_statement_reading_the_rows_is_interrupted(
    db: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The rows' statement, running when the stop comes, is interrupted (here one that would
    run for minutes), and nothing is read after it: a named query (``query_user``, as the
    ``instances`` query runs) and the app's own SQL (``query``, as the metrics' values)."""
    reader = StoreReader(db, idle_seconds=0.0)
    run_id = _first_run(reader)
    calls = _counting(monkeypatch)
    running = threading.Event()

    def endless_rows(store: Any, run_id: str) -> Any:
        running.set()
        return getattr(store, how)(ENDLESS)

    monkeypatch.setattr(instance_reader, "instance_rows", endless_rows)
    ended: list[bool] = []
    worker = threading.Thread(target=lambda: ended.append(read_ahead(reader, run_id)), daemon=True)
    worker.start()
    assert running.wait(30)
    time.sleep(0.2)  # (the statement under way)
    stop_rows_ahead(reader)
    worker.join(30)
    assert not worker.is_alive(), "the statement was not interrupted"
    assert ended == [False] and calls["panels"] == 0
    with reader.reading() as store:  # (the store reads on, its next statements not stopped)
        assert store.query("SELECT 42")[1] == [(42,)]
    reader.close()


def test_rows_an_explorer_waits_for_are_not_stopped(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = StoreReader(db, idle_seconds=0.0)
    run_id = _first_run(reader)
    calls = _counting(monkeypatch)
    rows = instance_reader.run_rows

    def wanted_then_stopped(store: Any, *args: Any) -> Any:
        want_rows(reader, run_id)  # (an explorer of this run opened)
        stop_rows_ahead(reader)  # (and then another screen)
        return rows(store, *args)

    monkeypatch.setattr(instance_reader, "run_rows", wanted_then_stopped)
    assert read_ahead(reader, run_id) is True
    assert calls["rows"] == 1
    reader.close()


@pytest.mark.parametrize(("key", "screen"), [("m", MetricsScreen), ("c", CompareScreen)])
async def test_the_metrics_screen_and_the_comparison_stop_the_read_ahead_as_they_read(
    db: Path, monkeypatch: pytest.MonkeyPatch, key: str, screen: type[Any]
) -> None:
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    monkeypatch.setattr(home_screen, "FIRST_REST_SECONDS", NEVER)
    stops: list[Path] = []

    def stop(reader: StoreReader) -> None:
        stops.append(reader.path)
        stop_rows_ahead(reader)

    module = metrics_screen if screen is MetricsScreen else compare_screen
    monkeypatch.setattr(module, "stop_rows_ahead", stop)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await until(pilot, lambda: bool(stops))
        await settle(pilot)
        assert isinstance(app.screen, screen)
        assert stops == [db]
