"""HAF's metric panels as rich renderables (no Textual): Tables 1, 2 and 4, Figure 2 and the
stances, each a pure function of a :class:`~haf_tui.methods.declare.PanelInput`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from rich.console import Group, RenderableType
from rich.text import Text

from haf_tui.methods.declare import PanelInput
from haf_tui.methods.haf.views.metrics import HAF_METRICS
from haf_tui.reports import (
    INSTANCE_LABEL,
    POOLED_LABEL,
    ReportResult,
    chart_layout,
    charts,
    get_query,
)
from haf_tui.reports.panel_tables import (
    CHART_MIN_WIDTH,
    as_dicts,
    laid_out,
    report_rows,
    report_table,
    run_table,
)

if TYPE_CHECKING:
    from haf_tui.store.db import Store

POOLING_NOTES: Final = {
    POOLED_LABEL: "pooled (reference): mean over every reason of every instance "
    "(DiS: of instance values); n = values averaged",
    INSTANCE_LABEL: "instance mean: mean of the instances' values; "
    "n = instances the metric is defined on",
}
DEFAULT_BAND_EDGES: Final = (0.6, 0.8)
TERMS_APART: Final = (
    "each term averages its own n: an UNCLEAR decision has no C(Y) (nor score) yet an S/N(Y) "
    "and I_S/I_N, so score need not be the product of the terms' means"
)
"""Table 4's note when a row's terms average different numbers of values."""


def _pooling_caption(pooling: str) -> list[str]:
    rules = (POOLED_LABEL, INSTANCE_LABEL) if pooling == "both" else (pooling,)
    return [POOLING_NOTES[rule] for rule in rules]


def table1_panel(panel: PanelInput) -> RenderableType:
    """Table 1: SoS, DiS, UII, UEI, RS, RN per run with n, under the chosen pooling rule(s);
    a metric undefined for every instance of a run gets a line saying why."""
    result = panel.reports["table1"]
    runs, pooling = panel.runs, panel.pooling
    notes = _pooling_caption(pooling)
    instance_rows = report_rows(result, [r.run_id for r in runs], INSTANCE_LABEL)
    labels = {r.run_id: r.label for r in runs}
    for row in as_dicts(result.columns, instance_rows):
        for metric in HAF_METRICS:
            if row[f"{metric.label} n"] == 0:
                notes.append(
                    f"{metric.label} — for every instance of {labels[row['run']]}: "
                    f"{metric.undefined_when}"
                )
    title = f"{result.title} · pooling: {pooling}"
    return report_table(result, runs, width=panel.width, notes=notes, pooling=pooling, title=title)


def table2_panel(panel: PanelInput) -> RenderableType:
    """Table 2: % of instances whose internal / external decision is Y = NO, with n."""
    result = panel.reports["table2"]
    notes = ["n = instances with that stage's generation (UNCLEAR / MAYBE stay in it)"]
    for row in as_dicts(result.columns, report_rows(result, [r.run_id for r in panel.runs])):
        for stage in ("internal", "external"):
            if row[f"{stage} n"] == 0:
                notes.append(f"{stage} % NO — in {row['run']}: no {stage} generation stored")
    return report_table(result, panel.runs, width=panel.width, notes=notes)


def table4_panel(panel: PanelInput) -> RenderableType:
    """Table 4: RS (SUF) and RN (NEC) split into C(Y), S/N(Y) and I_S/I_N."""
    result = panel.reports["table4"]
    notes = _pooling_caption(panel.pooling)
    score_n = result.columns.index("score n")
    term_ns = [k for k, name in enumerate(result.columns) if name.endswith(" n")]
    shown = report_rows(result, [run.run_id for run in panel.runs], panel.pooling)
    if any(len({row[k] for k in term_ns}) > 1 for row in shown):
        notes.append(TERMS_APART)
    for run in panel.runs:
        if all(row[score_n] == 0 for row in report_rows(result, [run.run_id])):
            notes.append(f"RS, RN — in {run.label}: no UPHOLD-STANCE decision with a value")
    title = f"{result.title} · pooling: {panel.pooling}"
    return report_table(
        result, panel.runs, width=panel.width, notes=notes, pooling=panel.pooling, title=title
    )


def figure2_bands(store: Store, reports: Mapping[str, ReportResult]) -> dict[str, Any]:
    """Figure 2's extra data: the JUSTIFY confidence band edges its query uses by default."""
    figure2 = get_query("figure2")
    low, high = figure2.param("low_edge").default, figure2.param("high_edge").default
    return {"band_edges": (float(low), float(high))}


def figure2_panel(panel: PanelInput) -> Group:
    """Figure 2: for each run, SoS and DiS by stance × JUSTIFY decision-confidence band."""
    result = panel.reports["figure2"]
    low, high = panel.extra.get("band_edges", DEFAULT_BAND_EDGES)
    width, runs = panel.width, panel.runs
    per_row = chart_layout.columns_that_fit(2 * len(runs), width, CHART_MIN_WIDTH)
    per_row -= per_row % 2 if per_row > 1 else 0  # a run's SoS and DiS side by side
    each = chart_layout.panel_width(width, per_row)
    panels: list[RenderableType] = []
    for run in runs:
        rows = as_dicts(result.columns, report_rows(result, [run.run_id]))
        for metric in ("SoS", "DiS"):
            title = f"{metric} — {run.label}"
            panels.append(charts.figure2_chart(rows, metric, width=each, title=title))
    head: list[RenderableType] = [
        Text(result.title, style="bold"),
        Text(
            f"bands of the JUSTIFY decision confidence C: low C < {low}, medium {low} ≤ C < "
            f"{high}, high C ≥ {high}; n = instances with a defined value",
            style="dim",
        ),
        Text(""),
    ]
    return laid_out(panels, per_row, head, each)


def stances_panel(panel: PanelInput) -> Group:
    """Per run: the stance distribution, UNCLEAR decisions / stops, and Y = NO contradictions
    (as many runs side by side as their tables fit, unsqueezed)."""
    width, runs, reports = panel.width, panel.runs, panel.reports
    tables: dict[str, Sequence[RenderableType]] = {
        run.run_id: [
            run_table(reports["unclear"], run.run_id, "UNCLEAR decisions · stops", width),
            run_table(reports["contradictions"], run.run_id, "Y = NO yet new reasons", width),
        ]
        for run in runs
    }
    widest = max((chart_layout.drawn_width(t) for pair in tables.values() for t in pair), default=0)
    per_row = chart_layout.columns_that_fit(len(runs), width, max(CHART_MIN_WIDTH + 10, widest + 2))
    each = chart_layout.panel_width(width, per_row)
    panels: list[RenderableType] = []
    stances = reports["stances"]
    for run in runs:
        stance_rows = as_dicts(stances.columns, report_rows(stances, [run.run_id]))
        chart = charts.stance_chart(stance_rows, width=each, title="JUSTIFY stance")
        parts = [Text(run.label, style="bold"), chart, Text(""), *tables[run.run_id]]
        panels.append(Group(*parts))
    return laid_out(panels, per_row, [], each)
