"""Progress carries planned totals per stage and a rate in each stage's unit (issue 26): a
judge run scores texts, a rationales run knows its totals as early as its plans do, and a
method registered at runtime gets the unit it declares."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest
from rich.console import Console
from rich.progress import Progress

from haf_tui.cli.progress_bars import ProgressBars
from haf_tui.config import RunConfig
from haf_tui.messages import ChatMessage
from haf_tui.methods.base import Reply, Task
from haf_tui.methods.declare import Method
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.methods.registry import methods, stage_units
from haf_tui.pipeline.events import ProgressEvent
from haf_tui.pipeline.progress_text import rate_text, stage_total
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import open_store
from haf_tui.store.records import InstanceRecord
from haf_tui.tui.live import LiveRun
from haf_tui.tui.widgets.stage_progress import pace_text
from tests.support import judge_runs
from tests.support.rationale_runs import (
    RATIONALE_CONFIG,
    ScriptedRationaleModel,
    rationale_instances,
    store_rationale_run,
)
from tests.test_scheduler import FlatSimilarity, ScriptedBackend, _store_with_run
from tests.test_suites import EchoPlan, EchoSuite


def _listening(monkeypatch: pytest.MonkeyPatch, module: object) -> list[ProgressEvent]:
    """The events of every run ``module`` makes through its ``HafRunner``."""
    events: list[ProgressEvent] = []
    runner = functools.partial(HafRunner, listener=events.append)
    monkeypatch.setattr(module, "HafRunner", runner)
    return events


def test_a_constrained_judge_run_reports_texts_per_second_not_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = _listening(monkeypatch, judge_runs)
    judge_runs.judge_store(tmp_path / "judge.duckdb").close()
    judged = [e for e in events if e.run_id == judge_runs.JUDGE_RUN]
    assert judged and all(set(e.rates) == {"texts"} for e in judged)
    assert judged[-1].rates["texts"] > 0 and judged[-1].tokens_per_second == 0
    line = rate_text(judged[-1].rates)
    assert line.endswith("prompts/s") and "tok/s" not in line
    # every label of every slot is planned from the start: an exact total throughout
    first, last = judged[0], judged[-1]
    assert first.growing == () and first.generations_planned["judge"] > 0
    assert last.generations_planned == last.generations_done
    # the source run (HAF) generates tokens
    source = [e for e in events if e.run_id == judge_runs.SOURCE_RUN]
    assert set(source[-1].rates) == {"tokens"} and source[-1].rates["tokens"] > 0


def test_the_judge_s_unit_follows_its_mode() -> None:
    constrained = RunConfig(suites=("judge",))
    free = RunConfig(suites=("judge",), judge=JudgeSettings(mode="free"))
    assert stage_units(constrained) == {"judge": "texts"}
    assert stage_units(free) == {"judge": "tokens"}
    assert methods()["judge"].unit("judge") == "texts"  # (no config: the defaults)


def test_a_rationales_run_s_events_carry_per_stage_totals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support import rationale_runs

    events = _listening(monkeypatch, rationale_runs)
    with open_store(tmp_path / "r.duckdb") as store:
        store_rationale_run(store)
    started = events[0]
    assert started.kind == "run-started"
    instances = rationale_instances()
    words = sum(len(i.text.split()) for i in instances)
    planned = started.generations_planned
    # the full text and every leave-one-out text: four spellings each, known up front
    assert planned["rationale_classify"] == 4 * len(instances)
    assert planned["rationale_occlusion"] == 4 * words
    assert set(started.growing) == {"rationale_prompt", "rationale_perturb"}
    assert planned["rationale_perturb"] > 0  # the baselines' texts, asked at the start
    shown = stage_total("rationale_classify", planned, started.growing, {})
    assert shown.count(0) == f"0/{4 * len(instances)}"
    growing = stage_total("rationale_perturb", planned, started.growing, {})
    assert growing.count(0) == f"0/≥{planned['rationale_perturb']}"
    # once ŷ is known the prompts are planned; at the end every total is exact and met
    last = events[-1]
    assert last.kind == "run-finished" and last.growing == ()
    assert last.generations_planned == last.generations_done
    assert set(last.rates) == {"texts", "tokens"}  # forced scorings and prompted answers
    assert last.rates["texts"] > 0


def test_a_resumed_rationales_run_counts_its_finished_instances(tmp_path: Path) -> None:
    with open_store(tmp_path / "r.duckdb") as store:
        run_id = store_rationale_run(store)
        for table in ("instance_results", "instance_metrics", "reason_metrics", "rationales"):
            store.connection.execute(f"DELETE FROM {table} WHERE instance_id = 'h2'")
        events: list[ProgressEvent] = []
        runner = HafRunner(
            store, ScriptedRationaleModel(), FlatSimilarity(), RATIONALE_CONFIG,
            listener=events.append,
        )  # fmt: skip
        assert runner.run(run_id).status == "finished"
    assert events[-1].growing == ()
    assert events[-1].generations_planned == events[-1].generations_done


class ToyPlan(EchoPlan):
    """Echo's plan under the stage ``toy``."""

    def start(self) -> Sequence[Task]:
        return [Task("toy", -1, None, (ChatMessage("user", f"Repeat: {self.text}"),))]

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        return [], len(reply.text)

    def planned(self) -> dict[str, int]:
        return {"toy": 1}


