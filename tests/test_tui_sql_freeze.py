"""The SQL screen leaves what it loaded (the catalog, each page shown) out of the collector's
full passes, and hands it back when it closes (the app's ``freeze_after_load``)."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TextArea

from benchmarks.benchdata import build_bench_db
from haf_tui.tui import create_app
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.widgets.result_table import ResultTable
from tests.support import settle


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    return db


async def test_catalog_and_pages_are_frozen_until_the_screen_closes(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(bench_db)
    frozen: list[Any] = []
    freeze = app.freeze_after_load

    def counted(screen: Any = None) -> None:
        frozen.append(screen)
        freeze(screen)

    monkeypatch.setattr(app, "freeze_after_load", counted)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SqlScreen)
        assert screen.library  # the catalog is shown ...
        mounted = 1 if screen.built_ahead else 0  # (a screen built ahead: frozen once mounted)
        assert frozen.count(screen) == mounted + 1  # ... and frozen once
        assert screen in app._holders and gc.get_freeze_count() > 0
        screen.query_one("#sql-editor", TextArea).load_text("SELECT 42 AS answer")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert screen.query_one("#sql-results", ResultTable).get_row_at(0) == ["42"]
        assert frozen.count(screen) == mounted + 2  # the page shown: frozen again
        screen.query_one("#sql-editor", TextArea).load_text("SELECT nope FROM nowhere")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert frozen.count(screen) == mounted + 2  # a failed query shows nothing new to freeze
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert screen not in app._holders  # closed: what it held goes back to the collector
