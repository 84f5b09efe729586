"""A judge run started from the wizard (issue 43 §1): the explanations of each finished run
are offered once per dataset a method makes of them (``run:ID``, ``edits:ID``), a stored copy
of one is not offered again beside it, and the review and Start take the choice: the judge
run is made by the embedded model over the run's explanations, as ``haf run --dataset
run:ID --suites judge`` makes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Select, SelectionList

from haf_tui.config import RunConfig
from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.app import HafApp
from haf_tui.tui.screens.monitor import MonitorScreen
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.widgets.run_settings import RunSettingsForm
from tests.support import settle
from tests.support.judge_runs import SOURCE_RUN, judge_db
from tests.test_tui_wizard import set_input


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))


async def _dataset_step(pilot: object, app: HafApp) -> WizardScreen:
    await settle(pilot)
    await pilot.press("n")  # type: ignore[attr-defined]
    await settle(pilot)
    await pilot.press("ctrl+n")  # type: ignore[attr-defined]
    await settle(pilot)
    wizard = app.screen
    assert isinstance(wizard, WizardScreen)
    assert str(wizard.query_one("#wz-body").current) == "dataset"
    return wizard


async def test_each_run_s_explanations_are_offered_once_per_kind(tmp_path: Path) -> None:
    db = judge_db(tmp_path / "haf.duckdb")  # (its judge run stored explanations-source)
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await _dataset_step(pilot, app)
        options = dict(
            (value, str(label)) for label, value in wizard.query_one("#ds-source", Select)._options
        )
    of_the_run = {value: label for value, label in options.items() if SOURCE_RUN in label}
    assert set(of_the_run) == {f"run:{SOURCE_RUN}", f"edits:{SOURCE_RUN}"}, options
    assert "its explanations (run:source)" in of_the_run[f"run:{SOURCE_RUN}"]
    assert "and their edits (edits:source)" in of_the_run[f"edits:{SOURCE_RUN}"]
    assert not any(value.startswith("explanations:") for value in options)


@pytest.mark.real_model
async def test_a_judge_run_of_a_run_s_explanations_starts_from_the_wizard(tmp_path: Path) -> None:
    db = judge_db(tmp_path / "haf.duckdb")
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await _dataset_step(pilot, app)
        wizard.query_one("#ds-source", Select).value = f"run:{SOURCE_RUN}"
        await pilot.pause()
        await set_input(pilot, "#ds-limit", "1")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert str(wizard.query_one("#wz-body").current) == "settings"
        suites = wizard.query_one(RunSettingsForm).query_one("#set-suites", SelectionList)
        suites.deselect_all()
        suites.select("judge")
        await pilot.pause()
        # the paper's Default instructions: a prompt of ~250 tokens, not the raters' ~1,600
        # (the run is the machinery under test; 147 s with the raters' guidelines)
        wizard.query_one("#set-judge-prompt", Select).value = "default"
        await set_input(pilot, "#set-n-ctx", "2048")
        await pilot.press("ctrl+n")
        await settle(pilot)  # the probe: the dataset read, the model loaded
        review = wizard.review_note
        assert "unknown dataset" not in review and "explanations of run source" in review, review
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, MonitorScreen), wizard.review_note
        await settle(pilot)
        assert isinstance(app, HafApp) and app.session is not None
        live = app.session.runs[0]
        assert live.status == "finished", list(live.log)
    with open_store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT r.status, r.dataset_id, count(DISTINCT g.instance_id), r.config "
            "FROM runs r JOIN generations g USING (run_id) "
            "WHERE r.run_id NOT IN ('source', 'judged') GROUP BY ALL"
        )
    ((status, dataset_id, judged, config_json),) = rows  # (one explanation: the size asked)
    assert status == "finished" and dataset_id.startswith(f"explanations-{SOURCE_RUN}")
    assert judged == 1, rows
    assert RunConfig.model_validate_json(config_json).settings["judge"]["prompt"] == "default"
