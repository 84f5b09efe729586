"""A query that ends quickly shows its rows without a running line or a cancel key coming and
going first (they moved the footer's keys and laid the screen out twice while DuckDB ran); one
that runs on is said to run, with ``ctrl+c`` offered (``faults/test_query_bounds.py`` cancels
one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from benchmarks.benchdata import build_bench_db
from haf_tui.tui import create_app
from haf_tui.tui.screens import sql_query
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.widgets.sql_editor import SqlEditor
from tests.support import settle


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    return db


def offered(screen: SqlScreen) -> bool:
    """Whether the footer shows the cancel key."""
    return any(key.action == "cancel_query" and key.display for key in screen.query(FooterKey))


async def test_a_quick_query_is_not_said_to_run_and_a_long_one_is(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql_query, "RUNNING_SHOWN_AFTER", 3600.0)  # every query is quick
    said: list[str] = []
    async with create_app(bench_db).run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, SqlScreen)
        status = screen.query_one("#sql-status", Static)
        show = screen.results.show_status

        def recorded(text: str) -> None:
            said.append(text)
            show(text)

        monkeypatch.setattr(screen.results, "show_status", recorded)
        screen.query_one("#sql-editor", SqlEditor).load_text("SELECT 7 AS ok")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert not screen.busy and not offered(screen)
        assert said and not any("running" in text for text in said)
        assert str(status.render()).startswith("1 row in ")
        screen.say_running()  # a timer left from a query that has ended: nothing is said
        await settle(pilot)
        assert not screen.cancel_shown and not offered(screen)
        assert str(status.render()).startswith("1 row in ")

        screen.set_busy(True)  # one that runs on: not offered before the time has passed ...
        screen.refresh_bindings()  # (as a focus change does)
        await settle(pilot)
        assert not offered(screen)
        screen.say_running()  # ... said once it has
        await settle(pilot)
        assert screen.cancel_shown and offered(screen)
        assert str(status.render()) == "running … ctrl+c cancels"
        screen.set_busy(False)
        await settle(pilot)
        assert not screen.cancel_shown and not offered(screen)
