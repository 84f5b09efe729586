"""The SQL editor as researchers know it from harlequin and DBeaver (issue 25 §4): select all,
run the selection or the statement under the cursor, a parameter form that gives the keys back
after a run, completions kept on screen, the library focused when shown, DuckDB's whole error,
several buffers, ``.sql`` files opened and saved, and sqlfmt's layout. Pilot on a small
synthetic store; each test checks the screen, the files the screen keeps or the database."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Offset, Size
from textual.widgets import Input, OptionList
from textual.widgets.text_area import Selection

from haf_tui.tui import create_app, sql_history
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.sql_dialogs import PathScreen
from haf_tui.tui.sql_text import error_notes, format_sql, statement_at, statement_spans
from haf_tui.tui.widgets.sql_completion import CompletionList, popup_place
from haf_tui.tui.widgets.sql_params import ParamsForm
from tests import test_tui_sql_workbench
from tests.support import settle
from tests.test_tui_sql_workbench import (
    editor_of,
    line,
    open_sql,
    rows_of,
    shown,
)

bench_db = test_tui_sql_workbench.bench_db
"""The workbench tests' small synthetic store (the same fixture)."""


# ------------------------------------------------------------------ pure parts


def test_statements_split_outside_strings_and_comments() -> None:
    sql = "SELECT 1 AS a;\nSELECT ';' AS b; -- c; d\nSELECT 3 AS c"
    spans = statement_spans(sql)
    assert [sql[a:b].strip() for a, b in spans] == [
        "SELECT 1 AS a;",
        "SELECT ';' AS b;",
        "-- c; d\nSELECT 3 AS c",
    ]
    assert statement_at(sql, 3).strip() == "SELECT 1 AS a;"
    assert statement_at(sql, sql.index("';'")).strip() == "SELECT ';' AS b;"
    assert statement_at(sql, len(sql)).strip().endswith("SELECT 3 AS c")
    assert statement_at("SELECT 1;", 0) == "SELECT 1;"  # one statement: the whole text


def test_error_notes_keep_duckdbs_hints() -> None:
    message = (
        'Binder Error: Referenced column "stag" not found in FROM clause!\n'
        'Candidate bindings: "stage", "status"\n\nLINE 2: select stag\n               ^^^^'
    )
    assert error_notes(message) == ['Candidate bindings: "stage", "status"']
    assert error_notes(message, keep_quote=True)[-2:] == [
        "LINE 2: select stag",
        "               ^^^^",
    ]


def test_the_completion_popup_stays_on_screen() -> None:
    names = ["stage", "status", "started_at"]
    screen = Size(80, 24)
    assert popup_place(Offset(10, 5), names, screen) == Offset(10, 5)
    far_right = popup_place(Offset(200, 5), names, screen)
    assert far_right.x >= 0 and far_right.x + 16 <= 80
    bottom = popup_place(Offset(10, 23), names, screen)
    assert bottom.y + len(names) + 2 <= 22  # above the cursor's line


def test_format_lays_out_and_keeps_comments() -> None:
    laid_out = format_sql("select a,b from runs -- why\nwhere a>1")
    assert "-- why" in laid_out and "a, b" in laid_out and "a > 1" in laid_out


# ------------------------------------------------------------------ the screen


