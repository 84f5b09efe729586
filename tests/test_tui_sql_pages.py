"""The SQL screen's pages of SQL that holds several statements (issue 42 §5): such SQL cannot
be wrapped in a paging SELECT, so it runs as written and each page skips to its own rows of
the last statement's result; page 2 is rows 501–1000, never page 1 again (the store's
``query_user_page`` and the screen's ``ctrl+n`` / ``ctrl+b``, on a small synthetic store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.screens.sql import PAGE_SIZE
from tests import test_tui_sql_workbench
from tests.support import settle
from tests.test_tui_sql import table_rows
from tests.test_tui_sql_workbench import editor_of, line, open_sql, timed

bench_db = test_tui_sql_workbench.bench_db
"""The workbench tests' small synthetic store (the same fixture)."""

SEVERAL = "SELECT 1 AS one; SELECT range AS i FROM range(1234) ORDER BY i;"
"""Two statements: the pages are the second one's rows, 0 … 1233."""


@pytest.mark.parametrize("sql", [SEVERAL, "SELECT range AS j FROM range(5000);\n" + SEVERAL])
@pytest.mark.parametrize("offset", [0, 1, 500, 1000, 1233, 1234])
def test_a_page_of_several_statements_starts_at_its_offset(
    tmp_path: Path, sql: str, offset: int
) -> None:
    with open_store(tmp_path / "h.duckdb") as store:
        columns, rows = store.query_user_page(sql, None, offset, PAGE_SIZE + 1)
    assert columns == ["i"]
    assert [row[0] for row in rows] == list(range(offset, min(offset + PAGE_SIZE + 1, 1234)))


async def test_the_screen_pages_through_several_statements(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text(SEVERAL)
        editor.focus()
        await pilot.press("ctrl+a", "ctrl+r")  # (the whole text: both statements)
        await settle(pilot)
        rows = table_rows(screen)
        assert len(rows) == PAGE_SIZE and rows[0] == ["0"] and rows[-1] == ["499"]
        assert timed(line(screen, "#sql-status")) == "at least 501 rows in T s · rows 1–500"
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert table_rows(screen)[0] == ["500"] and table_rows(screen)[-1] == ["999"]
        status = timed(line(screen, "#sql-status"))
        assert status == "at least 1001 rows in T s · rows 501–1000"
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert [row[0] for row in table_rows(screen)] == [str(i) for i in range(1000, 1234)]
        assert timed(line(screen, "#sql-status")) == "1234 rows in T s · rows 1001–1234"
        await pilot.press("ctrl+b")  # the count is known now: no "at least" on page 2
        await settle(pilot)
        assert timed(line(screen, "#sql-status")) == "1234 rows in T s · rows 501–1000"
        assert table_rows(screen)[0] == ["500"]
