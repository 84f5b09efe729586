"""The SQL screen's export and path dialogs are drawn whole over an opaque background at 80×24
and 200×50, as its history dialog is (``test_tui_sql_history_dialog.py``): Textual neither
blends the SQL screen under them into each frame nor lays it out for them, and ``esc``
brings that screen back as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.tui import create_app
from haf_tui.tui.screens.sql_dialogs import ExportScreen, PathScreen
from tests import test_tui_sql_workbench
from tests.support import settle
from tests.test_tui_sql_history_dialog import SIZES, frame
from tests.test_tui_sql_workbench import editor_of, open_sql

bench_db = test_tui_sql_workbench.bench_db
"""The workbench tests' small synthetic store (the same fixture)."""

MINE = "SELECT 'mine_in_the_editor' AS kept"
"""What the researcher has in the editor (and its result) while the dialog is open."""
DIALOGS = {
    "export": ("ctrl+e", ExportScreen, "Export the whole result as csv"),
    "save": ("ctrl+s", PathScreen, "Save the buffer as"),
    "open": ("f2", PathScreen, "Open a .sql file"),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dialog", DIALOGS)
async def test_the_dialog_is_drawn_whole_over_an_opaque_background(
    bench_db: tuple[Path, list[str]], size: str, dialog: str
) -> None:
    key, kind, title = DIALOGS[dialog]
    app = create_app(bench_db[0])
    async with app.run_test(size=SIZES[size]) as pilot:
        screen = await open_sql(pilot)
        editor_of(screen).load_text(MINE)
        await pilot.press("ctrl+r")  # (a result to export)
        await settle(pilot)
        assert any("mine_in_the_editor" in row for row in frame(app))

        await pilot.press(key)
        await settle(pilot)
        assert isinstance(app.screen, kind)
        shown = "\n".join(frame(app))
        assert "mine_in_the_editor" not in shown  # the SQL screen is not drawn under it
        assert title in shown and "esc cancel" in shown  # (its title and keys, whole)

        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and editor_of(screen).text == MINE
        assert any("mine_in_the_editor" in row for row in frame(app))
