"""The settings step is laid out once when it is first shown (issue 44 §2: its first showing
took 200–300 ms at 200×60, most of it drawing its ~150 widgets twice: the form is taller than
the screen, so its scroll bar appeared only after the first layout, narrowing every row and
drawing them all again). The bar's column is kept from the start, and the form is laid out
and drawn off screen once mounted: every row of the form gets its width once, before it is
shown. Pilot, at 80×24 and 200×50."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Size
from textual.widget import Widget

from haf_tui.tui import create_app
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from tests.support import settle
from tests.test_tui_wizard_steps import SIZE_IDS, SIZES, open_wizard, shown_step


@pytest.fixture(autouse=True)
def _private_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_settings_rows_get_their_width_once_before_they_are_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    widths: dict[int, list[int]] = {}
    size_updated = Widget._size_updated

    def recorded(widget: Widget, new_size: Size, *args: Any, **kwargs: Any) -> Any:
        if isinstance(widget.parent, RunSettingsForm):
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
        seed_row = form.query_one("#set-seed").parent
        assert isinstance(seed_row, Widget)
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
