"""The metric panels as rich renderables: the ``*_panel`` functions only filter the rows
:mod:`haf_tui.tui.metrics_data` prepared by the chosen runs and draw them (no database, no
Textual), so they are cheap and testable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from rich.console import Group, RenderableType
from rich.text import Text

from haf_tui.methods.judge.reports.tables import MASS_THRESHOLD
from haf_tui.reports import (
    INSTANCE_LABEL,
    POOLED_LABEL,
    ReportResult,
    Row,
    table_width,
)
from haf_tui.tui.metrics_data import HISTOGRAM_METRICS, MetricsData, RunInfo
from haf_tui.tui.widgets import charts
from haf_tui.vocabulary import METRIC_LABELS

PANELS: Final = (
    ("table1", "Table 1"),
    ("table2", "Table 2"),
    ("table4", "Table 4"),
    ("figure2", "Figure 2"),
    ("distributions", "Distributions"),
    ("stances", "Stances"),
    ("rationales", "Rationales"),
    ("judge", "Judge"),
)
"""(pane id, tab title) of every panel, in key order 1–8."""

UNDEFINED_WHEN: Final = {
    "SoS": "undefined when an instance has no reasons",
    "DiS": "undefined with fewer than 2 reasons",
    "UII": "undefined without internal reasons",
    "UEI": "undefined without external reasons",
    "RS": "defined only for toxic / maybe stances",
    "RN": "defined only for non-toxic stances",
    "C(JUSTIFY)": "undefined when the decision sentence has no tokens",
}
"""Why a metric can be undefined (spec section 5), said when it is for every instance."""

POOLING_MODES: Final = ("both", POOLED_LABEL, INSTANCE_LABEL)
POOLING_NOTES: Final = {
    POOLED_LABEL: "pooled (reference): mean over every reason of every instance "
    "(DiS: of instance values); n = values averaged",
    INSTANCE_LABEL: "instance mean: mean of the instances' values; "
    "n = instances the metric is defined on",
}
TABLE1_METRICS: Final = tuple(METRIC_LABELS.values())
CHART_MIN_WIDTH: Final = 46
"""Narrowest a chart panel gets before charts stack instead of standing side by side."""


# ---------------------------------------------------------------- panels (pure: data → renderable)


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


def _pooling_caption(pooling: str) -> list[str]:
    rules = (POOLED_LABEL, INSTANCE_LABEL) if pooling == "both" else (pooling,)
    return [POOLING_NOTES[rule] for rule in rules]


RUN_COLUMNS: Final = ("model", "dataset", "run")


def without_run_columns(columns: Sequence[str], rows: Sequence[Row]) -> tuple[list[str], list[Row]]:
    """The columns and rows less the model / dataset / run columns."""
    keep = [i for i, name in enumerate(columns) if name not in RUN_COLUMNS]
    return [columns[i] for i in keep], [tuple(row[i] for i in keep) for row in rows]


def report_table(
    result: ReportResult,
    runs: Sequence[RunInfo],
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
        return Group(charts.fit_table(title, result.columns, rows, width=width), caption)
    parts: list[RenderableType] = [Text(title, style="bold")]
    for run in runs:
        columns, of_run = without_run_columns(
            result.columns, report_rows(result, [run.run_id], pooling)
        )
        parts.append(charts.fit_table(run.label, columns, of_run, width=width))
    return Group(*parts, caption)


def table1_panel(
    data: MetricsData, runs: Sequence[RunInfo], pooling: str, width: int
) -> RenderableType:
    """Table 1: SoS, DiS, UII, UEI, RS, RN per run with n, under the chosen pooling rule(s);
    a metric undefined for every instance of a run gets a line saying why."""
    result = data.reports["table1"]
    notes = _pooling_caption(pooling)
    instance_rows = report_rows(result, [r.run_id for r in runs], INSTANCE_LABEL)
    labels = {r.run_id: r.label for r in runs}
    for row in as_dicts(result.columns, instance_rows):
        for metric in TABLE1_METRICS:
            if row[f"{metric} n"] == 0:
                why = UNDEFINED_WHEN[metric]
                notes.append(f"{metric} — for every instance of {labels[row['run']]}: {why}")
    title = f"{result.title} · pooling: {pooling}"
    return report_table(result, runs, width=width, notes=notes, pooling=pooling, title=title)


def table2_panel(data: MetricsData, runs: Sequence[RunInfo], width: int) -> RenderableType:
    """Table 2: % of instances whose internal / external decision is Y = NO, with n."""
    result = data.reports["table2"]
    notes = ["n = instances with that stage's generation (UNCLEAR / MAYBE stay in it)"]
    for row in as_dicts(result.columns, report_rows(result, [r.run_id for r in runs])):
        for stage in ("internal", "external"):
            if row[f"{stage} n"] == 0:
                notes.append(f"{stage} % NO — in {row['run']}: no {stage} generation stored")
    return report_table(result, runs, width=width, notes=notes)


def table4_panel(
    data: MetricsData, runs: Sequence[RunInfo], pooling: str, width: int
) -> RenderableType:
    """Table 4: RS (SUF) and RN (NEC) split into C(Y), S/N(Y) and I_S/I_N."""
    result = data.reports["table4"]
    notes = _pooling_caption(pooling)
    score_n = result.columns.index("score n")
    for run in runs:
        if all(row[score_n] == 0 for row in report_rows(result, [run.run_id])):
            notes.append(f"RS, RN — in {run.label}: no UPHOLD-STANCE decision with a value")
    title = f"{result.title} · pooling: {pooling}"
    return report_table(result, runs, width=width, notes=notes, pooling=pooling, title=title)


def _layout(
    panels: list[RenderableType], per_row: int, head: list[RenderableType], each: int
) -> Group:
    return Group(*head, charts.side_by_side(panels, per_row, each=each))


def figure2_panel(data: MetricsData, runs: Sequence[RunInfo], width: int) -> Group:
    """Figure 2: for each run, SoS and DiS by stance × JUSTIFY decision-confidence band."""
    result = data.reports["figure2"]
    low, high = data.band_edges
    per_row = charts.columns_that_fit(2 * len(runs), width, CHART_MIN_WIDTH)
    per_row -= per_row % 2 if per_row > 1 else 0  # a run's SoS and DiS side by side
    each = charts.panel_width(width, per_row)
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
    return _layout(panels, per_row, head, each)


def distributions_panel(
    data: MetricsData, runs: Sequence[RunInfo], metric_index: int, width: int
) -> Group:
    """Histograms of one metric's instance values, one per run, on shared bins."""
    metric, label = HISTOGRAM_METRICS[metric_index % len(HISTOGRAM_METRICS)]
    per_row = charts.columns_that_fit(len(runs), width, CHART_MIN_WIDTH)
    each = charts.panel_width(width, per_row)
    panels = [
        charts.render_histogram(
            data.histograms.get((run.run_id, metric), charts.histogram([])),
            width=each,
            title=run.label,
            undefined_reason=UNDEFINED_WHEN[label],
        )
        for run in runs
    ]
    names = "  ".join(f"[{name}]" if name == label else name for _, name in HISTOGRAM_METRICS)
    head: list[RenderableType] = [
        Text(f"Distribution of instance {label} (d: next metric)", style="bold"),
        Text(names, style="dim"),
        Text(""),
    ]
    return _layout(panels, per_row, head, each)


