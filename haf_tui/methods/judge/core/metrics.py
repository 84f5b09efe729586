"""Meta-evaluation statistics of the judge (``docs/methods/judge.md``): Krippendorff's α,
Spearman ρ, majority votes, the LLM as a replacing or additional rater, MAE/NMAE/bias and the
change rate. Pure, no I/O; every protocol that samples takes a seed.

Ratings are codes (§2); ``None`` is a missing rating or a parse failure, and ``None`` as a
result is an undefined statistic (reported, never averaged). Where the protocol samples,
iteration ``i`` draws with ``random.Random(seed + i)`` *(decision: the spec says "the
iteration's seed")*.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from haf_tui.methods.judge.core.criteria import Level

Rating = float | None
Units = Sequence[Sequence[Rating]]

# ---------------------------------------------------------------- Krippendorff's α (§5.2)


def coincidences(units: Units) -> tuple[tuple[float, ...], list[list[float]]]:
    """The sorted values and the coincidence matrix o_ck = Σ_u (ordered pairs of different
    raters in u with values (c, k)) / (m_u − 1), over units with ≥ 2 ratings."""
    counts: list[Counter[float]] = []
    for unit in units:
        rated = [float(v) for v in unit if v is not None]
        if len(rated) >= 2:
            counts.append(Counter(rated))
    values = tuple(sorted({v for count in counts for v in count}))
    index = {v: i for i, v in enumerate(values)}
    matrix = [[0.0] * len(values) for _ in values]
    for count in counts:
        m = sum(count.values())
        for c, n_c in count.items():
            for k, n_k in count.items():
                pairs = n_c * (n_c - 1) if c == k else n_c * n_k
                matrix[index[c]][index[k]] += pairs / (m - 1)
    return values, matrix


def _delta2(
    level: Level, values: Sequence[float], totals: Sequence[float], c: int, k: int
) -> float:
    if level == "nominal":
        return 0.0 if c == k else 1.0
    if level == "interval":
        return (values[c] - values[k]) ** 2
    low, high = min(c, k), max(c, k)
    return (math.fsum(totals[low : high + 1]) - (totals[c] + totals[k]) / 2) ** 2


def krippendorff_alpha(units: Units, level: Level = "nominal") -> float | None:
    """α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, units = one list of ratings per item
    (None: missing; items with < 2 ratings drop out). Nominal δ² = [c ≠ k], interval (c − k)²,
    ordinal (Σ_{g from c to k} n_g − (n_c + n_k)/2)². None when undefined: fewer than two
    pairable values or no variation at all (denominator 0)."""
    values, matrix = coincidences(units)
    totals = [math.fsum(row) for row in matrix]
    n = math.fsum(totals)
    if n <= 1:
        return None
    observed = expected = 0.0
    for c in range(len(values)):
        for k in range(len(values)):
            d2 = _delta2(level, values, totals, c, k)
            observed += matrix[c][k] * d2
            expected += totals[c] * totals[k] * d2
    if expected == 0:
        return None
    return 1 - (n - 1) * observed / expected


def with_llm(units: Units, positions: Sequence[int], llm: Sequence[Rating]) -> list[list[Rating]]:
    """The units with, in each, the rating at ``positions[i]`` (0-based) replaced by the LLM's
    label ``llm[i]`` (a missing LLM label leaves a missing rating *(decision)*)."""
    out: list[list[Rating]] = []
    for unit, position, label in zip(units, positions, llm, strict=True):
        replaced = list(unit)
        replaced[position] = label
        out.append(replaced)
    return out


def llm_alpha(
    units: Units,
    llm: Sequence[Rating],
    level: Level = "nominal",
    iterations: int = 20,
    seed: int = 0,
) -> float | None:
    """The LLM's α (§5.2): in each iteration replace, in every item, one human rating chosen
    uniformly at random among the present ones by the LLM label; the mean of the defined α
    (None when none is). A missing LLM label (parse failure) leaves a missing rating
    *(decision)*; items without a human rating stay as they are."""
    alphas: list[float] = []
    for i in range(iterations):
        rng = random.Random(seed + i)
        replaced: list[list[Rating]] = []
        for unit, label in zip(units, llm, strict=True):
            present = [j for j, v in enumerate(unit) if v is not None]
            row = list(unit)
            if present:
                row[rng.choice(present)] = label
            replaced.append(row)
        alpha = krippendorff_alpha(replaced, level)
        if alpha is not None:
            alphas.append(alpha)
    return mean_defined(alphas)


# ---------------------------------------------------------------- votes and ρ (§5.1, §5.3)


def majority_vote(ratings: Sequence[Rating], rng: random.Random | None = None) -> float | None:
    """The most frequent rating, ties broken uniformly at random with ``rng``
    (``random.Random(0)`` when None); None without ratings."""
    counts = Counter(float(v) for v in ratings if v is not None)
    if not counts:
        return None
    top = max(counts.values())
    tied = sorted(v for v, n in counts.items() if n == top)
    return tied[0] if len(tied) == 1 else (rng or random.Random(0)).choice(tied)


def _pairs(a: Sequence[Rating], b: Sequence[Rating]) -> list[tuple[float, float]]:
    if len(a) != len(b):
        raise ValueError(f"{len(a)} against {len(b)} ratings")
    return [
        (float(x), float(y)) for x, y in zip(a, b, strict=True) if x is not None and y is not None
    ]


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            ranks[i] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def pearson(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Pearson's r (None for fewer than two values or a constant vector)."""
    if len(a) != len(b) or len(a) < 2:
        return None
    mean_a, mean_b = math.fsum(a) / len(a), math.fsum(b) / len(b)
    da, db = [x - mean_a for x in a], [y - mean_b for y in b]
    sa, sb = math.fsum(x * x for x in da), math.fsum(y * y for y in db)
    if sa == 0 or sb == 0:
        return None
    return math.fsum(x * y for x, y in zip(da, db, strict=True)) / math.sqrt(sa * sb)


