"""The first run in the workbench shows what HAF is (issue 25 §6): with the embedded model the
wizard starts from the demo (the same run as ``haf run --demo``, what ``make run`` runs: its
texts, decoding and stop rule, issue 44 §3), says what
that model does with HAF's answer format, and its estimate is a range within a small factor from
what this machine measured, or "measuring…", never a guess spanning 30 times."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.widgets import ContentSwitcher, DataTable, Input, Select

from haf_tui.cli.run_command import _config, add_run_parser
from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.defaults import DEMO_MAX_TEXTS, DEMO_UNTIL_COMPLETE, embedded_model_path
from haf_tui.pipeline.estimate import SHAPE_SPREAD, estimate_time
from haf_tui.pipeline.planning import ProbeResult
from haf_tui.pipeline.runs import DEMO_CHOICE
from haf_tui.store import open_store
from haf_tui.store.paces import PastRun
from haf_tui.tui import create_app
from haf_tui.tui.screens.wizard import WizardScreen
from haf_tui.tui.widgets.dataset_picker import BUILTIN_SOURCE, DEMO_SOURCE, DatasetPicker
from haf_tui.tui.widgets.model_picker import ModelPicker
from haf_tui.tui.widgets.run_review import RunReview
from tests.support import settle

EMBEDDED = embedded_model_path().name
RATIO_BOUND = 3.0
"""The most a known estimate's upper end may be over its lower end."""


@pytest.fixture(autouse=True)
def _private_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first run: the HAF home and the model folders are this test's own (empty)."""
    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)


def demo_config() -> RunConfig:
    """The config ``haf run --demo`` runs."""
    parser = argparse.ArgumentParser()
    add_run_parser(parser.add_subparsers())
    return _config(parser.parse_args(["run", "--demo"]))


def fake_calibration(monkeypatch: pytest.MonkeyPatch, probe: ProbeResult) -> None:
    """The wizard's calibration decode answers ``probe`` without loading a model."""
    import haf_tui.tui.screens.wizard_reading as wizard_module
    from haf_tui.pipeline.models import LoadedModels

    class Unloaded:
        def close(self) -> None:
            pass

    monkeypatch.setattr(
        wizard_module,
        "load_models",
        lambda config: LoadedModels(Unloaded(), None),  # type: ignore[arg-type]
    )
    monkeypatch.setattr(wizard_module, "probe_speed", lambda models, config, dataset: probe)


async def to_review(pilot: Any, sample_size: str = "") -> WizardScreen:
    """n, then every step with its defaults (a sample size typed when given) to the review."""
    await settle(pilot)
    await pilot.press("n")
    await settle(pilot)
    wizard = pilot.app.screen
    assert isinstance(wizard, WizardScreen)
    picked = wizard.query_one(ModelPicker).selected()
    assert [entry.embedded for entry in picked] == [True], "the embedded model, alone"
    await pilot.press("ctrl+n")
    if sample_size:
        wizard.query_one("#ds-limit", Input).focus()
        await pilot.press(*sample_size)
    await pilot.press("ctrl+n", "ctrl+n")
    await settle(pilot)
    assert str(wizard.query_one("#wz-body", ContentSwitcher).current) == "review"
    return wizard


def review_row(wizard: WizardScreen) -> str:
    """The review table's row of the first model, as the screen shows it."""
    review = wizard.query_one(RunReview)
    label = wizard.query_one(ModelPicker).selected()[0].label
    lines = review.render_lines(Region(0, 0, review.size.width, review.size.height))
    return next(strip.text for strip in lines if label[:20] in strip.text)


async def test_the_embedded_model_starts_from_the_demo_and_the_estimate_says_measuring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a calibration as this machine measures the embedded model (8 at once)
    fake_calibration(monkeypatch, ProbeResult(60, 400.0, 45.0, 8))
    db = tmp_path / "haf.duckdb"
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await to_review(pilot)
        assert wizard.query_one("#ds-source", Select).value == DEMO_SOURCE
        assert wizard.query_one("#set-seed", Input).value == "23"
        assert wizard.query_one("#set-max-new", Input).value == "256"
        assert wizard.query_one("#set-temperature", Input).value == "0.0"  # greedy: the demo's
        [(_, config)] = wizard.configs()
        demo = demo_config()  # the same run as haf run --demo: texts, decoding, stop rule
        assert wizard.query_one(DatasetPicker).choice() == DEMO_CHOICE, "the sample's texts"
        assert config.decoding == demo.decoding, (config.decoding, demo.decoding)
        assert (config.limit, config.until_complete) == (DEMO_MAX_TEXTS, DEMO_UNTIL_COMPLETE)
        assert config == demo, (config, demo)
        assert config.model.path is None and demo.model.path is None
        note = wizard.review_note
        said = "The demo's 25 texts in order until 3 go through every stage"
        assert said in note, note
        assert "measuring…" in note and "JUSTIFY alone about" in note, note
        assert "follows HAF's answer format only sometimes" in note, note
        assert "measuring…" in review_row(wizard), review_row(wizard)
        await pilot.press("ctrl+b", "ctrl+b")  # the first run: 3 instances
        wizard.query_one("#ds-limit", Input).focus()
        await pilot.press("3", "ctrl+n", "ctrl+n")
        await settle(pilot)
        note = wizard.review_note  # (the sample size: at most, as --demo --limit 3)
        said = "The demo's first 3 texts in order (haf run"  # (3 must go through: all 3)
        assert said in note and "measuring…" in note, note
        stops = [(c.limit, c.until_complete) for _, c in wizard.configs()]
        assert stops == [(3, DEMO_UNTIL_COMPLETE)]
        assert wizard.estimates[0].low is None, "the monitor measures: no estimate handed on"
        await pilot.press("escape", "y")
        await settle(pilot)
    assert not db.exists(), "nothing was run"


