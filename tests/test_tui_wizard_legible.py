"""The wizard at 80 columns (issue 34 §9): the download fields show their whole placeholders
(the examples stand whole in the line above them), and a chosen suite carries a mark, not a
colour alone (the metrics screen's run list too). Pilot; the screen's lines are read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.widgets import Input, SelectionList

from haf_tui.tui import create_app
from haf_tui.tui.widgets.marked_selection import CHOSEN_MARK
from haf_tui.tui.widgets.model_picker import ModelPicker
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from tests.support import settle


class FormApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RunSettingsForm(id="settings")


def _toggle_marks(selections: SelectionList[Any]) -> list[str]:
    """The cell inside each entry's toggle, as drawn."""
    return [selections.render_line(y).text[1] for y in range(selections.option_count)]


async def test_download_placeholders_fit_at_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HAF_HOME", str(tmp_path))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    app = create_app(tmp_path / "none.duckdb")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        picker = app.screen.query_one(ModelPicker)
        for selector in ("#dl-repo", "#dl-file"):
            field = picker.query_one(selector, Input)
            assert field.placeholder
            room = field.content_region.width - 1  # (the cursor's cell)
            assert cell_len(field.placeholder) <= room, (selector, field.placeholder, room)
        label = picker.query_one("#download-label")  # the examples, whole, above the fields
        assert label.region.right <= 80
        shown = "".join(label.render_line(y).text for y in range(label.size.height))
        assert "unsloth/gemma-3-1b-it-GGUF" in shown.replace(" ", "")
        assert "gemma-3-1b-it-Q4_K_M.gguf" in shown.replace(" ", "")


async def test_chosen_suites_carry_a_mark() -> None:
    app = FormApp()
    async with app.run_test(size=(80, 24)) as pilot:
        suites = app.query_one("#set-suites", SelectionList)
        await pilot.pause()
        values = [suites.get_option_at_index(i).value for i in range(suites.option_count)]
        chosen = set(suites.selected)
        assert chosen and len(chosen) < len(values)  # some chosen, some not
        marks = _toggle_marks(suites)
        assert marks == [CHOSEN_MARK if v in chosen else " " for v in values]
        suites.toggle(values[-1])
        await pilot.pause()
        assert _toggle_marks(suites)[-1] == (" " if values[-1] in chosen else CHOSEN_MARK)
