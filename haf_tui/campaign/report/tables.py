"""The campaign report's tables, drawn from what the methods declare: for every suite some cell
ran, its summary reports that declare their per-instance values (HAF's Tables 1, 2 and 4),
then a table of its other per-instance metrics (its ``MetricSpec``s), each laid out models ×
datasets as the mean over instances with a bootstrap interval and n."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from haf_tui.campaign.report.model import (
    CI_METHOD,
    UNFINISHED_MARK,
    CampaignReportError,
    Cell,
    Line,
    RunTable,
    Table,
)
from haf_tui.datasets.labels import rule_of
from haf_tui.methods.declare import Method, MetricSpec
from haf_tui.methods.registry import methods
from haf_tui.reports.compared_metrics import with_values
from haf_tui.reports.comparison import mean_interval
from haf_tui.reports.query_running import run_named
from haf_tui.reports.registry import PerInstance, Report, get_report
from haf_tui.store import Store
from haf_tui.store.comparison_readers import compared_runs, run_metric_values, run_suites
from haf_tui.store.dataset_catalog import get_dataset
from haf_tui.store.readers import run_stops

_HAF = "haf"
"""The suite whose instances stop after JUSTIFY (its empty tables say so)."""
Keyed = dict[tuple[Cell, str, str], list[float]]
"""(cell, group, metric label) → the instance values."""


def campaign_cells(store: Store, cells: Sequence[tuple[str, str, str]]) -> list[Cell]:
    """The grid's cells with their runs' progress; CampaignReportError (one line) for a run
    the store lacks or a model × dataset given twice."""
    runs = {run.run_id: run for run in compared_runs(store)}
    found: list[Cell] = []
    seen: dict[tuple[str, str], str] = {}
    for model, dataset, run_id in cells:
        run = runs.get(run_id)
        if run is None:
            raise CampaignReportError(f"run {run_id} ({model} × {dataset}) is not in {store.path}")
        if (model, dataset) in seen:
            raise CampaignReportError(
                f"{model} × {dataset} has two runs ({seen[model, dataset]}, {run_id}): "
                "a campaign report shows one run per cell"
            )
        seen[model, dataset] = run_id
        found.append(
            Cell(model, dataset, run_id, run.status == "finished", run.n_done, run.n_planned)
        )
    if not found:
        raise CampaignReportError("the campaign has no cells to report")
    return found


def _defined(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _metric_values(
    store: Store, cells: Sequence[Cell], metrics: Sequence[tuple[str, str]]
) -> Keyed:
    """The instance metrics ``metrics`` ((name, label)) of every finished instance."""
    found = run_metric_values(store, [c.run_id for c in cells], [name for name, _ in metrics])
    keyed: Keyed = {}
    for cell in cells:
        for of_instance in found.get(cell.run_id, {}).values():
            for name, label in metrics:
                value = _defined(of_instance.get(name))
                if value is not None:
                    keyed.setdefault((cell, "", label), []).append(value)
    return keyed


def _query_values(store: Store, cells: Sequence[Cell], per: PerInstance) -> tuple[Keyed, list[str]]:
    """The values of ``per.query`` by cell, group and label, and the groups in query order."""
    columns, rows = run_named(store, per.query, {"run_ids": [c.run_id for c in cells]})
    by_run = {cell.run_id: cell for cell in cells}
    at = {name: columns.index(name) for name in columns}
    keyed: Keyed = {}
    groups: list[str] = []
    for row in rows:
        cell = by_run.get(str(row[at["run_id"]]))
        group = str(row[at[per.group]]) if per.group else ""
        if group not in groups:
            groups.append(group)
        for column, label in per.values:
            value = _defined(row[at[column]])
            if cell is not None and value is not None:
                keyed.setdefault((cell, group, label), []).append(value)
    ordered = [g for g in per.groups if g in groups] + [g for g in groups if g not in per.groups]
    return keyed, ordered or [""]


def _lines(
    cells: Sequence[Cell], groups: Sequence[str], metrics: Sequence[tuple[str, str]], keyed: Keyed
) -> list[Line]:
    """One line per model × group × metric; each dataset's mean, interval and n."""
    models = list(dict.fromkeys(cell.model for cell in cells))
    lines: list[Line] = []
    for model in models:
        of_model = [cell for cell in cells if cell.model == model]
        for group in groups:
            for label, arrow in metrics:
                estimates = {
                    cell.dataset: mean_interval(keyed.get((cell, group, label), []))
                    for cell in of_model
                }
                lines.append(Line(model, group, label, arrow, estimates))
    return lines


