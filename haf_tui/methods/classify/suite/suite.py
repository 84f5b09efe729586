"""The classify suite: teacher-forced label scores p(y | x) of every instance (no sampling).

Four generations per instance (stage ``classify``, one per spelling, sub-index = its place
in :data:`~haf_tui.methods.classify.core.labels.SPELLINGS`), each the forced spelling with its
tokens' raw log-probabilities; the instance metrics ``classify_p_toxic``,
``classify_label_mass`` and ``classify_toxic`` (ŷ: 1 toxic, 0 non-toxic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.methods.base import (
    Answer,
    Reply,
    SuiteContext,
    SuiteOutcome,
    Task,
    unparsed_record,
)
from haf_tui.methods.classify.core.labels import SPELLINGS, classify_messages, label_scores
from haf_tui.store.records import GenerationRecord, InstanceRecord

STAGE = "classify"


class ClassifyPlan:
    """All four spellings at once; nothing follows."""

    def __init__(self, text: str):
        self.text = text

    def start(self) -> Sequence[Task]:
        """One forced reply per spelling."""
        messages = classify_messages(self.text)
        return [
            Task(STAGE, index, None, messages, forced=spelling)
            for index, (spelling, _) in enumerate(SPELLINGS)
        ]

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        """No follow-ups."""
        return [], None

    def planned(self) -> dict[str, int]:
        """One generation per spelling."""
        return {STAGE: len(SPELLINGS)}


class ClassifySuite:
    """Label scores p(y | x), ŷ and the label mass (``docs/methods/classify.md#2-label-scores``)."""

    name = "classify"
    stages: tuple[str, ...] = (STAGE,)
    titles: ClassVar[dict[str, str]] = {STAGE: "classify"}

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        """Its one stage."""
        return self.stages

    def plan(self, instance: InstanceRecord, config: RunConfig) -> ClassifyPlan:
        """The four spellings."""
        return ClassifyPlan(instance.text)

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        """The forced spelling, its label as the decision, its tokens' logprobs."""
        label = SPELLINGS[task.sub_index][1]
        return unparsed_record(
            context, instance, task, seed, generation, decision=label, decision_source="forced"
        )

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        """p(toxic | x), the label mass and ŷ."""
        scores = label_scores({SPELLINGS[a.sub_index][0]: a.logprob_sum for a in answers})
        return SuiteOutcome(
            instance_metrics=[
                ("classify_p_toxic", scores.p_toxic, 1),
                ("classify_label_mass", scores.label_mass, 1),
                ("classify_toxic", 1.0 if scores.predicted == "toxic" else 0.0, 1),
            ],
            summary=f"classified {scores.predicted} (p {scores.p_toxic:.2f})",
        )


CLASSIFY = ClassifySuite()
