"""A query that ends quickly shows its rows without a running line or a cancel key coming and
going first (they moved the footer's keys and laid the screen out twice while DuckDB ran); one
that runs on is said to run, with ``ctrl+c`` offered (``faults/test_query_bounds.py`` cancels
one)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from haf_tui.tui import create_app
from haf_tui.tui.screens import sql_query
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.widgets.sql_editor import SqlEditor
from tests.support import settle, sql_screen, until
from tests.test_tui_sql_workbench import open_sql

LONG_QUERY = "SELECT count(*) FROM range(100000000) a, range(100000) b"
"""Runs for hours: only an interrupt ends it."""


bench_db = sql_screen.bench_db
"""A store of its own for each test (two synthetic runs of four instances)."""


def offered(screen: SqlScreen) -> bool:
    """Whether the footer shows the cancel key."""
    return any(key.action == "cancel_query" and key.display for key in screen.query(FooterKey))


async def test_a_quick_query_is_not_said_to_run_and_a_long_one_is(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql_query, "RUNNING_SHOWN_AFTER", 3600.0)  # every query is quick
    said: list[str] = []
    async with create_app(bench_db).run_test(size=(160, 40)) as pilot:
        screen = await open_sql(pilot)
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


async def test_ctrl_c_before_the_query_is_said_to_run_still_cancels_it(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pressed in the first 0.15 s (the cancel key not shown yet), ``ctrl+c`` stops the query
    as it does later: it stopped nothing and Textual said "press ctrl+q to quit"."""
    monkeypatch.setattr(sql_query, "RUNNING_SHOWN_AFTER", 3600.0)  # never said to run
    async with create_app(bench_db).run_test(size=(160, 40)) as pilot:
        screen = await open_sql(pilot)
        screen.query_one("#sql-editor", SqlEditor).load_text(LONG_QUERY)
        await pilot.press("ctrl+r")
        assert screen.busy and not screen.cancel_shown and not offered(screen)
        await pilot.press("ctrl+c")
        deadline = time.monotonic() + 60  # (the query runs for hours: catches "never")
        while screen.busy and time.monotonic() < deadline:
            await pilot.pause(0.1)
        stopped = not screen.busy
        if not stopped:
            screen.stop_running()  # (let the test end)
            await until(pilot, lambda: not screen.busy)
        assert stopped, "ctrl+c before the running line did not stop the query"
        await settle(pilot)
        assert str(screen.query_one("#sql-error", Static).render()) == "query interrupted"
        assert not [note for note in pilot.app._notifications if "quit" in note.message]
        assert not offered(screen)
