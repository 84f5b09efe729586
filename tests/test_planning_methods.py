"""The wizard's plan knows each method (issue 34 §5): its generations per stage come from the
method's own plan over the run's instances (a rationales-only run's leave-one-out texts, a
judge run's labels), its estimate from that plan and what finished runs of it measured, and
its calibration decode reads the run's own instances. A run without JUSTIFY explanations is
not offered to judge."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region

from benchmarks.benchdata import build_bench_db
from haf_tui.config import RunConfig
from haf_tui.datasets import Dataset, builtin_sample
from haf_tui.inference.base import Generation, ListSource
from haf_tui.methods.judge.core.prompts import toxicity_item
from haf_tui.methods.judge.suite.plan import JudgePlan
from haf_tui.methods.rationales.suite.plan import SPELLS, RationalePlan
from haf_tui.pipeline.choices import dataset_sources
from haf_tui.pipeline.estimate import estimate_time
from haf_tui.pipeline.models import LoadedModels
from haf_tui.pipeline.planning import NoInstancesError, ProbeResult, plan_run, probe_speed
from haf_tui.store import open_store
from haf_tui.store.paces import PastRun
from haf_tui.store.records import InstanceRecord, RunRecord
from haf_tui.tui.widgets.run_review import RunReview

RATIONALES = RunConfig(limit=3, suites=("rationales",))
JUDGE = RunConfig(suites=("judge",))


def explanations(count: int = 2) -> Dataset:
    """A run's explanations as a judge run reads them (``run:ID``)."""
    instances = [
        InstanceRecord(
            instance_id=f"e{n}",
            position=n,
            text=f"text number {n} is rude",
            label="toxic",
            extra={"judge_item": toxicity_item(f"text number {n}", ["it is rude"]).as_extra()},
        )
        for n in range(count)
    ]
    return Dataset("run:r1", "explanations of run r1", "run:r1", instances)


def prompt_range(instances: Sequence[InstanceRecord]) -> str:
    """The prompted rationale's generations: one per instance, and a second one when the
    model's ŷ differs from a gold label (none without gold: an ambiguous text)."""
    gold = sum(instance.label in ("toxic", "non-toxic") for instance in instances)
    return f"{len(instances)}–{len(instances) + gold}"


def test_a_rationales_run_is_planned_from_its_own_texts() -> None:
    sample = builtin_sample()
    plan = plan_run(RATIONALES, sample)
    plans = [RationalePlan(instance, RATIONALES) for instance in sample.instances[:3]]
    words = sum(len(p.tokens) for p in plans)
    counts = {stage: count.text() for stage, count in plan.counts.items()}
    assert counts["rationale_classify"] == str(3 * SPELLS), counts
    assert counts["rationale_occlusion"] == str(words * SPELLS), counts  # one text per word
    assert counts["rationale_prompt"] == prompt_range(sample.instances[:3]), counts
    least, most = plan.counts["rationale_perturb"].least, plan.counts["rationale_perturb"].most
    assert least > 0 and most is not None and most > least, (least, most)
    assert plan.generations["rationale_occlusion"] == words * SPELLS


def test_a_judge_run_is_planned_exactly_from_its_items() -> None:
    dataset = explanations(2)
    plan = plan_run(JUDGE, dataset)
    each = [JudgePlan(instance, JUDGE).planned()["judge"] for instance in dataset.instances]
    assert sum(each) > 0
    assert plan.counts["judge"].text() == str(sum(each))  # exact: every label of every slot
    assert plan.generations == {"judge": sum(each)}


def test_the_calibration_decode_reads_a_judge_runs_own_items() -> None:
    asked: list[Any] = []

    class Engine:
        def serve(self, source: ListSource) -> None:
            for request in source.take(8, wait=False):
                asked.append(request.messages)
                source.finished(request, Generation("p", 400, "1. a", [], "stop", 2.0, "", 1.0))

    class Backend:
        def engine(self, n_parallel: int) -> Engine:
            return Engine()

    models = LoadedModels(Backend(), None)  # type: ignore[arg-type]
    probe = probe_speed(models, JUDGE.model_copy(update={"limit": 1}), explanations(2))
    assert probe.prompt_tokens == 400 and probe.prompt_tokens_per_second == 400.0
    assert len(asked) == 1 and "text number 0" in str(asked[0]), asked


