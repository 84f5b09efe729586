"""Pieces the metric panels draw with (no Textual): a report's rows of the chosen runs, rows as
dicts, one table of them that fits, and charts laid out side by side. The methods' panel
views (``haf_tui/methods/<name>/views``) and the workbench's generic panel use them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol

from rich.console import Group, RenderableType
from rich.text import Text

from haf_tui.reports import chart_layout
from haf_tui.reports.formats import table_width
from haf_tui.reports.queries import Row
from haf_tui.reports.registry import ReportResult

CHART_MIN_WIDTH: Final = 46
"""Narrowest a chart panel gets before charts stack instead of standing side by side."""
RUN_COLUMNS: Final = ("model", "dataset", "run")


class ShownRun(Protocol):
    """A run a panel shows: its id and how the run selector labels it."""

    @property
    def run_id(self) -> str: ...

    @property
    def label(self) -> str: ...


def report_rows(result: ReportResult, run_ids: Sequence[str], pooling: str = "both") -> list[Row]:
    """The report's rows of ``run_ids`` (and of one pooling rule unless ``pooling`` is "both")."""
    run_at = result.columns.index("run")
    pool_at = result.columns.index("pooling") if "pooling" in result.columns else None
    wanted = set(run_ids)
    return [
        row
        for row in result.rows
        if row[run_at] in wanted
        and (pooling == "both" or pool_at is None or row[pool_at] == pooling)
    ]


def as_dicts(columns: Sequence[str], rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Rows as dicts keyed by column."""
    return [dict(zip(columns, row, strict=True)) for row in rows]


def without_run_columns(columns: Sequence[str], rows: Sequence[Row]) -> tuple[list[str], list[Row]]:
    """The columns and rows less the model / dataset / run columns."""
    keep = [i for i, name in enumerate(columns) if name not in RUN_COLUMNS]
    return [columns[i] for i in keep], [tuple(row[i] for i in keep) for row in rows]


def report_table(
    result: ReportResult,
    runs: Sequence[ShownRun],
    *,
    width: int,
    notes: Sequence[str],
    pooling: str = "both",
    title: str = "",
) -> RenderableType:
    """A report's rows of ``runs`` as one table when it fits (transposed when that helps),
    else one table per run without the run columns; ``notes`` below it."""
    title = title or result.title
    rows = report_rows(result, [r.run_id for r in runs], pooling)
    caption = Text("\n".join(notes), style="dim")
    if len(rows) <= 6 or table_width(result.columns, rows) <= width:
        return Group(chart_layout.fit_table(title, result.columns, rows, width=width), caption)
    parts: list[RenderableType] = [Text(title, style="bold")]
    for run in runs:
        columns, of_run = without_run_columns(
            result.columns, report_rows(result, [run.run_id], pooling)
        )
        parts.append(chart_layout.fit_table(run.label, columns, of_run, width=width))
    return Group(*parts, caption)


def run_table(result: ReportResult, run_id: str, title: str, width: int) -> RenderableType:
    """One run's rows of a report, without the run columns (a dim "none" line when empty)."""
    columns, rows = without_run_columns(result.columns, report_rows(result, [run_id]))
    if not rows:
        return Text(f"{title}: none", style="dim")
    return chart_layout.fit_table(title, columns, rows, width=width, max_transposed=0)


def laid_out(
    panels: list[RenderableType], per_row: int, head: list[RenderableType], each: int
) -> Group:
    """``head`` above ``panels``, ``per_row`` of them side by side, each ``each`` wide."""
    return Group(*head, chart_layout.side_by_side(panels, per_row, each=each))


def spaced(parts: Sequence[RenderableType]) -> list[RenderableType]:
    """``parts`` with a blank line before each bold heading after the first."""
    out: list[RenderableType] = []
    for part in parts:
        if out and isinstance(part, Text) and part.style == "bold":
            out.append(Text(""))
        out.append(part)
    return out
