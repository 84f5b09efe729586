"""The workbench's home screen, help and worker-error handling (Pilot and a snapshot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from haf_tui.tui import create_app
from haf_tui.tui.messages import WorkFailed
from haf_tui.tui.screens.help import HelpScreen
from haf_tui.tui.screens.home import HomeScreen
from tests.support import settle


async def test_an_empty_home_says_how_to_start(tmp_path: Path) -> None:
    app = create_app(tmp_path / "absent.duckdb")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert app.screen.query_one("#runs", DataTable).row_count == 0
        hint = app.screen.query_one("#runs-hint", Static)
        assert "haf run --demo" in str(hint.render())
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)


async def test_worker_errors_become_one_notification(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db.duckdb"
    bad.write_text("this is not a database")
    app = create_app(bad)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)  # still running
        messages = [n.message for n in app._notifications]
        assert any("cannot open database" in m for m in messages), messages
    assert WorkFailed("x").message == "x"


@pytest.mark.real_model
async def test_home_lists_a_stored_run(full_run_db: tuple[Path, str, list[str]]) -> None:
    db, run_id, _ = full_run_db
    app = create_app(db)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.screen.query_one("#runs", DataTable)
        assert table.row_count == 1
        row = table.get_row_at(0)
        assert (
            row[0] == run_id
            and row[1] == "finished"
            and row[2] == "haf+classify"
            and row[5] == "2/2"
        )
        assert isinstance(app.screen, HomeScreen) and app.screen.selected_run() == run_id


def test_home_snapshot_on_an_empty_database(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(
        create_app(tmp_path / "none.duckdb"), terminal_size=(80, 24), run_before=settle
    )
