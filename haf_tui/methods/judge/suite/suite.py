"""The judge suite (``docs/methods/judge.md``): an LLM rates each explanation on ACORN's eight
criteria. Instance metrics per criterion ``judge_<criterion>`` (the label's code),
``judge_<criterion>_mass``, ``judge_<criterion>_expected`` (ordinal and binary criteria),
``judge_<criterion>_p_<label>`` (the distribution, constrained mode) and
``judge_supports_matches`` (1 when Supports names the stance the explanation argued for);
free mode: ``judge_<criterion>_failed`` for a criterion its answer does not give."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.methods.base import (
    Answer,
    MetricRow,
    Reply,
    SuiteContext,
    SuiteOutcome,
    Task,
    unparsed_record,
)
from haf_tui.methods.judge.core.criteria import LETTERS
from haf_tui.methods.judge.core.parsing import parse_judgement
from haf_tui.methods.judge.core.scores import supports_matches
from haf_tui.methods.judge.suite.plan import SLOT, STAGE, JudgePlan
from haf_tui.store.records import GenerationRecord, InstanceRecord


class JudgeSuite:
    """ACORN's eight criteria, rated by the run's model."""

    name = "judge"
    stages: tuple[str, ...] = (STAGE,)
    titles: ClassVar[dict[str, str]] = {STAGE: "judge"}

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        """Its one stage."""
        return self.stages

    def plan(self, instance: InstanceRecord, config: RunConfig) -> JudgePlan:
        """The explanation's slots (or free answer)."""
        return JudgePlan(instance, config)

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        """A forced label (its criterion's slot in the sub-index) or the free answer."""
        if task.forced is not None:
            return unparsed_record(
                context, instance, task, seed, generation,
                decision=task.forced, decision_source="forced",
            )  # fmt: skip
        diagnostics = []
        if generation.finish_reason == "length":
            diagnostics.append(("truncated", f"stopped at {len(generation.tokens)} tokens"))
        return unparsed_record(
            context, instance, task, seed, generation,
            decision="judged", decision_source="greedy", diagnostics=diagnostics,
        )  # fmt: skip

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        """Each criterion's label and, constrained, its distribution, mass and expected score."""
        plan = JudgePlan(instance, context.config)
        if plan.item is None:
            return SuiteOutcome(summary="nothing to judge")
        plan.start()
        for answer in sorted(answers, key=lambda a: a.sub_index):
            task = Task(answer.stage, answer.sub_index, None, ())
            plan.advance(task, Reply(answer.text, answer.logprob_sum))
        metrics: list[MetricRow] = []
        supports: str | None = None
        if plan.settings.mode == "free":
            n_choices = len(plan.item.choices)
            parts = [
                part
                for slot, answer in sorted(plan.free_answers.items())
                for part in parse_judgement(
                    answer, plan.slots[slot : slot + 1] if plan.single else plan.slots, n_choices
                ).criteria
            ]
            for part in parts:
                if part.code is None:
                    metrics.append((f"judge_{part.criterion}_failed", 1.0, 1))
                else:
                    metrics.append((f"judge_{part.criterion}", float(part.code), 1))
            supports = next((p.label for p in parts if p.criterion == "supports"), None)
        else:
            for slot, (_, crit) in enumerate(plan.slots):
                if slot not in plan.chosen:
                    continue
                scores = plan.scores(slot)
                metrics.append((f"judge_{crit.id}", float(scores.code), 1))
                metrics.append((f"judge_{crit.id}_mass", scores.mass, 1))
                if scores.expected is not None:
                    metrics.append((f"judge_{crit.id}_expected", scores.expected, 1))
                metrics += [
                    (f"judge_{crit.id}_p_{label}", p, 1)
                    for label, p in zip(scores.labels, scores.probs, strict=True)
                ]
            supports = next(
                (plan.chosen.get(s) for s, (_, c) in enumerate(plan.slots) if c.id == "supports"),
                None,
            )
        stance = instance.extra.get("stance")
        matches = supports_matches(supports, str(stance)) if stance else None
        if matches is not None:
            metrics.append(("judge_supports_matches", 1.0 if matches else 0.0, 1))
        summary = judged_summary(supports, plan.item.choices, stance, matches)
        return SuiteOutcome(instance_metrics=metrics, summary=summary)


def judged_summary(
    supports: str | None, choices: Sequence[str], stance: object, matches: bool | None
) -> str:
    """One judged explanation in words (the monitor's log line): the answer its Supports
    rating says it argues for, and whether that is the stance it was written for."""
    if supports is None:
        said = "no Supports rating was read"
    elif supports in LETTERS and LETTERS.index(supports) < len(choices):
        said = f"the explanation argues for {supports}) {choices[LETTERS.index(supports)]}"
    else:
        said = "the explanation argues for none of the answers"
    if matches is None:
        return f"judged: {said}"
    return f"judged: {said}, {'' if matches else 'not '}the stance it was written for ({stance})"


JUDGE = JudgeSuite()
__all__ = ["JUDGE", "SLOT", "JudgeSuite"]
