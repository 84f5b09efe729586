"""How a table of the campaign report is laid out as text, shared by every format: the
header, the rows (model, group, metric, then each dataset's ``mean [low, high]`` and n), the
grid's cells, and the long rows of the CSV files (exact values)."""

from __future__ import annotations

from haf_tui.campaign.report.model import UNFINISHED_MARK, CampaignReport, Cell, RunTable, Table
from haf_tui.reports.comparison import MeanInterval
from haf_tui.reports.formats import format_value

MISSING = "—"
"""What a cell without a value shows."""


def number(value: float) -> str:
    """A value as the tables show it: 3 decimals, 1 from 10 on (percentages)."""
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3f}"


def estimate_text(found: MeanInterval | None) -> str:
    """``mean [low, high]``, a mean alone (one value), or — (none)."""
    if found is None or found.mean is None:
        return MISSING
    if found.low is None or found.high is None:
        return number(found.mean)
    return f"{number(found.mean)} [{number(found.low)}, {number(found.high)}]"


def has_groups(table: Table) -> bool:
    """Whether the table's lines are split into groups (a stage, a test)."""
    return any(line.group for line in table.lines)


def header(table: Table) -> list[str]:
    """The column titles: model, (group), metric, then each dataset and its n."""
    columns = ["model"] + ([table.group_label or "group"] if has_groups(table) else [])
    columns.append("metric")
    for dataset in table.datasets:
        columns += [dataset, "n"]
    return columns


def rows(table: Table, cells: list[Cell]) -> list[list[str]]:
    """The table's rows as text; an unfinished cell's value carries the † mark, a model with
    no cell on a dataset shows an empty value."""
    unfinished = {(c.model, c.dataset) for c in cells if not c.finished}
    shown: list[list[str]] = []
    for line in table.lines:
        row = [line.model] + ([line.group] if has_groups(table) else [])
        row.append(f"{line.metric} {line.arrow}".strip())
        for dataset in table.datasets:
            found = line.estimates.get(dataset)
            if found is None:
                row += ["", ""]
                continue
            mark = UNFINISHED_MARK if (line.model, dataset) in unfinished else ""
            row += [estimate_text(found) + mark, str(found.n)]
        shown.append(row)
    return shown


CELL_COLUMNS = ["model", "dataset", "run", "status", "instances finished"]


def cell_rows(report: CampaignReport) -> list[list[str]]:
    """The grid's cells: model, dataset, run id, status and progress."""
    return [
        [
            c.model,
            c.dataset,
            c.run_id,
            "finished" if c.finished else f"not finished {UNFINISHED_MARK}",
            f"{c.n_done} of {c.n_planned}",
        ]
        for c in report.cells
    ]


CSV_COLUMNS = [
    "model", "dataset", "run_id", "finished", "group", "metric", "better",
    "mean", "ci_low", "ci_high", "n",
]  # fmt: skip


def csv_rows(table: Table, cells: list[Cell]) -> list[tuple[object, ...]]:
    """The table's long rows with exact values (empty: none)."""
    by_cell = {(c.model, c.dataset): c for c in cells}
    found: list[tuple[object, ...]] = []
    for line in table.lines:
        for dataset, value in line.estimates.items():
            cell = by_cell[line.model, dataset]
            found.append(
                (
                    line.model, dataset, cell.run_id, cell.finished, line.group, line.metric,
                    {"↑": "higher", "↓": "lower"}.get(line.arrow, ""),
                    value.mean, value.low, value.high, value.n,
                )
            )  # fmt: skip
    return found


def run_table_rows(table: RunTable) -> list[list[str]]:
    """A method's run-level report as text (3 decimals, — for none)."""
    return [[format_value(value) for value in row] for row in table.rows]
