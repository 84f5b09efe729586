"""The SQL screen as issue 34 §9 found it at 80×24: the hint line of a named query is dropped
once the researcher types SQL of their own, ``ctrl+l`` focuses a library that is shown (and
hides it only from inside), and the editor keeps room for a query (Pilot, a small synthetic
store)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from haf_tui import reports
from haf_tui.tui import create_app
from haf_tui.tui.widgets.sql_params import ParamsForm
from tests import test_tui_sql_workbench
from tests.support import settle
from tests.test_tui_sql_workbench import editor_of, line, open_sql

bench_db = test_tui_sql_workbench.bench_db
"""The workbench tests' small synthetic store (the same fixture)."""


async def test_typing_own_sql_drops_the_named_querys_hint(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        names = list(reports.load_queries())
        with_params = next(name for name in names if screen.library[name].params)
        await screen.pick_query(with_params)
        await settle(pilot)
        assert "parameters below" in line(screen, "#sql-hint")
        editor = editor_of(screen)
        editor.focus()
        await pilot.press("ctrl+a", *"SELECT 41 + 1 AS answer")
        await settle(pilot)
        hint = line(screen, "#sql-hint")
        assert "parameters below" not in hint and with_params not in hint
        assert "your own SQL" in hint
        assert not screen.query_one(ParamsForm).shown  # no $parameter left to ask for
        assert screen.selected is None


async def test_ctrl_l_focuses_a_shown_library_and_hides_it_from_inside(
    bench_db: tuple[Path, list[str]],
) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        library_panel = screen.query_one("#sql-library")
        assert not library_panel.has_class("-hidden")  # shown on opening, the editor focused
        assert editor_of(screen).has_focus
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert not library_panel.has_class("-hidden")  # still shown ...
        assert screen.query_one("#library", OptionList).has_focus  # ... and in use
        await pilot.press("ctrl+l")  # from inside: hides it, the editor gets the keys
        await settle(pilot)
        assert library_panel.has_class("-hidden") and editor_of(screen).has_focus
        await pilot.press("ctrl+l")  # hidden: shows and focuses it
        await settle(pilot)
        assert not library_panel.has_class("-hidden")
        assert screen.query_one("#library", OptionList).has_focus


async def test_the_editor_has_room_at_80x24(bench_db: tuple[Path, list[str]]) -> None:
    db, _ = bench_db
    app = create_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sql(pilot)
        assert editor_of(screen).content_region.height >= 8
        assert screen.query_one("#sql-lower").region.height >= 8  # results keep room too
