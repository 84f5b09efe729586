"""HAF as a suite: JUSTIFY, UPHOLD-REASON and UPHOLD-STANCE answers parsed, their spans scored
(TokenSAR), and each instance's six metrics (spec section 5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.methods.base import Answer, SuiteContext, SuiteOutcome, Task
from haf_tui.methods.haf.core.parsing import JustifyParse, Reason, parse_followup, parse_justify
from haf_tui.methods.haf.settings import haf_settings
from haf_tui.methods.haf.suite.stages import HafPlan, JustifyOutcome
from haf_tui.store.records import GenerationRecord, InstanceRecord, ReasonRecord
from haf_tui.vocabulary import STAGES as STAGE_ORDER


@dataclass(frozen=True)
class ParsedOutput:
    """What the pipeline keeps of a parse, the same for every stage."""

    decision: str
    source: str | None
    decision_sentence: str
    decision_start: int
    decision_end: int
    reasons: tuple[Reason, ...]


class HafSuite:
    """Human-Aligned Faithfulness: the paper's stages and metrics."""

    name = "haf"
    stages: tuple[str, ...] = STAGE_ORDER
    titles: ClassVar[dict[str, str]] = {
        "justify": "JUSTIFY",
        "internal": "UPHOLD-R int",
        "external": "UPHOLD-R ext",
        "individual": "UPHOLD-STANCE",
    }

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        """The HAF stages the run asks for (JUSTIFY always)."""
        return haf_settings(config).stages

    def plan(self, instance: InstanceRecord, config: RunConfig) -> HafPlan:
        """JUSTIFY first, then the follow-up stages the run asks for."""
        settings = haf_settings(config)
        return HafPlan(
            instance.text,
            settings.stages,
            explicit=settings.prompting == "explicit",
            rules=settings.parse_rules,
        )

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        """A finished generation parsed (JUSTIFY's parse comes from the plan) and scored
        (every span's relevance in one batch)."""
        # (numpy, through the metrics: imported when a run scores, not when haf --help loads HAF)
        from haf_tui.methods.haf.suite.scoring import owned_piece, score_spans

        text, tokens = generation.text, generation.tokens
        parsed = _parsed(context, task.stage, text, carried)
        # A reason owns the tokens of one unbroken stretch of its text (all of it, unless the
        # reference rules cut the decision sentence out of its middle: then its longest
        # stretch, as the reference scores it); its span, tokens and confidence are those, and
        # its relevances are measured against its whole text (``owned_piece``).
        owned = [owned_piece(tokens, reason) for reason in parsed.reasons]
        spans = [(parsed.decision_start, parsed.decision_end)]
        spans += [(piece.start, piece.end) for piece in owned]
        within = [None, *((r.text, p.offset) for r, p in zip(parsed.reasons, owned, strict=True))]
        decision_score, *reason_scores = score_spans(
            text, tokens, spans, context.similarity, within
        )
        reasons = []
        diagnostics: list[tuple[str, str]] = []
        for index, (reason, piece, score) in enumerate(
            zip(parsed.reasons, owned, reason_scores, strict=True)
        ):
            if not score.token_indices:
                diagnostics.append(("reason without tokens", f"reason {index}"))
            reasons.append(
                ReasonRecord(
                    index,
                    reason.text,
                    piece.start,
                    piece.end,
                    score.token_indices[0] if score.token_indices else None,
                    len(score.token_indices),
                    score.nll,
                    score.relevance,
                    score.confidence,
                )
            )
        if not parsed.decision_sentence:
            diagnostics.append(("no decision sentence", ""))
        if generation.finish_reason == "length":
            diagnostics.append(("truncated", f"stopped at {len(tokens)} new tokens"))
        if task.stage == "justify" and not reasons:
            diagnostics.append(("no reasons", ""))
        return GenerationRecord(
            run_id=context.run_id,
            instance_id=instance.instance_id,
            stage=task.stage,
            sub_index=task.sub_index,
            test=task.test,
            seed=seed,
            prompt_text=generation.prompt_text,
            prompt_tokens=generation.prompt_token_count,
            output_text=text,
            finish_reason=generation.finish_reason,
            decision=parsed.decision,
            decision_source=parsed.source,
            decision_sentence=parsed.decision_sentence or None,
            decision_start=parsed.decision_start,
            decision_end=parsed.decision_end,
            decision_confidence=decision_score.confidence,
            seconds=generation.seconds,
            tokens=list(tokens),
            reasons=reasons,
            diagnostics=diagnostics,
        )

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        """The stance row and, unless JUSTIFY stopped the instance, its six metrics."""
        from haf_tui.methods.haf.suite.instance_metrics import (
            StoredGeneration,
            StoredReason,
            compute_instance_metrics,
        )

        justify = next(a for a in answers if a.stage == "justify")
        outcome = JustifyOutcome(justify.decision, tuple(t for t, _ in justify.reasons))  # type: ignore[arg-type]
        result = SuiteOutcome(
            stance=outcome.stance, n_reasons=len(outcome.reasons), stopped=outcome.stopped
        )
        if outcome.stopped:
            result.instance_metrics = [
                ("decision_confidence_justify", justify.decision_confidence, 1)
            ]
            result.summary = "stopped after JUSTIFY"
            return result
        generations = [
            StoredGeneration(
                a.stage,
                a.sub_index,
                a.decision,
                a.decision_confidence,
                [StoredReason(t, c) for t, c in a.reasons],
            )
            for a in answers
        ]
        result.reason_metrics, result.instance_metrics = compute_instance_metrics(
            instance.text, generations, context.similarity, haf_settings(context.config).weights
        )
        result.summary = f"{len(outcome.reasons)} reasons"
        return result


def _parsed(context: SuiteContext, stage: str, text: str, carried: object) -> ParsedOutput:
    """JUSTIFY's stance or a follow-up's decision Y, the decision span and the reasons."""
    rules = haf_settings(context.config).parse_rules
    if stage == "justify":
        justify = carried if isinstance(carried, JustifyParse) else parse_justify(text, rules=rules)
        return ParsedOutput(
            justify.stance,
            None,
            justify.decision_sentence,
            justify.decision_start,
            justify.decision_end,
            justify.reasons,
        )

    def similarity(a: str, b: str) -> float:
        return context.similarity.similarities([(a, b)])[0]

    followup = parse_followup(text, stage, rules=rules, similarity=similarity)
    return ParsedOutput(
        followup.decision,
        followup.decision_source,
        followup.decision_sentence,
        followup.decision_start,
        followup.decision_end,
        followup.reasons,
    )


HAF = HafSuite()
