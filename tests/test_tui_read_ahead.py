"""The runs list reads ahead (issue 44 §2): once its cursor rests on a run, the explorer's rows
of that run and the metrics screen's first panel are read and kept by the database's state,
so opening either then reads neither again; a database written a moment ago (a run going on)
has nothing read ahead, since nothing read from it would be kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchdata import build_bench_db
from haf_tui.reports import instance_rows
from haf_tui.reports.registry import run_report
from haf_tui.store import Store
from haf_tui.tui import create_app, instance_reader, metrics_data
from haf_tui.tui.metrics_data import panel_specs, reports_read
from haf_tui.tui.screens import home as home_screen
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from tests.support import settle, until
from tests.support.store_copy import store_copy

NEVER = 10_000.0
"""A rest the runs list's cursor never reaches in a test."""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("read-ahead") / "template.duckdb"
    build_bench_db(path, n_instances=20, n_runs=2, seed=7)
    return path


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Count the explorer's row reads (by run) and the reports read (by name)."""
    calls: dict[str, list[Any]] = {"rows": [], "reports": [], "kept rows": [], "runs": []}
    rows, report, kept_rows = instance_rows, run_report, instance_reader.run_rows
    get_run = Store.get_run

    def counted_run(store: Any, run_id: str) -> Any:
        calls["runs"].append(run_id)
        return get_run(store, run_id)

    def counted_rows(store: Any, run_id: str) -> Any:
        calls["rows"].append(run_id)
        return rows(store, run_id)

    def counted_report(store: Any, name: str, *args: Any) -> Any:
        calls["reports"].append(name)
        return report(store, name, *args)

    def looked_up(store: Any, run_id: str, *args: Any) -> Any:
        calls["kept rows"].append(run_id)
        return kept_rows(store, run_id, *args)

    monkeypatch.setattr(instance_reader, "instance_rows", counted_rows)
    monkeypatch.setattr(instance_reader, "run_rows", looked_up)
    monkeypatch.setattr(metrics_data, "run_report", counted_report)
    monkeypatch.setattr(Store, "get_run", counted_run)
    return calls


async def test_a_resting_cursor_reads_ahead_what_the_screens_show_first(
    template_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = store_copy(template_db, tmp_path)
    calls = _counting(monkeypatch)
    first_reports = reports_read(panel_specs()[:1])
    assert first_reports
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        await until(pilot, lambda: bool(calls["rows"]))  # (the cursor rested: read ahead)
        await settle(pilot)
        run_id = home.selected_run()
        assert calls["rows"] == [run_id]
        assert all(calls["reports"].count(name) == 1 for name in first_reports)
        looked, runs_read = len(calls["kept rows"]), list(calls["runs"])
        assert run_id in runs_read
        home.cursor_rested()  # (resting there again, nothing written: not even looked up)
        await settle(pilot)
        assert len(calls["kept rows"]) == looked
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, ExplorerScreen) and app.screen.instances
        assert calls["rows"] == [run_id]  # (the explorer read none again)
        assert calls["runs"] == runs_read  # (nor the run, its notes and related runs)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, MetricsScreen) and app.screen.data is not None
        assert all(calls["reports"].count(name) == 1 for name in first_reports)


async def test_a_database_written_a_moment_ago_has_nothing_read_ahead(
    template_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = store_copy(template_db, tmp_path, settled=False)
    calls = _counting(monkeypatch)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        home.cursor_rested()  # (as the timer would, while the file is still new)
        await settle(pilot)
        assert calls == {"rows": [], "reports": [], "kept rows": [], "runs": []}


async def test_a_rest_ending_under_another_screen_reads_nothing_ahead(
    template_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rest's timer firing after a key opened another screen reads nothing (that screen
    reads what it needs itself)."""
    db = store_copy(template_db, tmp_path)
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    monkeypatch.setattr(home_screen, "FIRST_REST_SECONDS", NEVER)
    calls = _counting(monkeypatch)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, ExplorerScreen) and app.screen.instances
        looked = len(calls["kept rows"])
        home.cursor_rested()  # (as the timer would, the explorer shown)
        await settle(pilot)
        assert len(calls["kept rows"]) == looked


async def test_the_runs_list_polls_only_while_the_user_sees_it(
    template_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a dialog the list shows through and keeps being read; under the explorer it is
    hidden and is not (Textual's ``is_current`` holds there too: the list was read again
    every few seconds beside the explorer's own reads)."""
    db = store_copy(template_db, tmp_path)
    monkeypatch.setattr(home_screen, "REST_SECONDS", NEVER)
    monkeypatch.setattr(home_screen, "FIRST_REST_SECONDS", NEVER)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen) and home.poll_due()
        await pilot.press("question_mark")
        await settle(pilot)
        assert app.screen is not home and home.shown_to_user() and home.poll_due()
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, ExplorerScreen) and home.is_current
        assert not home.shown_to_user() and not home.poll_due()
