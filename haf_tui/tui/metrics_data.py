"""What the metrics screen draws, read once in a thread worker: the runs, every report the
panels need (all runs), the instance values binned for the histograms, and the judge runs'
meta-evaluation tables where they judged human-rated explanations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from haf_tui.methods.judge.reports.meta import meta_items, meta_tables
from haf_tui.reports import QueryError, ReportResult, get_query, run_report
from haf_tui.store import Store
from haf_tui.store.readers import defined_metric_values, run_overviews
from haf_tui.tui.widgets import charts
from haf_tui.vocabulary import METRIC_LABELS

HISTOGRAM_METRICS: Final = (
    *METRIC_LABELS.items(),
    ("decision_confidence_justify", "C(JUSTIFY)"),
)
"""(``instance_metrics.metric``, label) of the metrics with a histogram."""

REPORT_NAMES: Final = (
    "table1",
    "table2",
    "table4",
    "figure2",
    "stances",
    "unclear",
    "contradictions",
    "rationales",
    "judge",
    "judge-vs-haf",
    "judge-vs-haf-summary",
    "judge-mass",
)


@dataclass(frozen=True)
class RunInfo:
    """One stored run as the run selector shows it."""

    run_id: str
    model_file: str
    dataset_id: str
    status: str
    n_done: int

    @property
    def label(self) -> str:
        """``model · dataset · run id``."""
        return f"{Path(self.model_file).stem} · {self.dataset_id} · {self.run_id}"


@dataclass(frozen=True)
class JudgeMeta:
    """A judge run's meta-evaluation (spec ``JUDGE.md`` §5): its prompt, the explanations
    both humans and the judge rated, and Tables 4.1, 4.2 and 4.5."""

    prompt: str
    n_items: int
    tables: list[ReportResult]


@dataclass
class MetricsData:
    """Everything the panels draw, read once: every report for all runs, binned values."""

    runs: list[RunInfo]
    reports: dict[str, ReportResult]
    histograms: dict[tuple[str, str], charts.Histogram] = field(default_factory=dict)
    band_edges: tuple[float, float] = (0.6, 0.8)
    judge_meta: dict[str, JudgeMeta] = field(default_factory=dict)
    """Per judge run of human-rated explanations (an ACORN import): its meta tables."""


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


def load_metrics_data(store: Store) -> MetricsData:
    """Read the runs, every report of :data:`REPORT_NAMES`, and bin the instance values of
    :data:`HISTOGRAM_METRICS` (one range per metric over all runs; instances without a value
    count as undefined), and read the meta tables of the judge runs of human-rated
    explanations (:func:`load_judge_meta`). Runs in a thread worker."""
    runs = [
        RunInfo(run.run_id, run.model_file, run.dataset_id, run.status, run.done)
        for run in run_overviews(store)
    ]
    reports = {name: run_report(store, name) for name in REPORT_NAMES}
    metrics = [name for name, _ in HISTOGRAM_METRICS]
    values = {(v.run_id, v.metric): list(v.values) for v in defined_metric_values(store, metrics)}
    histograms: dict[tuple[str, str], charts.Histogram] = {}
    for metric in metrics:
        of_metric = [v for (_, m), found in values.items() if m == metric for v in found]
        bounds = charts.value_range(of_metric)
        for run in runs:
            found = values.get((run.run_id, metric), [])
            padded = found + [None] * max(0, run.n_done - len(found))
            histograms[(run.run_id, metric)] = charts.histogram(padded, value_range_=bounds)
    figure2 = get_query("figure2")
    edges = (float(figure2.param("low_edge").default), float(figure2.param("high_edge").default))
    judge = reports["judge"]
    judge_runs = [str(row[judge.columns.index("run")]) for row in judge.rows]
    return MetricsData(runs, reports, histograms, edges, load_judge_meta(store, judge_runs))
