"""A run's planned totals per stage and its rate per stage unit, for the progress events.

Every instance's generations per stage are known as early as its plans know them: a plan's
:meth:`~haf_tui.methods.base.InstancePlan.planned` (exact), else the generations asked so far
(before the instance starts: its first tasks) with the stages that may still grow
(:func:`~haf_tui.methods.base.open_stages`). A stage's total is exact once no instance may
add to it; until then it is a lower bound, and the estimate extrapolates the instances whose
count of that stage is final. The rate counts each stage in its method's unit: generated
tokens, or texts scored by teacher forcing (one per forced reply).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.methods.base import InstancePlan, Suite, open_stages
from haf_tui.methods.declare import RateUnit
from haf_tui.methods.registry import run_stages, stage_units, suites_named
from haf_tui.store.records import InstanceRecord


@dataclass(frozen=True)
class InstanceCounts:
    """One instance's generations per stage: final, except those of the ``open`` stages,
    which may still grow."""

    counts: Mapping[str, int]
    open: frozenset[str] = frozenset()


def instance_counts(
    plans: Sequence[tuple[Suite, InstancePlan]],
    config: RunConfig,
    asked: Mapping[str, int] | None = None,
) -> InstanceCounts:
    """What an instance's plans know of its generations: each plan's planned counts once
    known, else ``asked`` (the generations asked so far; None: a fresh plan, whose first
    tasks are counted)."""
    counts: Counter[str] = Counter()
    still_open: set[str] = set()
    for suite, plan in plans:
        known = plan.planned()
        if known is not None:
            counts.update({stage: n for stage, n in known.items() if n})
            continue
        still_open |= open_stages(plan, suite.run_stages(config))
        if asked is None:
            counts.update(task.stage for task in plan.start())
        else:
            counts.update({stage: asked.get(stage, 0) for stage in suite.stages})
    return InstanceCounts(dict(counts), frozenset(still_open))


class RunTotals:
    """The run's totals per stage (kept as running sums: an update costs its stages), and the
    work done per rate unit. Safe to use from the queue's and the scorer's threads."""

    def __init__(self, stages: Sequence[str], units: Mapping[str, RateUnit], instances: int):
        self.stages = tuple(stages)
        self.units = dict(units)
        self.instances = instances
        self._lock = threading.Lock()
        self._known: dict[str, InstanceCounts] = {}
        self._planned: Counter[str] = Counter()
        self._open: Counter[str] = Counter()  # instances whose count of the stage may grow
        self._final_sum: Counter[str] = Counter()
        self._final_n: Counter[str] = Counter()
        self._work: Counter[str] = Counter()  # per unit: tokens generated, texts scored

    def note(self, instance_id: str, counts: InstanceCounts) -> None:
        """What is known now of one instance's generations."""
        with self._lock:
            old = self._known.get(instance_id)
            if old is not None:
                self._add(old, -1)
            self._known[instance_id] = counts
            self._add(counts, 1)

    def _add(self, counts: InstanceCounts, sign: int) -> None:
        for stage in self.stages:
            n = counts.counts.get(stage, 0)
            self._planned[stage] += sign * n
            if stage in counts.open:
                self._open[stage] += sign
            else:
                self._final_sum[stage] += sign * n
                self._final_n[stage] += sign

    def planned(self) -> dict[str, int]:
        """Generations per stage the run is known to need (a lower bound where growing)."""
        with self._lock:
            return {stage: self._planned[stage] for stage in self.stages}

    def growing(self) -> tuple[str, ...]:
        """The stages whose total may still grow."""
        with self._lock:
            unseen = self.instances > len(self._known)
            return tuple(s for s in self.stages if unseen or self._open[s] > 0)

    def expected(self) -> dict[str, int]:
        """Generations per stage the run is expected to need: the known counts, and for the
        instances whose count may still grow the average of the others (one each before any
        is known), never below what they asked already."""
        with self._lock:
            expected = {}
            for stage in self.stages:
                final_n, final_sum = self._final_n[stage], self._final_sum[stage]
                others = max(self.instances - final_n, 0)
                asked = self._planned[stage] - final_sum
                guess = round(others * final_sum / final_n) if final_n else others
                expected[stage] = final_sum + max(asked, guess if others else 0)
            return expected

    def add_generation(self, stage: str, generation: Generation) -> None:
        """A generation stored: its tokens, or (a stage counted in texts) one text."""
        unit = self.units.get(stage, "tokens")
        done = 1 if unit == "texts" else max(len(generation.tokens) - 1, 0)
        with self._lock:
            self._work[unit] += done

    def rates(self, elapsed: float) -> dict[str, float]:
        """Per second over ``elapsed`` seconds, for each unit of the run's stages."""
        with self._lock:
            return {
                unit: self._work[unit] / elapsed if elapsed > 0 else 0.0
                for unit in dict.fromkeys(self.units.values())
            }


def plan_totals(
    config: RunConfig, instances: Sequence[InstanceRecord], total: int | None = None
) -> RunTotals:
    """The totals of a run of ``config`` over ``instances`` before any answer (``total``: the
    run's instances, when more than these, e.g. some finished already)."""
    totals = RunTotals(run_stages(config), stage_units(config), total or len(instances))
    suites = suites_named(config.suites)
    for instance in instances:
        plans = [(suite, suite.plan(instance, config)) for suite in suites]
        totals.note(instance.instance_id, instance_counts(plans, config))
    return totals


def fresh_counts(
    config: RunConfig, instances: Sequence[InstanceRecord]
) -> dict[str, InstanceCounts]:
    """What each instance's plans know of its generations before any answer."""
    suites = suites_named(config.suites)
    return {
        instance.instance_id: instance_counts(
            [(suite, suite.plan(instance, config)) for suite in suites], config
        )
        for instance in instances
    }


def stored_totals(
    config: RunConfig,
    fresh: Mapping[str, InstanceCounts],
    keys: Collection[tuple[str, str, int]],
    finished: Collection[str],
) -> RunTotals:
    """A run's totals as its stored rows say (a run another process writes, or one left
    unfinished): a finished instance's stored generations are final; a started one counts at
    least what it stored and what its plans knew before any answer (its open stages may still
    grow); the others what their plans knew (``fresh``: :func:`fresh_counts`)."""
    stored: dict[str, Counter[str]] = {}
    for instance_id, stage, _ in keys:
        stored.setdefault(instance_id, Counter())[stage] += 1
    totals = RunTotals(run_stages(config), stage_units(config), len(fresh))
    done = set(finished)
    for instance_id, counts in fresh.items():
        made = stored.get(instance_id, Counter())
        if instance_id in done:
            totals.note(instance_id, InstanceCounts(dict(made)))
            continue
        merged = {s: max(counts.counts.get(s, 0), made.get(s, 0)) for s in {*counts.counts, *made}}
        totals.note(instance_id, InstanceCounts(merged, counts.open))
    return totals
