"""The footer moves its keys in place when their order changes (a focused text box binds some
of the screen's keys too, which puts them first), instead of rebuilding every key widget."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList
from textual.widgets._footer import FooterKey

from benchmarks.benchdata import build_bench_db
from haf_tui import reports
from haf_tui.tui import create_app
from haf_tui.tui.screens.sql import SqlScreen
from haf_tui.tui.widgets.key_footer import KeyFooter, _shown_keys
from tests.support import settle


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    return db


def footer_keys(footer: KeyFooter) -> list[tuple[str, str, str]]:
    """The keys the footer shows, in its order."""
    return [
        (key.key, key.action, key.description)
        for key in footer.query(FooterKey)
        if key.display and not key.has_class("-command-palette")
    ]


async def test_a_pick_that_focuses_the_form_moves_the_keys_without_a_rebuild(
    bench_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rebuilds: list[KeyFooter] = []
    recompose = KeyFooter.recompose

    async def counted(self: KeyFooter) -> None:
        rebuilds.append(self)
        await recompose(self)

    monkeypatch.setattr(KeyFooter, "recompose", counted)
    async with create_app(bench_db).run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, SqlScreen)
        footer = screen.query_one(KeyFooter)
        library = screen.query_one("#library", OptionList)
        library.focus()
        await settle(pilot)
        before = footer_keys(footer)
        built = len(rebuilds)
        library.highlighted = list(reports.load_queries()).index("stance_distribution")
        await pilot.press("enter")  # the form's Input takes the focus: ctrl+e moves
        await settle(pilot)
        assert isinstance(pilot.app.focused, Input)
        wanted = [entry[:3] for entry in _shown_keys(screen)]
        shown = footer_keys(footer)
        assert shown != before  # the order did change ...
        assert shown == wanted[: len(shown)] and len(shown) == len(wanted)  # ... as wanted
        assert len(rebuilds) == built  # ... with the widgets there were