class ToySuite(EchoSuite):
    """A plug-in suite with one stage, ``toy``."""

    name = "toy"
    stages = ("toy",)
    titles: ClassVar[dict[str, str]] = {"toy": "toy scores"}

    def plan(self, instance: InstanceRecord, config: RunConfig) -> ToyPlan:
        return ToyPlan(instance.text)


def test_a_method_registered_at_runtime_gets_its_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toy = Method(
        name="toy", title="toy", description="a toy", suite=ToySuite(), units={"toy": "texts"}
    )
    monkeypatch.setitem(methods(), "toy", toy)
    store, config = _store_with_run(tmp_path / "toy.duckdb", 3, 1)
    config = config.model_copy(update={"suites": ("toy",)})
    assert stage_units(config) == {"toy": "texts"}
    events: list[ProgressEvent] = []
    runner = HafRunner(store, ScriptedBackend(), FlatSimilarity(), config, listener=events.append)
    assert runner.run("run").status == "finished"
    store.close()
    assert events[0].generations_planned == {"toy": 3} and events[0].growing == ()
    assert set(events[-1].rates) == {"texts"} and events[-1].rates["texts"] > 0
    # the CLI's bars: one per stage, titled from the registry, with the unit's rate
    console = Console(record=True, width=120)
    with Progress(console=console) as progress:
        bars = ProgressBars(progress, ["toy"])
        bars.show(events[-1])
        instances, stage = progress.tasks
    assert stage.description.strip() == "toy scores" and stage.fields["count"] == "3/3"
    assert "prompts/s" in instances.fields["detail"] and "tok/s" not in instances.fields["detail"]
    # the monitor's pace line
    live = LiveRun("toy run", status="running")
    live.apply(events[-1])
    pace = pace_text(live).plain
    assert "prompts/s" in pace and "tok/s" not in pace


def test_a_mixed_rate_shows_both_units_and_an_old_event_reads_as_tokens() -> None:
    assert rate_text({"tokens": 38.2, "texts": 12.5}) == "38.2 tok/s · 12.5 prompts/s"
    assert rate_text({"tokens": 0.0, "texts": 12.5}) == "12.5 prompts/s"
    live = LiveRun("r", status="running")
    live.apply(ProgressEvent("instance", "r", tokens_per_second=7.0))
    assert live.rates == {"tokens": 7.0}


async def test_the_monitor_shows_a_rationales_run_s_totals_and_rates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widgets import Label

    from haf_tui.pipeline.runs import RunRequest
    from haf_tui.tui import create_app
    from haf_tui.tui.app import HafApp
    from haf_tui.tui.live import LiveSession, RunJob
    from haf_tui.tui.messages import RunUpdate
    from haf_tui.tui.screens.monitor import MonitorScreen
    from tests.support import rationale_runs, settle, static_text

    events = _listening(monkeypatch, rationale_runs)
    with open_store(tmp_path / "r.duckdb") as store:
        store_rationale_run(store)
    middle = next(e for e in events if e.kind == "generation" and e.growing)
    app = create_app(tmp_path / "haf.duckdb")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app, HafApp)
        app.session = LiveSession.of([RunJob("scripted", RunRequest())])
        app.push_screen(MonitorScreen())
        await settle(pilot)
        app.post_message(RunUpdate(0, [events[0], middle]))
        await settle(pilot)  # (until the update is shown, not a tenth of a second)

        def count(stage: str) -> str:
            return str(app.screen.query_one(f"#count-{stage}", Label).render())

        done = middle.generations_done.get("rationale_classify", 0)
        assert count("rationale_classify") == f"{done}/12"
        assert "/≥" in count("rationale_perturb") or "/≈" in count("rationale_perturb")
        assert not app.screen.query_one("#row-justify").display  # (another method's stage)
        stats = static_text(app.screen, "#mon-stats")
        assert "prompts/s" in stats, stats
        app.session.runs[0].status = "finished"