async def test_another_model_keeps_the_papers_settings(tmp_path: Path) -> None:
    import os
    import shutil

    (tmp_path / "models").mkdir()
    second = tmp_path / "models" / "second.gguf"
    try:
        os.link(embedded_model_path(), second)
    except OSError:
        shutil.copyfile(embedded_model_path(), second)
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        wizard.query_one(ModelPicker).query_one(DataTable).focus()
        await pilot.press("space", "down", "space")  # the embedded model off, the second on
        assert [e.path.name for e in wizard.query_one(ModelPicker).selected()] == ["second.gguf"]
        await pilot.press("ctrl+n")
        wizard.query_one("#ds-source", Select).value = BUILTIN_SOURCE  # (the demo: one model)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert str(wizard.query_one("#wz-body", ContentSwitcher).current) == "settings"
        paper = DecodingSettings()
        assert wizard.query_one("#set-seed", Input).value == str(paper.seed)
        assert wizard.query_one("#set-max-new", Input).value == str(paper.max_new_tokens)
        assert wizard.query_one("#set-temperature", Input).value == str(paper.temperature)
        await pilot.press("ctrl+b", "ctrl+b")
        await pilot.press("up", "space", "down", "space")  # the embedded model alone again
        await pilot.press("ctrl+n", "ctrl+n")
        await settle(pilot)
        assert str(wizard.query_one("#wz-body", ContentSwitcher).current) == "settings"
        assert wizard.query_one("#set-seed", Input).value == "23"


def _demo_run(seconds: float) -> PastRun:
    """The demo as docs/demo.md measured it: 5 of 8 went on with 47 reasons, 65 answers."""
    return PastRun(
        EMBEDDED,
        demo_config(),
        seconds,
        8,
        output_tokens=65 * 150 + 8 * 2,
        instances_on=5,
        reasons_on=47,
        answers=65,
        answer_tokens=65 * 150,
    )


def test_an_estimate_from_other_settings_uses_their_measured_shares_within_the_bound() -> None:
    sample = builtin_sample()
    paper_decoding = demo_config().decoding.model_copy(update={"seed": 17, "max_new_tokens": 1024})
    paper_settings = demo_config().model_copy(update={"decoding": paper_decoding, "limit": 3})
    estimate = estimate_time(paper_settings, sample, EMBEDDED, [_demo_run(120.0)])
    assert estimate.low is not None and estimate.high is not None
    assert estimate.high / estimate.low == pytest.approx(SHAPE_SPREAD**2)
    assert estimate.high / estimate.low <= RATIO_BOUND
    # 3 instances × (1 + 5/8 × (2 + 47/5)) answers × 150 tokens, at 9,766 tokens in 120 s
    answers = 3 * (1 + 5 / 8 * (2 + 47 / 5))
    seconds = (answers * 150 + 3 * 2) / ((65 * 150 + 16) / 120.0)
    assert estimate.low == pytest.approx(seconds / SHAPE_SPREAD)
    assert "5 of 8 instances went on past JUSTIFY (9.4 reasons each)" in estimate.basis
    # nothing measured of this model like this run: measuring, with JUSTIFY's time alone
    first = estimate_time(paper_settings, sample, EMBEDDED, [], ProbeResult(60, 400.0, 45.0, 8))
    assert (first.low, first.high, first.text()) == (None, None, "measuring…")
    assert "JUSTIFY alone about" in first.basis


def test_the_store_reads_how_many_instances_went_on(tmp_path: Path) -> None:
    from haf_tui.store.paces import past_runs
    from haf_tui.store.records import RunRecord

    sample = builtin_sample()
    db = tmp_path / "haf.duckdb"
    with open_store(db) as store:
        store.save_dataset(sample.dataset_id, sample.name, sample.source, sample.instances)
        store.create_run(
            RunRecord(
                run_id="r1",
                status="finished",
                dataset_id=sample.dataset_id,
                n_planned=4,
                config_json=RunConfig().model_dump_json(),
                model_file=EMBEDDED,
                similarity_model="all-MiniLM-L6-v2",
                similarity_kind="bi-encoder",
            )
        )
        store.update_run("r1", seconds=20.0)
        rows = [
            ("toxic", 2, None),
            ("toxic", 3, None),
            ("maybe", 0, "no reasons"),
            ("unclear", 0, "unclear stance"),
        ]
        for instance, (stance, reasons, stopped) in zip(sample.instances, rows, strict=False):
            store.connection.execute(
                "INSERT INTO instance_results (run_id, instance_id, stance, n_reasons, stopped) "
                "VALUES ('r1', ?, ?, ?, ?)",
                [instance.instance_id, stance, reasons, stopped],
            )
    with open_store(db, read_only=True) as store:
        [found] = past_runs(store, [EMBEDDED])
    assert (found.instances, found.instances_on, found.reasons_on) == (4, 2, 5)
