"""Every value a metric panel shows, in full: the rows of its reports for the chosen runs, one
``column │ value`` line per field (psql's expanded display, nothing cut), for the panels that
draw wide tables cut to their cells (harlequin: truncated in place, the whole value on demand)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from haf_tui.reports import format_value
from haf_tui.reports.panel_tables import report_rows
from haf_tui.tui.metrics_data import MetricsData, RunInfo
from haf_tui.tui.widgets.metric_panels import panel_named

ROWS_SHOWN: Final = 200
"""Rows shown per report (the rest counted: ``haf report`` gives them all)."""


def full_values(
    panel: str, data: MetricsData, runs: Sequence[RunInfo], pooling: str = "both"
) -> str:
    """The rows ``panel`` draws for ``runs`` (the reports its ``PanelSpec`` names), every
    value whole, one block per row."""
    run_ids = [run.run_id for run in runs]
    spec = panel_named(panel)
    blocks: list[str] = []
    for name in spec.reports if spec is not None else ():
        result = data.reports.get(name)
        if result is None:
            continue
        pooled = spec is not None and spec.pooled
        rows = (
            report_rows(result, run_ids, pooling if pooled else "both")
            if "run" in result.columns
            else list(result.rows)
        )
        width = max((len(column) for column in result.columns), default=0)
        lines = [f"{result.title} — {len(rows)} rows"]
        for number, row in enumerate(rows[:ROWS_SHOWN], start=1):
            lines.append(f"-[ {name} · row {number} ]")
            lines.extend(
                f"{column.ljust(width)} │ {format_value(value)}"
                for column, value in zip(result.columns, row, strict=True)
            )
        if len(rows) > ROWS_SHOWN:
            lines.append(f"(+{len(rows) - ROWS_SHOWN} more rows: haf report --report {name})")
        blocks.append("\n".join(lines))
    if not blocks:
        return "this panel draws no table: every value it shows is on screen"
    return "\n\n".join(blocks)
