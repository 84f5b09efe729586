"""Reports: a named query shown one way, the registry they plug into, and the built-in ones.

A *report* (:class:`Report`) runs one named query and may reshape its result for display; a new
report plugs in with :func:`register_report` without touching the others; the methods' reports
are handed over by the method registry a program installs (:func:`use_method_reports`: this
layer never loads a method). ``haf report`` shows the summary reports (:func:`summary_reports`:
Tables 1, 2 and 4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from haf_tui.reports.queries import QueryError, Result, Row
from haf_tui.reports.query_running import run_named

if TYPE_CHECKING:
    from haf_tui.store import Store

Shaper = Callable[[list[str], list[Row]], Result]
"""Turns a query's (columns, rows) into what a report shows."""


@dataclass(frozen=True)
class ReportResult:
    """What a report produced: a title, columns and rows."""

    name: str
    title: str
    columns: list[str]
    rows: list[Row]


@dataclass(frozen=True)
class PerInstance:
    """The per-instance values behind a report's numbers, so a campaign report can give each a
    bootstrap interval over instances. ``values``: (column, label) of each value; ``query``: a
    named query with one row per run × finished instance (× ``group``) and columns ``run_id``,
    ``instance_id``, the ``group`` column (if any) and the value columns; empty: the values are
    the instance metrics named in ``values`` (``instance_metrics``). ``groups``: the group
    values in the order shown (others after them, as the query gives them); ``rule``: how a
    run's number comes from them, as the caption says it."""

    values: tuple[tuple[str, str], ...]
    query: str = ""
    group: str = ""
    groups: tuple[str, ...] = ()
    rule: str = ""


@dataclass(frozen=True)
class Averaged:
    """A report column whose every cell is an aggregate of stored per-instance rows, declared
    so a check that shares no SQL with the report rebuilds each cell from the rows
    (``tests/queries/test_report_cells.py``), and its n.

    ``column``: the report's column label. ``stored``: what is aggregated: a metric of
    ``table`` "instance_metrics" or "reason_metrics", else a column of ``table``
    ("rationales", "generations", "instance_results"); ``{source}`` in it is the row's ``by``
    column looked up in ``sources`` (``table`` "rationales": ``sources`` gives each row's
    ``rationales.source`` instead). ``where``: (stored column, value) the rows must hold
    (``{COLUMN}`` in a value: that report column's value on the row; None, or None there:
    NULL); ``defined_in``: only the rows where these stored columns are not NULL;
    ``tested_by``: reason rows only of the reasons whose individual test is this (SUF, NEC);
    ``with_gold`` keeps the rationales with a non-empty gold (``gold_size > 0``); ``seeds``:
    which RANDOM seeds of a rationale count: "first" (seed 0), "pooled" (every one, one mean),
    "each" (each seed's mean, then ``kind`` over the seeds; n: the instances of a seed).
    ``group``: (report column, instance key) pairs: only the instances whose key
    ("stance", "band" of the JUSTIFY confidence, "instance") is the row's value count.
    ``run_from``: the report column naming the run whose rows are read. ``agrees_with``: an
    instance key ("gold" class, "stance"): each 0/1 value (ŷ toxic) becomes 1 when it agrees
    with it, else 0, and instances whose key is neither toxic nor non-toxic are left out.

    Each value: ``absolute`` takes its magnitude; ``left_out`` values are dropped;
    ``share_of`` makes it 1 when it equals this (``{COLUMN}`` as in ``where``; with
    ``any_case`` in upper or lower case), else 0 (with ``kind`` "count": the rows counted are
    those equal to it); ``below`` 1 when it is below this, else 0 (a share is a mean of such
    0/1 values). ``per_instance``: each instance's mean first (n: instances). ``kind``:
    "mean", "sd" (the sample standard deviation of what a mean would average: with ``seeds``
    "each" the seeds' means), "count" (the rows, defined or not; with ``seeds`` "each" those
    of a seed), "seeds" (the RANDOM seeds among them) or "max". The cell is ``scale`` × the
    aggregate + ``offset`` (100: a percent; an affine rescaling such as the judge's
    normalised codes). ``rows``: only the report rows whose (column, value) pairs all hold
    (others are no such aggregate). Its n is the report's count column of ``column``
    (:func:`count_columns`)."""

    column: str
    stored: str
    table: str = "instance_metrics"
    by: str = ""
    sources: tuple[tuple[str, str], ...] = ()
    with_gold: bool = False
    scale: float = 1.0
    rows: tuple[tuple[str, str], ...] = ()
    kind: str = "mean"
    where: tuple[tuple[str, str | None], ...] = ()
    tested_by: str = ""
    seeds: str = "first"
    group: tuple[tuple[str, str], ...] = ()
    run_from: str = "run"
    left_out: tuple[float, ...] = ()
    share_of: str = ""
    any_case: bool = False
    below: float | None = None
    per_instance: bool = False
    offset: float = 0.0
    defined_in: tuple[str, ...] = ()
    absolute: bool = False
    agrees_with: str = ""


