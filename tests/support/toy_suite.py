"""The one toy suite the tests register at runtime (as method ``toy``): one stage,
``toy_echo``, one prompt per instance, nothing after; each answer recorded unparsed, an
instance finished with its answer's length as the metric ``toy_length`` and a row of the
method's own table ``toy_scores`` (which only a test that registers its migration runs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.messages import ChatMessage
from haf_tui.methods.base import Answer, Reply, SuiteContext, SuiteOutcome, Task, unparsed_record
from haf_tui.store.records import GenerationRecord, InstanceRecord

TOY_STAGE = "toy_echo"


class ToyPlan:
    """One prompt per instance, nothing after."""

    def __init__(self, text: str) -> None:
        self.text = text

    def start(self) -> Sequence[Task]:
        return [Task(TOY_STAGE, -1, None, (ChatMessage("user", f"Repeat: {self.text}"),))]

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        return [], None

    def planned(self) -> dict[str, int]:
        return {TOY_STAGE: 1}


class ToySuite:
    """Stores each answer's length as a metric and in its method's own table."""

    name = "toy"
    stages = (TOY_STAGE,)
    titles: ClassVar[dict[str, str]] = {TOY_STAGE: "toy echo"}

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        return self.stages

    def plan(self, instance: InstanceRecord, config: RunConfig) -> ToyPlan:
        return ToyPlan(instance.text)

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        return unparsed_record(
            context, instance, task, seed, generation, decision="echoed", decision_source="toy"
        )

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        (answer,) = answers
        return SuiteOutcome(
            instance_metrics=[("toy_length", float(len(answer.text)), 1)],
            rows={"toy_scores": [{"score": float(len(answer.text))}]},
        )
