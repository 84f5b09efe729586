"""Adaptive RANDOM (``random_tolerance``) with a scripted model: masks come in rounds, the
rule stops at the first round whose comp and flip means are tight enough, a replay asks the
same texts, and a run stored without a tolerance asks every seed as before."""

from __future__ import annotations

import math

import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.base import Reply, Task
from haf_tui.methods.rationales.core.metrics import half_width_95
from haf_tui.methods.rationales.settings import (
    DEFAULT_RANDOM_TOLERANCE,
    RationaleSettings,
    rationale_settings,
)
from haf_tui.methods.rationales.suite.plan import PERTURB, RANDOM_FIRST, RationalePlan, replay
from haf_tui.methods.rationales.suite.records import rows_of
from haf_tui.methods.registry import settle_config
from tests.test_rationales_suite import drive, finish, instance


def config(**values: object) -> RunConfig:
    settings = RationaleSettings.model_validate({"strategy": "top_k", "k": 2, **values})
    return RunConfig(suites=("rationales",), rationales=settings)


def random_slots(tasks: list[Task]) -> set[int]:
    return {t.sub_index // 4 for t in tasks if t.stage == PERTURB and t.sub_index >= 4 * 7}


def test_half_width_is_the_normal_95_percent_interval_of_the_mean() -> None:
    assert half_width_95([1.0]) == math.inf
    assert half_width_95([0.0, 0.0, 0.0]) == 0.0
    values = [0.0, 1.0, 0.0, 1.0]  # sd = 1/√3
    assert half_width_95(values) == pytest.approx(1.96 * (1 / math.sqrt(3)) / 2)


def test_without_a_tolerance_every_seed_is_asked_at_the_start_as_before() -> None:
    for tolerance in (None, 0.0):
        plan = RationalePlan(instance(), config(random_seeds=30, random_tolerance=tolerance))
        assert len(random_slots(list(plan.start()))) <= 30
        assert plan.random_asked == 30 and plan.random_done


def test_a_tolerance_asks_a_first_round_then_more_until_the_means_are_tight() -> None:
    loose = RationalePlan(instance(), config(random_seeds=40, random_tolerance=1.0))
    first = list(loose.start())
    assert loose.random_asked == 10 and not loose.random_done
    assert max(random_slots(first)) < RANDOM_FIRST + 10
    drive_rest(loose, first)
    assert loose.random_asked == 10 and loose.random_done  # 1.0: the first round suffices

    tight = RationalePlan(instance(), config(random_seeds=40, random_tolerance=1e-6))
    drive(tight)
    assert tight.random_asked == 40 and tight.planned() is not None  # never tight: the most


@pytest.mark.parametrize("tolerance", [0.05, 0.1, 0.2])
def test_the_rule_stops_at_the_first_round_whose_half_widths_are_within_the_tolerance(
    tolerance: float,
) -> None:
    plan = RationalePlan(instance(), config(random_seeds=100, random_tolerance=tolerance))
    drive(plan)
    effects = plan.random_effects()
    assert effects is not None and plan.random_done
    asked = plan.random_asked
    widths = {n: max(half_width_95(v[:n]) for v in effects) for n in range(10, asked + 1, 10)}
    assert all(width > tolerance for n, width in widths.items() if n < asked)
    assert widths[asked] <= tolerance or asked == 100


def test_a_replay_in_any_order_asks_the_same_random_texts_and_gives_the_same_rows() -> None:
    settings = config(random_seeds=60, random_tolerance=0.1, random_min_seeds=7)
    record = instance()
    fifo_plan, lifo_plan = RationalePlan(record, settings), RationalePlan(record, settings)
    fifo, lifo = drive(fifo_plan), drive(lifo_plan, lifo=True)
    assert fifo_plan.random_asked == lifo_plan.random_asked > 7
    replayed = RationalePlan(record, settings)
    replay(replayed, lifo)
    assert replayed.random_asked == fifo_plan.random_asked and replayed.random_done
    assert replayed.slot_texts == fifo_plan.slot_texts
    a, b = finish(fifo, record, settings), finish(lifo, record, settings)
    assert rows_of(a) == rows_of(b) and a.instance_metrics == b.instance_metrics
    randoms = [r for r in rows_of(a) if r.source == "random"]
    assert [r.seed for r in randoms] == list(range(fifo_plan.random_asked))
    metrics = {name: value for name, value, _ in a.instance_metrics}
    assert metrics["rationale_random_seeds"] == fifo_plan.random_asked


def test_adaptive_masks_are_the_first_masks_of_a_fixed_run() -> None:
    fixed = RationalePlan(instance(), config(random_seeds=50))
    adaptive = RationalePlan(instance(), config(random_seeds=50, random_tolerance=0.2))
    drive(fixed), drive(adaptive)
    for seed in range(adaptive.random_asked):
        slot = RANDOM_FIRST + seed
        assert adaptive.masks[slot] == fixed.masks[slot]


def test_a_new_run_gets_the_default_tolerance_and_a_stored_run_without_one_keeps_all() -> None:
    settled = settle_config(config(random_seeds=100), [instance()])
    assert rationale_settings(settled).random_tolerance == DEFAULT_RANDOM_TOLERANCE
    chosen = settle_config(config(random_tolerance=0.0), [instance()])
    assert rationale_settings(chosen).random_tolerance == 0.0  # a choice is kept: every seed
    stored = RunConfig.model_validate(
        {"suites": ["rationales"], "settings": {"rationales": {"random_seeds": 12}}}
    )
    assert rationale_settings(stored).random_tolerance is None
    plan = RationalePlan(instance(), stored)
    plan.start()
    assert plan.random_asked == 12 and plan.random_done


def drive_rest(plan: RationalePlan, pending: list[Task]) -> None:
    """Answer ``pending`` and whatever follows (first in first out)."""
    from tests.test_rationales_suite import reply_to

    while pending:
        task = pending.pop(0)
        reply: Reply = reply_to(task, "idiot | illegal | liberals")
        more, _ = plan.advance(task, reply)
        pending += more


def test_random_masks_scored_as_leave_one_out_texts_still_end_the_plan() -> None:
    """A one-word HARD: every RANDOM mask's text is a leave-one-out text, scored once as
    OCCLUSION. When those replies come last (after every PERTURB and CLASSIFY reply) the plan
    still decides RANDOM and knows its totals."""
    from tests.test_rationales_suite import TOKENS, reply_to

    one_word = [[1 if i == 2 else 0 for i in range(len(TOKENS))]] * 3
    record = instance(masks=one_word)
    plan = RationalePlan(record, config(random_seeds=30, random_tolerance=0.05))
    order = {"rationale_classify": 0, "rationale_perturb": 1, "rationale_prompt": 2}
    pending = list(plan.start())
    while pending:
        pending.sort(key=lambda t: order.get(t.stage, 3))  # (OCCLUSION replies last)
        task = pending.pop(0)
        more, _ = plan.advance(task, reply_to(task, "idiot | illegal"))
        pending += more
    assert plan.random_done and plan.planned() is not None
