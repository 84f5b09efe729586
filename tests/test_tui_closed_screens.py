"""A closed screen is collected: nothing the app or Textual keeps holds it or its widgets'
drawn lines (the metrics screen left ~15k live objects behind at each close)."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

import haf_tui.tui.app as app_module
from benchmarks.benchdata import build_bench_db
from haf_tui.tui import create_app
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.screens_ahead import ScreensAhead
from tests.support import settle


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    return db


async def workers_done(pilot: Pilot[Any]) -> None:
    """Every worker of the app finished (a generous deadline: it only catches "never")."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        await settle(pilot)
        if all(worker.is_finished for worker in pilot.app.workers):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"workers still running: {list(pilot.app.workers)}")


@pytest.mark.parametrize(("key", "kind"), [("m", MetricsScreen), ("s", SqlScreen)])
async def test_a_closed_screen_and_its_widgets_drawn_lines_are_collected(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch, key: str, kind: type[HafScreen[Any]]
) -> None:
    monkeypatch.setattr(ScreensAhead, "build", lambda self, kinds=None: None)
    # (the collection a closed screen's timer runs holds it until then: run soon, waited for)
    monkeypatch.setattr(app_module, "REFREEZE_DELAY", 0.01)
    monkeypatch.setattr(app_module, "KEYS_QUIET", 0.01)
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        await workers_done(pilot)
        await pilot.press(key)
        await workers_done(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, kind)
        closed = weakref.ref(screen)
        drawn = [weakref.ref(widget._styles_cache) for widget in screen.query("*")]
        assert drawn
        del screen
        await pilot.press("escape")
        await workers_done(pilot)
        assert isinstance(pilot.app.screen, HomeScreen)
        await asyncio.sleep(0.5)
        await workers_done(pilot)
        gc.unfreeze()  # (the app froze the loaded screen: frozen objects are never collected)
        gc.collect()
        gc.freeze()
        assert closed() is None
        assert [ref for ref in drawn if ref() is not None] == []
