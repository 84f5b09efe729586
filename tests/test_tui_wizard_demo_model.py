"""The wizard's demo source runs the embedded model only, as ``haf run --demo`` does (one rule:
``pipeline.demo.refuse_other_models``): another model picked with it is refused on leaving the
dataset step, in one line that says why and what to do, and again on leaving the settings
step and at Start when a model was picked since (a download that ended while the settings or
the review were shown). Pilot, at 80×24 and 200×50;
a model file's name is shown as text, never read as markup."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Select, Static

from haf_tui.datasets import DEMO_TEXTS_ID
from haf_tui.defaults import embedded_model_path
from haf_tui.pipeline.planning import ProbeResult
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.live import RunJob
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.widgets.dataset_picker import BUILTIN_SOURCE, DEMO_SOURCE
from haf_tui.tui.widgets.model_picker import ModelPicker
from tests import test_tui_wizard_steps as steps
from tests.support import settle
from tests.test_tui_first_run import fake_calibration
from tests.test_tui_wizard_steps import SIZE_IDS, SIZES, open_wizard, shown_step

ODD_NAME = "odd[bold]model.gguf"
"""A model file whose name is Textual markup (read as markup it would show ``oddmodel.gguf``)."""


_private_homes = steps._private_homes  # (the HAF home, Hub cache and models: the test's own)


def other_model(tmp_path: Path) -> Path:
    """A second GGUF in the working folder's models/ (the embedded model's bytes)."""
    folder = tmp_path / "models"
    folder.mkdir(exist_ok=True)
    path = folder / ODD_NAME
    try:
        os.link(embedded_model_path(), path)
    except OSError:
        shutil.copyfile(embedded_model_path(), path)
    return path


def error_line(wizard: WizardScreen) -> str:
    return str(wizard.query_one("#wz-error", Static).render())


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("embedded_too", [False, True], ids=["other-alone", "with-embedded"])
async def test_the_demo_source_refuses_another_model_on_leaving_the_dataset_step(
    tmp_path: Path, size: tuple[int, int], embedded_too: bool
) -> None:
    other_model(tmp_path)
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        wizard.query_one(ModelPicker).query_one(DataTable).focus()
        if not embedded_too:
            await pilot.press("space")  # the embedded model dropped
        await pilot.press("down", "space")  # the other one picked
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert shown_step(wizard) == "dataset"
        source = wizard.query_one("#ds-source", Select)
        assert source.value == DEMO_SOURCE  # (the first choice)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert shown_step(wizard) == "dataset", "refused before the settings"
        said = error_line(wizard)
        assert said.startswith("the demo source runs the embedded model only"), said
        assert f"not {ODD_NAME}:" in said and "pick another dataset" in said, said
        assert "\n" not in said
        source.value = BUILTIN_SOURCE  # what the line says to do: another dataset
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert shown_step(wizard) == "settings" and error_line(wizard) == ""


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_a_model_picked_after_the_dataset_step_is_refused_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    fake_calibration(monkeypatch, ProbeResult(60, 400.0, 45.0, 8))
    started: list[RunJob] = []
    monkeypatch.setattr(HafApp, "start_runs", lambda app, jobs: started.extend(jobs))
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n", "ctrl+n", "ctrl+n")  # the embedded model on the demo
        await settle(pilot)
        assert shown_step(wizard) == "review" and error_line(wizard) == ""
        downloaded = other_model(tmp_path)  # a download ends: listed again, picked
        wizard.query_one(ModelPicker).post_message(ModelPicker.DownloadEnded(str(downloaded)))
        await settle(pilot)
        assert str(downloaded) in wizard.query_one(ModelPicker).chosen_paths()
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert started == [], "nothing queued"
        assert isinstance(app.screen, WizardScreen)
        said = error_line(wizard)
        assert said.startswith("the demo source runs the embedded model only"), said
        wizard.query_one(ModelPicker).restore([str(embedded_model_path())])  # dropped again
        await pilot.press("ctrl+s")
        await settle(pilot)
    [job] = started
    assert job.request.dataset is not None and job.request.dataset.dataset_id == DEMO_TEXTS_ID
    assert job.request.config is not None and job.request.config.model.path is None


async def test_a_model_picked_on_the_settings_step_is_refused_before_the_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A download that ends while the settings are shown picks its model: leaving the settings
    is refused, so the review never calibrates (loads) a model for a run Start would refuse."""
    import haf_tui.tui.screens.wizard_reading as wizard_module

    loaded: list[str | None] = []

    def never_load(config: object) -> None:
        loaded.append(getattr(getattr(config, "model", None), "path", None))
        raise AssertionError("a model was loaded for the review")

    monkeypatch.setattr(wizard_module, "load_models", never_load)
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n", "ctrl+n")  # the embedded model on the demo
        await settle(pilot)
        assert shown_step(wizard) == "settings"
        downloaded = other_model(tmp_path)
        wizard.query_one(ModelPicker).post_message(ModelPicker.DownloadEnded(str(downloaded)))
        await settle(pilot)
        assert str(downloaded) in wizard.query_one(ModelPicker).chosen_paths()
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert shown_step(wizard) == "settings", "refused before the review"
        said = error_line(wizard)
        assert said.startswith("the demo source runs the embedded model only"), said
        assert loaded == []