def spearman(a: Sequence[Rating], b: Sequence[Rating]) -> float | None:
    """Spearman's ρ over the pairs where both ratings exist: Pearson's r of average ranks.
    None when undefined (fewer than two pairs, a constant vector)."""
    pairs = _pairs(a, b)
    return pearson(average_ranks([x for x, _ in pairs]), average_ranks([y for _, y in pairs]))


def agreement(a: Sequence[Rating], b: Sequence[Rating]) -> float | None:
    """The share of pairs with equal ratings (Supports' exact agreement, §5.1)."""
    pairs = _pairs(a, b)
    return sum(1 for x, y in pairs if x == y) / len(pairs) if pairs else None


@dataclass(frozen=True)
class ExtraRaterPoint:
    """§5.3 for h raters: mean ρ(gold, vote of h) and mean ρ(gold, vote of h + LLM);
    ``gains``: per draw, ρ with the LLM − ρ without (None where either is undefined)."""

    raters: int
    humans: float | None
    with_llm: float | None
    gains: tuple[float | None, ...] = ()


def extra_rater_curve(
    units: Units,
    llm: Sequence[Rating],
    gold: Sequence[Rating],
    sizes: Sequence[int] = (4, 3, 2, 1),
    iterations: int = 20,
    seed: int = 0,
) -> tuple[ExtraRaterPoint, ...]:
    """The LLM as an additional rater (§5.3): for each h, in each iteration draw h of each
    item's present ratings (all of them when fewer *(decision)*), vote with and without the
    LLM label (a missing LLM label: the humans' vote), and correlate each vote with ``gold``
    (the 5-rater vote); the means over iterations (*(decision)*: 20, as for α), and each
    draw's gain (its spread: how far the mean gain can be trusted on few items)."""
    points: list[ExtraRaterPoint] = []
    for h in sizes:
        humans: list[float] = []
        mixed: list[float] = []
        gains: list[float | None] = []
        for i in range(iterations):
            rng = random.Random(seed + i)
            votes: list[Rating] = []
            votes_llm: list[Rating] = []
            for unit, label in zip(units, llm, strict=True):
                present = [float(v) for v in unit if v is not None]
                drawn = rng.sample(present, min(h, len(present)))
                vote = majority_vote(drawn, rng)
                votes.append(vote)
                votes_llm.append(vote if label is None else majority_vote([*drawn, label], rng))
            without, with_llm = spearman(gold, votes), spearman(gold, votes_llm)
            for rho, out in ((without, humans), (with_llm, mixed)):
                if rho is not None:
                    out.append(rho)
            gains.append(None if without is None or with_llm is None else with_llm - without)
        points.append(ExtraRaterPoint(h, mean_defined(humans), mean_defined(mixed), tuple(gains)))
    return tuple(points)


# ---------------------------------------------------------------- bias and change (§5.4–5.5)


def mean_defined(values: Sequence[float | None]) -> float | None:
    """The unweighted mean of the defined values (§5.1's Avg); None without any."""
    defined = [v for v in values if v is not None]
    return math.fsum(defined) / len(defined) if defined else None


def mae(llm: Sequence[Rating], human: Sequence[Rating]) -> float | None:
    """Mean |LLM code − voted code| over the items with both."""
    pairs = _pairs(llm, human)
    return math.fsum(abs(x - y) for x, y in pairs) / len(pairs) if pairs else None


def nmae(llm: Sequence[Rating], human: Sequence[Rating], span: float) -> float | None:
    """MAE / (max − min code): Overall 4, New information 3, Factual 2, binary 1
    (:meth:`Criterion.span`)."""
    error = mae(llm, human)
    return None if error is None else error / span


def bias(llm: Sequence[Rating], human: Sequence[Rating]) -> float | None:
    """Mean LLM code − mean human code over the items with both (positive: higher codes; for
    Unnecessary information, stricter)."""
    pairs = _pairs(llm, human)
    if not pairs:
        return None
    return math.fsum(x for x, _ in pairs) / len(pairs) - math.fsum(y for _, y in pairs) / len(pairs)


def change_rate(default: Sequence[object], variant: Sequence[object]) -> float | None:
    """The % of items whose label under a variant differs from Default (§5.5; items with a
    missing label under either are left out *(decision)*); None without items."""
    if len(default) != len(variant):
        raise ValueError(f"{len(default)} against {len(variant)} labels")
    pairs = [
        (d, v) for d, v in zip(default, variant, strict=True) if d is not None and v is not None
    ]
    return 100 * sum(1 for d, v in pairs if d != v) / len(pairs) if pairs else None
