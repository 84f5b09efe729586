"""The judge's views: one metric per criterion (its label's code) with its label mass, and
its panel (drawn by :mod:`haf_tui.methods.judge.views.panel`)."""

from __future__ import annotations

from typing import Final

from haf_tui.methods.declare import ListColumn, MetricSpec, PanelSpec
from haf_tui.methods.judge.core.criteria import CRITERIA, SHORT_NAMES
from haf_tui.methods.judge.views.panel import judge_meta, judge_panel

JUDGE_METRICS: Final[tuple[MetricSpec, ...]] = (
    *(
        MetricSpec(
            f"judge_{c.id}",
            SHORT_NAMES[c.id],
            f"the judge's label code for {c.display.lower()} "
            f"({', '.join(f'{label.code} {label.name}' for label in c.labels)})",
            value_range=f"{min(lb.code for lb in c.labels)}–{max(lb.code for lb in c.labels)}",
            better=None if c.id == "supports" else ("lower" if c.lower_is_better else "higher"),
        )
        for c in CRITERIA
    ),
    *(
        MetricSpec(
            f"judge_{c.id}_mass",
            f"{SHORT_NAMES[c.id]} mass",
            f"the probability of {c.display.lower()}'s labels together (below 0.5: the format, not "
            "the model, chose the label; constrained mode only)",
        )
        for c in CRITERIA
    ),
    MetricSpec(
        "judge_supports_matches",
        "supports = stance",
        "1 when the judge's Supports label matches the explanation's stance, else 0",
        value_range="0 or 1",
    ),
)

JUDGE_LEGEND: Final = tuple(f"judge_{c.id}" for c in CRITERIA if c.id != "supports")
"""The criteria with a better direction (Supports names an answer): the panel's legend."""

JUDGE_PANELS: Final[tuple[PanelSpec, ...]] = (
    PanelSpec(
        "judge",
        "Judge",
        ("judge", "judge-mass", "judge-vs-haf-summary"),
        JUDGE_LEGEND,
        judge_panel,
        also_reads=("judge-vs-haf",),
        load=judge_meta,
    ),
)

JUDGE_COLUMNS: Final[tuple[ListColumn, ...]] = (ListColumn("judge_overall", "overall"),)
