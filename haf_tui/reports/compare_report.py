"""``haf report --report compare-ci --run A --run B``: each HAF metric per run with its
bootstrap interval, and each run against the first as a paired difference with Wilcoxon's
test (the statistics of :mod:`haf_tui.reports.comparison`, as the workbench's comparison view
shows them). Registered on import."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from haf_tui.reports.comparison import mean_interval, paired_difference
from haf_tui.reports.queries import Row, run_named
from haf_tui.reports.registry import Report, ReportResult, register_report
from haf_tui.store import Store
from haf_tui.store.comparison_readers import HAF_METRICS, run_metric_values
from haf_tui.vocabulary import METRIC_LABELS

COLUMNS: Final = [
    "metric", "run", "model", "dataset", "mean", "CI low", "CI high", "n",
    "Δ vs first", "Δ CI low", "Δ CI high", "Wilcoxon p", "n pairs", "only first", "only this",
]  # fmt: skip
"""One row per metric × run; the Δ columns are empty for the first run and for a run on
another dataset (not paired). CI: 95 % percentile bootstrap over instances."""


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
        values = run_metric_values(store, list(runs))
        out: list[Row] = []
        first = next(iter(runs), None)
        for metric in HAF_METRICS:
            label = {str(k): v for k, v in METRIC_LABELS.items()}[metric]
            of_first = {i: v.get(metric) for i, v in values.get(first or "", {}).items()}
            for run_id, (model, dataset) in runs.items():
                of_run = {i: v.get(metric) for i, v in values[run_id].items()}
                mean = mean_interval(of_run)
                row: list[Any] = [label, run_id, model, dataset, mean.mean, mean.low,
                                  mean.high, mean.n]  # fmt: skip
                if run_id != first and first is not None and dataset == runs[first][1]:
                    d = paired_difference(of_first, of_run)
                    row += [d.mean, d.low, d.high, d.p_value, d.n, len(d.only_first),
                            len(d.only_second)]  # fmt: skip
                else:
                    row += [None] * 7
                out.append(tuple(row))
        return ReportResult(self.name, self.title, list(COLUMNS), out)


register_report(
    StatisticsReport(
        "compare-ci",
        "Model comparison — means with 95 % bootstrap CIs, paired differences vs the first run",
        "model_comparison",
    )
)
