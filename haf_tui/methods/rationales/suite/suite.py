"""The rationales suite (``docs/methods/rationales.md``): which words explain a toxicity decision —
asked of the model (prompting) and found by leaving each word out (occlusion) — how well
they match the annotators, whether removing them changes the decision, and how
concentrated they are. Its rationales go to the store's ``rationales`` table, one row per
rationale; the instance's own numbers to its metrics."""

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
from haf_tui.methods.classify.core.labels import SPELLINGS
from haf_tui.methods.rationales.core.attribution import ATTRIBUTIONS
from haf_tui.methods.rationales.core.prompts import toxicity_ratio
from haf_tui.methods.rationales.core.truth import NO_MASKS, Gold, gold_rationale
from haf_tui.methods.rationales.settings import (
    DEFAULT_RANDOM_TOLERANCE,
    NAME,
    rationale_settings,
)
from haf_tui.methods.rationales.suite.gradient_stage import run_attribute
from haf_tui.methods.rationales.suite.plan import (
    CLASSIFY,
    DEFAULT_RATIO,
    OCCLUSION,
    PERTURB,
    PROMPT,
    SPELLS,
    STAGES,
    PromptedAnswer,
    RationalePlan,
    replay,
)
from haf_tui.methods.rationales.suite.records import TABLE
from haf_tui.methods.rationales.suite.results import InstanceRationales
from haf_tui.store.records import GenerationRecord, InstanceRecord


class RationalesSuite:
    """Prompted and occlusion rationales with plausibility, faithfulness and complexity."""

    name = "rationales"
    stages: tuple[str, ...] = STAGES
    titles: ClassVar[dict[str, str]] = {
        CLASSIFY: "rationale ŷ",
        PROMPT: "rationale ask",
        OCCLUSION: "occlusion",
        PERTURB: "perturb",
    }

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        """All four stages."""
        return self.stages

    def settle(self, config: RunConfig, instances: Sequence[InstanceRecord]) -> RunConfig:
        """Top-Ratio's ratio, unless given: the mean share of words the annotators mark over
        the dataset's instances with a gold (§3.3), else P2's 0.2; and the RANDOM tolerance,
        unless given: :data:`DEFAULT_RANDOM_TOLERANCE` (a stored run without one asked every
        seed, and replays so); both stored with the run."""
        if rationale_settings(config).random_tolerance is None:
            config = config.with_settings(NAME, random_tolerance=DEFAULT_RANDOM_TOLERANCE)
        if rationale_settings(config).attributions is None:
            config = config.with_settings(NAME, attributions=ATTRIBUTIONS)
        if rationale_settings(config).ratio is not None:
            return config
        golds = []
        for instance in instances:
            found = gold_rationale(instance.text, instance.extra)
            if isinstance(found, Gold):
                golds.append(found.hard)
        ratio = toxicity_ratio(golds) or DEFAULT_RATIO
        return config.with_settings(NAME, ratio=ratio)

    def plan(self, instance: InstanceRecord, config: RunConfig) -> RationalePlan:
        """The instance's texts to score and prompts to ask."""
        return RationalePlan(instance, config, run_attribute(config))

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        """A forced spelling (its label the decision) or a prompted answer (the label shown
        the decision, what it names checked against the text)."""
        diagnostics: list[tuple[str, str]] = []
        if task.stage == PROMPT:
            if not isinstance(carried, PromptedAnswer):
                raise TypeError("a rationale prompt's answer comes with its parse")
            decision, source, parsed = carried.label, "greedy", carried.parsed
            if parsed.out_of_text:
                diagnostics.append(("out-of-text words", " ".join(parsed.out_of_text)))
            if not parsed.words:
                diagnostics.append(("empty rationale", ""))
            elif not parsed.matches_k:
                diagnostics.append(("not k words", f"{parsed.in_text} in the text"))
            if generation.finish_reason == "length":
                diagnostics.append(("truncated", f"stopped at {len(generation.tokens)} tokens"))
        else:
            decision, source = SPELLINGS[task.sub_index % SPELLS][1], "forced"
            if task.stage == CLASSIFY and task.sub_index == 0:
                problem = gold_rationale(instance.text, instance.extra)
                if isinstance(problem, str) and problem != NO_MASKS:
                    diagnostics.append(("no gold rationale", problem))
        return unparsed_record(
            context,
            instance,
            task,
            seed,
            generation,
            decision=decision,
            decision_source=source,
            diagnostics=diagnostics,
        )

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        """Every rationale's numbers and the instance's metrics, from its answers replayed."""
        plan = RationalePlan(instance, context.config, run_attribute(context.config))
        replay(
            plan,
            ((Task(a.stage, a.sub_index, None, ()), Reply(a.text, a.logprob_sum)) for a in answers),
        )
        built = InstanceRationales(plan, context.run_id, instance.instance_id)
        rows = built.rows()
        prompted = next((r for r in rows if r.source == "prompt_predicted"), None)
        summary = f"ŷ {built.predicted}"
        if prompted is not None:
            summary += f", {prompted.size} of {len(plan.tokens)} words named"
        return SuiteOutcome(
            instance_metrics=built.metrics(rows),
            rows={TABLE: [row.stored() for row in rows], **built.table_rows()},
            summary=summary,
        )


RATIONALES = RationalesSuite()

__all__ = ["OCCLUSION", "PERTURB", "RATIONALES", "RationalesSuite"]
