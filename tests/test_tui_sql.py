"""The SQL screen: library, editor, paged results, in-place errors and export (Pilot + snapshot)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import duckdb
import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static, TextArea

from haf_tui import reports
from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.screens import sql_query
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.sql import PAGE_SIZE, SqlScreen, cell_text, sql_params
from haf_tui.tui.screens.sql_dialogs import ExportScreen
from haf_tui.tui.widgets.result_table import ResultTable
from haf_tui.tui.widgets.sql_params import ParamsForm
from tests.support import settle
from tests.test_tui_sql_workbench import timed

FullRun = tuple[Path, str, list[str]]


async def open_sql(pilot: Pilot[Any]) -> SqlScreen:
    await settle(pilot)
    await pilot.press("s")
    await settle(pilot)  # the library is loaded before anything else happens
    screen = pilot.app.screen
    assert isinstance(screen, SqlScreen)
    return screen


async def run_sql(pilot: Pilot[Any], screen: SqlScreen, sql: str, key: str = "ctrl+r") -> None:
    screen.query_one("#sql-editor", TextArea).load_text(sql)
    await pilot.press(key)
    await settle(pilot)


def table_rows(screen: SqlScreen) -> list[list[str]]:
    table = screen.query_one("#sql-results", ResultTable)
    return [table.get_row_at(i) for i in range(table.row_count)]


def table_columns(screen: SqlScreen) -> list[str]:
    return screen.query_one("#sql-results", ResultTable).columns


def line(screen: SqlScreen, widget_id: str) -> str:
    return str(screen.query_one(widget_id, Static).render())


def expected(db: Path, sql: str) -> tuple[list[str], list[list[str]]]:
    with open_store(db, read_only=True) as store:
        columns, rows = store.query(sql)
    return columns, [[cell_text(v) for v in row] for row in rows]


@pytest.mark.real_model
async def test_typed_query_matches_the_store(full_run_db: FullRun) -> None:
    db, _, _ = full_run_db
    sql = "SELECT stage, count(*) AS n FROM generations GROUP BY stage ORDER BY stage"
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sql(pilot)
        editor = screen.query_one("#sql-editor", TextArea)
        await pilot.click(editor)
        await pilot.press(*"SELECT count(*) AS n FROM generations")  # typed key by key
        assert editor.text == "SELECT count(*) AS n FROM generations"
        await pilot.press("ctrl+r")
        await settle(pilot)
        columns, rows = expected(db, editor.text)
        assert table_columns(screen) == columns == ["n"]
        assert table_rows(screen) == rows and int(rows[0][0]) > 0
        assert timed(line(screen, "#sql-status")) == "1 row in T s"

        await run_sql(pilot, screen, sql + ";", key="f5")
        columns, rows = expected(db, sql)
        assert table_columns(screen) == columns and table_rows(screen) == rows
        assert timed(line(screen, "#sql-status")) == f"{len(rows)} rows in T s"
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


@pytest.mark.real_model
async def test_library_query_runs_with_its_defaults(full_run_db: FullRun) -> None:
    db, run_id, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sql(pilot)
        library = screen.query_one("#library", OptionList)
        names = list(reports.load_queries())
        assert library.option_count == len(names)
        library.focus()
        library.highlighted = names.index("stance_distribution")
        await pilot.press("enter")  # its SQL in the editor, its parameters in the form
        await settle(pilot)
        editor = screen.query_one("#sql-editor", TextArea)
        form = screen.query_one(ParamsForm)
        assert "$run_ids" in editor.text and form.shown
        assert form.query_one("#param-run_ids", Input).has_focus  # the default: every run
        assert "stance_distribution" in line(screen, "#sql-hint")
        assert "ctrl+r runs it with the parameters below" in line(screen, "#sql-hint")
        await pilot.press("ctrl+r")
        await settle(pilot)
        with open_store(db, read_only=True) as store:
            columns, rows = reports.run_named(store, "stance_distribution")
        assert table_columns(screen) == columns
        assert table_rows(screen) == [[cell_text(v) for v in row] for row in rows]
        assert table_rows(screen)[0][0] == run_id

        # A required parameter left empty in the form: one line, nothing runs.
        library.highlighted = names.index("instance_detail")
        library.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert [f.name for f in form.fields] == ["run_id", "instance_id"]
        await pilot.press("enter")
        await settle(pilot)
        assert line(screen, "#sql-error") == "parameter $run_id needs a value"
        assert table_columns(screen) == columns  # the previous result stays


@pytest.mark.real_model
async def test_errors_show_in_place_and_the_screen_stays_usable(full_run_db: FullRun) -> None:
    db, _, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sql(pilot)
        error = screen.query_one("#sql-error", Static)
        assert not error.display
        await run_sql(pilot, screen, "SELEC nonsense FROM nowhere")
        assert error.display and "Parser Error" in line(screen, "#sql-error")
        await run_sql(pilot, screen, "SELECT * FROM no_such_table")
        assert "no_such_table" in line(screen, "#sql-error")
        await run_sql(pilot, screen, "CREATE TABLE evil (a INTEGER)")
        assert "refused: CREATE statements are not allowed" in line(screen, "#sql-error")
        assert not app._notifications  # shown in place, not only as a notification
        await run_sql(pilot, screen, "SELECT 42 AS answer")
        assert not error.display
        assert table_rows(screen) == [["42"]]
        assert isinstance(app.screen, SqlScreen)


@pytest.mark.real_model
async def test_paging_and_export(
    full_run_db: FullRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db, _, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sql(pilot)
        await run_sql(pilot, screen, "SELECT range AS i FROM range(1234) ORDER BY i")
        rows = table_rows(screen)
        assert len(rows) == PAGE_SIZE and rows[0] == ["0"] and rows[-1] == ["499"]
        status = timed(line(screen, "#sql-status"))
        assert status.startswith("1234 rows in T s · rows 1–500")  # (counted after the page)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert table_rows(screen)[0] == ["500"]
        status = timed(line(screen, "#sql-status"))
        assert status.startswith("1234 rows in T s · rows 501–1000")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert len(table_rows(screen)) == 234
        assert timed(line(screen, "#sql-status")).startswith("1234 rows in T s · rows 1001–1234")
        await pilot.press("ctrl+n")  # no further page
        await settle(pilot)
        assert timed(line(screen, "#sql-status")).startswith("1234 rows in T s · rows 1001–1234")
        await pilot.press("ctrl+b")
        await settle(pilot)
        assert table_rows(screen)[0] == ["500"]

        await pilot.press("ctrl+e")  # asks for the path: enter takes the default
        await settle(pilot)
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("enter")
        await settle(pilot)
        written = sorted((tmp_path / "exports").glob("query-*.csv"))
        assert len(written) == 1
        assert line(screen, "#sql-status") == f"wrote 1234 rows to {written[0].resolve()}"
        with written[0].open(newline="") as handle:
            exported = list(csv.reader(handle))
        assert exported[0] == ["i"] and len(exported) - 1 == 1234
        assert [int(r[0]) for r in exported[1:]] == list(range(1234))

        await pilot.press("ctrl+t", "enter")
        await settle(pilot)
        parquet = sorted((tmp_path / "exports").glob("query-*.parquet"))
        assert len(parquet) == 1
        with duckdb.connect() as con:  # the store's own connections read no other file
            counted = con.execute(f"SELECT count(*) FROM read_parquet('{parquet[0]}')").fetchall()
        assert counted == [(1234,)]


def test_sql_params_skip_comments_and_strings() -> None:
    sql = "-- $nope\nSELECT '$no' AS a, $yes, $also /* $never */ WHERE x = $yes"
    assert sql_params(sql) == ["yes", "also"]
    assert cell_text(None) == "—" and cell_text("x" * 100).endswith("…")


def test_sql_screen_snapshot(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "empty.duckdb"
    open_store(db).close()  # an empty store: the snapshot needs no run
    ticks = iter(range(1000))  # the query's time, held still: 0.25 s a reading
    monkeypatch.setattr(sql_query, "query_clock", lambda: next(ticks) * 0.25)

    async def run_query(pilot: Pilot[Any]) -> None:
        screen = await open_sql(pilot)
        # a blinking cursor would make the picture depend on when it is taken
        screen.query_one("#sql-editor", TextArea).cursor_blink = False
        await run_sql(pilot, screen, "SELECT 1 AS a, 'x' AS b")

    assert snap_compare(create_app(db), terminal_size=(100, 30), run_before=run_query)
