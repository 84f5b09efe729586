"""The campaign report as one self-contained HTML file (``report.html``): inline CSS, the
tables, the figures as inline SVG; no script, no external link or resource of any kind, so a
co-author opens it offline in any browser."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Final

from haf_tui.campaign.report.layout import (
    CELL_COLUMNS,
    cell_rows,
    has_groups,
    header,
    rows,
    run_table_rows,
)
from haf_tui.campaign.report.model import CampaignReport, Table

_STYLE: Final = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1f2328; background: #fff; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.15rem; margin-top: 2.2rem; border-bottom: 1px solid #d0d7de;
     padding-bottom: .2rem; }
table { border-collapse: collapse; margin: .6rem 0; font-variant-numeric: tabular-nums; }
thead th { border-top: 2px solid #1f2328; border-bottom: 1px solid #1f2328; }
tbody tr:last-child td { border-bottom: 2px solid #1f2328; }
th, td { padding: .25rem .6rem; text-align: right; white-space: nowrap; }
th.text, td.text { text-align: left; }
tr.model-start td { border-top: 1px solid #d0d7de; }
td.n { color: #57606a; font-size: .9em; }
.caption { color: #3b434b; max-width: 70rem; }
.definitions { color: #57606a; font-size: .9em; margin: .3rem 0 0 1.2rem; padding: 0; }
.scroll { overflow-x: auto; }
figure { margin: 1rem 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #3b434b; max-width: 70rem; }
.notes { color: #57606a; }
"""


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def html_table(
    columns: Sequence[str],
    body: Sequence[Sequence[str]],
    left: int,
    starts: Sequence[int] = (),
    n_columns: Sequence[int] = (),
) -> str:
    """An HTML table: the first ``left`` columns text, rows in ``starts`` open a new model,
    the ``n_columns`` are counts."""

    def cls(index: int) -> str:
        names = (["text"] if index < left else []) + (["n"] if index in n_columns else [])
        return f' class="{" ".join(names)}"' if names else ""

    head = "".join(f"<th{cls(i)}>{_escape(c)}</th>" for i, c in enumerate(columns))
    lines = [f"<table><thead><tr>{head}</tr></thead><tbody>"]
    for index, row in enumerate(body):
        start = ' class="model-start"' if index in starts else ""
        cells = "".join(f"<td{cls(i)}>{_escape(v)}</td>" for i, v in enumerate(row))
        lines.append(f"<tr{start}>{cells}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _table(table: Table, report: CampaignReport) -> str:
    columns = header(table)
    left = 3 if has_groups(table) else 2
    lines = table.lines
    starts = [i for i in range(1, len(lines)) if lines[i].model != lines[i - 1].model]
    counts = [i for i in range(left, len(columns)) if (i - left) % 2 == 1]
    body = html_table(columns, rows(table, report.cells), left, starts, counts)
    definitions = "".join(f"<li>{_escape(line)}</li>" for _, line in table.definitions)
    return "\n".join(
        [
            f'<section id="{_escape(table.slug)}">',
            f"<h2>{_escape(table.title)}</h2>",
            f'<div class="scroll">{body}</div>',
            f'<p class="caption">{_escape(table.caption)}</p>',
            f'<ul class="definitions">{definitions}</ul>' if definitions else "",
            "</section>",
        ]
    )


def _inline_svg(svg: str) -> str:
    """A figure's SVG as HTML5 inline SVG: no namespace declarations (the HTML parser gives
    the elements theirs), so the page names no URL at all."""
    return re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)


def to_html(report: CampaignReport) -> str:
    """The whole report as one self-contained HTML page."""
    title = f"{report.kind} — {report.campaign}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head><body>",
        f"<h1>{_escape(title)}</h1>",
        "<h2>Cells</h2>",
        html_table(CELL_COLUMNS, cell_rows(report), 4),
    ]
    if report.notes:
        notes = "".join(f"<li>{_escape(note)}</li>" for note in report.notes)
        parts.append(f'<ul class="notes">{notes}</ul>')
    parts += [_table(table, report) for table in report.tables]
    for run_table in report.run_tables:
        body = html_table(run_table.columns, run_table_rows(run_table), 2)
        parts += [
            f'<section id="{_escape(run_table.slug)}">',
            f"<h2>{_escape(run_table.title)}</h2>",
            f'<div class="scroll">{body}</div>',
            f'<p class="caption">{_escape(run_table.caption)}</p>',
            "</section>",
        ]
    for figure in report.figures:
        parts += [
            f'<figure id="{_escape(figure.slug)}">',
            f"<h2>{_escape(figure.title)}</h2>",
            _inline_svg(figure.svg),
            f"<figcaption>{_escape(figure.caption)}</figcaption>",
            "</figure>",
        ]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
