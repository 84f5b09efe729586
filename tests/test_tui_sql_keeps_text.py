"""The SQL screen keeps the researcher's text (issue 43 §5): a library query (or a query taken
from the history) opens in a new buffer, never over hand-written SQL, and ``buffers.json``
keeps both; a click in the library leaves the focus there, so ``enter`` picks the highlighted
query instead of typing a newline into the editor (at 80×24 and at 200×50); after a run the
status line says how many rows came back and in how long, "at least" while pages are unread.
Driven through Textual's pilot on a small synthetic store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList

from haf_tui import reports
from haf_tui.store import open_store
from haf_tui.tui import create_app, sql_history
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.widgets.sql_editor import SqlEditor
from haf_tui.tui.widgets.sql_results import status_text
from tests import test_tui_sql_workbench
from tests.support import settle
from tests.test_tui_sql_workbench import editor_of, line, open_sql, shown, timed

bench_db = test_tui_sql_workbench.bench_db
"""The workbench tests' small synthetic store (the same fixture)."""

MINE = "SELECT run_id, count(*) AS n\nFROM instance_results\nGROUP BY run_id -- mine"
"""What the researcher wrote by hand."""
SIZES = {"80x24": (80, 24), "200x50": (200, 50)}


def kept_buffers() -> dict[str, Any]:
    """What ``buffers.json`` holds on disk."""
    path = sql_history.state_dir() / sql_history.BUFFERS_FILE
    kept: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return kept


def texts(editor: SqlEditor) -> list[str]:
    """Every buffer's text (the one shown: as the editor holds it now)."""
    current = editor.buffers.current
    return [editor.text if k == current else b.text for k, b in enumerate(editor.buffers.buffers)]


async def click_query(pilot: Any, screen: SqlScreen, name: str) -> None:
    """Click a query's line in the library (shown on opening, one line per query)."""
    library = screen.query_one("#library", OptionList)
    index = list(screen.library).index(name)
    library.scroll_to(y=0, animate=False)
    await pilot.pause()
    assert index < library.size.height, "the query's line is on screen"
    await pilot.click(library, offset=(2, index))
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
async def test_a_library_query_opens_in_a_new_buffer_and_enter_in_the_library_picks(
    bench_db: tuple[Path, list[str]], size: str
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=SIZES[size]) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text(MINE)
        await settle(pilot)
        datasets = screen.library["datasets"]

        # a click on "datasets": its SQL in a new buffer, the hand-written one kept
        await click_query(pilot, screen, "datasets")
        assert editor.text == datasets.sql
        assert texts(editor) == [MINE, datasets.sql]
        assert editor.buffers.current == 1
        assert "your SQL is in buffer 1 (f3)" in line(screen, "#sql-hint")
        library = screen.query_one("#library", OptionList)
        assert library.has_focus  # the focus stays where the click was
        kept = kept_buffers()  # both are kept for the next session, the new one shown
        assert [b["text"] for b in kept["buffers"]] == [MINE, datasets.sql]
        assert kept["current"] == 1

        # enter in the library picks the highlighted query: no newline in the editor
        await pilot.press("enter")
        await settle(pilot)
        assert editor.text == datasets.sql and editor.has_focus
        assert len(editor.buffers.buffers) == 2  # the same query again: the same buffer

        # the library again, "runs" chosen by keys: it takes the unchanged library buffer
        library.focus()
        library.highlighted = list(screen.library).index("runs")
        await pilot.press("enter")
        await settle(pilot)
        runs = screen.library["runs"]
        assert editor.text == runs.sql and editor.has_focus
        assert texts(editor) == [MINE, runs.sql]

        # it runs: the status line counts the rows the store gives, and the time
        await pilot.press("ctrl+r")
        await settle(pilot)
        with open_store(db, read_only=True) as store:
            columns, rows = reports.run_named(store, "runs")
        assert shown(screen)[0] == columns and len(shown(screen)[1]) == len(rows) == 2
        assert timed(line(screen, "#sql-status")) == "2 rows in T s"

        # edited, it is the researcher's: the next query opens in a third buffer
        editor.insert("-- edited\n", (0, 0))
        await click_query(pilot, screen, "datasets")
        assert texts(editor) == [MINE, "-- edited\n" + runs.sql,
                                                           datasets.sql]  # fmt: skip
        await pilot.press("f3")  # back to the first: the hand-written text, whole
        await settle(pilot)
        assert editor.text == MINE
    assert [b["text"] for b in kept_buffers()["buffers"]] == [
        MINE,
        "-- edited\n" + runs.sql,
        datasets.sql,
    ]


async def test_a_query_from_the_history_opens_in_a_new_buffer(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    sql_history.append_history("SELECT 1 AS from_history", db)
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text(MINE)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen and editor.text == "SELECT 1 AS from_history"
        assert texts(editor) == [MINE, "SELECT 1 AS from_history"]
        assert "your SQL is in buffer 1" in line(screen, "#sql-hint")


@pytest.mark.parametrize("size", SIZES)
async def test_the_status_line_counts_the_rows_and_says_at_least_while_uncounted(
    bench_db: tuple[Path, list[str]], size: str
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=SIZES[size]) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        for sql, expected in (
            ("SELECT range AS i FROM range(37)", "37 rows in T s"),
            ("SELECT 1 AS one", "1 row in T s"),
            ("SELECT 1 AS one WHERE false", "0 rows in T s"),
            ("SELECT 1 AS one; FROM range(501)", "at least 501 rows in T s · rows 1–500"),
            ("SELECT range AS i FROM range(501)", "501 rows in T s · rows 1–500"),  # counted
        ):
            editor.load_text(sql)
            editor.focus()
            await pilot.press(*(["ctrl+a"] if ";" in sql else []), "ctrl+r")  # (the whole text)
            await settle(pilot)
            assert timed(line(screen, "#sql-status")).startswith(expected)
            if "·" not in expected:
                assert len(shown(screen)[1]) == int(expected.split()[0])
        await pilot.press("ctrl+n")  # the last page
        await settle(pilot)
        status = timed(line(screen, "#sql-status"))
        assert status == "501 rows in T s · rows 501–501"
        assert screen.query_one("#sql-status").size.height == 1  # whole, on one line


def test_status_text_counts() -> None:
    assert status_text(0, 37, False, 0.041) == "37 rows in 0.04 s"
    assert status_text(0, 1, False, 1.5) == "1 row in 1.50 s"
    assert status_text(0, 500, True, 0.2) == "at least 501 rows in 0.20 s · rows 1–500"
    assert status_text(500, 500, True, 0.2) == "at least 1001 rows in 0.20 s · rows 501–1000"
    assert status_text(1000, 234, False, 0.2) == "1234 rows in 0.20 s · rows 1001–1234"
    assert status_text(0, 500, True, 0.2, 1234) == "1234 rows in 0.20 s · rows 1–500"
    assert status_text(500, 0, False, 0.2) == "500 rows in 0.20 s · none after row 500"
