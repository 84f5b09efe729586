"""What a suite is: the plug-in point of the evaluation pipeline.

A suite says which generations an instance needs (a :class:`InstancePlan` per instance: the
first tasks, then the follow-ups each answer calls for), turns each finished generation into
the record the store keeps (parsed and scored), and computes an instance's results from its
answers once the plan is complete. One scheduler, one runner, one store and one resume logic
serve every suite: a resumed run replays the stored answers through the same plan.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.messages import ChatMessage
from haf_tui.similarity import SimilarityModel
from haf_tui.store.records import GenerationRecord, InstanceRecord
from haf_tui.vocabulary import nan_for_null


@dataclass(frozen=True)
class Task:
    """One prompt for the model: its stage, sub-prompt index (-1: none), SUF/NEC test,
    ``forced``: a reply to score by teacher forcing instead of sampling one, ``greedy``: decode
    without sampling, ``max_new_tokens``: a tighter cap than the run's (None: the run's), and
    ``reply_prefix``: the start of the reply, given (a forced reply is scored after it)."""

    stage: str
    sub_index: int
    test: str | None
    messages: tuple[ChatMessage, ...]
    forced: str | None = None
    greedy: bool = False
    max_new_tokens: int | None = None
    reply_prefix: str = ""


@dataclass(frozen=True)
class Reply:
    """What a plan reads of a finished (or stored) generation: its text and the sum of its
    tokens' log-probabilities (a forced reply's score)."""

    text: str
    logprob_sum: float = 0.0

    @classmethod
    def of_generation(cls, generation: Generation) -> Reply:
        """From a generation just made."""
        return cls(generation.text, math.fsum(t.logprob for t in generation.tokens))


@dataclass(frozen=True)
class Answer:
    """What an instance's results need of one of its stored generations (from the record in
    memory, or read back from the store on a resume)."""

    stage: str
    sub_index: int
    decision: str
    decision_confidence: float
    reasons: tuple[tuple[str, float], ...] = ()
    logprob_sum: float = 0.0
    text: str = ""

    @classmethod
    def of_record(cls, record: GenerationRecord) -> Answer:
        """From a record just built."""
        return cls(
            record.stage,
            record.sub_index,
            record.decision,
            record.decision_confidence,
            tuple((r.text, r.confidence) for r in record.reasons),
            math.fsum(t.logprob for t in record.tokens),
            record.output_text,
        )

    @classmethod
    def of_row(cls, row: dict[str, Any]) -> Answer:
        """From a row of :meth:`~haf_tui.store.Store.instance_generations`."""
        return cls(
            str(row["stage"]),
            int(row["sub_index"]),
            str(row["decision"]),
            nan_for_null(row["decision_confidence"]),
            tuple(
                (str(t), nan_for_null(c))
                for t, c in zip(row["reason_texts"], row["reason_confidences"], strict=True)
            ),
            nan_for_null(row.get("logprob_sum")),
            str(row.get("output_text") or ""),
        )


MetricRow = tuple[str, float, int]
"""An instance metric: (name, value, n defined)."""
ReasonMetricRow = tuple[str, int, int, str, float]
"""A reason metric: (stage, sub_index, reason_index, name, value)."""


@dataclass
class SuiteOutcome:
    """A suite's results for one instance. ``stance``, ``n_reasons`` and ``stopped`` are the
    instance's stance row (the suite that decides it: HAF's JUSTIFY)."""

    instance_metrics: list[MetricRow] = field(default_factory=list)
    reason_metrics: list[ReasonMetricRow] = field(default_factory=list)
    stance: str | None = None
    n_reasons: int = 0
    stopped: str | None = None
    summary: str = ""
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Rows for the method's own tables (``Method.migrations``): table name → rows of
    column → value; the store fills in ``run_id`` and ``instance_id``."""


@dataclass(frozen=True)
class SuiteContext:
    """What a suite may use while it records and scores: the run and the similarity model."""

    run_id: str
    config: RunConfig
    similarity: SimilarityModel


class InstancePlan(Protocol):
    """One instance's work in one suite."""

    def start(self) -> Sequence[Task]:
        """The tasks needed before any answer."""
        ...

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        """The follow-up tasks ``reply`` (the answer to ``task``) calls for, and what was read
        from it on the way (handed to :meth:`Suite.record`, so nothing is parsed twice)."""
        ...

    def planned(self) -> dict[str, int] | None:
        """Generations per stage this instance needs, once known (None: not yet).

        A plan may also define ``open_stages() -> Collection[str]``: while ``planned()`` is
        None, the stages it may still ask more of (the others' counts are final: progress
        shows their totals as exact); without it every stage of its suite counts as open."""
        ...


def open_stages(plan: InstancePlan, stages: Collection[str]) -> frozenset[str]:
    """The stages of ``stages`` ``plan`` may still ask more generations of: none once its
    :meth:`~InstancePlan.planned` is known, else what its optional ``open_stages()`` says
    (all of them without one)."""
    if plan.planned() is not None:
        return frozenset()
    declared = getattr(plan, "open_stages", None)
    if callable(declared):
        return frozenset(declared()).intersection(stages)
    return frozenset(stages)


class Suite(Protocol):
    """An evaluation suite: its stages, its plan per instance, its records and results."""

    @property
    def name(self) -> str:
        """The id a run names it by."""
        ...

    @property
    def stages(self) -> tuple[str, ...]:
        """The stage ids its generations are stored under, in order (unique across suites)."""
        ...

    @property
    def titles(self) -> dict[str, str]:
        """A short title of each stage, for progress bars."""
        ...

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        """The stages a run with ``config`` uses (a suite may let the user leave some out)."""
        ...

    def plan(self, instance: InstanceRecord, config: RunConfig) -> InstancePlan:
        """The work of one instance."""
        ...

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        """A finished generation parsed and scored, ready to store."""
        ...

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        """An instance's results from all its answers in this suite."""
        ...


def unparsed_record(
    context: SuiteContext,
    instance: InstanceRecord,
    task: Task,
    seed: int,
    generation: Generation,
    *,
    decision: str,
    decision_source: str,
    diagnostics: Sequence[tuple[str, str]] = (),
) -> GenerationRecord:
    """A generation stored with its ``decision`` and no decision span or reasons (a forced
    label, a rationale's answer); its confidence is the probability of its tokens."""
    return GenerationRecord(
        run_id=context.run_id,
        instance_id=instance.instance_id,
        stage=task.stage,
        sub_index=task.sub_index,
        test=task.test,
        seed=seed,
        prompt_text=generation.prompt_text,
        prompt_tokens=generation.prompt_token_count,
        output_text=generation.text,
        finish_reason=generation.finish_reason,
        decision=decision,
        decision_source=decision_source,
        decision_sentence=None,
        decision_start=None,
        decision_end=None,
        decision_confidence=math.exp(math.fsum(t.logprob for t in generation.tokens)),
        seconds=generation.seconds,
        tokens=list(generation.tokens),
        diagnostics=list(diagnostics),
    )
