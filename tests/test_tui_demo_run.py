"""The workbench's demo is ``haf run --demo`` (issue 44 §3, "every suite first-class in every
face"): the wizard's first dataset with the embedded model alone, started as it opens, runs the
demo's texts in order until 3 went through every stage with the demo's decoding, and the monitor
ends as ``haf run`` does, with how many texts each HAF number rests on. The model is scripted
(:class:`~tests.test_demo_scripted.ScriptedDemoModel`): which texts the real embedded model
takes past JUSTIFY depends on the CPU (docs/demo.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import RunConfig
from haf_tui.datasets import DEMO_TEXTS_ID
from haf_tui.pipeline.models import LoadedModels
from haf_tui.pipeline.planning import ProbeResult
from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.screens.wizard import WizardScreen
from tests.support import settle, until
from tests.test_demo_scripted import DEMO_TEXTS, ScriptedDemoModel
from tests.test_scheduler import FlatSimilarity
from tests.test_tui_first_run import demo_config


@pytest.fixture(autouse=True)
def _scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The HAF home is the test's own; the wizard's calibration and the run load the scripted
    model."""
    import haf_tui.pipeline.runs as runs
    import haf_tui.tui.screens.wizard_reading as wizard_reading

    monkeypatch.setenv("HAF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HAF_MODELS_PATH", raising=False)
    monkeypatch.chdir(tmp_path)

    def scripted_models(config: Any, similarity: Any = None) -> LoadedModels:
        return LoadedModels(ScriptedDemoModel(), FlatSimilarity())

    monkeypatch.setattr(runs, "load_models", scripted_models)
    monkeypatch.setattr(wizard_reading, "load_models", scripted_models)
    probe = ProbeResult(60, 400.0, 45.0, 8)
    monkeypatch.setattr(wizard_reading, "probe_speed", lambda models, config, dataset: probe)


async def test_the_wizard_s_demo_runs_haf_run_demo_and_says_what_each_number_rests_on(
    tmp_path: Path,
) -> None:
    db = tmp_path / "haf.duckdb"
    app = create_app(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, WizardScreen)
        await pilot.press("ctrl+n", "ctrl+n", "ctrl+n")  # every step as it opens
        await settle(pilot)
        await until(pilot, lambda: getattr(app.screen, "dataset", None) is not None)
        await pilot.press("ctrl+s")
        session = app.session
        assert session is not None
        await until(pilot, lambda: session.runs[0].status == "finished", seconds=300)
        await settle(pilot)
        log = " ".join(session.runs[0].log)
    counts = "SoS 3, DiS 3, UII 3, UEI 3, RS 2, RN 1"  # (as haf run --demo's, scripted)
    assert f"Each HAF number rests on the instances it is defined for: {counts}" in log, log
    with open_store(db, read_only=True) as store:
        (run,) = store.list_runs()
        config = RunConfig.model_validate_json(store.get_run(run["run_id"]).config_json)
        _, through = store.query(
            "SELECT instance_id FROM generations WHERE stage <> 'classify' GROUP BY instance_id "
            "HAVING count(DISTINCT stage) = 4"
        )
    stored = {"dataset_id", "limit"}  # (the limit: the texts taken, once 3 went through)
    assert config.model_dump(exclude=stored) == demo_config().model_dump(exclude=stored)
    assert config.limit == run["n_done"] < demo_config().limit
    assert config.dataset_id == DEMO_TEXTS_ID, config.dataset_id
    assert sorted(through) == sorted((DEMO_TEXTS[i].instance_id,) for i in (0, 2, 3))
    assert f"3 of {run['n_done']} instances went on after JUSTIFY" in log, log