@dataclass(frozen=True)
class Report:
    """A named query shown one way. ``summary`` reports are what ``haf report`` shows;
    ``companions``: reports printed after this one; ``run_note``: a warning line about one run
    of its rows (None: nothing to say), printed under the table; ``per_instance``: the values
    behind its numbers per instance (None: only the run-level numbers); ``terms``: (column
    label or value, one-line meaning) of what its columns show that is no method's
    :class:`~haf_tui.methods.declare.MetricSpec` (the CLI's legend under the table);
    ``counts``: (value column, its n column) where a value's n is not the column beside it
    called "VALUE n" (:func:`count_columns`); ``averages``: its columns that are means of
    stored per-instance rows (:class:`Averaged`)."""

    name: str
    title: str
    query: str
    summary: bool = False
    shape: Shaper | None = field(default=None, compare=False)
    companions: tuple[str, ...] = ()
    run_note: Callable[[Store, str], str | None] | None = field(default=None, compare=False)
    per_instance: PerInstance | None = None
    terms: tuple[tuple[str, str], ...] = ()
    counts: tuple[tuple[str, str], ...] = ()
    averages: tuple[Averaged, ...] = ()

    def run(self, store: Store, params: Mapping[str, Any] | None = None) -> ReportResult:
        """Run the query and shape its result."""
        columns, rows = run_named(store, self.query, params)
        if self.shape is not None:
            columns, rows = self.shape(columns, rows)
        return ReportResult(self.name, self.title, columns, rows)


REPORTS: dict[str, Report] = {}
"""Every report by name: haf's own (:func:`register_report`), then the installed methods'."""

_METHOD_REPORTS: dict[str, Report] = {}
"""The installed methods' reports among :data:`REPORTS` (:func:`use_method_reports`)."""


def register_report(report: Report, *, replace: bool = False) -> Report:
    """Add a report to :data:`REPORTS` (ValueError for a taken name unless ``replace``)."""
    if report.name in REPORTS and not replace:
        raise ValueError(f"a report named {report.name!r} is already registered")
    REPORTS[report.name] = report
    return report


def use_method_reports(reports: Mapping[str, Report]) -> None:
    """The methods' reports from now on: those handed over before are taken out of
    :data:`REPORTS` and these put in (the method registry checked that none takes the name
    of one of haf's own)."""
    for name, report in _METHOD_REPORTS.items():
        if REPORTS.get(name) is report:
            del REPORTS[name]
    _METHOD_REPORTS.clear()
    _METHOD_REPORTS.update(reports)
    REPORTS.update(reports)


def own_reports() -> dict[str, Report]:
    """haf's own reports (no method's), by name."""
    return {name: r for name, r in REPORTS.items() if _METHOD_REPORTS.get(name) is not r}


def get_report(name: str) -> Report:
    """A registered report; QueryError listing the known names when there is none such."""
    try:
        return REPORTS[name]
    except KeyError:
        raise QueryError(f"no report named {name!r} (known: {', '.join(REPORTS)})") from None


def summary_reports() -> list[Report]:
    """The reports ``haf report`` shows by default, in registration order."""
    return [r for r in REPORTS.values() if r.summary]


def run_report(store: Store, name: str, params: Mapping[str, Any] | None = None) -> ReportResult:
    """Run the registered report ``name``."""
    return get_report(name).run(store, params)


SMALL_N: Final = 5
"""A mean over fewer values than this carries its n wherever it is shown (issue 42 §3)."""


