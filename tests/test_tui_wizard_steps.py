"""The wizard's later steps are mounted after its first (issue 44 §2: the wizard took a second
to open, styling all four steps' widgets before its first frame): the models step shows
alone, the dataset and settings steps come once the models are listed and the datasets read,
or at once when gone to before. What the steps hold is the same either way: values typed in
a later step survive going back and forth and reach the run started, the kept answers fill a
step mounted late, and a step nobody edited is no edit. Pilot, at 80×24 and 200×50."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import ContentSwitcher, DataTable, Input, Select, SelectionList, Static

from haf_tui.config import DecodingSettings
from haf_tui.datasets import DEMO_TEXTS_ID
from haf_tui.defaults import DEMO_UNTIL_COMPLETE, embedded_model_path
from haf_tui.pipeline import choices
from haf_tui.pipeline.planning import ProbeResult
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.live import RunJob
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.widgets.dataset_picker import DEMO_SOURCE, DatasetPicker
from haf_tui.tui.widgets.method_fields import UNUSED_NOTE, FieldGrid, MethodFields
from haf_tui.tui.widgets.model_picker import ModelPicker
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from haf_tui.tui.wizard_answers import answers_path
from tests.support import settle, until
from tests.test_tui_first_run import fake_calibration
from tests.test_tui_width import screen_text

SIZES = [(80, 24), (200, 50)]
SIZE_IDS = ["80x24", "200x50"]
PAPER_SOURCE = "paper:civil_comments"


@pytest.fixture(autouse=True)
def _private_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The HAF home, the Hub cache and the model folders are this test's own."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def sources_held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The datasets are listed only once the returned event is set (the models at once): the
    later steps are not mounted until then, unless gone to."""
    release = threading.Event()

    def held_sources(store: Any) -> list[tuple[str, str]]:
        release.wait(60)  # (until the test lets it go on)
        return choices.dataset_sources(store)

    monkeypatch.setattr("haf_tui.tui.screens.wizard_reading.dataset_sources", held_sources)
    yield release
    release.set()  # (a test that failed before: the worker's thread ends)


def keep_answers(dataset: dict[str, str], settings: dict[str, str]) -> None:
    """Answers kept by an earlier session (the embedded model picked by default)."""
    path = answers_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = {"models": [], "dataset": dataset, "settings": settings}
    path.write_text(json.dumps(kept))


async def open_wizard(pilot: Any) -> WizardScreen:
    await settle(pilot)
    await pilot.press("n")
    await until(pilot, lambda: isinstance(pilot.app.screen, WizardScreen))
    wizard = pilot.app.screen
    assert isinstance(wizard, WizardScreen)
    await until(pilot, lambda: wizard.query_one(ModelPicker).listed)
    return wizard


async def type_into(pilot: Any, selector: str, value: str) -> None:
    """Focus an input, clear it and type ``value``."""
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = ""
    await pilot.press(*value)


def shown_step(wizard: WizardScreen) -> str:
    return str(wizard.query_one("#wz-body", ContentSwitcher).current)


