"""What the explorer shows of the judge suite (``docs/methods/judge.md#41-the-item``,
``docs/methods/judge.md#43-constrained-answers``) for one instance: per judge
run, each criterion's label with p(label), the label mass and E where defined, and whether Supports
names the other label than the stance the explanation argued for ("≠ stance"); gathered from the
``judge_*`` instance metrics by :func:`judgement` and read for several instances at once by
:func:`read_judgements`.

In a HAF run's explorer the judge runs are those over its explanations (same instance ids); in
a judge run's explorer, the run itself, with the judged item."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from haf_tui.methods.judge.core.criteria import CRITERIA, SHORT_NAMES, Criterion
from haf_tui.methods.judge.core.prompts import JudgeItem
from haf_tui.methods.judge.core.scores import LOW_MASS
from haf_tui.methods.judge.reports.readers import (
    JudgeRun,
    instance_judgements,
    judge_run,
    judge_runs_of,
)
from haf_tui.methods.judge.suite.suite import JUDGE
from haf_tui.store import Store
from haf_tui.store.readers import dataset_extras

NOT_EQUAL = "≠"
"""The mark of a Supports that names the other label than the stance argued for."""


def _defined(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


@dataclass(frozen=True)
class CriterionJudgement:
    """One criterion as a judge run rated it: the label (None: its answer failed to parse or
    is missing), p of each allowed label (constrained mode), the mass and E (None where not
    defined)."""

    criterion: Criterion
    label: str | None
    probs: tuple[tuple[str, float], ...] = ()
    mass: float | None = None
    expected: float | None = None
    failed: bool = False

    @property
    def name(self) -> str:
        """Its short name."""
        return SHORT_NAMES.get(self.criterion.id, self.criterion.display)

    @property
    def p(self) -> float | None:
        """p of the chosen label (None: free mode, or no label)."""
        return next((p for label, p in self.probs if label == self.label), None)

    @property
    def low_mass(self) -> bool:
        """Whether the mass is below :data:`LOW_MASS`."""
        return self.mass is not None and self.mass < LOW_MASS


@dataclass(frozen=True)
class Judgement:
    """One judge run's ratings of one instance's explanation."""

    run: JudgeRun
    instance_id: str
    criteria: tuple[CriterionJudgement, ...]
    supports_matches: bool | None = None
    stance: str | None = None
    item: JudgeItem | None = None

    @property
    def mismatch(self) -> bool:
        """Whether Supports names the other label than the stance (≠ stance)."""
        return self.supports_matches is False

    def get(self, criterion_id: str) -> CriterionJudgement | None:
        """The rating of one criterion, or None."""
        return next((c for c in self.criteria if c.criterion.id == criterion_id), None)


def _label_of(crit: Criterion, code: float | None) -> str | None:
    if code is None or math.isnan(code):
        return None
    return next((label.name for label in crit.labels if label.code == round(code)), None)


def judgement(
    run: JudgeRun,
    instance_id: str,
    metrics: Mapping[str, float | None],
    extra: Mapping[str, object] | None = None,
) -> Judgement:
    """An instance's judgement from its ``judge_*`` metrics in ``run`` (and the judge
    dataset's ``extra``: the stance argued for and the judged item)."""
    criteria: list[CriterionJudgement] = []
    for crit in CRITERIA:
        key = f"judge_{crit.id}"
        prefix = f"{key}_p_"
        probs = tuple(
            (label.name, float(value))
            for label in crit.labels
            if (value := _defined(metrics.get(prefix + label.name))) is not None
        )
        failed = bool(metrics.get(f"{key}_failed"))
        label = _label_of(crit, metrics.get(key))
        if label is None and not failed and not probs:
            continue  # (not rated: e.g. a single-criterion prompt)
        criteria.append(
            CriterionJudgement(
                crit, label, probs, _defined(metrics.get(f"{key}_mass")),
                _defined(metrics.get(f"{key}_expected")), failed,
            )
        )  # fmt: skip
    matches = _defined(metrics.get("judge_supports_matches"))
    extra = extra or {}
    stance = extra.get("stance")
    return Judgement(
        run,
        instance_id,
        tuple(criteria),
        None if matches is None else matches >= 0.5,
        None if stance is None else str(stance),
        JudgeItem.from_extra(extra.get("judge_item")),
    )


def read_judgements(
    store: Store, runs: Sequence[JudgeRun], ids: Sequence[str]
) -> dict[str, tuple[Judgement, ...]]:
    """Instance id → its judgements by ``runs`` (in their order; a run that did not judge it
    is left out), with each judge dataset's item and stance."""
    if not runs or not ids:
        return {}
    metrics = {
        (found.run_id, found.instance_id): found.metrics
        for found in instance_judgements(store, [r.run_id for r in runs], ids)
    }
    extras = {
        d: {found.instance_id: found.extra for found in dataset_extras(store, d, ids)}
        for d in {r.dataset_id for r in runs}
    }
    found: dict[str, tuple[Judgement, ...]] = {}
    for instance_id in ids:
        found[instance_id] = tuple(
            judgement(run, instance_id, own, extras[run.dataset_id].get(instance_id))
            for run in runs
            if (own := metrics.get((run.run_id, instance_id)))
        )
    return found


def judges_shown(store: Store, run_id: str, suites: Sequence[str]) -> tuple[JudgeRun, ...]:
    """The judge runs whose judgements a run's explorer shows: a judge run's own (a run with
    the judge suite); else those over the run's explanations (finished first, then newest
    first)."""
    if JUDGE.name in suites:
        own = judge_run(store, run_id)
        return () if own is None else (own,)
    return tuple(judge_runs_of(store, run_id))