def _run_table(result: ReportResult, run_id: str, title: str, width: int) -> RenderableType:
    columns, rows = without_run_columns(result.columns, report_rows(result, [run_id]))
    if not rows:
        return Text(f"{title}: none", style="dim")
    return charts.fit_table(title, columns, rows, width=width, max_transposed=0)


def stances_panel(data: MetricsData, runs: Sequence[RunInfo], width: int) -> Group:
    """Per run: the stance distribution, UNCLEAR decisions / stops, and Y = NO contradictions
    (as many runs side by side as their tables fit, unsqueezed)."""
    tables = {
        run.run_id: [
            _run_table(data.reports["unclear"], run.run_id, "UNCLEAR decisions · stops", width),
            _run_table(data.reports["contradictions"], run.run_id, "Y = NO yet new reasons", width),
        ]
        for run in runs
    }
    widest = max((charts.drawn_width(t) for pair in tables.values() for t in pair), default=0)
    per_row = charts.columns_that_fit(len(runs), width, max(CHART_MIN_WIDTH + 10, widest + 2))
    each = charts.panel_width(width, per_row)
    panels: list[RenderableType] = []
    for run in runs:
        stance_rows = as_dicts(
            data.reports["stances"].columns, report_rows(data.reports["stances"], [run.run_id])
        )
        chart = charts.stance_chart(stance_rows, width=each, title="JUSTIFY stance")
        parts = [Text(run.label, style="bold"), chart, Text(""), *tables[run.run_id]]
        panels.append(Group(*parts))
    return _layout(panels, per_row, [], each)