def count_columns(columns: Sequence[str], counts: Sequence[tuple[str, str]] = ()) -> dict[int, int]:
    """Each value column's index → the index of the column holding its n: the declared
    ``counts`` (value label, n label), else the column "LABEL n" when there is one."""
    at = {name: index for index, name in enumerate(columns)}
    found = {at[value]: at[n] for value, n in counts if value in at and n in at}
    for index, name in enumerate(columns):
        if index not in found and f"{name} n" in at:
            found[index] = at[f"{name} n"]
    return found


POOLED_LABEL: Final = "pooled (reference)"
INSTANCE_LABEL: Final = "instance mean"


def _column_index(columns: Sequence[str], name: str) -> int:
    try:
        return list(columns).index(name)
    except ValueError:
        raise QueryError(
            f"report expects a column {name!r}; the query gives {', '.join(columns)}"
        ) from None


def pooling_rows(keys: Sequence[tuple[str, str]], metrics: Sequence[tuple[str, str]]) -> Shaper:
    """A shaper turning one wide row per run (``M_pooled``, ``M_pooled_n``,
    ``M_instance_mean``, ``M_instance_n`` per metric prefix M) into two rows per run, one per
    pooling rule, with a value column and an n column per metric.

    ``keys``: (source column, shown label) kept as they are; ``metrics``: (prefix, label).
    """

    def shape(columns: list[str], rows: list[Row]) -> Result:
        key_at = [_column_index(columns, source) for source, _ in keys]
        rules = (
            ("pooled", "pooled_n", POOLED_LABEL),
            ("instance_mean", "instance_n", INSTANCE_LABEL),
        )
        out_columns = [label for _, label in keys] + ["pooling"]
        for _, label in metrics:
            out_columns += [label, f"{label} n"]
        out_rows: list[Row] = []
        for row in rows:
            for value_suffix, n_suffix, rule in rules:
                values: list[Any] = [row[i] for i in key_at] + [rule]
                for prefix, _ in metrics:
                    values.append(row[_column_index(columns, f"{prefix}_{value_suffix}")])
                    values.append(row[_column_index(columns, f"{prefix}_{n_suffix}")])
                out_rows.append(tuple(values))
        return out_columns, out_rows

    return shape


def select_columns(selection: Sequence[tuple[str, str]]) -> Shaper:
    """A shaper keeping (and relabelling) some columns: (source column, shown label)."""

    def shape(columns: list[str], rows: list[Row]) -> Result:
        at = [_column_index(columns, source) for source, _ in selection]
        return [label for _, label in selection], [tuple(row[i] for i in at) for row in rows]

    return shape


def compare_side_by_side(columns: list[str], rows: list[Row]) -> Result:
    """``model_comparison``'s long rows as one row per metric, a value and n column per run."""
    metric_at, label_at = _column_index(columns, "metric"), _column_index(columns, "label")
    run_at, model_at = _column_index(columns, "run_id"), _column_index(columns, "model_file")
    dataset_at = _column_index(columns, "dataset_id")
    mean_at, n_at = _column_index(columns, "instance_mean"), _column_index(columns, "n")
    runs: dict[str, str] = {}
    table: dict[str, dict[str, tuple[Any, Any]]] = {}
    labels: dict[str, str] = {}
    for row in rows:
        run_id = str(row[run_at])
        runs.setdefault(run_id, f"{row[model_at]} · {row[dataset_at]} · {run_id[:8]}")
        labels.setdefault(row[metric_at], str(row[label_at]))
        table.setdefault(row[metric_at], {})[run_id] = (row[mean_at], row[n_at])
    out_columns = ["metric"]
    for heading in runs.values():
        out_columns += [heading, f"{heading} n"]
    out_rows: list[Row] = []
    for metric, by_run in table.items():
        values: list[Any] = [labels[metric]]
        for run_id in runs:
            values += list(by_run.get(run_id, (None, 0)))
        out_rows.append(tuple(values))
    return out_columns, out_rows


RUN_KEYS: Final = (("model_file", "model"), ("dataset_id", "dataset"), ("run_id", "run"))
"""The columns naming a run in every report: model, dataset, run."""
_RUN_KEYS: Final = RUN_KEYS
