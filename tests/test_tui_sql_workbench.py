# Over 400 lines because each workbench feature drives the same screen on one small store.
"""The SQL screen as a workbench (issue 18, §9 and §3): schema browser, completion, history and
the kept buffer, parameter forms, errors that point, export to a chosen path, Arrow results.
Keys are driven through Textual's pilot on a small synthetic store; each test checks the screen
and the database (or the files the screen keeps)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Label, Static
from textual_fastdatatable import DataTable as FastDataTable

from benchmarks.benchdata import build_bench_db
from haf_tui import reports
from haf_tui.store import open_store
from haf_tui.tui import create_app, sql_history
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.screens.sql_dialogs import ExportScreen, HistoryScreen
from haf_tui.tui.sql_text import completions, error_position, word_before
from haf_tui.tui.widgets.result_table import ResultTable, cell_text
from haf_tui.tui.widgets.sql_completion import CompletionList
from haf_tui.tui.widgets.sql_editor import SqlEditor
from haf_tui.tui.widgets.sql_params import ParamsForm
from haf_tui.tui.widgets.sql_schema import SchemaTree
from tests.support import settle


@pytest.fixture
def bench_db(tmp_path: Path) -> tuple[Path, list[str]]:
    db = tmp_path / "haf.duckdb"
    return db, build_bench_db(db, n_instances=4, n_runs=2, seed=3)


async def open_sql(pilot: Pilot[Any]) -> SqlScreen:
    await settle(pilot)
    await pilot.press("s")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SqlScreen)
    return screen


def editor_of(screen: SqlScreen) -> SqlEditor:
    return screen.query_one("#sql-editor", SqlEditor)


def results(screen: SqlScreen) -> ResultTable:
    return screen.query_one("#sql-results", ResultTable)


def line(screen: Any, selector: str) -> str:
    widget = screen.query_one(selector, Static)
    return str(widget.render()) if widget.display else ""


def timed(status: str) -> str:
    """A status line with its query time (``in 0.04 s``: two decimals) as ``in T s``."""
    found = re.fullmatch(r"(.*) in (\d+\.\d\d) s(.*)", status)
    assert found is not None, status
    return f"{found[1]} in T s{found[3]}"


def rows_of(db: Path, sql: str, params: Any = None) -> tuple[list[str], list[list[str]]]:
    with open_store(db, read_only=True) as store:
        columns, rows = store.query(sql, params)
    return columns, [[cell_text(v) for v in row] for row in rows]


def shown(screen: SqlScreen) -> tuple[list[str], list[list[str]]]:
    table = results(screen)
    return table.columns, [table.get_row_at(i) for i in range(table.row_count)]


# ------------------------------------------------------------------ 1. schema browser


async def test_schema_browser_lists_the_schema_and_inserts_names(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    with open_store(db, read_only=True) as store:
        _, catalog = store.query(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_catalog = current_database()"
        )
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        panel = screen.query_one("#sql-schema")
        assert not panel.display
        await pilot.press("ctrl+o")
        await pilot.pause()
        tree = screen.query_one("#schema", SchemaTree)
        assert panel.display and tree.has_focus
        groups = {str(node.label): node for node in tree.root.children}
        assert set(groups) >= {"tables", "named queries"}
        tables = {str(n.label): n for n in groups["tables"].children}
        assert "runs" in tables and "generations" in tables
        listed = {
            (table, str(leaf.label).split()[0], str(leaf.label).split(maxsplit=1)[1].strip())
            for table, node in tables.items()
            for leaf in node.children
        }
        assert {(t, c, d) for t, c, d in catalog if t in tables} == listed
        assert [str(n.label) for n in groups["named queries"].children] == list(
            reports.load_queries()
        )

        # enter on the table "runs" puts its name at the editor's cursor
        editor = editor_of(screen)
        editor.load_text("SELECT * FROM ")
        editor.cursor_location = (0, len("SELECT * FROM "))
        tree.focus()
        tree.move_cursor(tables["runs"])
        await pilot.press("enter")
        await pilot.pause()
        assert editor.text == "SELECT * FROM runs" and editor.has_focus
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert shown(screen) == rows_of(db, "SELECT * FROM runs")

        # a named query from the browser opens it
        tree.focus()
        tree.move_cursor(groups["named queries"])
        await pilot.press("enter")  # expands the group
        await pilot.pause()
        tree.move_cursor(groups["named queries"].children[0])
        await pilot.press("enter")
        await pilot.pause()
        first = next(iter(reports.load_queries().values()))
        assert editor.text == first.sql
        await pilot.press("ctrl+o")  # shown, the editor focused: the key focuses the browser
        await pilot.pause()
        assert panel.display and tree.has_focus
        await pilot.press("ctrl+o")  # from inside the browser: the key hides it
        assert not panel.display


# ------------------------------------------------------------------ 2. completion


def test_completion_words() -> None:
    assert word_before("SELECT r.run_", 13) == "r.run_"
    assert word_before("SELECT ", 7) == ""
    names = ["runs", "run_id", "reasons", "RS"]
    assert completions("ru", names) == ["run_id", "runs"]
    assert completions("r.ru", names) == ["run_id", "runs"]
    assert completions("runs", names) == []
    assert completions("", names) == []


async def test_completion_of_table_and_column_names(bench_db: tuple[Path, list[str]]) -> None:
    db, run_ids = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.focus()
        await pilot.press(*"SELECT count(*) AS n FROM instance_res")
        await pilot.press("ctrl+space")
        await pilot.pause()
        assert editor.text == "SELECT count(*) AS n FROM instance_results"  # one fits: in place
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert shown(screen) == rows_of(db, editor.text)

        editor.load_text("")
        await pilot.press(*"SELECT model_f")
        await pilot.press("ctrl+space")
        await pilot.pause()
        assert editor.text == "SELECT model_file"

        editor.load_text("")
        await pilot.press(*"SELECT r.sta")  # several fit: a list under the cursor
        await pilot.press("ctrl+space")
        await pilot.pause()
        offered = screen.query_one("#sql-completion", CompletionList)
        assert offered.display and offered.has_focus
        names = [str(offered.get_option_at_index(i).prompt) for i in range(offered.option_count)]
        with open_store(db, read_only=True) as store:
            _, found = store.query(
                "SELECT DISTINCT column_name FROM information_schema.columns "
                "WHERE table_schema = 'main' AND column_name ILIKE 'sta%' ORDER BY 1"
            )
        assert names == [str(r[0]) for r in found] and len(names) > 1
        await pilot.press("down", "enter")
        await pilot.pause()
        assert editor.text == f"SELECT r.{names[1]}" and editor.has_focus
        assert not offered.display

        await pilot.press(*" FROM runs r WHERE r.st")
        await pilot.press("ctrl+space")
        await pilot.pause()
        assert offered.display
        await pilot.press("escape")  # closes the list, stays on the screen
        await pilot.pause()
        assert not offered.display and isinstance(app.screen, SqlScreen)
        assert editor.text.endswith("r.st") and run_ids


# ------------------------------------------------------------------ 3. history and buffer


async def test_history_is_kept_and_searchable_and_the_buffer_persists(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    first = "SELECT count(*) AS n FROM runs"
    second = "SELECT model_file FROM runs ORDER BY 1"
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        assert editor.text == ""
        for sql in (first, second, second):
            editor.load_text(sql)
            await pilot.press("ctrl+r")
            await settle(pilot)
        history = sql_history.state_dir() / sql_history.HISTORY_FILE
        entries = [json.loads(row) for row in history.read_text().splitlines()]
        assert [e["sql"] for e in entries] == [first, second]  # a repeat is not added again
        assert all(e["db"] == str(db) for e in entries)

        await pilot.press("ctrl+f")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, HistoryScreen)
        assert [e.sql for e in dialog.shown] == [second, first]  # newest first
        await pilot.press(*"count runs")
        await pilot.pause()
        assert [e.sql for e in dialog.shown] == [first]
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and editor.text == first

        editor.load_text(first + " -- edited")
        await pilot.press("escape")  # back: the edit is kept, and the screen says so
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert any("kept" in str(n.message) for n in app._notifications)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SqlScreen)
        assert editor_of(app.screen).text == first + " -- edited"

    app = create_app(db)  # a new session
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        assert editor_of(screen).text == first + " -- edited"
    buffer = sql_history.state_dir() / sql_history.BUFFER_FILE
    assert buffer.read_text() == first + " -- edited"


def test_history_lives_under_the_haf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    assert sql_history.home_state_dir() == tmp_path / "home" / "sql"
    monkeypatch.setattr(sql_history, "state_dir", sql_history.home_state_dir)
    sql_history.append_history("SELECT 1", "x.duckdb")
    sql_history.save_buffer("SELECT 2")
    assert (tmp_path / "home" / "sql" / "history.jsonl").is_file()
    assert [e.sql for e in sql_history.load_history()] == ["SELECT 1"]
    assert sql_history.load_buffer() == "SELECT 2"
    (tmp_path / "home" / "sql" / "history.jsonl").write_text("not json\n", encoding="utf-8")
    assert sql_history.load_history() == []


# ------------------------------------------------------------------ 4. parameters


async def test_named_parameters_are_asked_for_in_a_form(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, run_ids = bench_db
    run_id = run_ids[0]
    prefix = next(
        run_id[:k] for k in range(1, len(run_id) + 1) if not run_ids[1].startswith(run_id[:k])
    )
    sql = "SELECT instance_id FROM instance_results WHERE run_id = ?"
    _, instances = rows_of(db, sql, [run_id])
    instance_id = instances[0][0]
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        form = screen.query_one(ParamsForm)
        assert not form.shown
        await screen.pick_query("instance_detail")  # as enter in the library does
        await settle(pilot)
        assert form.shown
        labels = [str(label.render()) for label in form.query(Label)]
        assert labels[0].startswith("$run_id (VARCHAR)") and labels[1].startswith("$instance_id")
        assert [f.name for f in form.fields] == ["run_id", "instance_id"]
        run_input = form.query_one("#param-run_id", Input)
        assert run_input.has_focus and run_input.value == ""
        await pilot.press(*prefix)  # a unique prefix is enough
        form.query_one("#param-instance_id", Input).value = instance_id
        await pilot.press("enter")
        await settle(pilot)
        with open_store(db, read_only=True) as store:
            columns, rows = reports.run_named(
                store, "instance_detail", {"run_id": run_id, "instance_id": instance_id}
            )
        assert rows and shown(screen) == (columns, [[cell_text(v) for v in r] for r in rows])
        assert form.shown  # open, to change a value and run again

        # esc closes the form, the result stays; ctrl+r opens it again with the values
        # given last, and runs from the editor too
        await pilot.press("escape")
        await settle(pilot)
        assert not form.shown and app.screen is screen
        assert results(screen).row_count == len(rows)
        editor_of(screen).focus()
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert form.shown and results(screen).row_count == len(rows)
        assert form.query_one("#param-instance_id", Input).value == instance_id
        assert form.query_one("#param-run_id", Input).value == prefix
        form.query_one("#param-run_id", Input).value = "no-such-run"
        editor_of(screen).focus()
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert line(screen, "#sql-error") == f"no run 'no-such-run' in {db}"
        assert results(screen).row_count == 0

        # a list parameter with its default; a required one left empty is one line
        await screen.pick_query("stance_distribution")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        with open_store(db, read_only=True) as store:
            columns, rows = reports.run_named(store, "stance_distribution")
        assert shown(screen) == (columns, [[cell_text(v) for v in r] for r in rows])
        await screen.pick_query("instance_detail")
        await settle(pilot)
        screen.query_one("#param-run_id", Input).value = ""
        await pilot.press("enter")
        await settle(pilot)
        assert line(screen, "#sql-error") == "parameter $run_id needs a value"
        assert form.shown  # to fix it


# ------------------------------------------------------------------ 5. errors point


def test_error_position_reads_duckdb_lines() -> None:
    sql = "SELECT run_id,\n  nope FROM runs"
    wrapped = "Binder Error: x\n\nLINE 3:   nope FROM runs\n          ^"
    assert error_position(sql, wrapped) == error_position(sql, wrapped.replace("3:", "2:"))
    found = error_position(sql, wrapped)
    assert found is not None and (found.row, found.column) == (1, 2)
    long_line = "SELECT " + ", ".join(f"c{i}" for i in range(60)) + ", nope FROM t"
    message = "X\nLINE 1: ...c58, c59, nope FROM t\n" + " " * len("LINE 1: ...c58, c59, ") + "^^^^"
    found = error_position(long_line, message)
    assert found is not None and long_line[found.column :].startswith("nope")
    assert error_position(sql, "Parser Error: no line") is None


async def test_an_error_clears_stale_results_and_points_at_the_place(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text("SELECT run_id FROM runs")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert results(screen).row_count == 2
        editor.load_text("SELECT run_id,\n  nope_column FROM runs")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert results(screen).row_count == 0 and results(screen).columns == []
        assert not screen.query(FastDataTable)  # nothing stale on screen
        assert line(screen, "#sql-error").startswith("query failed: Binder Error")
        assert line(screen, "#sql-where") == (
            "line 2:   nope_column FROM runs\n" + " " * len("line 2:   ") + "^"
        )
        assert editor.cursor_location == (1, 2)
        assert line(screen, "#sql-status") == ""
        await pilot.press("ctrl+e")  # the failed query left nothing to export
        await settle(pilot)
        assert line(screen, "#sql-error").startswith("nothing to export")

        editor.load_text("SELEC 1")  # a parser error, run as written
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "Parser Error" in line(screen, "#sql-error")
        assert line(screen, "#sql-where").startswith("line 1: SELEC 1")
        editor.load_text("SELECT 1 AS ok")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert line(screen, "#sql-error") == line(screen, "#sql-where") == ""
        assert shown(screen) == (["ok"], [["1"]])


# ------------------------------------------------------------------ 6. export


async def test_export_asks_for_a_path_and_says_where_it_wrote(
    bench_db: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = bench_db
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor_of(screen).load_text("SELECT run_id, model_file FROM runs ORDER BY run_id")
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("ctrl+e")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ExportScreen)
        assert str(work) in line(dialog, ".dialog-note")  # the current directory is shown
        path_input = dialog.query_one("#export-path", Input)
        assert path_input.value.startswith("exports/query-") and path_input.value.endswith(".csv")
        path_input.value = ""
        await pilot.press(*"out/runs.csv", "enter")
        await settle(pilot)
        target = (work / "out" / "runs.csv").resolve()
        assert app.screen is screen
        assert line(screen, "#sql-status") == f"wrote 2 rows to {target}"
        with target.open(newline="") as handle:
            written = list(csv.reader(handle))
        with open_store(db, read_only=True) as store:
            _, expected = store.query("SELECT run_id, model_file FROM runs ORDER BY run_id")
        assert written[0] == ["run_id", "model_file"]
        assert written[1:] == [[str(v) for v in row] for row in expected]

        await pilot.press("ctrl+t")  # parquet; esc writes nothing
        await settle(pilot)
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and not (work / "exports").exists()


# ------------------------------------------------------------------ 7. Arrow results


async def test_results_are_a_fast_arrow_table(bench_db: tuple[Path, list[str]]) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor_of(screen).load_text("SELECT range AS i, 'x' || range AS s FROM range(700)")
        await pilot.press("ctrl+r")
        await settle(pilot)
        tables = list(screen.query(FastDataTable))
        assert len(tables) == 1 and tables[0].row_count == 500
        assert results(screen).get_row_at(499) == ["499", "x499"]
