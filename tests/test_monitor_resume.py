"""The monitor after `R` and at the end of a judge run (issue 34 §9): a resumed run is named by
its model and timed from its first start; a run whose totals are exact (the judge's) has its
ETA from the generations left, not from the instances; a judged explanation's log line says
what the judge read in words."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.methods.judge.suite.suite import judged_summary
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.models import LoadedModels
from haf_tui.pipeline.runner import RunSummary
from haf_tui.pipeline.runs import StartedRun
from haf_tui.store import open_store
from haf_tui.store.records import RunRecord
from haf_tui.tui.app import HafApp, create_app
from haf_tui.tui.live import LiveRun
from haf_tui.tui.screens.monitor import MonitorScreen
from tests.support import settle, static_text

RUN_ID = "20261127-101500-abcd"


def test_a_judge_runs_eta_counts_the_generations_left() -> None:
    live = LiveRun("judge.gguf")
    planned = {"judge": 46}  # (a resume: 20 of them made before it)
    live.apply(ProgressEvent("run-started", "r", instances_total=2, generations_planned=planned,
                             generations_done={"judge": 20}))  # fmt: skip
    done = {"judge": 44}
    live.apply(ProgressEvent("instance", "r", instances_done=1, instances_total=2,
                             generations_done=done, generations_planned=planned))  # fmt: skip
    live.started = time.monotonic() - 660.0  # 24 made here in 11 min: 2 more take 55 s
    assert live.eta() == pytest.approx(55.0, abs=1.0)
    assert "ETA about 55 s" in MonitorScreen._stats(live).plain
    # a total that may still grow (HAF's follow-ups): the instances' pace, as before
    live.growing = ("judge",)
    assert live.eta() == pytest.approx(660.0, abs=1.0)


def test_a_judged_explanation_is_said_in_words() -> None:
    choices = ("toxic", "not toxic")
    line = judged_summary("a", choices, "toxic", True)
    assert (
        line == "judged: the explanation argues for a) toxic, the stance it was written for (toxic)"
    )
    line = judged_summary("b", choices, "toxic", False)
    assert line.endswith("argues for b) not toxic, not the stance it was written for (toxic)")
    assert judged_summary("none", choices, None, None).endswith("none of the answers")
    assert judged_summary(None, choices, None, None) == "judged: no Supports rating was read"


async def test_r_names_the_run_by_its_model_and_counts_its_whole_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import haf_tui.tui.app_runs as app_module

    db = tmp_path / "haf.duckdb"
    sample = builtin_sample()
    config = RunConfig(limit=2)
    with open_store(db) as store:
        store.save_dataset(sample.dataset_id, sample.name, sample.source, sample.instances)
        store.create_run(
            RunRecord(
                run_id=RUN_ID,
                status="interrupted",
                dataset_id=sample.dataset_id,
                n_planned=2,
                config_json=config.model_dump_json(),
                model_file="tiny-model.Q4_K_M.gguf",
                similarity_model="all-MiniLM-L6-v2",
                similarity_kind="bi-encoder",
            )
        )
        store.update_run(RUN_ID, seconds=3600.0)  # an hour before it was cancelled

    class Unloaded:
        def close(self) -> None:
            pass

    def fake_start(store: Any, request: Any) -> StartedRun:
        assert request.resume_run_id == RUN_ID
        return StartedRun(RUN_ID, config, LoadedModels(Unloaded(), None))  # type: ignore[arg-type]

    def fake_execute(store: Any, run_id: str, config: Any, models: Any, **kw: Any) -> RunSummary:
        kw["listener"](ProgressEvent("run-started", run_id, instances_done=1, instances_total=2))
        return RunSummary(run_id, "interrupted", 1, 2)

    monkeypatch.setattr(app_module, "start_or_resume", fake_start)
    monkeypatch.setattr(app_module, "execute_run", fake_execute)
    app = create_app(db)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app, HafApp)
        app.resume_run(RUN_ID)
        await settle(pilot, rounds=6)
        assert app.session is not None
        live = app.session.runs[0]
        assert live.label == "tiny-model.Q4_K_M.gguf", live.label
        assert live.seconds_before == pytest.approx(3600.0)
        stats = static_text(app.screen, "#mon-stats")
        assert "elapsed 1 h 00 min" in stats and "since the resume" in stats, stats
