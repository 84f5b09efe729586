"""The judge's meta-evaluation tables (``docs/methods/judge.md#5-meta-evaluation``, [D §4.2–4.4]):
Krippendorff's α of the humans and with the LLM replacing a rater (Table 4.1), Spearman ρ against
the vote (Table 4.2), the LLM as an additional rater (§5.3, Fig. 4.3), MAE/NMAE/bias (Table 4.5) and
the change rates under prompt variants (Table 4.4). Pure: items in, rows out, computed with
:mod:`haf_tui.methods.judge.core.metrics`; no I/O, no store.

An item (:class:`MetaItem`) holds, per criterion id, the human codes (one per worker, None
where a worker gave none), the voted code (ACORN's majority vote: the gold label) and the
LLM's code (None: missing or a parse failure). Undefined statistics are None and are left
out of every Avg (§5.1: Avg = the unweighted mean of the defined criteria). Each row carries
``n``, the items its statistic used. Every Avg row is named :data:`AVG`; its ``n`` is the
number of items given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from haf_tui.methods.judge.core.criteria import CRITERIA, CRITERION_IDS, Level
from haf_tui.methods.judge.core.metrics import (
    Rating,
    agreement,
    bias,
    change_rate,
    extra_rater_curve,
    krippendorff_alpha,
    llm_alpha,
    mae,
    mean_defined,
    nmae,
    spearman,
)

AVG: Final = "avg"
"""The criterion (or variant) name of a mean row."""
DEFAULT_VARIANT: Final = "default"
MEAN_VARIANT: Final = "mean"
"""The variant name of Table 4.4's mean-over-variants rows."""
ITERATIONS: Final = 20
"""§5.2: the LLM's α is the mean over 20 iterations (also used for §5.3's draws)."""
RATER_SIZES: Final[tuple[int, ...]] = (4, 3, 2, 1)
"""§5.3: the numbers of human raters drawn per item."""
SCALED: Final = frozenset(c.id for c in CRITERIA if c.id not in ("supports", "factual"))
"""The criteria whose codes lie on a scale, so that an interval α means something: Overall,
New information and the binary criteria (where all levels coincide). Supports and Factual
(N/A −1) are nominal: no interval α *(decision)*."""


@dataclass(frozen=True)
class MetaItem:
    """One rated explanation: per criterion id the human codes (worker order), the voted
    code and the LLM's code. Criteria absent from a mapping count as no rating."""

    item_id: str
    human: Mapping[str, Sequence[int | None]]
    voted: Mapping[str, int | None]
    llm: Mapping[str, int | None] = field(default_factory=dict)

    @classmethod
    def from_extra(
        cls, item_id: str, extra: Mapping[str, Any], llm: Mapping[str, int | None] | None = None
    ) -> MetaItem:
        """An item from an imported ACORN instance's ``extra`` (``human_ratings``,
        ``voted``; see :mod:`haf_tui.methods.judge.datasets.acorn`) and the LLM's codes."""
        return cls(
            item_id,
            {c: list(v) for c, v in (extra.get("human_ratings") or {}).items()},
            dict(extra.get("voted") or {}),
            dict(llm or {}),
        )

    def humans(self, criterion_id: str) -> list[Rating]:
        """The human codes of a criterion (empty when none)."""
        return [None if v is None else float(v) for v in self.human.get(criterion_id, ())]


def _column(items: Sequence[MetaItem], which: str, criterion_id: str) -> list[Rating]:
    values = [getattr(item, which).get(criterion_id) for item in items]
    return [None if v is None else float(v) for v in values]


def _both(a: Sequence[object], b: Sequence[object]) -> int:
    return sum(1 for x, y in zip(a, b, strict=True) if x is not None and y is not None)


# ---------------------------------------------------------------- Table 4.1 (§5.2)


@dataclass(frozen=True)
class AlphaRow:
    """Table 4.1, one criterion: α of the humans and the mean α with the LLM replacing a
    random rater, at the criterion's ``level`` (§5.2 *(decision)*; None in the Avg row), and
    both at the interval level (None for Supports and Factual). ``n``: items with ≥ 2 human
    ratings; ``n_llm``: those of them with an LLM code (Avg row: the items given, and those
    with any LLM code)."""

    criterion: str
    level: Level | None
    n: int
    n_llm: int
    human: float | None
    llm: float | None
    human_interval: float | None = None
    llm_interval: float | None = None

    @property
    def delta(self) -> float | None:
        """LLM α − human α (< 0: the LLM deviates; ≈ 0 harmonious; > 0 majority-biased)."""
        return None if self.human is None or self.llm is None else self.llm - self.human


