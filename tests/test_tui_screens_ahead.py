"""The metrics, SQL and wizard screens built ahead of their keys (``haf_tui.tui.screens_ahead``):
such a screen reads nothing until it is shown, shows what was written after it was built, looks
exactly as a screen built at its key does, takes its keys, and is built again after it closes."""

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import SelectionList

from benchmarks.benchdata import build_bench_db
from haf_tui.tui import create_app, sql_history
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.screens_ahead import ScreensAhead
from haf_tui.tui.widgets.sql_editor import SqlEditor
from tests.support import settle

KEYS: dict[str, type[HafScreen[Any]]] = {"m": MetricsScreen, "s": SqlScreen, "n": WizardScreen}


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    return db


async def built(pilot: Pilot[Any], kinds: set[type[HafScreen[Any]]]) -> list[HafScreen[Any]]:
    """The screens built ahead once every one of ``kinds`` is kept and mounted (a generous
    deadline: it only catches "never")."""
    app = pilot.app
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        await settle(pilot)
        kept = app.ahead.kept()  # type: ignore[attr-defined]
        if {type(s) for s in kept} >= kinds and all(s.is_mounted for s in kept):
            return list(kept)
        await asyncio.sleep(0.05)
    raise AssertionError(f"not built ahead: {kinds}")


async def test_a_screen_built_ahead_reads_nothing_until_its_key_shows_it(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    for kind, name in ((MetricsScreen, "load_data"), (SqlScreen, "load_catalog")):
        real = getattr(kind, name)

        def counted(self: Any, real: Any = real, name: str = name) -> Any:
            reads.append(name)
            return real(self)

        monkeypatch.setattr(kind, name, counted)
    real_scan = WizardScreen.scan

    def scan(self: WizardScreen, *args: Any) -> Any:
        reads.append("scan")
        return real_scan(self, *args)

    monkeypatch.setattr(WizardScreen, "scan", scan)
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        kept = await built(pilot, set(KEYS.values()))
        assert reads == []
        for key, shown_kind in KEYS.items():
            ahead = next(screen for screen in kept if isinstance(screen, shown_kind))
            await pilot.press(key)
            await settle(pilot)
            assert pilot.app.screen is ahead
            await pilot.app.pop_screen()
            await settle(pilot)
        assert sorted(reads) == ["load_catalog", "load_data", "scan"]


async def test_what_is_written_after_the_build_is_what_the_screen_shows(bench_db: Path) -> None:
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        await built(pilot, {SqlScreen})
        kept = sql_history.load_buffers()
        kept.buffers[kept.current].text = "SELECT 42 AS written_after_the_build"
        sql_history.save_buffers(kept)
        await pilot.press("s")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, SqlScreen) and screen.built_ahead
        assert screen.query_one(SqlEditor).text == "SELECT 42 AS written_after_the_build"


async def _shown(bench_db: Path, key: str, size: tuple[int, int], ahead: bool) -> str:
    async with create_app(bench_db).run_test(size=size) as pilot:
        if ahead:
            await built(pilot, {KEYS[key]})
        else:
            await settle(pilot)
        await pilot.press(key)
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, KEYS[key]) and screen.built_ahead is ahead
        return pilot.app.export_screenshot()


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
@pytest.mark.parametrize("key", list(KEYS))
async def test_a_screen_built_ahead_shows_what_one_built_at_its_key_shows(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch, key: str, size: tuple[int, int]
) -> None:
    shown_ahead = await _shown(bench_db, key, size, ahead=True)
    monkeypatch.setattr(ScreensAhead, "build", lambda self, kinds=None: None)
    assert await _shown(bench_db, key, size, ahead=False) == shown_ahead


async def test_keys_reach_a_screen_built_ahead_and_another_is_built_after_it_closes(
    bench_db: Path,
) -> None:
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        first = next(s for s in await built(pilot, {MetricsScreen}) if isinstance(s, MetricsScreen))
        await pilot.press("m")
        await settle(pilot)
        assert pilot.app.screen is first
        await pilot.press("2")
        await settle(pilot)
        assert first.query_one("#mx-tabs").active == list(first.panels)[1]  # type: ignore[attr-defined]
        await pilot.press("escape")
        await settle(pilot)
        assert pilot.app.screen is not first
        again = next(s for s in await built(pilot, {MetricsScreen}) if isinstance(s, MetricsScreen))
        assert again is not first and not again._shown_once


async def test_metrics_built_ahead_ticks_the_run_under_the_runs_list_cursor(bench_db: Path) -> None:
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        await built(pilot, {MetricsScreen})
        home = pilot.app.screen
        await pilot.press("down")
        await settle(pilot)
        run_id = home.selected_run()  # type: ignore[attr-defined]
        assert run_id is not None
        await pilot.press("m")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MetricsScreen) and screen.built_ahead
        assert screen.query_one("#mx-run-list", SelectionList).selected == [run_id]


