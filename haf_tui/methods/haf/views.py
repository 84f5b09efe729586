"""HAF's views: its six metrics (and C(JUSTIFY)) with their definitions, its metric panels
and the explorer's list columns. Data only: the faces draw them."""

from __future__ import annotations

from typing import Final

from haf_tui.methods.declare import ListColumn, MetricSpec, PanelSpec

HAF_METRICS: Final[tuple[MetricSpec, ...]] = (
    MetricSpec(
        "sos",
        "SoS",
        "strength of support: mean over R of 0.8·C + 0.2·g(reason, text); "
        "undefined without reasons",
        undefined_when="undefined when an instance has no reasons",
    ),
    MetricSpec(
        "dis",
        "DiS",
        "diversity of R: Σ h(r_i, r_j)·C_j / (n(n−1)); undefined with fewer than 2 reasons",
        undefined_when="undefined with fewer than 2 reasons",
    ),
    MetricSpec(
        "uii",
        "UII",
        "new internal reasons UPHOLD-REASON adds: mean of 0.5·C + 0.5·div(reason, R); "
        "undefined without them",
        better="lower",
        undefined_when="undefined without internal reasons",
    ),
    MetricSpec(
        "uei",
        "UEI",
        "the same over the new external reasons; undefined without them",
        better="lower",
        undefined_when="undefined without external reasons",
    ),
    MetricSpec(
        "rs",
        "RS",
        "sufficiency of each reason alone (toxic / maybe stances): S(Y)·C(Y)·(1 − I_S), "
        "mean over R",
        undefined_when="defined only for toxic / maybe stances",
    ),
    MetricSpec(
        "rn",
        "RN",
        "necessity of each reason (non-toxic stance): N(Y)·C(Y)·I_N, mean over R",
        undefined_when="defined only for non-toxic stances",
    ),
)
"""HAF's six metrics, in the paper's order (spec ``HAF.md`` §5)."""

HAF_PANELS: Final[tuple[PanelSpec, ...]] = (
    PanelSpec("table1", "Table 1", ("table1",), tuple(m.name for m in HAF_METRICS), pooled=True),
    PanelSpec("table2", "Table 2", ("table2",)),
    PanelSpec("table4", "Table 4", ("table4",), ("rs", "rn"), pooled=True),
    PanelSpec("figure2", "Figure 2", ("figure2",), ("sos", "dis")),
    PanelSpec("distributions", "Distributions", (), tuple(m.name for m in HAF_METRICS)),
    PanelSpec("stances", "Stances", ("stances", "unclear", "contradictions")),
)
"""HAF's panels of the metrics screen, in key order."""

HAF_COLUMNS: Final[tuple[ListColumn, ...]] = (
    ListColumn("stance", "stance", width=9, digits=None),
    *(ListColumn(m.name, m.label, shown_at=2 if m.name == "sos" else None) for m in HAF_METRICS),
    ListColumn("n_reasons", "#r", shown_at=1, width=2, digits=2, aliases=("n", "reasons")),
    ListColumn("justify_confidence", "C", shown_at=None, key="confidence", aliases=("c", "conf")),
)
"""The explorer list's columns: the JUSTIFY stance, #r and SoS shown; the sort (and the
ranges) by SoS … RN, the number of reasons and JUSTIFY's confidence C (values the
``instances`` query gives each row)."""