RATIONALE_NOTES: Final = (
    "prompted: IOU, TOK and AUPRC from the answer with the gold label shown; COMP, SUFF, "
    "% flip, CPX and SPR from the one with ŷ shown. occlusion: top-k by leave-one-out log-odds",
    "IOU: IoU-F1 of spans (IoU ≥ 0.5) · TOK: token F1 (macro; micro beside) · COMP / SUFF: "
    "p(ŷ | x) − p(ŷ | x without R / only R) · CPX H: entropy · SPR G: Gini (? defines each)",
    "n: instances; with gold: those scored for plausibility (% no gold: the rest); CPX n: "
    "defined (Σ scores > 0); % empty / out-of-text / ≠ k: of the prompted answers",
    "more: haf report --report rationale-plausibility (random baseline), rationale-faithfulness "
    "(HUMAN, RANDOM, EVERYTHING), rationale-complexity",
)
NO_RATIONALES: Final = (
    "no run holds the rationales suite: start one with `haf run --suites rationales` "
    "(or tick the suite in the wizard's settings); this panel then shows its IOU, TOK, COMP, "
    "SUFF, AUPRC, CPX and SPR"
)


def rationales_panel(data: MetricsData, runs: Sequence[RunInfo], width: int) -> RenderableType:
    """The rationales suite's P1 Table 4 row per chosen run × rationale (prompted, occlusion),
    with the shares of empty answers, out-of-text words, low label mass and no gold; a line
    naming the chosen runs without the suite."""
    result = data.reports["rationales"]
    with_suite = [run for run in runs if report_rows(result, [run.run_id])]
    if not result.rows:
        return Text(NO_RATIONALES, style="italic")
    if not with_suite:
        return Text(
            "none of the chosen runs holds the rationales suite: press r (or space) and pick "
            "one of the runs that do",
            style="italic",
        )
    notes = list(RATIONALE_NOTES)
    without = [run.label for run in runs if run not in with_suite]
    if without:
        notes.append(f"without the rationales suite (not shown): {', '.join(without)}")
    return report_table(result, with_suite, width=width, notes=notes)


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


def _mass_warnings(data: MetricsData, run: RunInfo) -> RenderableType | None:
    result = data.reports["judge-mass"]
    rows = as_dicts(result.columns, report_rows(result, [run.run_id]))
    if not rows:
        return None
    listed = ", ".join(
        f"{row['instance']} {row['criterion']} {row['mass']:.2f}" for row in rows[:MASS_LISTED]
    )
    more = f" (+{len(rows) - MASS_LISTED} more)" if len(rows) > MASS_LISTED else ""
    return Text(f"label mass < {MASS_THRESHOLD} in {run.label}: {listed}{more}", style="yellow")


def _rho_note(summary: dict[str, Any] | None, judge_column: str, haf_column: str) -> str:
    if summary is None:
        return ""
    heading = f"ρ({judge_column}, {haf_column})"
    rho = summary.get(heading)
    shown = "undefined" if rho is None else f"{rho:+.3f}"
    return f"Spearman {heading} = {shown}, n = {summary.get(f'{heading} n', 0)}"