def _caption(
    what: str, rule: str, holding: Sequence[Cell], lacking: Sequence[Cell], unit: str
) -> str:
    """A table's caption: what the numbers are, n, the interval, the cells left out."""
    parts = [
        f"{what}. Each cell: the mean over {unit} [{CI_METHOD}]; n: the {unit} with a defined "
        "value (finished instances only).",
    ]
    if rule:
        parts.append(f"Pooling: {rule}.")
    if any(not cell.finished for cell in holding):
        parts.append(
            f"{UNFINISHED_MARK}: the run has not finished; its numbers are over the instances "
            "finished so far (n shown)."
        )
    if lacking:
        parts.append(
            "Left out, the suite did not run there: " + ", ".join(c.name for c in lacking) + "."
        )
    return " ".join(parts)


def _report_table(
    store: Store, method: Method[Any], report: Report, holding: list[Cell], lacking: list[Cell]
) -> Table | None:
    per = report.per_instance
    assert per is not None
    specs = {spec.label: spec for spec in method.metrics}
    if per.query:
        keyed, groups = _query_values(store, holding, per)
    else:
        keyed, groups = _metric_values(store, holding, per.values), [""]
    metrics = [(label, specs[label].arrow if label in specs else "") for _, label in per.values]
    shown = [m for m in metrics if any(key[2] == m[0] for key in keyed)]
    if not shown:
        return None
    return Table(
        slug=f"{method.name}-{report.name}",
        title=report.title,
        caption=_caption(report.title, per.rule, holding, lacking, "instances"),
        datasets=list(dict.fromkeys(cell.dataset for cell in holding)),
        lines=_lines(holding, groups, shown, keyed),
        definitions=[(label, specs[label].line()) for label, _ in shown if label in specs],
        lacking=lacking,
        values=keyed,
        group_label=per.group,
    )


def _metrics_table(
    store: Store,
    method: Method[Any],
    specs: Sequence[MetricSpec],
    holding: list[Cell],
    lacking: list[Cell],
    others: bool,
) -> Table | None:
    values = run_metric_values(store, [c.run_id for c in holding], [s.name for s in specs])
    shown = with_values(list(specs), values)
    if not shown:
        return None
    keyed = _metric_values(store, holding, [(s.name, s.label) for s in shown])
    what = f"{method.title}: {'other ' if others else ''}per-instance metrics"
    return Table(
        slug=f"{method.name}-metrics",
        title=what[0].upper() + what[1:],
        caption=_caption(what, "", holding, lacking, "instances"),
        datasets=list(dict.fromkeys(cell.dataset for cell in holding)),
        lines=_lines(holding, [""], [(s.label, s.arrow) for s in shown], keyed),
        definitions=[(s.label, s.line()) for s in shown],
        lacking=lacking,
        values=keyed,
    )


def method_tables(
    store: Store, method: Method[Any], cells: Sequence[Cell], *, runs: bool = False
) -> tuple[list[Table], list[str]]:
    """The tables of one method for the cells whose run holds its suite: its summary reports
    with per-instance values, then its other per-instance metrics; and a note for what has no
    table (no cell ran the suite; a table with no rows, and why). ``runs``: the cells are
    runs of a run report (the notes say "run", not "cell")."""
    suites = run_suites(store, [cell.run_id for cell in cells])
    holding = [cell for cell in cells if method.name in suites.get(cell.run_id, ())]
    if not holding:
        if not runs:
            said = "no cell ran this suite"
        elif len(cells) == 1:
            said = "this run did not run this suite"
        else:
            said = "none of these runs ran this suite"
        return [], [f"{method.title}: {said}; no table."]
    lacking = [cell for cell in cells if cell not in holding]
    tables: list[Table] = []
    empty: list[str] = []
    covered: set[str] = set()
    for name in method.summary_reports:
        report = get_report(name)
        if report.per_instance is None:
            continue
        if not report.per_instance.query:
            covered.update(column for column, _ in report.per_instance.values)
        table = _report_table(store, method, report, holding, lacking)
        if table is not None:
            tables.append(table)
        else:
            empty.append(report.title.split(" — ")[0])
    rest = [s for s in method.metrics if s.per == "instance" and s.name not in covered]
    table = _metrics_table(store, method, rest, holding, lacking, bool(covered)) if rest else None
    if table is not None:
        tables.append(table)
    elif rest:
        empty.append(f"the {'other ' if covered else ''}per-instance metrics")
    return tables, ([_empty_note(store, method, holding, empty, runs)] if empty else [])


