"""The toy method: its settings, suite, metric, report and panel, its own table, explorer view
(:mod:`.tui`) and dataset format (:mod:`.formats`), declared in one place."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.messages import ChatMessage
from haf_tui.methods.base import Answer, Reply, SuiteContext, SuiteOutcome, Task, unparsed_record
from haf_tui.methods.declare import ListColumn, Method, MetricSpec, PanelSpec
from haf_tui.reports.registry import RUN_KEYS, Report, select_columns
from haf_tui.store.method_tables import MethodMigration
from haf_tui.store.records import GenerationRecord, InstanceRecord

STAGE = "toy_word"


class ToySettings(BaseModel):
    """What the toy method asks for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    word: str = Field("toxic", description="the word a toxic text's answer should hold")
    max_new_tokens: int = Field(6, ge=1, le=32, description="cap of the one-word answer")


def toy_settings(config: RunConfig) -> ToySettings:
    """The toy settings of ``config``."""
    return config.settings_for("toy", ToySettings)


class ToyPlan:
    """One prompt per instance."""

    def __init__(self, text: str, settings: ToySettings) -> None:
        self.text, self.settings = text, settings

    def start(self) -> Sequence[Task]:
        """Ask for one word."""
        question = f"In one word, is this text toxic or harmless?\n\n{self.text}"
        messages = (ChatMessage("user", question),)
        return [
            Task(
                STAGE, -1, None, messages, greedy=True, max_new_tokens=self.settings.max_new_tokens
            )
        ]

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        """No follow-up."""
        return [], None

    def planned(self) -> dict[str, int] | None:
        """One answer."""
        return {STAGE: 1}


class ToySuite:
    """The toy suite."""

    name = "toy"
    stages = (STAGE,)
    titles: ClassVar[dict[str, str]] = {STAGE: "toy word"}
    table: ClassVar[str | None] = "toy_answers"
    """The method's own table its answers go to (None: none)."""

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        """Its one stage."""
        return self.stages

    def plan(self, instance: InstanceRecord, config: RunConfig) -> ToyPlan:
        """One prompt."""
        return ToyPlan(instance.text, toy_settings(config))

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        """The answer as it came."""
        word = toy_settings(context.config).word
        decision = "match" if word.lower() in generation.text.lower() else "other"
        return unparsed_record(
            context, instance, task, seed, generation, decision=decision, decision_source="toy"
        )

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        """toy_match: 1 when the answer holds the word; toy_logprob: the answer's log-prob."""
        (answer,) = answers
        matched = 1.0 if answer.decision == "match" else 0.0
        logprob = answer.logprob_sum if math.isfinite(answer.logprob_sum) else math.nan
        word = answer.text.strip()
        return SuiteOutcome(
            instance_metrics=[("toy_match", matched, 1), ("toy_logprob", logprob, 1)],
            summary=f"answered {word[:20]!r}",
            rows={self.table: [{"answer": word, "n_chars": len(word)}]} if self.table else {},
        )


METRICS = (
    MetricSpec("toy_match", "match", "1 when the one-word answer holds the settings' word"),
    MetricSpec(
        "toy_logprob",
        "logprob",
        "the sum of the answer's token log-probabilities",
        value_range="≤ 0",
        better=None,
    ),
)

REPORT = Report(
    "toy",
    "Toy — share of answers holding the word",
    "toy_summary",
    summary=True,
    shape=select_columns((*RUN_KEYS, ("n", "instances"), ("match_rate", "match rate"))),
)

METHOD: Method[ToySettings] = Method(
    name="toy",
    title="Toy",
    description="one word per text: does it hold the settings' word (a plug-in example)",
    suite=ToySuite(),
    settings=ToySettings,
    flag_prefix="toy",
    metrics=METRICS,
    reports=(REPORT,),
    summary_reports=("toy",),
    queries_dir=Path(__file__).parent / "queries",
    panels=(PanelSpec("toy", "Toy", ("toy",), ("toy_match",)),),
    list_columns=(ListColumn("toy_match", "match"),),
    migrations=(
        MethodMigration(
            1,
            "toy_answers: each instance's answer and its length",
            "CREATE TABLE toy_answers (run_id VARCHAR NOT NULL, instance_id VARCHAR NOT NULL, "
            "answer VARCHAR NOT NULL, n_chars INTEGER NOT NULL, PRIMARY KEY (run_id, instance_id))",
        ),
    ),
    workbench="toy_method.tui:EXPLORER",
    dataset_formats=("toy_method.formats:TOY_FORMAT",),
)