def _judge_vs_haf(data: MetricsData, run: RunInfo, width: int) -> list[RenderableType]:
    result = data.reports["judge-vs-haf"]
    rows = as_dicts(result.columns, report_rows(result, [run.run_id]))
    if not rows:
        return []
    summary_result = data.reports["judge-vs-haf-summary"]
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
    per_row = charts.columns_that_fit(2, width, CHART_MIN_WIDTH)
    source = f"{rows[0]['judged']} (run {rows[0]['source run']})"
    mean_notes = [_rho_note(summary, "mean", haf) for haf in ("SoS", "DiS")]
    return [
        Text(f"{run.label}: the judge against HAF's SoS and DiS of {source}", style="bold"),
        charts.side_by_side(grids, per_row),
        Text("normalised mean over the criteria: " + "; ".join(mean_notes), style="dim"),
    ]


def _judge_meta(data: MetricsData, run: RunInfo, width: int) -> list[RenderableType]:
    meta = data.judge_meta.get(run.run_id)
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
        parts.append(charts.fit_table(table.title, table.columns, table.rows, width=width))
    return parts


def judge_panel(data: MetricsData, runs: Sequence[RunInfo], width: int) -> RenderableType:
    """The judge suite per chosen judge run: the ``judge`` table (criteria, Supports
    mismatches, label mass, failures), the label-mass warnings, heat grids of the judge's
    Overall against SoS and DiS with Spearman ρ (runs over a HAF run's explanations), and the
    meta-evaluation Tables 4.1, 4.2 and 4.5 (runs over human-rated explanations)."""
    result = data.reports["judge"]
    if not result.rows:
        return Text(NO_JUDGE, style="italic")
    with_suite = [run for run in runs if report_rows(result, [run.run_id])]
    if not with_suite:
        return Text(
            "no judge runs chosen: press r (or space) and pick a run with the judge suite",
            style="italic",
        )
    notes = list(JUDGE_NOTES)
    without = [run.label for run in runs if run not in with_suite]
    if without:
        notes.append(f"without the judge suite (not shown): {', '.join(without)}")
    parts: list[RenderableType] = [report_table(result, with_suite, width=width, notes=notes)]
    for run in with_suite:
        warnings = _mass_warnings(data, run)
        if warnings is not None:
            parts.append(warnings)
    for run in with_suite:
        for part in (*_judge_vs_haf(data, run, width), *_judge_meta(data, run, width)):
            parts.append(part)
    return Group(*_spaced(parts))


def _spaced(parts: Sequence[RenderableType]) -> list[RenderableType]:
    """``parts`` with a blank line before each bold heading after the first."""
    out: list[RenderableType] = []
    for part in parts:
        if out and isinstance(part, Text) and part.style == "bold":
            out.append(Text(""))
        out.append(part)
    return out


def render_panel(
    panel: str,
    data: MetricsData,
    runs: Sequence[RunInfo],
    *,
    width: int,
    pooling: str = "both",
    metric_index: int = 0,
) -> RenderableType:
    """The renderable of ``panel`` (a :data:`PANELS` id) for the chosen runs."""
    if not data.runs:
        return Text("no run stored yet: start one from the runs list (n)", style="italic")
    if not runs:
        return Text("no run chosen: press r (or space) and pick runs to compare", style="italic")
    if panel == "table1":
        return table1_panel(data, runs, pooling, width)
    if panel == "table2":
        return table2_panel(data, runs, width)
    if panel == "table4":
        return table4_panel(data, runs, pooling, width)
    if panel == "figure2":
        return figure2_panel(data, runs, width)
    if panel == "distributions":
        return distributions_panel(data, runs, metric_index, width)
    if panel == "rationales":
        return rationales_panel(data, runs, width)
    if panel == "judge":
        return judge_panel(data, runs, width)
    return stances_panel(data, runs, width)