def _empty_note(
    store: Store, method: Method[Any], holding: Sequence[Cell], empty: list[str], runs: bool
) -> str:
    """Why the tables ``empty`` of ``method`` have no rows: no instance finished, (HAF) none
    went past JUSTIFY, or none has a value for them."""
    where = "any cell"
    if runs:
        where = "this run" if len(holding) == 1 else "any of these runs"
    stops = run_stops(store, [cell.run_id for cell in holding])
    if stops.total == 0:
        why = f"no instance has finished in {where}"
    elif method.name == _HAF and stops.stopped == stops.total:
        every = "the one finished instance" if stops.total == 1 else (
            f"all {stops.total} finished instances")  # fmt: skip
        why = f"no instance went past JUSTIFY in {where} ({every} stopped there: {stops.reasons})"
    else:
        why = f"no finished instance in {where} has a value for them"
        if method.name == _HAF:
            went_on = stops.total - stops.stopped
            why += f" ({went_on} of {stops.total} went past JUSTIFY)"
    named = empty[0] if len(empty) == 1 else ", ".join(empty[:-1]) + " and " + empty[-1]
    return f"{method.title}: {why}, so {named} {'has' if len(empty) == 1 else 'have'} no rows."


_RUN_COLUMNS = ("model", "dataset", "run")
"""The columns naming a run in a method's report (``reports.registry.RUN_KEYS``' labels)."""


def run_tables(store: Store, method: Method[Any], cells: Sequence[Cell]) -> list[RunTable]:
    """The method's summary and first suggested reports that declare no per-instance values,
    over the cells whose run holds its suite, as the method shapes them (a report whose rows
    name no run is left out)."""
    suites = run_suites(store, [cell.run_id for cell in cells])
    holding = {c.run_id: c for c in cells if method.name in suites.get(c.run_id, ())}
    names = dict.fromkeys((*method.summary_reports, *method.suggested_reports[:1]))
    found: list[RunTable] = []
    for name in names:
        report = get_report(name)
        if report.per_instance is not None or not holding:
            continue
        result = report.run(store, {"run_ids": list(holding)})
        if "run" not in result.columns:
            continue
        run_at = result.columns.index("run")
        kept = [i for i, c in enumerate(result.columns) if c not in _RUN_COLUMNS]
        rows: list[tuple[object, ...]] = []
        for row in result.rows:
            cell = holding.get(str(row[run_at]))
            if cell is not None:
                rows.append((cell.model, cell.dataset, *(row[i] for i in kept)))
        lacking = [c.name for c in cells if c.run_id not in holding]
        caption = (
            f"{result.title}, as the {method.title} method reports it: run-level numbers over "
            "each run's finished instances (no interval; its query's header defines each "
            f"column: haf query --list)."
        )
        if lacking:
            caption += " Left out, the suite did not run there: " + ", ".join(lacking) + "."
        caption += without_gold(store, result.columns, result.rows, run_at, holding)
        columns = ["model", "dataset", *(result.columns[i] for i in kept)]
        found.append(RunTable(f"{method.name}-{name}", result.title, caption, columns, rows))
    return found


def without_gold(
    store: Store,
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    run_at: int,
    holding: dict[str, Cell],
) -> str:
    """Why a report's ``gold`` column (classify's: the instances with a gold label) is 0 or
    empty for a cell: its dataset has no label column (and its note: the columns that look
    like labels), or its rule gave no instance gold; "" when every cell has gold."""
    if "gold" not in columns:
        return ""
    at = list(columns).index("gold")
    said = ""
    for row in rows:
        cell = holding.get(str(row[run_at]))
        if cell is None or row[at] not in (0, None):
            continue
        dataset = get_dataset(store, store.get_run(cell.run_id).dataset_id)
        meta = dataset.meta if dataset is not None else {}
        if rule_of(meta) is None:
            note = f" ({meta['label_note']})" if meta.get("label_note") else ""
            why = (
                f"its dataset has no label column{note}; name one with label_column in the "
                "grid's dataset entry"
            )
        else:
            why = "its dataset's label rule gave none of its instances gold"
        said += f" No gold for {cell.name}: {why}."
    return said


def campaign_tables(
    store: Store, cells: Sequence[Cell], *, runs: bool = False
) -> tuple[list[Table], list[RunTable], list[str]]:
    """Every method's tables in registry order, its run-level reports, and a line for each
    suite no cell ran and each table with no rows (why). ``runs``: the cells are the runs of
    a run report (its lines say "run")."""
    tables: list[Table] = []
    reports: list[RunTable] = []
    notes: list[str] = []
    for method in methods().values():
        found, said = method_tables(store, method, cells, runs=runs)
        tables.extend(found)
        notes.extend(said)
        reports.extend(run_tables(store, method, cells))  # (none where no cell ran it)
    return tables, reports, notes