async def test_ctrl_a_selects_all_and_typing_replaces_it(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text("SELECT 1 AS one\nFROM range(3)")
        editor.focus()
        editor.cursor_location = (1, 5)
        await pilot.press("ctrl+a")
        assert editor.selected_text == editor.text
        await pilot.press("backspace")  # clears
        assert editor.text == ""
        await pilot.press(*"SELECT 2 AS two", "ctrl+a", "x")
        assert editor.text == "x"


async def test_ctrl_r_runs_the_selection_or_the_statement_under_the_cursor(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text("SELECT 1 AS a;\nSELECT count(*) AS n FROM runs;\nSELECT 3 AS c")
        editor.focus()
        editor.cursor_location = (1, 3)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert shown(screen) == rows_of(db, "SELECT count(*) AS n FROM runs")
        assert "the statement here" in line(screen, "#sql-hint")
        editor.cursor_location = (2, 0)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert shown(screen) == (["c"], [["3"]])
        editor.selection = Selection((0, 7), (0, 13))  # "1 AS a"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert line(screen, "#sql-error").startswith("query failed")  # "1 AS a" alone
        editor.selection = Selection((0, 0), (0, 13))  # "SELECT 1 AS a"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert shown(screen) == (["a"], [["1"]])
        assert "the selection" in line(screen, "#sql-hint")


async def test_the_parameter_form_gives_the_keys_back_after_a_run(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, run_ids = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        await screen.pick_query("instance_detail")
        await settle(pilot)
        form = screen.query_one(ParamsForm)
        run_input = form.query_one("#param-run_id", Input)
        run_input.value = run_ids[0]
        form.query_one("#param-instance_id", Input).value = "x"
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert form.shown and editor_of(screen).has_focus
        await pilot.press("space")
        assert run_input.value == run_ids[0]  # the keystroke went to the editor


async def test_ctrl_l_focuses_the_library(bench_db: tuple[Path, list[str]]) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        await pilot.press("ctrl+l")
        await settle(pilot)
        library = screen.query_one("#library", OptionList)
        if screen.query_one("#sql-library").has_class("-hidden"):  # it was shown: hid it
            await pilot.press("ctrl+l")
            await settle(pilot)
        assert not screen.query_one("#sql-library").has_class("-hidden")
        assert library.has_focus
        text_before = editor_of(screen).text
        await pilot.press("enter")  # chooses a query, no newline typed into the editor
        await settle(pilot)
        assert editor_of(screen).text != text_before + "\n"


async def test_an_error_shows_duckdbs_whole_message(bench_db: tuple[Path, list[str]]) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text("SELECT stag\nFROM runs")
        editor.focus()
        await pilot.press("ctrl+r")
        await settle(pilot)
        error = line(screen, "#sql-error")
        assert 'Referenced column "stag" not found' in error
        assert "Candidate bindings" in error and '"status"' in error
        assert "line 1: SELECT stag" in line(screen, "#sql-where")


async def test_a_completion_on_a_long_line_opens_on_screen(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.focus()
        editor.load_text("SELECT " + ", ".join(f"{i} AS c{i}" for i in range(20)) + ", r.sta")
        editor.cursor_location = (0, len(editor.text))
        await pilot.press("ctrl+space")
        await settle(pilot)
        offered = screen.query_one("#sql-completion", CompletionList)
        assert offered.display and offered.has_focus
        region = offered.region
        assert region.right <= 80 and region.bottom <= 24 and region.width > 0
        await pilot.press("escape")
        await settle(pilot)
        assert not offered.display and editor.has_focus


async def test_buffers_files_and_format(
    bench_db: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = bench_db
    monkeypatch.chdir(tmp_path)
    other = tmp_path / "other.sql"
    other.write_text("SELECT 'keep me'", encoding="utf-8")
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text("select a,b from runs")
        editor.focus()
        await pilot.press("f4")
        assert editor.text == "select a, b from runs"

        # a second buffer, then back to the first
        await pilot.press("f8")
        assert editor.text == "" and "buffer 2/2" in str(editor.border_title)
        await pilot.press(*"SELECT 2")
        await pilot.press("f3")
        assert editor.text == "select a, b from runs"
        await pilot.press("f3")
        assert editor.text == "SELECT 2"

        # save to a new file; then over another existing file: asked, and "n" keeps it
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, PathScreen)
        app.screen.query_one(Input).value = "saved.sql"
        await pilot.press("enter")
        await settle(pilot)
        assert (tmp_path / "saved.sql").read_text(encoding="utf-8") == "SELECT 2"
        assert "saved.sql" in str(editor.border_title)
        await pilot.press("ctrl+s")
        await settle(pilot)
        app.screen.query_one(Input).value = "other.sql"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert other.read_text(encoding="utf-8") == "SELECT 'keep me'"
        assert not list(tmp_path.glob(".*.tmp"))

        # open a file into a new buffer
        await pilot.press("f2")
        await settle(pilot)
        app.screen.query_one(Input).value = "other.sql"
        await pilot.press("enter")
        await settle(pilot)
        assert editor.text == "SELECT 'keep me'" and "buffer 3/3" in str(editor.border_title)

    # the buffers are there in the next session
    kept = sql_history.load_buffers()
    assert [b.text for b in kept.buffers] == [
        "select a, b from runs",
        "SELECT 2",
        "SELECT 'keep me'",
    ]
    assert kept.buffers[1].path == str(tmp_path / "saved.sql") and kept.current == 2
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        assert editor_of(screen).text == "SELECT 'keep me'"


async def test_opening_a_binary_file_is_one_line(
    bench_db: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = bench_db
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bin.sql").write_bytes(b"SELECT \x00\x01")
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        text_before = editor_of(screen).text
        await pilot.press("f2")
        await settle(pilot)
        app.screen.query_one(Input).value = "bin.sql"
        await pilot.press("enter")
        await settle(pilot)
        assert "binary file" in line(screen, "#sql-error")
        assert editor_of(screen).text == text_before