def alpha_table(
    items: Sequence[MetaItem], iterations: int = ITERATIONS, seed: int = 0
) -> list[AlphaRow]:
    """Table 4.1 (§5.2): per criterion Krippendorff's α of the human ratings and the LLM's α
    (in each of ``iterations`` seeded iterations one present human rating per item is
    replaced by the LLM code; the mean of the defined α), then the Avg row (the unweighted
    mean of the defined values of each column)."""
    rows: list[AlphaRow] = []
    for crit in CRITERIA:
        units = [item.humans(crit.id) for item in items]
        llm = _column(items, "llm", crit.id)
        rated = [sum(v is not None for v in unit) >= 2 for unit in units]
        interval = crit.id in SCALED
        rows.append(
            AlphaRow(
                crit.id,
                crit.level,
                sum(rated),
                sum(1 for r, label in zip(rated, llm, strict=True) if r and label is not None),
                krippendorff_alpha(units, crit.level),
                llm_alpha(units, llm, crit.level, iterations, seed),
                krippendorff_alpha(units, "interval") if interval else None,
                llm_alpha(units, llm, "interval", iterations, seed) if interval else None,
            )
        )
    rows.append(
        AlphaRow(
            AVG,
            None,
            len(items),
            sum(1 for item in items if any(v is not None for v in item.llm.values())),
            mean_defined([r.human for r in rows]),
            mean_defined([r.llm for r in rows]),
            mean_defined([r.human_interval for r in rows]),
            mean_defined([r.llm_interval for r in rows]),
        )
    )
    return rows


# ---------------------------------------------------------------- Table 4.2 (§5.1)


@dataclass(frozen=True)
class RhoRow:
    """Table 4.2, one criterion: Spearman ρ of the LLM codes against the voted codes over the
    ``n`` items with both; Supports also the exact ``agreement`` (§5.1 *(decision)*)."""

    criterion: str
    n: int
    rho: float | None
    agreement: float | None = None


def rho_table(items: Sequence[MetaItem]) -> list[RhoRow]:
    """Table 4.2 (§5.1): ρ per criterion (a constant vector: undefined), then Avg = the
    unweighted mean of the defined ρ of the eight."""
    rows: list[RhoRow] = []
    for crit_id in CRITERION_IDS:
        llm, voted = _column(items, "llm", crit_id), _column(items, "voted", crit_id)
        rows.append(
            RhoRow(
                crit_id,
                _both(llm, voted),
                spearman(voted, llm),
                agreement(voted, llm) if crit_id == "supports" else None,
            )
        )
    rows.append(RhoRow(AVG, len(items), mean_defined([r.rho for r in rows])))
    return rows


# ---------------------------------------------------------------- Fig. 4.3 (§5.3)


@dataclass(frozen=True)
class CurvePoint:
    """§5.3 for one criterion and ``raters`` = h: the mean ρ(gold, vote of h humans) and
    ρ(gold, vote of h humans + the LLM); ``n``: items with a gold label and a human rating;
    ``gains``: each draw's gain (None: undefined in that draw), whose spread says how much
    the mean gain depends on the draw."""

    criterion: str
    raters: int
    n: int
    humans: float | None
    with_llm: float | None
    gains: tuple[float | None, ...] = ()

    @property
    def gain(self) -> float | None:
        """ρ with the LLM − ρ without."""
        if self.humans is None or self.with_llm is None:
            return None
        return self.with_llm - self.humans

    @property
    def gain_range(self) -> tuple[float | None, float | None]:
        """The least and the greatest gain over the draws ((None, None): none defined)."""
        defined = [g for g in self.gains if g is not None]
        return (min(defined), max(defined)) if defined else (None, None)