def value_of(wizard: WizardScreen, selector: str) -> str:
    return wizard.query_one(selector, Input).value


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_models_step_shows_alone_and_the_later_steps_follow(
    tmp_path: Path, sources_held: threading.Event, size: tuple[int, int]
) -> None:
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        assert wizard.query_one(DataTable).row_count == 1  # the embedded model, listed
        assert not wizard.query(DatasetPicker) and not wizard.query(RunSettingsForm)
        assert not wizard.mounted_steps
        sources_held.set()
        await settle(pilot)
        assert wizard.mounted_steps == {"dataset", "settings"}
        assert not wizard.query_one(DatasetPicker).display, "mounted, not shown"
        assert not wizard.query_one(RunSettingsForm).display
        assert shown_step(wizard) == "models"
        assert wizard.query_one(ModelPicker).query_one(DataTable).has_focus
        assert not wizard.edited()


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_values_typed_in_later_steps_survive_back_and_forth_and_reach_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    fake_calibration(monkeypatch, ProbeResult(60, 400.0, 45.0, 8))
    started: list[RunJob] = []
    monkeypatch.setattr(HafApp, "start_runs", lambda app, jobs: started.extend(jobs))
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n")
        await type_into(pilot, "#ds-limit", "3")
        await pilot.press("ctrl+n")
        assert shown_step(wizard) == "settings"
        await type_into(pilot, "#set-max-new", "77")
        await type_into(pilot, "#set-seed", "41")
        await pilot.press("ctrl+b", "ctrl+b")
        assert shown_step(wizard) == "models"
        await pilot.press("ctrl+n")
        assert value_of(wizard, "#ds-limit") == "3"
        await pilot.press("ctrl+n")
        assert (value_of(wizard, "#set-max-new"), value_of(wizard, "#set-seed")) == ("77", "41")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert "The demo's first 3 texts in order" in wizard.review_note, wizard.review_note
        await pilot.press("ctrl+s")
        await settle(pilot)
    [job] = started
    config = job.request.config
    assert config is not None
    assert (config.limit, config.decoding.max_new_tokens, config.decoding.seed) == (3, 77, 41)
    assert config.until_complete == DEMO_UNTIL_COMPLETE  # (the demo's rule reaches the run)
    assert job.request.dataset is not None and job.request.dataset.dataset_id == DEMO_TEXTS_ID
    kept = json.loads(answers_path().read_text())
    assert kept["dataset"]["limit"] == "3" and kept["settings"]["set-max-new"] == "77"


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_a_kept_source_listed_after_its_step_was_mounted_is_chosen_and_no_edit(
    tmp_path: Path, sources_held: threading.Event, size: tuple[int, int]
) -> None:
    keep_answers({"source": PAPER_SOURCE, "limit": "5"}, {})
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n")  # (before the datasets are listed: mounted now)
        source = wizard.query_one("#ds-source", Select)
        assert value_of(wizard, "#ds-limit") == "5" and source.value == DEMO_SOURCE
        sources_held.set()
        await until(pilot, lambda: source.value == PAPER_SOURCE)
        await settle(pilot)
        assert not wizard.edited()
        await pilot.press("escape")  # (unedited: leaves without asking)
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("reached_first", [False, True], ids=["background", "reached-first"])
async def test_the_kept_settings_fill_the_settings_step_however_it_is_mounted(
    tmp_path: Path, sources_held: threading.Event, size: tuple[int, int], reached_first: bool
) -> None:
    """Mounted in the background once the datasets are listed, or at once by ctrl+n before."""
    keep_answers({}, {"set-seed": "99", "set-max-new": "77"})
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        if reached_first:
            await pilot.press("ctrl+n", "ctrl+n")  # (the settings mounted now)
            assert shown_step(wizard) == "settings" and wizard.sources is None
        sources_held.set()
        await until(pilot, lambda: "settings" in wizard.mounted_steps)
        await settle(pilot)
        assert (value_of(wizard, "#set-seed"), value_of(wizard, "#set-max-new")) == ("99", "77")
        if not reached_first:
            assert shown_step(wizard) == "models"
            await pilot.press("ctrl+n", "ctrl+n")
            assert shown_step(wizard) == "settings"
        seed = wizard.query_one("#set-seed", Input)
        box = seed.region  # (a tall border: the value on its middle line)
        drawn = screen_text(app)[box.y + 1][box.x : box.right]
        assert "99" in drawn, drawn
        assert not wizard.edited()


def second_model(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    second = tmp_path / "models" / "second.gguf"
    try:
        os.link(embedded_model_path(), second)
    except OSError:
        shutil.copyfile(embedded_model_path(), second)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_models_changed_and_back_before_the_settings_were_mounted_are_no_edit(
    tmp_path: Path, sources_held: threading.Event, size: tuple[int, int]
) -> None:
    second_model(tmp_path)
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        wizard.query_one(ModelPicker).query_one(DataTable).focus()
        await pilot.press("space", "down", "space")  # the embedded model off, the second on
        await pilot.press("ctrl+n")
        source = wizard.query_one("#ds-source", Select)
        source.value = "builtin:"  # (the demo's texts are the embedded model's alone)
        await pilot.press("ctrl+n")  # (the settings mounted now, the second picked)
        assert value_of(wizard, "#set-seed") == str(DecodingSettings().seed)  # the paper's
        await pilot.press("ctrl+b", "ctrl+b")
        await pilot.press("up", "space", "down", "space")  # the embedded model alone again
        await pilot.press("ctrl+n")
        source.value = DEMO_SOURCE  # (back to the source it opened with)
        await pilot.press("ctrl+n")
        assert value_of(wizard, "#set-seed") == "23"  # the demo's
        assert not wizard.edited()
        sources_held.set()
        await settle(pilot)
        assert not wizard.edited()
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)


async def test_leaving_before_the_later_steps_were_mounted_keeps_their_answers(
    tmp_path: Path, sources_held: threading.Event
) -> None:
    keep_answers({"source": "builtin:", "limit": "3"}, {"set-seed": "99"})
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await open_wizard(pilot)
        wizard.query_one(ModelPicker).query_one(DataTable).focus()
        await pilot.press("space")  # the embedded model dropped: an edit
        assert wizard.edited() and not wizard.mounted_steps
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
        kept = json.loads(answers_path().read_text())  # (written as the wizard closed)
        sources_held.set()
        await settle(pilot)
    assert kept["models"] == [] and kept["dataset"]["limit"] == "3"
    assert kept["dataset"]["source"] == "builtin:" and kept["settings"] == {"set-seed": "99"}


class FormApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RunSettingsForm(id="settings")


async def test_a_method_not_picked_shows_a_line_instead_of_its_fields() -> None:
    """Its fields are mounted (a pick shows them at once) but not drawn: nothing of them to
    lay out on each key."""
    app = FormApp()
    async with app.run_test(size=(80, 24)) as pilot:
        section = app.query_one("#set-method-rationales", MethodFields)
        rows = [child for child in section.children if type(child) is FieldGrid]
        note = section.query_one(".method-unused", Static)
        assert rows and not any(row.display for row in rows)
        count = len(section.options)
        assert note.display and str(note.render()) == UNUSED_NOTE.format(count=count)
        app.query_one("#set-suites", SelectionList).select("rationales")
        await pilot.pause()
        assert all(row.display for row in rows) and not note.display
