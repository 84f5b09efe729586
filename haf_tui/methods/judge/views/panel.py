"""The judge's metric panel as a rich renderable (no Textual): per chosen judge run its
``judge`` table, the label-mass warnings, heat grids of the judge's Overall against HAF's SoS
and DiS (a run over a HAF run's explanations) and the meta-evaluation tables (a run over
human-rated explanations, read once by :func:`judge_meta`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from rich.console import Group, RenderableType
from rich.text import Text

from haf_tui.methods.declare import PanelInput, RunView
from haf_tui.methods.judge.core.scores import LOW_MASS
from haf_tui.methods.judge.reports.meta import meta_items, meta_tables
from haf_tui.reports import QueryError, ReportResult, chart_layout, charts
from haf_tui.reports.panel_tables import (
    CHART_MIN_WIDTH,
    as_dicts,
    report_rows,
    report_table,
    spaced,
)

if TYPE_CHECKING:
    from haf_tui.store.db import Store

JUDGE_NOTES: Final = (
    "criteria: mean normalised score, (code − min)/(max − min), 0–1, high is good "
    "(Unnecessary inverted; Factual N/A left out); n = instances with that label",
    "% Supports ≠ stance: explanations whose Supports label names the other answer (over "
    "'stances': toxic / non-toxic); % instances with mass < 0.5: a label the format forced; "
    "% failed: free answers giving no readable label (? defines each)",
    "more: haf report --report judge-vs-haf (each explanation), judge-mass; haf judge "
    "sensitivity --run RUN (edits), haf judge meta --run RUN (ACORN)",
)
NO_JUDGE: Final = (
    "no run holds the judge suite: rate a run's explanations with `haf run --suites judge "
    "--dataset run:RUN_ID` (or an ACORN import); this panel then shows its criteria, "
    "Supports mismatches, label mass and its agreement with SoS and DiS"
)
MASS_LISTED: Final = 8
"""Label-mass warnings listed per run (the rest counted)."""
OVERALL_LEVELS: Final = (5, 4, 3, 2, 1)


@dataclass(frozen=True)
class JudgeMeta:
    """A judge run's meta-evaluation (``docs/methods/judge.md#5-meta-evaluation``): its prompt, the
    explanations both humans and the judge rated, and Tables 4.1, 4.2 and 4.5."""

    prompt: str
    n_items: int
    tables: list[ReportResult]


def load_judge_meta(store: Store, run_ids: Sequence[str]) -> dict[str, JudgeMeta]:
    """The meta tables of those of ``run_ids`` (judge runs) that judged explanations with
    human ratings; the others are left out."""
    found: dict[str, JudgeMeta] = {}
    for run_id in run_ids:
        try:
            prompt, items = meta_items(store, run_id)
        except QueryError:  # no human ratings: nothing to compare with
            continue
        found[run_id] = JudgeMeta(
            prompt,
            len(items),
            meta_tables(items, tables=("alpha", "alpha_interval", "rho", "bias")),
        )
    return found


def judge_meta(store: Store, reports: Mapping[str, ReportResult]) -> dict[str, Any]:
    """The panel's extra data: ``meta``, the meta tables of each judge run of human-rated
    explanations (an ACORN import), by run id."""
    judge = reports["judge"]
    judge_runs = [str(row[judge.columns.index("run")]) for row in judge.rows]
    return {"meta": load_judge_meta(store, judge_runs)}


def _mass_warnings(panel: PanelInput, run: RunView) -> RenderableType | None:
    result = panel.reports["judge-mass"]
    rows = as_dicts(result.columns, report_rows(result, [run.run_id]))
    if not rows:
        return None
    listed = ", ".join(
        f"{row['instance']} {row['criterion']} {row['mass']:.2f}" for row in rows[:MASS_LISTED]
    )
    more = f" (+{len(rows) - MASS_LISTED} more)" if len(rows) > MASS_LISTED else ""
    return Text(f"label mass < {LOW_MASS} in {run.label}: {listed}{more}", style="yellow")


def _rho_note(summary: dict[str, Any] | None, judge_column: str, haf_column: str) -> str:
    if summary is None:
        return ""
    heading = f"ρ({judge_column}, {haf_column})"
    rho = summary.get(heading)
    shown = "undefined" if rho is None else f"{rho:+.3f}"
    return f"Spearman {heading} = {shown}, n = {summary.get(f'{heading} n', 0)}"


def _judge_vs_haf(panel: PanelInput, run: RunView) -> list[RenderableType]:
    result = panel.reports["judge-vs-haf"]
    rows = as_dicts(result.columns, report_rows(result, [run.run_id]))
    if not rows:
        return []
    summary_result = panel.reports["judge-vs-haf-summary"]
    summaries = as_dicts(summary_result.columns, report_rows(summary_result, [run.run_id]))
    summary = summaries[0] if summaries else None
    grids: list[RenderableType] = []
    for haf in ("SoS", "DiS"):
        grid = charts.heat_grid([(row[haf], row["Overall"]) for row in rows], OVERALL_LEVELS)
        grids.append(
            charts.render_heat_grid(
                grid,
                title=f"judge Overall × {haf}",
                x_label=haf,
                y_label="Overall",
                note=_rho_note(summary, "Overall", haf),
            )
        )
    per_row = chart_layout.columns_that_fit(2, panel.width, CHART_MIN_WIDTH)
    source = f"{rows[0]['judged']} (run {rows[0]['source run']})"
    mean_notes = [_rho_note(summary, "mean", haf) for haf in ("SoS", "DiS")]
    return [
        Text(f"{run.label}: the judge against HAF's SoS and DiS of {source}", style="bold"),
        chart_layout.side_by_side(grids, per_row),
        Text("normalised mean over the criteria: " + "; ".join(mean_notes), style="dim"),
    ]


def _judge_meta(panel: PanelInput, run: RunView) -> list[RenderableType]:
    meta: JudgeMeta | None = panel.extra.get("meta", {}).get(run.run_id)
    if meta is None:
        return []
    parts: list[RenderableType] = [
        Text(
            f"{run.label}: {meta.n_items} explanations rated by humans and judged "
            f"({meta.prompt} prompt)",
            style="bold",
        )
    ]
    for table in meta.tables:
        parts.append(
            chart_layout.fit_table(table.title, table.columns, table.rows, width=panel.width)
        )
    return parts


def judge_panel(panel: PanelInput) -> RenderableType:
    """The judge suite per chosen judge run: the ``judge`` table (criteria, Supports
    mismatches, label mass, failures), the label-mass warnings, heat grids of the judge's
    Overall against SoS and DiS with Spearman ρ (runs over a HAF run's explanations), and the
    meta-evaluation Tables 4.1, 4.2 and 4.5 (runs over human-rated explanations)."""
    result = panel.reports["judge"]
    if not result.rows:
        return Text(NO_JUDGE, style="italic")
    with_suite = [run for run in panel.runs if report_rows(result, [run.run_id])]
    if not with_suite:
        return Text(
            "no judge runs chosen: press r (or space) and pick a run with the judge suite",
            style="italic",
        )
    notes = list(JUDGE_NOTES)
    without = [run.label for run in panel.runs if run not in with_suite]
    if without:
        notes.append(f"without the judge suite (not shown): {', '.join(without)}")
    parts: list[RenderableType] = [report_table(result, with_suite, width=panel.width, notes=notes)]
    for run in with_suite:
        warnings = _mass_warnings(panel, run)
        if warnings is not None:
            parts.append(warnings)
    for run in with_suite:
        parts.extend((*_judge_vs_haf(panel, run), *_judge_meta(panel, run)))
    return Group(*spaced(parts))
