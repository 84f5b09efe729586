"""A key pressed as the runs list first appears (issue 44 §2): the list reads ahead for the run
under its cursor at once, an explorer opened meanwhile waits for those rows rather than reading
them a second time beside them (and the metrics panel is then not read beside the explorer's
own reads, nor beside another screen's), and the list is read once as the app starts. (The
app's warm-up stepping aside meanwhile: test_tui_warm_up.py.)"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from benchmarks.benchdata import build_bench_db
from haf_tui.reports import instance_rows
from haf_tui.reports.registry import run_report
from haf_tui.store import StoreError
from haf_tui.store.readers import run_overviews
from haf_tui.tui import create_app, instance_reader, metrics_data, read_ahead
from haf_tui.tui.metrics_data import panel_specs, reports_read
from haf_tui.tui.run_cache import RUN_CACHE, VALUES_CACHE
from haf_tui.tui.screens import explorer as explorer_screen
from haf_tui.tui.screens import home as home_screen
from haf_tui.tui.screens import metrics as metrics_screen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.store_reader import StoreReader
from tests.support import settle, until
from tests.support.store_copy import store_copy

NEVER = 10_000.0
"""A rest the runs list's cursor never reaches in a test."""
LONG = 30.0
"""How long a test waits for what must come (it only catches "never")."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("first-key") / "template.duckdb"
    build_bench_db(path, n_instances=20, n_runs=2, seed=11)
    return path


@pytest.fixture
def db(template_db: Path, tmp_path: Path) -> Path:
    """A copy of the store, written an hour ago (what is read from it is kept)."""
    return store_copy(template_db, tmp_path)


def _counted(
    monkeypatch: pytest.MonkeyPatch, rows_wait: threading.Event | None = None
) -> dict[str, Any]:
    """Count the explorer's row reads and the metrics reports read; with ``rows_wait``, the
    first row read (the runs list's, reading ahead) starts, says so, and waits for it."""
    calls: dict[str, Any] = {"rows": [], "reports": [], "started": threading.Event()}
    calls["threads"] = {"rows": [], "reports": []}  # (which thread read each)

    def counted_rows(store: Any, run_id: str) -> Any:
        calls["rows"].append(run_id)
        calls["threads"]["rows"].append(threading.get_ident())
        if rows_wait is not None and len(calls["rows"]) == 1:
            calls["started"].set()
            assert rows_wait.wait(LONG)
        return instance_rows(store, run_id)

    def counted_report(store: Any, name: str, *args: Any) -> Any:
        calls["reports"].append(name)
        calls["threads"]["reports"].append(threading.get_ident())
        return run_report(store, name, *args)

    monkeypatch.setattr(instance_reader, "instance_rows", counted_rows)
    monkeypatch.setattr(metrics_data, "run_report", counted_report)
    return calls


async def test_the_first_run_listed_is_read_ahead_without_a_rest(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    calls = _counted(monkeypatch)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        assert calls["rows"] == [home.selected_run()]  # (read ahead, no rest waited for)
        assert calls["reports"]  # (and the metrics screen's first panel)
        await pilot.press("down")  # (a move: read after a rest, never here)
        await settle(pilot)
        assert len(calls["rows"]) == 1


async def test_an_explorer_opened_while_its_rows_are_read_ahead_waits_for_them(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    explorer_waits = threading.Event()
    calls = _counted(monkeypatch, rows_wait=explorer_waits)
    waited: list[bool] = []

    def waiting(reader: StoreReader, run_id: str, timeout: float = LONG) -> bool:
        explorer_waits.set()  # (the read ahead goes on once the explorer waits for it)
        waited.append(read_ahead.wait_for_rows(reader, run_id, timeout))
        return waited[-1]

    monkeypatch.setattr(explorer_screen, "wait_for_rows", waiting)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, calls["started"].is_set)  # (the list shown, its read ahead begun)
        home = app.screen
        assert isinstance(home, HomeScreen)
        await pilot.press("e")
        await settle(pilot)
        explorer = app.screen
        assert isinstance(explorer, ExplorerScreen) and explorer.instances
        assert waited == [True]
        assert calls["rows"] == [explorer.run_id]  # (read once: the read ahead's)
        assert calls["reports"] == []  # (no metrics panel read beside the explorer's reads)


async def test_the_metrics_screen_opened_while_its_panel_is_read_ahead_waits_for_it(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    first_reports = reports_read(panel_specs()[:1])
    assert first_reports
    metrics_waits, panel_started = threading.Event(), threading.Event()
    calls = _counted(monkeypatch)
    counted_report = vars(metrics_data)["run_report"]  # (as _counted left it)

    def held_report(store: Any, name: str, *args: Any) -> Any:
        if not panel_started.is_set():  # (the read ahead's first report)
            panel_started.set()
            assert metrics_waits.wait(LONG)
        return counted_report(store, name, *args)

    monkeypatch.setattr(metrics_data, "run_report", held_report)
    waited: list[bool] = []

    def waiting(reader: StoreReader, timeout: float = LONG) -> bool:
        metrics_waits.set()
        waited.append(read_ahead.wait_for_read_ahead(reader, timeout))
        return waited[-1]

    monkeypatch.setattr(metrics_screen, "wait_for_read_ahead", waiting)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, panel_started.is_set)
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, MetricsScreen) and app.screen.data is not None
        assert waited == [True]
        assert all(calls["reports"].count(name) == 1 for name in first_reports)


async def test_the_metrics_screen_opened_as_the_rows_are_read_ahead_stops_them_for_its_panel(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A metrics screen opened as the explorer's rows are read ahead stops the read ahead
    (nothing is read ahead after the rows) and reads its panel itself, once: beside the rows
    its first panel waited for them (tests/test_tui_read_ahead_stop.py)."""
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    first_reports = reports_read(panel_specs()[:1])
    metrics_waits = threading.Event()
    calls = _counted(monkeypatch, rows_wait=metrics_waits)

    def waiting(reader: StoreReader, timeout: float = LONG) -> bool:
        metrics_waits.set()
        return read_ahead.wait_for_read_ahead(reader, timeout)

    monkeypatch.setattr(metrics_screen, "wait_for_read_ahead", waiting)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, calls["started"].is_set)
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, MetricsScreen) and app.screen.data is not None
        assert all(calls["reports"].count(name) == 1 for name in first_reports)
        ahead = calls["threads"]["rows"][0]
        read_by = dict(zip(calls["reports"], calls["threads"]["reports"], strict=True))
        assert all(read_by[name] != ahead for name in first_reports)


def test_a_read_ahead_that_fails_lets_the_explorer_waiting_for_it_go(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, fail = threading.Event(), threading.Event()

    def failing_rows(store: Any, run_id: str) -> Any:
        started.set()
        assert fail.wait(LONG)
        raise RuntimeError("a planted failure")

    monkeypatch.setattr(instance_reader, "instance_rows", failing_rows)
    reader = StoreReader(db)
    with reader.reading() as store:
        run_id = str(store.list_runs()[0]["run_id"])
    errors: list[BaseException] = []

    def ahead() -> None:
        try:
            read_ahead.read_ahead(reader, run_id)
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=ahead)
    thread.start()
    try:
        assert started.wait(LONG)
        assert not read_ahead.wait_for_rows(reader, run_id, timeout=0.05)  # (under way)
        fail.set()
        assert read_ahead.wait_for_rows(reader, run_id, timeout=LONG)
    finally:
        fail.set()
        thread.join(LONG)
        reader.close()
    assert [str(error) for error in errors] == ["a planted failure"]
    assert read_ahead.wait_for_rows(reader, run_id, timeout=0)  # (nothing under way now)


def test_an_explorer_coming_as_the_read_ahead_ends_leaves_no_mark_on_the_next_one(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An explorer that looks for the rows as the read ahead lets them go (or after it) keeps
    that read ahead, at most, from reading the metrics panel beside it: the run's next read
    ahead reads the panel (a mark left behind kept every later one from reading it)."""
    calls = _counted(monkeypatch)
    reader = StoreReader(db)
    with reader.reading() as store:
        run_id = str(store.list_runs()[0]["run_id"])
    real_ended, late = read_ahead._ended, [True]

    def explorer_comes_as_it_ends(under_way: Any, key: object, event: Any) -> Any:
        if key == (str(reader.path), run_id) and late:  # (once: the first read's end)
            late.clear()
            read_ahead.wait_for_rows(reader, run_id, timeout=0)
        return real_ended(under_way, key, event)

    monkeypatch.setattr(read_ahead, "_ended", explorer_comes_as_it_ends)
    try:
        assert read_ahead.read_ahead(reader, run_id) and not late
        assert read_ahead.wait_for_rows(reader, run_id, timeout=0)  # (an explorer after it)
        read_ahead._last_read.clear()  # (the next read ahead of the run, nothing kept)
        VALUES_CACHE.clear()
        RUN_CACHE.clear()
        calls["reports"].clear()
        assert read_ahead.read_ahead(reader, run_id)
    finally:
        reader.close()
    assert calls["reports"]  # (the metrics screen's first panel, read ahead again)


async def test_the_runs_list_is_read_once_as_the_app_starts(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list's first read starts as it mounts; the screen's first showing (a resume) reads
    no more while it is under way; coming back to the list reads it again."""
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    reads: list[str] = []
    real = run_overviews

    def counted(store: Any) -> Any:
        reads.append("runs")
        return real(store)

    monkeypatch.setattr(home_screen, "run_overviews", counted)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert reads == ["runs"]
        await pilot.press("e")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert reads == ["runs", "runs"]


async def test_a_first_read_of_the_list_that_failed_is_made_again_back_on_the_list(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list's first read failed (said on its hint line): coming back to the list from
    another screen reads it again, as after a first read that succeeded."""
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    monkeypatch.setattr(home_screen, "POLL_SECONDS", NEVER)  # (no poll reads it meanwhile)
    reads: list[str] = []

    def failing_once(store: Any) -> Any:
        reads.append("runs")
        if len(reads) == 1:
            raise StoreError("a planted failure")
        return run_overviews(store)

    monkeypatch.setattr(home_screen, "run_overviews", failing_once)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen) and reads == ["runs"]
        assert "a planted failure" in str(home.query_one("#runs-hint", Static).render())
        await pilot.press("question_mark")
        await settle(pilot)
        assert app.screen is not home
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is home and reads == ["runs", "runs"]
        assert "2 runs in" in str(home.query_one("#runs-hint", Static).render())


async def test_another_screen_opened_as_the_list_reads_ahead_leaves_the_panel_unread(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison opened while the first run's rows are read ahead: the metrics panel is
    not read beside its own first reads (the list is no longer shown; no metrics screen waits)."""
    from haf_tui.tui.screens.compare import CompareScreen

    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    opened = threading.Event()
    calls = _counted(monkeypatch, rows_wait=opened)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, calls["started"].is_set)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen))
        opened.set()
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert len(calls["rows"]) == 1  # (the rows read ahead, then nothing more)
        assert not set(reports_read(panel_specs()[:1])) & set(calls["reports"])
