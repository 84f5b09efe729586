"""The datasets are listed after the models (issue 44 §2), so the user may reach the dataset step
before they are: the source chosen there then is the user's. A kept source listed later is
chosen only while the step is as it opened and not gone on from; the demo's, the built-in
sample or a file is chosen at once; and a dataset choice that fails on the way to the review is
said on the wizard's error line with its step shown again, never a traceback. Pilot, at 80×24
and 200×50."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Select, Static

from haf_tui.pipeline.planning import ProbeResult
from haf_tui.tui import create_app
from haf_tui.tui.widgets.dataset_picker import BUILTIN_SOURCE, DEMO_SOURCE, DatasetPicker
from tests import test_tui_wizard_steps as steps
from tests.support import settle, until
from tests.test_tui_first_run import fake_calibration
from tests.test_tui_wizard_steps import (
    PAPER_SOURCE,
    SIZE_IDS,
    SIZES,
    keep_answers,
    open_wizard,
    shown_step,
    value_of,
)

_private_homes = steps._private_homes  # (the HAF home, Hub cache and models: the test's own)
sources_held = steps.sources_held


@pytest.fixture(autouse=True)
def _no_calibration(monkeypatch: pytest.MonkeyPatch) -> None:
    """The review's calibration decode answers at once (no model loaded)."""
    fake_calibration(monkeypatch, ProbeResult(60, 400.0, 45.0, 8))


def error_line(pilot: Any) -> str:
    return str(pilot.app.screen.query_one("#wz-error", Static).render())


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("go_on", [False, True], ids=["stays", "goes-on"])
async def test_a_source_picked_before_the_datasets_are_listed_stays_picked(
    tmp_path: Path, sources_held: threading.Event, size: tuple[int, int], go_on: bool
) -> None:
    keep_answers({"source": PAPER_SOURCE, "limit": "5"}, {})  # (not cached here)
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n")  # (before the datasets are listed: mounted now)
        source = wizard.query_one("#ds-source", Select)
        assert source.value == DEMO_SOURCE and source.has_focus
        await pilot.press("enter", "down", "enter")  # the built-in sample, picked
        await until(pilot, lambda: source.value == BUILTIN_SOURCE)
        if go_on:
            await pilot.press("ctrl+n")
            assert shown_step(wizard) == "settings"
        sources_held.set()
        await until(pilot, lambda: wizard.sources is not None)
        await settle(pilot)
        assert source.value == BUILTIN_SOURCE, "the kept source replaced the user's"
        await pilot.press(*["ctrl+n"] * (1 if go_on else 2))
        await settle(pilot)
        assert shown_step(wizard) == "review", error_line(pilot)
        assert "5 instances of built-in sample" in wizard.review_note, wizard.review_note


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_the_default_gone_on_with_before_the_datasets_are_listed_stays(
    tmp_path: Path, sources_held: threading.Event, size: tuple[int, int]
) -> None:
    """The demo's texts, shown and gone on with: the kept paper dataset (not cached) listed
    later does not replace them (it was chosen, and the review then died with a traceback)."""
    keep_answers({"source": PAPER_SOURCE}, {})
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n", "ctrl+n")  # the dataset step as it opened, then on
        assert shown_step(wizard) == "settings"
        sources_held.set()
        await until(pilot, lambda: wizard.sources is not None)
        await settle(pilot)
        assert wizard.query_one("#ds-source", Select).value == DEMO_SOURCE
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert shown_step(wizard) == "review", error_line(pilot)
        assert "The demo's 25 texts in order" in wizard.review_note, wizard.review_note


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_a_kept_built_in_source_is_chosen_before_the_datasets_are_listed(
    tmp_path: Path, sources_held: threading.Event, size: tuple[int, int]
) -> None:
    keep_answers({"source": BUILTIN_SOURCE, "limit": "3"}, {})
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await pilot.press("ctrl+n")
        assert wizard.query_one("#ds-source", Select).value == BUILTIN_SOURCE
        assert value_of(wizard, "#ds-limit") == "3"
        await pilot.press("ctrl+n", "ctrl+n")  # (on before the datasets are listed)
        sources_held.set()
        await until(pilot, lambda: wizard.sources is not None)
        await settle(pilot)
        assert shown_step(wizard) == "review", error_line(pilot)
        assert "3 instances of built-in sample" in wizard.review_note, wizard.review_note
        assert not wizard.edited()


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
async def test_a_dataset_choice_failing_on_the_way_to_the_review_is_one_line(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The dataset step was left valid, then its choice no longer is (a paper dataset not in
    the cache): the review is not opened, the dataset step is, with why on the error line."""
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=size) as pilot:
        wizard = await open_wizard(pilot)
        await until(pilot, lambda: wizard.sources is not None)
        await pilot.press("ctrl+n", "ctrl+n")
        assert shown_step(wizard) == "settings"
        picker = wizard.query_one(DatasetPicker)
        picker.query_one("#ds-source", Select).value = PAPER_SOURCE
        await until(pilot, lambda: "civil_comments" in picker.paper_caches)  # (looked for)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert app.is_running and shown_step(wizard) == "dataset"
        assert "CivilComments is not cached" in error_line(pilot), error_line(pilot)
