"""``haf report --report compare-ci --run A --run B``: each metric of every suite the runs
share (:mod:`haf_tui.reports.compared_metrics`: HAF's six first) per run with its bootstrap
interval, and each run against the first as a paired difference with Wilcoxon's test (the
statistics of :mod:`haf_tui.reports.comparison`, as the workbench's comparison view shows
them). Registered on import."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from haf_tui.reports.compared_metrics import run_metrics, with_values
from haf_tui.reports.comparison import (
    WILCOXON_TOO_FEW,
    PairedDifference,
    mean_intervals,
    paired_differences,
)
from haf_tui.reports.queries import Row
from haf_tui.reports.query_running import run_named
from haf_tui.reports.registry import Report, ReportResult, compare_side_by_side, register_report
from haf_tui.store.comparison_readers import run_metric_values

if TYPE_CHECKING:
    from haf_tui.store import Store

COLUMNS: Final = [
    "metric", "run", "model", "dataset", "mean", "CI low", "CI high", "n",
    "Δ vs first", "Δ CI low", "Δ CI high", "Wilcoxon p", "n pairs", "only first", "only this",
    "better",
]  # fmt: skip
"""One row per metric × run; the Δ columns are empty for the first run and for a run on
another dataset (not paired). CI: 95 % percentile bootstrap over instances. ``better``: which
of the pair the metric's better direction favours when the Δ interval leaves out 0 (``this``
or ``first``; ``neither`` when it holds 0), empty when the metric has no better direction or
the run is not paired."""


def better_of(better: str | None, difference: PairedDifference) -> str | None:
    """Which run of a pair ``second − first`` favours: ``this`` (the second), ``first``, or
    ``neither`` (the interval holds 0); None when the metric has no better direction or the
    difference has no interval."""
    if better is None or difference.low is None or difference.high is None:
        return None
    if difference.low <= 0 <= difference.high:
        return "neither"
    second_higher = difference.low > 0
    return "this" if second_higher == (better == "higher") else "first"


@dataclass(frozen=True)
class StatisticsReport(Report):
    """A report whose rows are computed from instance values: its query (``model_comparison``)
    only names the runs, in the order asked for."""

    def run(self, store: Store, params: Mapping[str, Any] | None = None) -> ReportResult:
        """The runs from the query, then the statistics of their instance values."""
        columns, rows = run_named(store, self.query, params)
        run_at, model_at = columns.index("run_id"), columns.index("model_file")
        dataset_at = columns.index("dataset_id")
        runs = {str(r[run_at]): (str(r[model_at]), str(r[dataset_at])) for r in rows}
        declared = run_metrics(store, list(runs))
        values = run_metric_values(store, list(runs), [m.name for m in declared])
        out: list[Row] = []
        first = next(iter(runs), None)
        for metric in with_values(declared, values):
            name = metric.name
            of_first = {i: v.get(name) for i, v in values.get(first or "", {}).items()}
            of_runs = {
                run_id: {i: v.get(name) for i, v in values[run_id].items()} for run_id in runs
            }
            paired_ids = [
                run_id
                for run_id, (_, dataset) in runs.items()
                if run_id != first and first is not None and dataset == runs[first][1]
            ]
            means = dict(zip(runs, mean_intervals(list(of_runs.values())), strict=True))
            pairs = [(of_first, of_runs[run_id]) for run_id in paired_ids]
            paired = dict(zip(paired_ids, paired_differences(pairs), strict=True))
            for run_id, (model, dataset) in runs.items():
                mean = means[run_id]
                row: list[Any] = [metric.label, run_id, model, dataset, mean.mean, mean.low,
                                  mean.high, mean.n]  # fmt: skip
                if run_id in paired:
                    d = paired[run_id]
                    row += [d.mean, d.low, d.high, d.p_value, d.n, len(d.only_first),
                            len(d.only_second), better_of(metric.better, d)]  # fmt: skip
                else:
                    row += [None] * 8
                out.append(tuple(row))
        return ReportResult(self.name, self.title, list(COLUMNS), out)


@dataclass(frozen=True)
class SharedMetricsReport(Report):
    """A report over ``model_comparison`` that adds every metric of the suites its runs share
    (``extra_metrics`` / ``extra_labels``, unless given) and leaves out each metric no run
    has a value of."""

    def run(self, store: Store, params: Mapping[str, Any] | None = None) -> ReportResult:
        """The runs from the query, then the query again with their shared metrics."""
        given = dict(params or {})
        columns, rows = run_named(store, self.query, given)
        if "extra_metrics" not in given:
            run_at = columns.index("run_id")
            run_ids = list(dict.fromkeys(str(row[run_at]) for row in rows))
            declared = run_metrics(store, run_ids)
            given["extra_metrics"] = [m.name for m in declared]
            given["extra_labels"] = [m.label for m in declared]
            columns, rows = run_named(store, self.query, given)
        metric_at, n_at = columns.index("metric"), columns.index("n")
        defined = {row[metric_at] for row in rows if row[n_at]}
        rows = [row for row in rows if row[metric_at] in defined]
        if self.shape is not None:
            columns, rows = self.shape(columns, rows)
        return ReportResult(self.name, self.title, columns, rows)


register_report(
    SharedMetricsReport(
        "compare",
        "Model comparison — instance means side by side",
        "model_comparison",
        shape=compare_side_by_side,
    )
)
register_report(
    StatisticsReport(
        "compare-ci",
        "Model comparison — means with 95 % bootstrap CIs, paired differences vs the first run",
        "model_comparison",
        terms=(
            (
                "Wilcoxon p",
                "two-sided p of Wilcoxon's signed-rank test on the n pairs (this run − the "
                f"first on the same instances); {WILCOXON_TOO_FEW}, or when every pair is equal",
            ),
        ),
    )
)
