"""A result longer than a page is counted in the background once its first page is shown (it
said "at least 501 rows" until its last page was read): ``SELECT count(*) FROM (<sql>)`` run
by the store's user-SQL layer, for one SELECT only, stopped by ``ctrl+c`` and dropped when
another query starts; real DuckDB files throughout."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from haf_tui.store import StatementInterrupt, open_store
from haf_tui.store.connection import QueryInterruptedError
from haf_tui.store.user_sql import UserSql
from haf_tui.tui import create_app
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.widgets.result_table import ResultTable
from haf_tui.tui.widgets.sql_editor import SqlEditor
from tests.support import settle, sql_screen, until
from tests.test_tui_sql_workbench import line, open_sql, timed

ENDLESS = "SELECT * FROM range(100000000) a, range(100000) b"
"""Its first page comes at once; counting it takes hours (only an interrupt ends it)."""


bench_db = sql_screen.bench_db
"""A store of its own for each test (two synthetic runs of four instances)."""


def test_the_store_counts_one_select_and_nothing_else(tmp_path: Path) -> None:
    with open_store(tmp_path / "x.duckdb") as store:
        assert store.count_user_rows("SELECT range AS i FROM range(1234) ORDER BY i", None) == 1234
        assert store.count_user_rows("FROM range($n) -- a comment\n;", {"n": 7}) == 7
        assert store.count_user_rows("WITH a AS (FROM range(3)) SELECT * FROM a", None) == 3
        assert store.count_user_rows("SELECT 1 AS one WHERE false", None) == 0
        for uncounted in ("SELECT 1; SELECT 2", "EXPLAIN SELECT 1"):  # run only as written
            assert store.count_user_rows(uncounted, None) is None
        interrupt = StatementInterrupt()
        interrupt.interrupt()
        with pytest.raises(QueryInterruptedError):
            store.count_user_rows(ENDLESS, None, interrupt=interrupt)


async def _run(pilot: Any, screen: SqlScreen, sql: str) -> None:
    screen.query_one("#sql-editor", SqlEditor).load_text(sql)
    await pilot.press("ctrl+r")


async def test_the_page_is_shown_first_then_the_whole_count(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    counted = UserSql.count_user_rows

    def held(self: UserSql, *args: Any, **kwargs: Any) -> int | None:
        assert release.wait(60)  # (until the page was seen without the count)
        return counted(self, *args, **kwargs)

    monkeypatch.setattr(UserSql, "count_user_rows", held)
    async with create_app(bench_db).run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        await _run(pilot, screen, "SELECT range AS i FROM range(1234) ORDER BY i")
        await until(pilot, lambda: screen.query_one("#sql-results", ResultTable).row_count > 0)
        await until(pilot, lambda: "counting" in line(screen, "#sql-status"))
        status = timed(line(screen, "#sql-status"))
        assert status == "at least 501 rows in T s · rows 1–500 · counting … ctrl+c stops"
        release.set()
        await settle(pilot)
        assert timed(line(screen, "#sql-status")) == "1234 rows in T s · rows 1–500"
        assert screen.total_rows == 1234 and screen.counting is None
        await pilot.press("ctrl+n")  # the next page says it too, and counts nothing again
        await settle(pilot)
        assert timed(line(screen, "#sql-status")) == "1234 rows in T s · rows 501–1000"


def _attached(interrupt: StatementInterrupt) -> Callable[[], bool]:
    """Whether ``interrupt``'s statement runs in DuckDB (its cursor attached)."""
    return lambda: interrupt.attached


async def test_ctrl_c_stops_a_count_and_another_query_drops_one(bench_db: Path) -> None:
    counts: list[StatementInterrupt] = []
    async with create_app(bench_db).run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        try:
            for stop in ("ctrl+c", "another query"):
                await _run(pilot, screen, ENDLESS)
                await until(pilot, lambda: "counting" in line(screen, "#sql-status"))
                counting = screen.counting
                assert counting is not None and not screen.busy
                counts.append(counting)
                await until(pilot, _attached(counting))  # (DuckDB counts)
                if stop == "ctrl+c":
                    await pilot.press("ctrl+c")
                    await until(pilot, lambda: "counting" not in line(screen, "#sql-status"))
                    status = timed(line(screen, "#sql-status"))
                    assert status == "at least 501 rows in T s · rows 1–500"
                    assert screen.query_one("#sql-results", ResultTable).row_count == 500
                    assert not [n for n in pilot.app._notifications if "quit" in n.message]
                else:
                    await _run(pilot, screen, "SELECT 7 AS ok")
                    await until(pilot, lambda: line(screen, "#sql-status").startswith("1 row"))
                assert counting.interrupted and screen.counting is None
                deadline = time.monotonic() + 60  # (the count runs for hours: catches "never")
                while counting.attached and time.monotonic() < deadline:
                    await pilot.pause(0.1)
                assert not counting.attached, f"{stop} did not stop the count within 60 s"
                assert screen.total_rows in (None, 1)
                if stop == "ctrl+c":  # a count stopped stays stopped on the next page
                    await pilot.press("ctrl+n")
                    await until(pilot, lambda: "rows 501–1000" in line(screen, "#sql-status"))
                    status = timed(line(screen, "#sql-status"))
                    assert status == "at least 1001 rows in T s · rows 501–1000"
                    assert screen.counting is None
        finally:  # (a count left running would hold the app's exit for hours)
            for counting in [*counts, screen.counting]:
                if counting is not None:
                    counting.interrupt()
