"""Rationale metrics (``docs/methods/rationales.md``): pure, no I/O, every worked example of §8
a test.

Masks are 0/1 sequences over an instance's word tokens; soft rationales and scores are float
sequences of the same length. ``None`` is an undefined value (counted by the reports, never
averaged).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

# ---------------------------------------------------------------- ground truth (§5)


def soft_truth(masks: Sequence[Sequence[int]]) -> list[float]:
    """SOFT: the share of the k annotator masks that mark each token."""
    if not masks:
        raise ValueError("no annotator masks")
    n = len(masks[0])
    if any(len(mask) != n for mask in masks):
        raise ValueError("annotator masks of different lengths")
    return [sum(mask[i] for mask in masks) / len(masks) for i in range(n)]


def hard_truth(masks: Sequence[Sequence[int]]) -> list[int]:
    """HARD: the tokens at least half the annotators mark (s_i ≥ 0.5)."""
    return [1 if share >= 0.5 else 0 for share in soft_truth(masks)]


def union_truth(masks: Sequence[Sequence[int]]) -> list[int]:
    """UNION: the tokens any annotator marks (HateXplain's own ERASER gold)."""
    return [1 if share > 0 else 0 for share in soft_truth(masks)]


def random_mask(n: int, k: int, seed: int) -> list[int]:
    """RANDOM: ``k`` distinct tokens of ``n``, drawn with ``seed``."""
    chosen = set(random.Random(seed).sample(range(n), min(k, n)))
    return [1 if i in chosen else 0 for i in range(n)]


# ---------------------------------------------------------------- plausibility (§6.1)


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1."""

    precision: float
    recall: float
    f1: float


def _f1(precision: float, recall: float) -> float:
    return 0.0 if precision == 0 or recall == 0 else 2 * precision * recall / (precision + recall)


def true_positives(pred: Sequence[int], gold: Sequence[int]) -> int:
    """|R̂ ∩ R|: the tokens both masks mark."""
    _same_length(pred, gold)
    return sum(1 for p, g in zip(pred, gold, strict=True) if p and g)


def token_prf(pred: Sequence[int], gold: Sequence[int]) -> PRF:
    """Token precision, recall and F1 of one instance (P = 0 for an empty prediction, Rc = 0
    for an empty gold)."""
    hit = true_positives(pred, gold)
    n_pred, n_gold = sum(1 for p in pred if p), sum(1 for g in gold if g)
    precision = hit / n_pred if n_pred else 0.0
    recall = hit / n_gold if n_gold else 0.0
    return PRF(precision, recall, _f1(precision, recall))


def token_f1(pred: Sequence[int], gold: Sequence[int]) -> float:
    """Token-F1 of one instance (P1 Eq. 16–17; P2's alignment F1)."""
    return token_prf(pred, gold).f1


def micro_token_f1(preds: Sequence[Sequence[int]], golds: Sequence[Sequence[int]]) -> float:
    """Token-F1 over every token of every instance at once."""
    hit = n_pred = n_gold = 0
    for pred, gold in zip(preds, golds, strict=True):
        hit += true_positives(pred, gold)
        n_pred += sum(1 for p in pred if p)
        n_gold += sum(1 for g in gold if g)
    return _f1(hit / n_pred if n_pred else 0.0, hit / n_gold if n_gold else 0.0)


def spans(mask: Sequence[int]) -> list[tuple[int, int]]:
    """The maximal runs of 1s as (start, end) with the end exclusive."""
    found: list[tuple[int, int]] = []
    start = None
    for i, value in enumerate([*mask, 0]):
        if value and start is None:
            start = i
        elif not value and start is not None:
            found.append((start, i))
            start = None
    return found


def _span_iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    return inter / (max(a[1], b[1]) - min(a[0], b[0])) if inter else 0.0


def span_match(
    pred: Sequence[int],
    gold: Sequence[int],
    threshold: float = 0.5,
    pred_spans: Literal["runs", "single_token"] = "runs",
) -> tuple[float | None, float | None]:
    """One instance's part of IoU-F1 (ERASER's partial match): a predicted span matches when
    its best IoU with a gold span reaches ``threshold``; P = TP / #predicted spans (None
    without one), Rc = TP / #gold spans (None without one)."""
    _same_length(pred, gold)
    predicted = spans(pred)
    if pred_spans == "single_token":
        predicted = [(i, i + 1) for i, value in enumerate(pred) if value]
    gold_spans = spans(gold)
    matched = sum(
        1 for p in predicted if max((_span_iou(p, g) for g in gold_spans), default=0.0)
        >= threshold
    )  # fmt: skip
    return (
        matched / len(predicted) if predicted else None,
        matched / len(gold_spans) if gold_spans else None,
    )


def iou_f1(
    preds: Sequence[Sequence[int]],
    golds: Sequence[Sequence[int]],
    threshold: float = 0.5,
    pred_spans: Literal["runs", "single_token"] = "runs",
) -> PRF:
    """IoU-F1 over a dataset: macro P over instances with a predicted span, macro Rc over
    instances with a gold span (:func:`span_match`), F1 of the two means."""
    parts = [
        span_match(pred, gold, threshold, pred_spans)
        for pred, gold in zip(preds, golds, strict=True)
    ]
    precisions = [p for p, _ in parts if p is not None]
    recalls = [r for _, r in parts if r is not None]
    precision = sum(precisions) / len(precisions) if precisions else 0.0
    recall = sum(recalls) / len(recalls) if recalls else 0.0
    return PRF(precision, recall, _f1(precision, recall))


def auprc(truth: Sequence[float], scores: Sequence[float]) -> float | None:
    """Area under the precision-recall curve of one instance (ERASER's; binary or soft
    truth): for each distinct score t, descending, TP(t) = Σ truth of the tokens scored ≥ t;
    (recall 0, precision 1) first; trapezoids over recall. None when the truth sums to 0."""
    _same_length(truth, scores)
    total = math.fsum(truth)
    if total <= 0:
        return None
    points = [(0.0, 1.0)]
    for t in sorted(set(scores), reverse=True):
        chosen = [w for w, c in zip(truth, scores, strict=True) if c >= t]
        tp = math.fsum(chosen)
        points.append((tp / total, tp / len(chosen)))
    return math.fsum((r1 - r0) * (p0 + p1) / 2 for (r0, p0), (r1, p1) in pairwise(points))


# ---------------------------------------------------------------- faithfulness (§4, §6.2)


def log_odds(p_predicted: float) -> float:
    """L = lp(ŷ) − lp(ȳ) for two labels whose probabilities sum to 1."""
    return math.log(p_predicted) - math.log1p(-p_predicted)


def occlusion_scores(p_full: float, p_without: Sequence[float]) -> list[float]:
    """a_i = L(x) − L(x without token i), with p the probability of ŷ (fixed on the full
    text) before and after removing each token (§4.2)."""
    full = log_odds(p_full)
    return [full - log_odds(p) for p in p_without]


def top_k(scores: Sequence[float], k: int) -> list[int]:
    """A mask of the ``k`` top-scored tokens, ties to the earlier token (sort by (−a_i, i))."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
    chosen = set(order)
    return [1 if i in chosen else 0 for i in range(len(scores))]


def comprehensiveness(p_full: float, p_without: float) -> float:
    """comp = p(ŷ | x) − p(ŷ | x without R) (P1 Eq. 18; higher is more faithful)."""
    return p_full - p_without


def sufficiency(p_full: float, p_only: float) -> float:
    """suff = p(ŷ | x) − p(ŷ | only R) (P1 Eq. 19; lower is better, may be < 0)."""
    return p_full - p_only


def flip(predicted_full: str, predicted_without: str) -> int:
    """1 when the prediction without R differs from ŷ (P2 §4.3)."""
    return int(predicted_full != predicted_without)


def flip_rate(flips: Sequence[int]) -> float | None:
    """100 · mean flip (None without instances)."""
    return 100 * sum(flips) / len(flips) if flips else None


# ---------------------------------------------------------------- complexity (§6.3)


def _shares(scores: Sequence[float]) -> list[float] | None:
    values = [abs(v) for v in scores]
    total = math.fsum(values)
    return None if total <= 0 else [v / total for v in values]


def entropy(scores: Sequence[float]) -> float | None:
    """H = −Σ q ln q over q_i = |v_i| / Σ|v| (None for all-zero scores)."""
    shares = _shares(scores)
    return None if shares is None else -math.fsum(q * math.log(q) for q in shares if q > 0)


def entropy_norm(scores: Sequence[float]) -> float | None:
    """H / ln n (n ≥ 2; None otherwise or for all-zero scores)."""
    value = entropy(scores)
    return None if value is None or len(scores) < 2 else value / math.log(len(scores))


def gini(scores: Sequence[float]) -> float | None:
    """G = Σ_i (2i − n − 1)·v_(i) / (n·Σv), v = |scores| ascending, i from 1 (None for
    all-zero scores): 0 uniform, (n−1)/n one-hot."""
    values = sorted(abs(v) for v in scores)
    total, n = math.fsum(values), len(values)
    if total <= 0:
        return None
    return math.fsum((2 * i - n - 1) * v for i, v in enumerate(values, start=1)) / (n * total)


def cpx_ratio(mask: Sequence[int]) -> float:
    """|R̂| / n (P1 Eq. 20)."""
    return sum(1 for v in mask if v) / len(mask) if mask else 0.0


def spr_ratio(mask: Sequence[int]) -> float:
    """1 − |R̂| / n (P1 Eq. 21)."""
    return 1.0 - cpx_ratio(mask) if mask else 0.0


# ---------------------------------------------------------------- agreement (§6.4)


def token_iou(a: Sequence[int], b: Sequence[int]) -> float | None:
    """|A∩B| / |A∪B| (None when both are empty)."""
    _same_length(a, b)
    union = sum(1 for x, y in zip(a, b, strict=True) if x or y)
    inter = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    return inter / union if union else None


def annotator_iou(masks: Sequence[Sequence[int]]) -> float | None:
    """Mean token IoU over the pairs of annotator masks (pairs both empty left out)."""
    values = [
        value
        for i in range(len(masks))
        for j in range(i + 1, len(masks))
        if (value := token_iou(masks[i], masks[j])) is not None
    ]
    return sum(values) / len(values) if values else None


def _same_length(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(f"masks of different lengths: {len(a)} and {len(b)}")


def half_width_95(values: Sequence[float]) -> float:
    """The half-width of the normal 95% interval of the mean of ``values``: 1.96 · sd / √n
    with the sample standard deviation (inf below two values)."""
    n = len(values)
    if n < 2:
        return math.inf
    mean = math.fsum(values) / n
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return 1.96 * math.sqrt(variance / n)