def extra_rater_table(
    items: Sequence[MetaItem],
    sizes: Sequence[int] = RATER_SIZES,
    iterations: int = ITERATIONS,
    seed: int = 0,
) -> list[CurvePoint]:
    """The LLM as an additional rater (§5.3, Fig. 4.3): gold = the voted code (ACORN's
    5-rater vote); for each h of ``sizes`` (4, 3, 2, 1) and criterion, ρ(gold, vote of h
    random raters) against ρ(gold, vote of h + LLM), means over ``iterations`` seeded draws
    (:func:`haf_tui.methods.judge.core.metrics.extra_rater_curve`). The criteria's points come
    first (in criterion order, h in ``sizes`` order), then per h an Avg point: the unweighted
    means of the defined values (each draw's gain: the mean of the criteria's gains in that draw).
    Only items with a gold label and a human rating take part (an item without human
    ratings would make the "h + LLM" vote the LLM's label alone)."""
    points: list[CurvePoint] = []
    for crit_id in CRITERION_IDS:
        gold_all, llm_all = _column(items, "voted", crit_id), _column(items, "llm", crit_id)
        used = [
            k
            for k, item in enumerate(items)
            if gold_all[k] is not None and any(v is not None for v in item.humans(crit_id))
        ]
        units = [items[k].humans(crit_id) for k in used]
        gold = [gold_all[k] for k in used]
        llm = [llm_all[k] for k in used]
        for point in extra_rater_curve(units, llm, gold, sizes, iterations, seed):
            points.append(
                CurvePoint(
                    crit_id, point.raters, len(used), point.humans, point.with_llm, point.gains
                )
            )
    for h in sizes:
        at = [p for p in points if p.raters == h]
        points.append(
            CurvePoint(
                AVG,
                h,
                len(items),
                mean_defined([p.humans for p in at]),
                mean_defined([p.with_llm for p in at]),
                tuple(
                    mean_defined([p.gains[i] for p in at if i < len(p.gains)])
                    for i in range(iterations)
                ),
            )
        )
    return points


# ---------------------------------------------------------------- Table 4.5 (§5.4)


@dataclass(frozen=True)
class BiasRow:
    """Table 4.5, one criterion over the ``n`` items with an LLM and a voted code: MAE,
    NMAE (MAE / (max − min code)), the mean voted (human) and LLM codes and bias = mean LLM
    − mean human (for Unnecessary information, positive = stricter)."""

    criterion: str
    n: int
    mae: float | None
    nmae: float | None
    mean_human: float | None
    mean_llm: float | None
    bias: float | None


def bias_table(items: Sequence[MetaItem]) -> list[BiasRow]:
    """Table 4.5 (§5.4): one row per criterion but Supports (nominal: excluded), in criterion
    order; no Avg (the table has none)."""
    rows: list[BiasRow] = []
    for crit in CRITERIA:
        if crit.id == "supports":
            continue
        llm, voted = _column(items, "llm", crit.id), _column(items, "voted", crit.id)
        pairs = [(x, y) for x, y in zip(llm, voted, strict=True) if x is not None and y is not None]
        rows.append(
            BiasRow(
                crit.id,
                len(pairs),
                mae(llm, voted),
                nmae(llm, voted, crit.span()),
                mean_defined([y for _, y in pairs]) if pairs else None,
                mean_defined([x for x, _ in pairs]) if pairs else None,
                bias(llm, voted),
            )
        )
    return rows


# ---------------------------------------------------------------- Table 4.4 (§5.5)


@dataclass(frozen=True)
class ChangeRow:
    """Table 4.4, one cell: the % of the ``n`` items (those with a label under both) whose
    label for ``criterion`` under ``variant`` differs from Default. ``criterion`` :data:`AVG`
    = the mean over criteria; ``variant`` :data:`MEAN_VARIANT` = the mean over variants."""

    variant: str
    criterion: str
    n: int
    rate: float | None


Codes = Mapping[str, Mapping[str, int | None]]
"""Item id → criterion id → the LLM's code under one prompt variant."""


def change_table(variants: Mapping[str, Codes], default: str = DEFAULT_VARIANT) -> list[ChangeRow]:
    """Table 4.4 (§5.5): for each variant but ``default`` (in the mapping's order) and each
    criterion, the change rate against Default over the items both variants rated, then the
    variant's Avg over criteria; last the mean over variants per criterion and its Avg (the
    paper's bottom line). ``n`` of a mean row: the items of Default. KeyError without
    ``default``."""
    base = variants[default]
    rows: list[ChangeRow] = []
    names = [name for name in variants if name != default]
    for name in names:
        codes = variants[name]
        ids = [item_id for item_id in base if item_id in codes]
        per_variant: list[ChangeRow] = []
        for crit_id in CRITERION_IDS:
            before = [base[i].get(crit_id) for i in ids]
            after = [codes[i].get(crit_id) for i in ids]
            per_variant.append(
                ChangeRow(name, crit_id, _both(before, after), change_rate(before, after))
            )
        rows.extend(per_variant)
        rows.append(ChangeRow(name, AVG, len(ids), mean_defined([r.rate for r in per_variant])))
    means = [
        ChangeRow(
            MEAN_VARIANT,
            crit_id,
            len(base),
            mean_defined([r.rate for r in rows if r.criterion == crit_id]),
        )
        for crit_id in CRITERION_IDS
    ]
    rows.extend(means)
    rows.append(ChangeRow(MEAN_VARIANT, AVG, len(base), mean_defined([r.rate for r in means])))
    return rows
