"""The SQL screen's history dialog (ctrl+f) at 80×24 and at 200×50 (issue 44 §2): it is
drawn over an opaque background, so Textual neither blends the SQL screen under it nor lays
that screen out for it (the dimmed screen under the dialog cost ~40 of the key's ~75 ms at
paper scale); it shows whole (the title, the entries, the keys), filters as you type, takes
the highlighted query with ``enter`` (the editor focused), and ``esc`` brings back the
editor's SQL untouched with the focus where it was (moving it re-laid the footer's keys).
Driven through Textual's pilot on a small synthetic store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from haf_tui.tui import create_app, sql_history
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.screens.sql_dialogs import HistoryScreen
from tests import test_tui_sql_workbench
from tests.support import settle
from tests.test_tui_sql_workbench import editor_of, open_sql

bench_db = test_tui_sql_workbench.bench_db
"""The workbench tests' small synthetic store (the same fixture)."""

SIZES = {"80x24": (80, 24), "200x50": (200, 50)}
MINE = "SELECT 'mine_in_the_editor' AS kept"
"""What the researcher has in the editor while looking through the history."""
PAST = ("SELECT 1 AS first_past_query", "SELECT 2 AS second_past_query")


def frame(app: Any) -> list[str]:
    """The lines the terminal would show now, the screens under the top one included (as
    Textual draws them: a translucent screen blends the one under it)."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    return ["".join(strip.text for strip in line) for line in update.strips]


@pytest.mark.parametrize("size", SIZES)
async def test_the_history_is_drawn_whole_over_an_opaque_background(
    bench_db: tuple[Path, list[str]], size: str
) -> None:
    db, _ = bench_db
    for sql in PAST:
        sql_history.append_history(sql, db)
    app = create_app(db)
    async with app.run_test(size=SIZES[size]) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text(MINE)
        await settle(pilot)
        assert any("mine_in_the_editor" in row for row in frame(app))

        await pilot.press("ctrl+f")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, HistoryScreen)
        shown = "\n".join(frame(app))
        assert "mine_in_the_editor" not in shown  # the SQL screen is not drawn under it
        assert "Query history" in shown
        assert "second_past_query" in shown and "first_past_query" in shown
        assert "esc cancel" in shown  # the keys line, last in the dialog, is on the screen
        newest = next(i for i, row in enumerate(frame(app)) if "second_past_query" in row)
        oldest = next(i for i, row in enumerate(frame(app)) if "first_past_query" in row)
        assert newest < oldest  # newest first

        await pilot.press(*"first")
        await settle(pilot)
        shown = "\n".join(frame(app))
        assert "first_past_query" in shown and "second_past_query" not in shown

        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and editor.text == MINE
        assert any("mine_in_the_editor" in row for row in frame(app))


async def test_enter_takes_the_highlighted_query_after_moving(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    for sql in PAST:
        sql_history.append_history(sql, db)
    app = create_app(db)
    async with app.run_test(size=SIZES["80x24"]) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text(MINE)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await pilot.press("down", "down", "up", "down")  # (past the end stays on the last)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SqlScreen) and editor.text == PAST[0]
        assert [b.text for b in editor.buffers.buffers] == [MINE, PAST[0]]  # mine is kept


@pytest.mark.parametrize("size", SIZES)
async def test_a_long_history_keeps_the_keys_line_and_one_line_a_query(
    bench_db: tuple[Path, list[str]], size: str
) -> None:
    db, _ = bench_db
    for number in range(40):  # more than fit, each longer than the dialog is wide
        sql_history.append_history(f"SELECT {number} AS q{number} FROM runs {'-- x ' * 40}", db)
    app = create_app(db)
    async with app.run_test(size=SIZES[size]) as pilot:
        await open_sql(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        rows = frame(app)
        assert any("esc cancel" in row for row in rows)  # (was cut off at 80×24)
        listed = [row for row in rows if " AS q" in row]
        assert len(listed) >= 10
        assert all("…" in row for row in listed)  # cut at the edge, never wrapped
        assert not any(row.strip("│▊▎ ").startswith("-- x") for row in rows)
        await pilot.press(*"q39")
        await settle(pilot)
        (only,) = [row for row in frame(app) if " AS q" in row]
        assert "AS q39 " in only


async def test_esc_leaves_the_focus_where_it_was_and_a_query_taken_focuses_the_editor(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    sql_history.append_history(PAST[0], db)
    app = create_app(db)
    async with app.run_test(size=SIZES["80x24"]) as pilot:
        screen = await open_sql(pilot)
        editor = editor_of(screen)
        editor.load_text(MINE)
        await pilot.press("ctrl+o")  # the schema browser, focused
        await settle(pilot)
        browsing = screen.focused
        assert browsing is not None and browsing is not editor
        await pilot.press("ctrl+f")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and screen.focused is browsing and editor.text == MINE

        await pilot.press("ctrl+f")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert screen.focused is editor and editor.text == PAST[0]