async def test_screens_built_ahead_stay_out_of_the_collector_s_full_passes(bench_db: Path) -> None:
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        kept = await built(pilot, set(KEYS.values()))
        collected = {id(thing) for thing in gc.get_objects()}  # (not the frozen ones)
        assert not [screen for screen in kept if id(screen) in collected]


async def _building(pilot: Pilot[Any], kind: type[HafScreen[Any]]) -> None:
    """A screen of ``kind`` being built ahead now (the others built and mounted first)."""
    ahead: ScreensAhead = pilot.app.ahead  # type: ignore[attr-defined]
    await built(pilot, set(KEYS.values()))
    ahead._kept.pop(kind)
    ahead.build((kind,))
    assert ahead.building()


@pytest.mark.parametrize("kind", list(KEYS.values()))
async def test_the_app_stops_cleanly_while_a_screen_is_built_ahead(
    bench_db: Path, kind: type[HafScreen[Any]]
) -> None:
    """(As a test's app stops: leaving ``run_test``, no ``exit``.) The app stopped on the
    screen's own Mount handler not finding its widgets: "No nodes match '#sql-editor'"."""
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        await _building(pilot, kind)


@pytest.mark.parametrize("kind", list(KEYS.values()))
async def test_q_while_a_screen_is_built_ahead_quits_cleanly(
    bench_db: Path, kind: type[HafScreen[Any]]
) -> None:
    app = create_app(bench_db)
    async with app.run_test(size=(200, 50)) as pilot:
        await _building(pilot, kind)
        await pilot.press("q")
        await asyncio.wait_for(app._task, timeout=30)  # type: ignore[arg-type]
        assert app.return_code == 0
        assert not app.ahead.building()


@pytest.mark.parametrize(("key", "action"), [("m", "metrics"), ("s", "sql"), ("n", "new_run")])
async def test_a_key_before_the_screen_built_ahead_has_started_shows_that_screen(
    bench_db: Path, key: str, action: str
) -> None:
    """The key comes right after the build, before the screen's own task has run: the screen
    built ahead is the one shown, reads what it shows then, and no second screen of its kind
    is left built and never shown (one was, the screen of the key built anew)."""
    kind = KEYS[key]
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        app = pilot.app
        await _building(pilot, kind)
        ahead = next(s for s in app.ahead.kept() if isinstance(s, kind))  # type: ignore[attr-defined]
        assert not ahead.is_running
        registered = {node for node in app._registry if isinstance(node, kind)}
        await app.run_action(action)
        await settle(pilot)
        assert app.screen is ahead and ahead._shown_once
        assert {node for node in app._registry if isinstance(node, kind)} == registered
        if kind is SqlScreen:
            saved = sql_history.load_buffers()
            assert ahead.query_one(SqlEditor).text == saved.buffers[saved.current].text


async def test_a_screen_is_built_ahead_only_once_the_last_key_is_a_moment_old(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build on the main thread while a key's screen opens delays that screen: the build
    waits until no key has come for the warm-up's ``KEY_QUIET_SECONDS``, then is made."""
    from haf_tui.tui import app as app_module

    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        app: Any = pilot.app
        await built(pilot, {MetricsScreen, SqlScreen, WizardScreen})
        monkeypatch.setattr(app_module, "KEY_QUIET_SECONDS", 1.0)
        app.ahead.take(MetricsScreen)  # (given away: the next build makes another)
        app._last_key = keyed = time.monotonic()  # (a key a moment ago)
        app.ahead.build()
        await pilot.pause(0.3)
        assert MetricsScreen not in {type(s) for s in app.ahead.kept()}  # (the key too new)
        await built(pilot, {MetricsScreen})
        assert time.monotonic() - keyed >= 1.0
        app._last_key = 0.0  # (no key for long: built at once)
        app.ahead.take(MetricsScreen)
        app.ahead.build()
        assert MetricsScreen in {type(s) for s in app.ahead.kept()}


async def test_a_build_put_off_by_a_key_builds_only_the_kinds_it_was_given(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild put off by a key (the SQL screen's, after it closed) builds that kind alone
    when it comes: not the metrics screen taken and still shown."""
    from haf_tui.tui import app as app_module

    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        app: Any = pilot.app
        await built(pilot, {MetricsScreen, SqlScreen})
        monkeypatch.setattr(app_module, "KEY_QUIET_SECONDS", 0.5)
        app.ahead.take(MetricsScreen)  # (being shown, say: built again only once it closes)
        app.ahead.take(SqlScreen)  # (shown and closed: its rebuild is asked for)
        app._last_key = time.monotonic()  # (a key a moment ago: the build is put off)
        app.ahead.build((SqlScreen,))
        await built(pilot, {SqlScreen})
        await pilot.pause(0.2)
        assert MetricsScreen not in {type(s) for s in app.ahead.kept()}
