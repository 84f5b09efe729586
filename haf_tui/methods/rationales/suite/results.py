"""An instance's rationales and their numbers, from a plan that has every answer (spec
``docs/methods/rationales.md#6-metrics``): plausibility against the annotators, faithfulness by
removal, complexity, and agreement. Pure: the plan holds the scores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from haf_tui.methods.base import MetricRow
from haf_tui.methods.classify.core.labels import SPELLINGS, Label
from haf_tui.methods.rationales.core.attribution import skewness
from haf_tui.methods.rationales.core.metrics import (
    annotator_iou,
    auprc,
    cpx_ratio,
    entropy,
    entropy_norm,
    gini,
    span_match,
    spr_ratio,
    token_f1,
    true_positives,
)
from haf_tui.methods.rationales.core.words import mask_size
from haf_tui.methods.rationales.suite.plan import (
    EVERYTHING_WITHOUT,
    GRADIENT_SLOTS,
    HUMAN_ONLY,
    HUMAN_WITHOUT,
    OCCLUSION_ONLY,
    OCCLUSION_WITHOUT,
    PROMPT_GOLD,
    PROMPT_ONLY,
    PROMPT_WITHOUT,
    RANDOM_FIRST,
    RationalePlan,
)
from haf_tui.methods.rationales.suite.records import RationaleRecord


class InstanceRationales:
    """Builds an instance's rationale rows and metrics from its replayed plan."""

    def __init__(self, plan: RationalePlan, run_id: str, instance_id: str):
        self.plan = plan
        self.run_id = run_id
        self.instance_id = instance_id
        full = plan.full_scores()
        if full is None:
            raise ValueError("the full text is not scored")
        self.full = full
        self.predicted: Label = full.predicted
        gold = plan.gold
        self.hard = gold.hard if gold else None
        self.gold_mask = (
            (gold.union if plan.settings.gold == "union" else gold.hard) if gold else None
        )

    def _p(self, text: str) -> tuple[float | None, Label | None]:
        """p(ŷ | text) and the prediction on it (None: not scored)."""
        scores = self.plan.scores_of(text)
        if scores is None:
            return None, None
        return scores.p(self.predicted), scores.predicted

    def _row(self, source: str, mask: Sequence[int], **values: object) -> RationaleRecord:
        n = len(mask)
        row = RationaleRecord(
            self.run_id,
            self.instance_id,
            source,
            mask=list(mask),
            size=mask_size(mask),
            p_full=self.full.p(self.predicted),
            cpx_ratio=cpx_ratio(mask) if n else None,
            spr_ratio=spr_ratio(mask) if n else None,
        )
        scored = values.pop("soft_scores", None)
        complexity = scored if isinstance(scored, list) else [float(v) for v in mask]
        row = replace(
            row,
            cpx_entropy=entropy(complexity),
            cpx_entropy_norm=entropy_norm(complexity),
            spr_gini=gini(complexity),
        )
        return replace(row, **values)  # type: ignore[arg-type]

    def _faithful(
        self, row: RationaleRecord, without_slot: int, only_slot: int | None
    ) -> RationaleRecord:
        """comp, suff and flip of a row's mask (§6.2)."""
        plan = self.plan
        p_full = self.full.p(self.predicted)
        if any(row.mask):
            text = plan.slot_texts[without_slot]
            p_without, predicted_without = self._p(text)
            row = replace(row, text_without=text, p_without=p_without)
            if p_without is not None:
                row = replace(
                    row,
                    predicted_without=predicted_without,
                    comp=p_full - p_without,
                    flip=int(predicted_without != self.predicted),
                )
        else:  # nothing removed: nothing changes, without a call
            row = replace(
                row, text_without=plan.text, p_without=p_full, comp=0.0, flip=0,
                predicted_without=self.predicted,
            )  # fmt: skip
        if only_slot is not None:
            text = plan.slot_texts[only_slot]
            p_only, _ = self._p(text)
            row = replace(row, text_only=text, p_only=p_only)
            if p_only is not None:
                row = replace(row, suff=p_full - p_only)
        return row

    def _plausible(self, row: RationaleRecord, scores: Sequence[float] | None) -> RationaleRecord:
        """Token-F1 (against the run's gold and UNION), AUPRC (hard and soft truth) and the
        IoU-F1 parts of a row, when the instance has a non-empty gold (§6.1)."""
        gold = self.plan.gold
        if gold is None or self.gold_mask is None or not any(self.gold_mask):
            return row
        ranking = list(scores) if scores is not None else [float(v) for v in row.mask]
        spans: Literal["runs", "single_token"] = (
            "single_token" if self.plan.settings.spans == "tokens" else "runs"
        )
        precision, recall = span_match(row.mask, self.gold_mask, pred_spans=spans)
        return replace(
            row,
            token_f1=token_f1(row.mask, self.gold_mask),
            token_f1_union=token_f1(row.mask, gold.union),
            auprc=auprc([float(v) for v in self.gold_mask], ranking),
            soft_auprc=auprc(gold.soft, ranking),
            iou_precision=precision,
            iou_recall=recall,
            true_positives=true_positives(row.mask, self.gold_mask),
            gold_size=mask_size(self.gold_mask),
        )

    def rows(self) -> list[RationaleRecord]:
        """Every rationale of the instance with its numbers."""
        plan = self.plan
        n = len(plan.tokens)
        rows: list[RationaleRecord] = []
        for sub_index, answer in sorted(plan.prompt_answers.items()):
            shown = plan.label_shown(sub_index)
            base = self._row(
                "prompt_gold",
                answer.mask,
                label_shown=shown,
                k=plan.prompt_k,
                words=list(answer.words),
                out_of_text=list(answer.out_of_text),
            )
            if sub_index == PROMPT_GOLD:
                rows.append(self._plausible(base, None))
            if sub_index == plan.faithfulness_prompt():
                predicted = replace(base, source="prompt_predicted")
                rows.append(self._faithful(predicted, PROMPT_WITHOUT, PROMPT_ONLY))
        occlusion = plan.occlusion_scores()
        if occlusion is not None:
            k = plan.occlusion_k
            mask = plan.masks.get(OCCLUSION_WITHOUT, tuple(0 for _ in range(n)))
            row = self._row(
                "occlusion",
                mask,
                k=k,
                scores=occlusion,
                soft_scores=occlusion,
                n_nonpositive=sum(1 for a, m in zip(occlusion, mask, strict=True) if m and a <= 0),
            )
            if k is not None:
                row = self._faithful(row, OCCLUSION_WITHOUT, OCCLUSION_ONLY)
            rows.append(self._plausible(row, occlusion))
        rows += self._gradient_rows()
        everything = self._row("everything", [1] * n)
        rows.append(replace(self._faithful(everything, EVERYTHING_WITHOUT, None), suff=0.0))
        if self.hard is not None and any(self.hard):
            human = self._row("human", self.hard, k=mask_size(self.hard))
            rows.append(self._faithful(human, HUMAN_WITHOUT, HUMAN_ONLY))
            for seed in range(plan.random_asked):
                mask = plan.masks[RANDOM_FIRST + seed]
                row = self._row("random", mask, seed=seed, k=mask_size(self.hard))
                rows.append(self._plausible(self._faithful(row, RANDOM_FIRST + seed, None), None))
        return rows

    def _gradient_rows(self) -> list[RationaleRecord]:
        """One row per gradient method (§4.4): top-k by its word scores, perturbed and
        scored against the annotators like occlusion's."""
        plan = self.plan
        gradients, k = plan.gradients, plan.occlusion_k
        if gradients is None:
            return []
        rows = []
        for method in plan.gradient_methods:
            scores = gradients.scores[method]
            without_slot, only_slot = GRADIENT_SLOTS[method]
            mask = plan.masks.get(without_slot, tuple(0 for _ in scores))
            row = self._row(method, mask, k=k, scores=scores, soft_scores=scores)
            if k is not None:
                row = self._faithful(row, without_slot, only_slot)
            rows.append(self._plausible(row, scores))
        return rows

    def llama_logprob(self) -> float | None:
        """llama.cpp's log-probability of ŷ's first spelling after the prompt (§4.4: beside
        torch's T)."""
        scored = self.plan.scored.get(self.plan.text)
        index = next(i for i, (spelling, _) in enumerate(SPELLINGS) if spelling == self.predicted)
        return scored.logprobs.get(index) if scored else None

    def table_rows(self) -> dict[str, list[dict[str, object]]]:
        """The rationale_gradient stage's row of the instance (table ``rationales_gradient``):
        the word scores of each method, torch's T beside llama.cpp's log-probability, and the
        classification prompt's token ids the pass read (a later tokenizer can be checked
        against them)."""
        gradients = self.plan.gradients
        if gradients is None:
            return {}
        llama = self.llama_logprob()
        row: dict[str, object] = {
            "spelling": self.predicted,
            "words": list(self.plan.tokens),
            "torch_logprob": gradients.torch_logprob,
            "llama_logprob": llama,
            "gap": None if llama is None else gradients.torch_logprob - llama,
            "seconds": gradients.seconds,
            "prompt_ids": list(gradients.prompt_ids) or None,
        }
        for method in ("attention", "saliency", "input_x_gradient"):
            row[method] = gradients.scores.get(method)
        return {"rationales_gradient": [row]}

    def attribution_metrics(self, rows: Sequence[RationaleRecord]) -> list[MetricRow]:
        """Per attribution source: alignment F1 with the prompted rationale (§6.4) and the
        skewness of its word scores (P2 Figure 4); the quantisation gap T − llama.cpp's lp."""
        metrics: list[MetricRow] = []
        by_source = {row.source: row for row in rows if row.source != "random"}
        prompted = by_source.get("prompt_predicted")
        for method in self.plan.gradient_methods:
            row = by_source.get(method)
            if row is None:
                continue
            if self.plan.settings.strategy != "unbound" and prompted and row.k:
                metrics.append(
                    (f"rationale_alignment_f1_{method}", token_f1(prompted.mask, row.mask), 1)
                )
        for source in ("occlusion", *self.plan.gradient_methods):
            row = by_source.get(source)
            skew = skewness(row.scores) if row is not None and row.scores else None
            if skew is not None:
                metrics.append((f"rationale_skew_{source}", skew, 1))
        gradients, llama = self.plan.gradients, self.llama_logprob()
        if gradients is not None and llama is not None:
            metrics.append(("rationale_quant_gap", gradients.torch_logprob - llama, 1))
        return metrics

    def metrics(self, rows: Sequence[RationaleRecord]) -> list[MetricRow]:
        """The instance's metrics: p(ŷ | x), the label mass, ŷ, whether it has a non-empty gold
        (else plausibility is skipped), the RANDOM masks asked, the annotators' agreement and
        the prompted-vs-occlusion alignment F1 (§6.4)."""
        plan = self.plan
        metrics: list[MetricRow] = [
            ("rationale_p_predicted", self.full.p(self.predicted), 1),
            ("rationale_label_mass", self.full.label_mass, 1),
            ("rationale_toxic", 1.0 if self.predicted == "toxic" else 0.0, 1),
            ("rationale_has_gold", 1.0 if self.gold_mask and any(self.gold_mask) else 0.0, 1),
        ]
        if plan.has_random:  # how many RANDOM masks the instance asked (adaptive: ≤ the most)
            metrics.append(("rationale_random_seeds", float(plan.random_asked), 1))
        if plan.gold is not None:
            agreement = annotator_iou(plan.gold.masks)
            if agreement is not None:
                metrics.append(("rationale_annotator_iou", agreement, len(plan.gold.masks)))
        by_source = {row.source: row for row in rows if row.source != "random"}
        prompted, occluded = by_source.get("prompt_predicted"), by_source.get("occlusion")
        if plan.settings.strategy != "unbound" and prompted and occluded and occluded.k:
            metrics.append(("rationale_alignment_f1", token_f1(prompted.mask, occluded.mask), 1))
        return metrics + self.attribution_metrics(rows)
