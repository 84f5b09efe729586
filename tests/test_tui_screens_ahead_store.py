"""Screens built ahead of their keys (``haf_tui.tui.screens_ahead``) against a real DuckDB store:
the store changed between the build and the key is what the screen shows, and opening and
closing a screen builds again only the kinds built ahead, and what it froze is collected once
the keys pause."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import SelectionList

import haf_tui.tui.app as app_module
from benchmarks.benchdata import build_bench_db
from haf_tui.store import open_store
from haf_tui.store.annotations import delete_run, set_run_label
from haf_tui.store.readers import run_overviews
from haf_tui.tui import create_app
from haf_tui.tui.screens.explorer import ExplorerScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.screens_ahead import ScreensAhead, kinds_ahead
from haf_tui.tui.store_writes import write_store
from tests.support import settle, until
from tests.test_tui_screens_ahead import built


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=3, seed=5)
    return db


async def test_runs_deleted_or_renamed_after_the_build_are_shown_as_the_store_is(
    bench_db: Path,
) -> None:
    with open_store(bench_db) as store:
        run_ids = sorted(overview.run_id for overview in run_overviews(store))
    deleted, renamed = run_ids[0], run_ids[1]
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        ahead = next(s for s in await built(pilot, {MetricsScreen}) if isinstance(s, MetricsScreen))
        reader = pilot.app.reader  # type: ignore[attr-defined]

        def change(store: object) -> None:
            delete_run(store, deleted)  # type: ignore[arg-type]
            set_run_label(store, renamed, "renamed after the build")  # type: ignore[arg-type]

        await asyncio.to_thread(write_store, reader, change, "changing runs")
        await pilot.press("m")
        await settle(pilot)
        assert pilot.app.screen is ahead
        runs = ahead.query_one("#mx-run-list", SelectionList)
        await until(pilot, lambda: runs.option_count > 0)
        shown = [str(runs.get_option_at_index(i).prompt) for i in range(runs.option_count)]
        assert not any(deleted in line for line in shown), shown
        assert any("renamed after the build" in line for line in shown), shown
        assert len(shown) == len(run_ids) - 1


async def test_only_the_kinds_built_ahead_are_built_again_when_a_screen_closes(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "REBUILD_DELAY", 0.01)
    kinds = set(kinds_ahead())
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        await built(pilot, kinds)
        await pilot.press("e")  # (the explorer: a screen of the app's, not one built ahead)
        await settle(pilot)
        assert isinstance(pilot.app.screen, ExplorerScreen)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await built(pilot, kinds)  # (the metrics screen's rebuild: the explorer's was due first)
        assert pilot.app.is_running and isinstance(pilot.app.screen, HomeScreen)
        assert sorted(type(s).__name__ for s in pilot.app.ahead.kept()) == sorted(  # type: ignore[attr-defined]
            kind.__name__ for kind in kinds
        )


async def test_the_screens_are_built_one_at_a_time(bench_db: Path) -> None:
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        await built(pilot, set(kinds_ahead()))
        ahead = ScreensAhead(pilot.app)  # (one of the test's own: the app's has built its three)
        ahead.build()
        assert [type(screen) for screen in ahead.kept()] == [kinds_ahead()[0]]
        await until(pilot, lambda: len(ahead.kept()) == len(kinds_ahead()))
        await until(pilot, lambda: all(screen.is_mounted for screen in ahead.kept()))
        assert [type(screen) for screen in ahead.kept()] == list(kinds_ahead())


async def test_what_a_closed_screen_froze_is_collected_only_once_the_keys_pause(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    collected: list[str] = []
    monkeypatch.setattr(app_module.HafApp, "_refreeze", staticmethod(lambda: collected.append("")))
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        app = pilot.app
        await settle(pilot)
        await pilot.press("down")  # (a key: the full pass waits for a pause after it)
        monkeypatch.setattr(app_module, "KEYS_QUIET", 3600.0)
        app._refreeze_when_quiet()  # type: ignore[attr-defined]
        assert collected == []
        monkeypatch.setattr(app_module, "KEYS_QUIET", 0.0)
        app._refreeze_when_quiet()  # type: ignore[attr-defined]
        assert collected == [""]
