"""The settings step is laid out once when it is first shown (issue 44 §2: its first showing
took 200–300 ms at 200×60, most of it drawing its ~150 widgets twice: the form is taller than
the screen, so its scroll bar appeared only after the first layout, narrowing every row and
drawing them all again). The bar's column is kept from the start, and the form is laid out
and drawn off screen once mounted: every row of the form gets its width once, before it is
shown. Pilot, at 80×24 and 200×50."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Input, Label, SelectionList, Static

from haf_tui.pipeline.planning import ProbeResult
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.live import RunJob
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.widgets.method_fields import FieldGrid
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from tests import test_tui_wizard_steps as steps
from tests.support import settle
from tests.test_tui_first_run import fake_calibration
from tests.test_tui_wizard_steps import SIZE_IDS, SIZES, open_wizard, shown_step

_private_homes = steps._private_homes  # (the HAF home, Hub cache and models: the test's own)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_settings_rows_get_their_width_once_before_they_are_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    widths: dict[int, list[int]] = {}
    size_updated = Widget._size_updated

    def recorded(widget: Widget, new_size: Size, *args: Any, **kwargs: Any) -> Any:
        if isinstance(widget.parent, RunSettingsForm | FieldGrid):  # (a row's label, field)
            widths.setdefault(id(widget), []).append(new_size.width)
        return size_updated(widget, new_size, *args, **kwargs)

    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await settle(pilot)
        assert wizard.mounted_steps == {"dataset", "settings"}
        form = wizard.query_one(RunSettingsForm)
        assert not form.display
        # laid out off screen once mounted, at the size it is shown at
        hidden_size = form.outer_size
        assert hidden_size.width == size[0] and hidden_size.height > 0
        seed_row = form.query_one("#set-seed").parent  # (the grid of the run's own fields)
        assert isinstance(seed_row, FieldGrid)
        hidden_row_width = seed_row.outer_size.width
        assert hidden_row_width == size[0] - form.styles.scrollbar_size_vertical
        monkeypatch.setattr(Widget, "_size_updated", recorded)
        await pilot.press("ctrl+n", "ctrl+n")
        await settle(pilot)
        await pilot.pause()
        assert shown_step(wizard) == "settings"
        assert form.show_vertical_scrollbar, "taller than the screen: it scrolls"
        assert len(widths) >= 10, "every row of the form was laid out"
        changed = {key: seen for key, seen in widths.items() if len(set(seen)) > 1}
        assert not changed, f"rows narrowed after their first layout: {changed}"
        assert form.outer_size == hidden_size
        assert seed_row.outer_size.width == hidden_row_width


async def test_a_textual_without_the_compositor_used_still_shows_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drawing the step off screen uses Textual's private compositor: where another Textual
    has none (or another shape), the step is laid out when shown, as any other step."""
    import textual._compositor as compositor_module

    monkeypatch.delattr(compositor_module, "Compositor")
    app = create_app(tmp_path / "haf.duckdb")
    errors: list[str] = []
    shown = app.notify

    def noted(message: str, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("severity") == "error":
            errors.append(message)
        shown(message, *args, **kwargs)

    monkeypatch.setattr(app, "notify", noted)
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await open_wizard(pilot)
        await settle(pilot)
        assert wizard.mounted_steps == {"dataset", "settings"}
        form = wizard.query_one(RunSettingsForm)
        assert form.outer_size.width == 0  # (not laid out off screen)
        await pilot.press("ctrl+n", "ctrl+n")
        await settle(pilot)
        assert shown_step(wizard) == "settings" and form.outer_size.width == 80
    assert errors == []


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_each_label_and_its_field_are_cells_of_one_row(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """One grid per section, not a container per row: every field sits in a grid, beside its
    own label (every suite picked: every method's fields shown)."""
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n", "ctrl+n")
        await settle(pilot)
        form = wizard.query_one(RunSettingsForm)
        form.query_one("#set-suites", SelectionList).select_all()
        await settle(pilot)
        editors = form.query("Input, Select, SelectionList, Switch")
        fields = [field for field in editors if (field.id or "").startswith("set-")]
        assert len(fields) >= 20
        for field in fields:
            grid = field.parent
            assert isinstance(grid, FieldGrid), (field.id, grid)
            cells = list(grid.children)
            label = cells[cells.index(field) - 1]
            assert isinstance(label, Label) and label.has_class("field-label"), field.id
            form.scroll_to_widget(field, animate=False)
            await settle(pilot)
            assert label.region.y == field.region.y, (field.id, label.region, field.region)
            assert label.region.right <= field.region.x, field.id
            assert field.region.right <= size[0], field.id
            # whole: its own size on screen, inside its grid and the form's view (a field
            # squeezed to no width, or cut by a grid shorter than its rows, is hidden)
            for cell in (label, field):
                assert cell.region.width > 0 and cell.region.height > 0, (field.id, cell)
                assert cell.region.size == cell.outer_size, (field.id, cell.region)
                assert grid.region.contains_region(cell.region), (field.id, grid.region)
                assert form.scrollable_content_region.contains_region(cell.region), field.id
        hint = form.query_one("#set-offload", Static)  # (between the rows, on one line)
        form.scroll_to_widget(hint, animate=False)
        await settle(pilot)
        assert hint.region.height == 1 and hint.region.x == 0, hint.region


@pytest.mark.parametrize("way_out", ["cancel", "cancel-edited", "start"])
async def test_the_wizard_freezes_its_steps_once_mounted_and_hands_them_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way_out: str
) -> None:
    """What the later steps hold is left out of the collector's full passes (one of them over
    ~130,000 objects took half the settings step's first showing), until the wizard closes,
    whichever way: cancelled (asked first when edited) or started."""
    fake_calibration(monkeypatch, ProbeResult(60, 400.0, 45.0, 8))
    started: list[RunJob] = []
    monkeypatch.setattr(HafApp, "start_runs", lambda app, jobs: started.extend(jobs))
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await open_wizard(pilot)
        await settle(pilot)
        assert wizard.mounted_steps == {"dataset", "settings"}
        assert wizard in app._holders
        collected = set(map(id, gc.get_objects()))  # (what the collector's passes see)
        assert id(wizard.query_one("#set-seed")) not in collected
        if way_out == "cancel":
            await pilot.press("escape")
        elif way_out == "cancel-edited":
            await pilot.press("ctrl+n", "ctrl+n")
            wizard.query_one("#set-seed", Input).value = "7"
            await pilot.press("escape")
            await settle(pilot)
            await pilot.press("y")  # (edited: it asks first)
        else:
            await pilot.press("ctrl+n", "ctrl+n", "ctrl+n")
            await settle(pilot)
            await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert len(started) == (way_out == "start")
        assert wizard not in app._holders  # closed: what it held goes back to the collector


async def test_the_definition_line_is_drawn_again_only_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Focus moving between the run's own fields leaves the line alone (an update lays the
    screen out again); a method's field says its definition, and leaving it hides it."""
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(200, 50)) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n", "ctrl+n")
        await settle(pilot)
        line = wizard.query_one("#set-definition", Static)
        updates: list[object] = []
        shown = line.update

        def counted(*args: Any, **kwargs: Any) -> None:
            updates.append(args)
            shown(*args, **kwargs)

        monkeypatch.setattr(line, "update", counted)
        for selector in ("#set-temperature", "#set-seed", "#set-suites"):
            wizard.query_one(selector).focus()
            await settle(pilot)
        assert updates == [] and not line.display
        method_field = wizard.query_one("#set-method-haf").query("Input, Select").first()
        method_field.focus()
        await settle(pilot)
        assert len(updates) == 1 and line.display and "HAF" in str(line.render())
        wizard.query_one("#set-seed").focus()
        await settle(pilot)
        assert len(updates) == 2 and not line.display