def test_a_judge_run_of_texts_without_items_says_what_it_needs() -> None:
    models = LoadedModels(object(), None)  # type: ignore[arg-type]  # (never asked)
    config = JUDGE.model_copy(update={"limit": 1})
    with pytest.raises(NoInstancesError) as error:
        probe_speed(models, config, builtin_sample())
    assert str(error.value) == (
        f"the run's suites ask nothing of instance {builtin_sample().instances[0].instance_id}"
        " (a judge run needs a dataset of explanations: run:ID)"
    )


def test_a_judge_runs_estimate_comes_from_its_plan_not_from_justify() -> None:
    dataset = explanations(2)
    probe = ProbeResult(prompt_tokens=400, prompt_tokens_per_second=200.0,
                        decode_tokens_per_second=20.0, batch=1)  # fmt: skip
    estimate = estimate_time(JUDGE, dataset, "judge.gguf", [], probe)
    total = plan_run(JUDGE, dataset).total_generations
    assert estimate.low is not None and estimate.high is not None, estimate
    assert "JUSTIFY" not in estimate.basis and f"{total} generations" in estimate.basis
    # measured: an earlier judge run of the file, other settings, took 2 s per generation
    other = RunConfig(suites=("judge",), settings={"judge": {"calls": "single"}})
    past = PastRun("judge.gguf", other, 60.0, 1, 0, generations=30)
    measured = estimate_time(JUDGE, dataset, "judge.gguf", [past])
    assert measured.basis.startswith("measured here: 1 earlier run of judge.gguf")
    assert "2.00 s per generation" in measured.basis, measured.basis
    assert measured.low is not None and measured.high is not None
    assert measured.low < total * 2.0 < measured.high


class ReviewApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RunReview()


async def test_the_review_of_a_rationales_run_speaks_of_rationales_only() -> None:
    async with ReviewApp().run_test(size=(160, 30)) as pilot:
        review = pilot.app.query_one(RunReview)
        note = review.show([("embedded", RATIONALES)], builtin_sample(), {}, {})
        await pilot.pause()
        lines = review.render_lines(Region(0, 0, review.size.width, review.size.height))
        row = next(strip.text for strip in lines if "embedded" in strip.text)
        plans = [RationalePlan(i, RATIONALES) for i in builtin_sample().instances[:3]]
        words = sum(len(plan.tokens) for plan in plans)
        prompts = prompt_range(builtin_sample().instances[:3])
        assert f" {words * SPELLS} " in row and f" {prompts} " in row, row
        assert "reasons per instance" not in note and "HAF's answer format" not in note, note
        assert "rationales: one rationale prompt" in note, note
        judged = review.show([("embedded", JUDGE)], explanations(3), {}, {})
        assert "HAF" not in judged and "JUSTIFY" not in judged, judged


def test_a_run_without_explanations_is_not_offered_to_judge(tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    [haf_run] = build_bench_db(db, n_instances=4, n_runs=1, seed=3)
    with open_store(db) as store:
        store.create_run(
            RunRecord(
                run_id="rationales-only",
                status="finished",
                dataset_id="builtin",
                n_planned=2,
                config_json=RATIONALES.model_dump_json(),
                model_file="m.gguf",
                similarity_model="all-MiniLM-L6-v2",
                similarity_kind="bi-encoder",
            )
        )
        store.update_run("rationales-only", status="finished", seconds=3.0)
        # a run with HAF's follow-up answers (and their reasons) but no JUSTIFY answer
        store.connection.execute(
            "CREATE TEMP TABLE one_run AS SELECT * FROM runs WHERE run_id = ?", [haf_run]
        )
        store.connection.execute("UPDATE one_run SET run_id = 'no-justify'")
        store.connection.execute("INSERT INTO runs SELECT * FROM one_run")
        for table in ("generations", "reasons"):
            store.connection.execute(
                f"INSERT INTO {table} SELECT * REPLACE ('no-justify' AS run_id) FROM {table} "
                "WHERE run_id = ? AND stage <> 'justify'",
                [haf_run],
            )
        values = [value for _, value in dataset_sources(store)]
    assert {f"run:{haf_run}", f"edits:{haf_run}"} <= set(values), values
    for run in ("rationales-only", "no-justify"):
        assert f"run:{run}" not in values and f"edits:{run}" not in values, values
