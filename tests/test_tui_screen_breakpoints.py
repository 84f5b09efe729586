"""A screen takes its breakpoint classes (``-narrow`` / ``-wide``) before its widgets are
composed and styled, not on its first resize after a first layout: what it shows and where the
focus is stay as they were (a widget those classes hide does not keep the auto-focus)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import SelectionList

from benchmarks.benchdata import build_bench_db
from haf_tui.tui import create_app
from haf_tui.tui.screens.metrics import MetricsScreen
from haf_tui.tui.screens.sql import SqlScreen
from tests.support import settle


@pytest.fixture
def bench_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    build_bench_db(db, n_instances=4, n_runs=2, seed=3)
    return db


class _SeenAtMount(MetricsScreen):
    """Notes the screen's classes as its own mount handler runs (its widgets mounted and
    styled, nothing laid out yet)."""

    classes_at_mount: frozenset[str] = frozenset()

    def on_mount(self) -> None:
        self.classes_at_mount = frozenset(self.classes)
        super().on_mount()


@pytest.mark.parametrize(("size", "wanted"), [((200, 50), "-wide"), ((80, 24), "-narrow")])
async def test_the_breakpoint_class_is_there_before_the_first_layout(
    bench_db: Path, size: tuple[int, int], wanted: str
) -> None:
    async with create_app(bench_db).run_test(size=size) as pilot:
        await settle(pilot)
        screen = _SeenAtMount()
        pilot.app.push_screen(screen)
        await settle(pilot)
        other = {"-wide", "-narrow"} - {wanted}
        assert wanted in screen.classes_at_mount
        assert not other & screen.classes_at_mount
        assert screen.has_class(wanted)
        runs = screen.query_one("#mx-runs")
        assert runs.display is (wanted == "-wide")


async def test_a_list_the_narrow_class_hides_does_not_keep_the_focus(bench_db: Path) -> None:
    async with create_app(bench_db).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MetricsScreen)
        assert screen.has_class("-narrow")
        assert screen.focused is None  # (as when Textual's first resize hid the list)
        assert pilot.app.active_bindings["space"].binding.action == "toggle_runs"


async def test_a_shown_widget_keeps_the_focus_and_a_resize_still_moves_the_class(
    bench_db: Path,
) -> None:
    async with create_app(bench_db).run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MetricsScreen)
        assert isinstance(screen.focused, SelectionList)
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert screen.has_class("-narrow") and not screen.has_class("-wide")
        assert not screen.query_one("#mx-runs").display
        await pilot.app.pop_screen()
        await pilot.press("s")
        await settle(pilot)
        sql = pilot.app.screen
        assert isinstance(sql, SqlScreen)
        assert sql.has_class("-narrow")
        assert sql.focused is sql.query_one("#sql-editor")
