"""The metric panels as rich renderables, drawn from the methods' declarations: each
:class:`~haf_tui.methods.declare.PanelSpec` (in registry order: key 1 first) draws the rows
:mod:`haf_tui.tui.metrics_data` prepared, filtered by the chosen runs, with its own ``draw``
or, without one, generically: its histograms, then each of its reports as a table. No
database, no Textual: cheap and testable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich.console import Group, RenderableType
from rich.text import Text

from haf_tui.methods.declare import MetricSpec, PanelInput, PanelSpec, RunView
from haf_tui.methods.registry import metric_specs
from haf_tui.reports import INSTANCE_LABEL, POOLED_LABEL, chart_layout, charts
from haf_tui.reports.panel_tables import (
    CHART_MIN_WIDTH,
    laid_out,
    report_table,
    spaced,
)
from haf_tui.tui.metrics_data import MetricsData, RunInfo, panel_specs

POOLING_MODES: Final = ("both", POOLED_LABEL, INSTANCE_LABEL)
"""What ``g`` steps through on a pooled panel: both rules, the reference's, the instance mean."""


def panel_tabs() -> list[tuple[str, str]]:
    """(pane id, tab title) of every panel, in key order."""
    return [(spec.key, spec.title) for spec in panel_specs()]


def panel_named(key: str) -> PanelSpec | None:
    """The panel whose pane id is ``key`` (None: no method declares it)."""
    return next((spec for spec in panel_specs() if spec.key == key), None)


def histogram_specs(spec: PanelSpec) -> list[MetricSpec]:
    """The declared metrics of ``spec``'s histograms (a bare name where none declares it)."""
    known = metric_specs()
    return [known.get(name) or MetricSpec(name, name, "") for name in spec.histograms]


def histograms_part(panel: PanelInput) -> Group:
    """Histograms of one metric's instance values (``metric_index``), one per run, on shared
    bins, under a line naming every metric of the panel with the shown one in brackets."""
    shown = panel.metrics[panel.metric_index % len(panel.metrics)]
    per_row = chart_layout.columns_that_fit(len(panel.runs), panel.width, CHART_MIN_WIDTH)
    each = chart_layout.panel_width(panel.width, per_row)
    panels: list[RenderableType] = [
        charts.render_histogram(
            panel.histograms.get((run.run_id, shown.name), charts.histogram([])),
            width=each,
            title=run.label,
            undefined_reason=shown.undefined_when,
        )
        for run in panel.runs
    ]
    names = "  ".join(f"[{spec.label}]" if spec is shown else spec.label for spec in panel.metrics)
    head: list[RenderableType] = [
        Text(f"Distribution of instance {shown.label} (d: next metric)", style="bold"),
        Text(names, style="dim"),
        Text(""),
    ]
    return laid_out(panels, per_row, head, each)


def generic_panel(panel: PanelInput) -> RenderableType:
    """A panel without its own drawing: its histograms, then each of its reports as a table
    of the chosen runs' rows (all rows of a report without a run column)."""
    parts: list[RenderableType] = []
    if panel.metrics:
        parts.append(histograms_part(panel))
    for result in panel.reports.values():
        if "run" in result.columns:
            parts.append(report_table(result, panel.runs, width=panel.width, notes=[]))
        else:
            parts.append(
                chart_layout.fit_table(result.title, result.columns, result.rows, width=panel.width)
            )
    if not parts:
        return Text("this panel declares no report and no histogram", style="italic")
    return Group(*spaced(parts))


def panel_input(
    spec: PanelSpec,
    data: MetricsData,
    runs: Sequence[RunInfo],
    *,
    width: int,
    pooling: str = "both",
    metric_index: int = 0,
) -> PanelInput:
    """What ``spec`` draws from: the chosen runs, its reports, its histograms and extra data."""
    named = (*spec.reports, *spec.also_reads)
    return PanelInput(
        runs=[RunView(run.run_id, run.model_file, run.dataset_id, run.label) for run in runs],
        reports={name: data.reports[name] for name in named if name in data.reports},
        width=width,
        pooling=pooling if spec.pooled else "both",
        metric_index=metric_index,
        extra=data.extra.get(spec.key, {}),
        histograms=data.histograms,
        metrics=histogram_specs(spec),
    )


def render_panel(
    panel: str,
    data: MetricsData,
    runs: Sequence[RunInfo],
    *,
    width: int,
    pooling: str = "both",
    metric_index: int = 0,
) -> RenderableType:
    """The renderable of ``panel`` (a pane id of :func:`panel_tabs`) for the chosen runs."""
    if not data.runs:
        return Text("no run stored yet: start one from the runs list (n)", style="italic")
    if not runs:
        return Text("no run chosen: press r (or space) and pick runs to compare", style="italic")
    spec = panel_named(panel)
    if spec is None:
        return Text(f"no method declares the panel {panel!r}", style="italic")
    shown = panel_input(spec, data, runs, width=width, pooling=pooling, metric_index=metric_index)
    draw = spec.draw or generic_panel
    return draw(shown)
