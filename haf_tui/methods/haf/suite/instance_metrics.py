"""The six HAF metrics of one instance from its stored generations (spec section 5).

All similarities the instance needs are gathered first and computed in one batch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from haf_tui.methods.haf.core import metrics
from haf_tui.methods.haf.settings import MetricWeights
from haf_tui.similarity import SimilarityModel
from haf_tui.vocabulary import nan_for_null

DEFAULT_WEIGHTS = MetricWeights()
ReasonMetricRow = tuple[str, int, int, str, float]
InstanceMetricRow = tuple[str, float, int]


@dataclass(frozen=True)
class StoredReason:
    """A reason's text and TokenSAR confidence."""

    text: str
    confidence: float


@dataclass
class StoredGeneration:
    """What the metrics need of one stored generation."""

    stage: str
    sub_index: int
    decision: str
    decision_confidence: float
    reasons: list[StoredReason] = field(default_factory=list)


def _defined(values: Sequence[float]) -> int:
    return sum(1 for v in values if not math.isnan(v))


class _Similarities:
    """Collects text pairs, then answers them from one batched call."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[str, str], float] = {}

    def want(self, a: str, b: str) -> None:
        self.pairs.setdefault((a, b), math.nan)

    def compute(self, model: SimilarityModel) -> None:
        keys = list(self.pairs)
        for key, value in zip(keys, model.similarities(keys), strict=True):
            self.pairs[key] = value

    def matrix(self, rows: Sequence[str], cols: Sequence[str]) -> list[list[float]]:
        return [[self.pairs[(r, c)] for c in cols] for r in rows]


def compute_instance_metrics(
    input_text: str,
    generations: Sequence[StoredGeneration],
    similarity: SimilarityModel,
    weights: MetricWeights = DEFAULT_WEIGHTS,
) -> tuple[list[ReasonMetricRow], list[InstanceMetricRow]]:
    """Reason-level and instance-level metric rows for one instance (NaN: undefined)."""
    by_stage = {(g.stage, g.sub_index): g for g in generations}
    justify = by_stage[("justify", -1)]
    stance = justify.decision
    originals = [r.text for r in justify.reasons]
    conf = [nan_for_null(r.confidence) for r in justify.reasons]
    sims = _Similarities()
    for i, reason in enumerate(originals):
        sims.want(reason, input_text)
        for other in originals[i + 1 :]:
            sims.want(reason, other)
    for g in generations:
        if g.stage != "justify":
            for new in g.reasons:
                for original in originals:
                    sims.want(new.text, original)
    sims.compute(similarity)

    reason_rows: list[ReasonMetricRow] = []
    instance_rows: list[InstanceMetricRow] = [
        (f"decision_confidence_{g.stage}", nan_for_null(g.decision_confidence), 1)
        for g in generations
        if g.stage in ("justify", "internal", "external")
    ]
    n = len(originals)
    input_sims = [sims.pairs[(r, input_text)] for r in originals]
    sos_terms = metrics.strength_of_support_terms(conf, input_sims, weights.sos_confidence)
    reason_rows += [("justify", -1, j, "sos", v) for j, v in enumerate(sos_terms)]
    instance_rows.append(
        (
            "sos",
            metrics.strength_of_support(conf, input_sims, weights.sos_confidence),
            _defined(sos_terms),
        )
    )
    pair_matrix = [
        [
            1.0 if i == j else sims.pairs.get((a, b), sims.pairs.get((b, a), math.nan))
            for j, b in enumerate(originals)
        ]
        for i, a in enumerate(originals)
    ]
    instance_rows.append(("dis", metrics.diversity_of_support(conf, pair_matrix), n))
    instance_rows.append(("dis_dpp", metrics.diversity_dpp(conf, pair_matrix), n))

    for stage, name in (("internal", "uii"), ("external", "uei")):
        reliance_generation = by_stage.get((stage, -1))
        if reliance_generation is None:
            continue
        new_reasons = reliance_generation.reasons
        new_conf = [nan_for_null(r.confidence) for r in new_reasons]
        matrix = sims.matrix([r.text for r in new_reasons], originals)
        terms = metrics.reliance_terms(new_conf, matrix, conf, weights.reliance_confidence)
        reason_rows += [(stage, -1, k, name, v) for k, v in enumerate(terms)]
        instance_rows.append(
            (
                name,
                metrics.reliance(new_conf, matrix, conf, weights.reliance_confidence),
                _defined(terms),
            )
        )
        instance_rows.append(
            (f"delta_pe_{stage}", metrics.delta_predictive_entropy(new_conf, conf), len(new_conf))
        )

    reason_rows += _stance_rows(stance, by_stage, originals, conf, sims, weights, instance_rows)
    return reason_rows, instance_rows


def _stance_rows(
    stance: str,
    by_stage: dict[tuple[str, int], StoredGeneration],
    originals: Sequence[str],
    conf: Sequence[float],
    sims: _Similarities,
    weights: MetricWeights,
    instance_rows: list[InstanceMetricRow],
) -> list[ReasonMetricRow]:
    """RS_j (toxic/maybe) or RN_j (non-toxic) with C(Y_j), S/N(Y_j) and I_S/I_N per reason."""
    necessity = stance == "non-toxic"
    score_name, info_name = ("rn", "i_n") if necessity else ("rs", "i_s")
    table = metrics.NECESSITY_WEIGHTS if necessity else metrics.SUFFICIENCY_WEIGHTS
    rows: list[ReasonMetricRow] = []
    scores: list[float] = []
    infos: list[float] = []
    c_ys: list[float] = []
    for j in range(len(originals)):
        sub = by_stage.get(("individual", j))
        if sub is None:
            continue
        new_conf = [nan_for_null(r.confidence) for r in sub.reasons]
        new_texts = [r.text for r in sub.reasons]
        c_y = nan_for_null(sub.decision_confidence)
        w = weights.reliance_confidence
        if necessity:
            to_left_out = [sims.pairs[(t, originals[j])] for t in new_texts]
            info = metrics.informativeness_necessity(new_conf, to_left_out, conf[j], w)
            score = metrics.reason_necessity(
                sub.decision, c_y, new_conf, to_left_out, conf[j], w_conf=w
            )
        else:
            others = [k for k in range(len(originals)) if k != j]
            matrix = sims.matrix(new_texts, [originals[k] for k in others])
            other_conf = [conf[k] for k in others]
            info = metrics.informativeness_sufficiency(new_conf, matrix, other_conf, w)
            score = metrics.reason_sufficiency(
                sub.decision, c_y, new_conf, matrix, other_conf, w_conf=w
            )
        rows += [
            ("justify", -1, j, score_name, score),
            ("justify", -1, j, info_name, info),
            ("justify", -1, j, "c_y", c_y),
            ("justify", -1, j, "decision_weight", table[sub.decision]),
        ]
        scores.append(score)
        infos.append(info)
        c_ys.append(c_y)
    if scores:
        for name, values in ((score_name, scores), (info_name, infos), ("c_y", c_ys)):
            defined = [v for v in values if not math.isnan(v)]
            mean = sum(defined) / len(defined) if defined else math.nan
            instance_rows.append((name, mean, len(defined)))
    return rows
