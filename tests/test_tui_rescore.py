"""The workbench's re-score: ``r`` on a finished run asks "re-score or refresh", the model box
refuses a model it cannot load in one line (the text kept), a loaded one re-scores the run,
and the derived run is listed under its parent with its g."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from haf_tui.similarity import load_similarity
from haf_tui.store import open_store
from haf_tui.store.derived_runs import children_of
from haf_tui.tui import create_app
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from tests.support import settle
from tests.support.rescore_runs import save_tiny_dataset, scripted_run
from tests.support.tiny_similarity import tiny_bi_encoder


async def test_r_on_a_finished_run_rescores_it_and_lists_it_under_its_parent(
    tmp_path: Path,
) -> None:
    first, second = tiny_bi_encoder(tmp_path, 1), tiny_bi_encoder(tmp_path, 2)
    db = tmp_path / "haf.duckdb"
    with open_store(db) as store:
        save_tiny_dataset(store)
        scripted_run(store, "parent", load_similarity(str(first)))
        scripted_run(store, "other", load_similarity(str(first)))
    async with create_app(db).run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        home = pilot.app.screen
        assert isinstance(home, HomeScreen)
        table = home.query_one("#runs")
        table.move_cursor(row=table.get_row_index("parent"))  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        box = pilot.app.screen
        assert isinstance(box, TextEditorScreen)
        box.query_one(Input).value = "no-such/model"
        await pilot.press("enter")
        await settle(pilot)
        assert pilot.app.screen is box  # refused in the box, the text kept
        error = str(box.query_one("#editor-error", Static).render())
        assert "huggingface-cli download no-such/model" in error
        assert box.query_one(Input).value == "no-such/model"
        box.query_one(Input).value = str(second)
        await pilot.press("enter")
        await settle(pilot, rounds=6)
        assert isinstance(pilot.app.screen, HomeScreen)
        home.load_runs()
        await settle(pilot)
        keys = [str(key.value) for key in table.rows]  # type: ignore[attr-defined]
        rows = home._shown_rows or []
    with open_store(db, read_only=True) as store:
        (derived,) = children_of(store, "parent")
        assert derived.status == "finished" and derived.similarity_model == str(second)
    assert keys.index(derived.run_id) == keys.index("parent") + 1  # under its parent
    title = next(str(row[1]) for row in rows if row[0] == derived.run_id)
    assert title.startswith("└ ") and title.endswith(" · g tiny-g-2")
