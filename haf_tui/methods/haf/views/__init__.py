"""HAF's views: its six metrics (and C(JUSTIFY)) with their definitions, its metric panels
(drawn by :mod:`haf_tui.methods.haf.views.panels`) and the explorer's list columns."""

from __future__ import annotations

from typing import Final

from haf_tui.methods.declare import ListColumn, PanelSpec
from haf_tui.methods.haf.views.metrics import HAF_METRICS, JUSTIFY_CONFIDENCE
from haf_tui.methods.haf.views.panels import (
    figure2_bands,
    figure2_panel,
    stances_panel,
    table1_panel,
    table2_panel,
    table4_panel,
)

SIX: Final = tuple(m.name for m in HAF_METRICS)
"""The six metrics' stored names: the legend of every HAF panel."""

HAF_PANELS: Final[tuple[PanelSpec, ...]] = (
    PanelSpec("table1", "Table 1", ("table1",), SIX, table1_panel, pooled=True, short="T1"),
    PanelSpec("table2", "Table 2", ("table2",), SIX, table2_panel, short="T2"),
    PanelSpec("table4", "Table 4", ("table4",), SIX, table4_panel, pooled=True, short="T4"),
    PanelSpec(
        "figure2", "Figure 2", ("figure2",), SIX, figure2_panel, load=figure2_bands, short="Fig 2"
    ),
    PanelSpec(
        "distributions",
        "Distributions",
        (),
        SIX,
        histograms=(*SIX, JUSTIFY_CONFIDENCE.name),
        short="Dist.",
    ),
    PanelSpec("stances", "Stances", ("stances", "unclear", "contradictions"), SIX, stances_panel),
)
"""HAF's panels of the metrics screen, in key order (Distributions: the generic histograms)."""

HAF_COLUMNS: Final[tuple[ListColumn, ...]] = (
    ListColumn("stance", "stance", width=9, digits=None),
    *(ListColumn(m.name, m.label, shown_at=2 if m.name == "sos" else None) for m in HAF_METRICS),
    ListColumn("n_reasons", "#r", shown_at=1, width=2, digits=2, aliases=("n", "reasons")),
    ListColumn("justify_confidence", "C", shown_at=None, key="confidence", aliases=("c", "conf")),
)
"""The explorer list's columns: the JUSTIFY stance, #r and SoS shown; the sort (and the
ranges) by SoS … RN, the number of reasons and JUSTIFY's confidence C (values the
``instances`` query gives each row)."""

__all__ = ["HAF_COLUMNS", "HAF_METRICS", "HAF_PANELS", "JUSTIFY_CONFIDENCE"]
