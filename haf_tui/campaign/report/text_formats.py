"""The campaign report as Markdown (``report.md``) and CSV (``tables/*.csv``, exact values)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from haf_tui.campaign.report.layout import (
    CELL_COLUMNS,
    CSV_COLUMNS,
    cell_rows,
    csv_rows,
    header,
    rows,
    run_table_rows,
)
from haf_tui.campaign.report.model import CampaignReport


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |"]
    lines.append("|" + "|".join("---" for _ in columns) + "|")
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in body]
    return lines


def to_markdown(report: CampaignReport) -> str:
    """The whole report as Markdown: the cells, every table with its caption and definitions,
    every figure (its SVG file) with its caption."""
    lines = [f"# {report.kind} — {report.campaign}", "", "## Cells", ""]
    lines += markdown_table(CELL_COLUMNS, cell_rows(report))
    lines += [""] + [f"- {note}" for note in report.notes] + ([""] if report.notes else [])
    for table in report.tables:
        lines += [f"## {table.title}", ""]
        lines += markdown_table(header(table), rows(table, report.cells))
        lines += ["", f"*{table.caption}*", ""]
        lines += [f"- {definition}" for _, definition in table.definitions]
        lines += [""] if table.definitions else []
    for run_table in report.run_tables:
        lines += [f"## {run_table.title}", ""]
        lines += markdown_table(run_table.columns, run_table_rows(run_table))
        lines += ["", f"*{run_table.caption}*", ""]
    for figure in report.figures:
        lines += [f"## {figure.title}", ""]
        lines += [f"![{figure.title}](figures/{figure.slug}.svg)", "", f"*{figure.caption}*", ""]
    return "\n".join(lines).rstrip() + "\n"


def _csv(columns: Sequence[str], body: Sequence[Sequence[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(["" if v is None else repr(v) if isinstance(v, float) else v for v in row]
                     for row in body)  # fmt: skip
    return out.getvalue()


def to_csv_files(report: CampaignReport) -> dict[str, str]:
    """File name → CSV text: ``cells.csv``, one per table (long rows: model, dataset, run,
    group, metric, mean, interval, n; floats exact), and the figures' numbers."""
    files = {"cells.csv": _csv(CELL_COLUMNS, cell_rows(report))}
    for table in report.tables:
        files[f"{table.slug}.csv"] = _csv(CSV_COLUMNS, csv_rows(table, report.cells))
    for run_table in report.run_tables:
        files[f"{run_table.slug}.csv"] = _csv(run_table.columns, run_table.rows)
    for name, (columns, body) in report.csv_extra.items():
        files[f"{name}.csv"] = _csv(columns, body)
    return files
