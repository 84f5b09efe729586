"""What the metrics screen draws, read once in a thread worker: the runs, every report the
methods' panels name or read (all runs), the instance values of their histogram metrics
binned, and what each panel's own loader reads (its ``PanelSpec.load``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text

from haf_tui.methods.declare import PanelSpec
from haf_tui.methods.registry import panels
from haf_tui.reports import (
    NamedQuery,
    ReportResult,
    charts,
    get_report,
    load_queries,
    run_report,
)
from haf_tui.store import Store
from haf_tui.store.comparison_readers import compared_runs
from haf_tui.store.readers import defined_metric_values, suites_text
from haf_tui.tui.run_cache import RUN_CACHE, DatabaseState


@dataclass(frozen=True)
class RunInfo:
    """One stored run as the run selector shows it (``n_planned``: the instances its
    dataset gave it; ``run_label``: the one ``L`` gave it)."""

    run_id: str
    model_file: str
    dataset_id: str
    status: str
    n_done: int
    suites: tuple[str, ...] = ("haf",)
    run_label: str | None = None
    n_planned: int = 0

    @property
    def label(self) -> str:
        """``model · dataset · run id``."""
        return f"{Path(self.model_file).stem} · {self.dataset_id} · {self.run_id}"


def run_prompts(runs: Sequence[RunInfo]) -> dict[str, Text]:
    """Each run as the metrics screen's run list shows it, on one line that the list cuts at
    its width, so what tells the runs apart comes first: its label (if any), its suites when
    they differ between the runs, the end of its id, then those of model and dataset with its
    size (``n=``) that differ, then what all the runs share."""
    parts = {
        run.run_id: (
            suites_text(run.suites),
            Path(run.model_file).stem,
            f"{run.dataset_id} n={run.n_planned}",
        )
        for run in runs
    }
    differ = [len({found[k] for found in parts.values()}) > 1 for k in range(3)]
    prompts: dict[str, Text] = {}
    for run in runs:
        found = parts[run.run_id]
        head = [run.run_label] if run.run_label else []
        head += [found[0]] if differ[0] else []
        tail = [found[k] for k in (1, 2) if differ[k]]
        tail += [found[k] for k in range(3) if not differ[k]]
        prompt = Text(" · ".join(head) + " " if head else "")
        prompt.append(run.run_id[-4:], style="dim")
        prompt.append("".join(f" · {part}" for part in tail))
        prompts[run.run_id] = prompt
    return prompts


@dataclass
class MetricsData:
    """Everything the panels draw, read once: every report for all runs, binned values, and
    each panel's extra data by panel key."""

    runs: list[RunInfo]
    reports: dict[str, ReportResult]
    histograms: dict[tuple[str, str], charts.Histogram] = field(default_factory=dict)
    extra: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    loaded: frozenset[str] | None = None
    """The panes whose data this holds (None: every pane's)."""

    def holds(self, pane: str) -> bool:
        """Whether ``pane``'s data was read."""
        return self.loaded is None or pane in self.loaded


def panel_specs() -> list[PanelSpec]:
    """Every method's metric panels, in registry order (key 1 first)."""
    return [panel for _, panel in panels()]


NUMBERED = 9
"""Panels with a number key (1–9); the others are reached with ``]`` / ``[``."""


def tab_label(number: int, spec: PanelSpec, *, short: bool = False) -> str:
    """A panel's tab: its key's number (the first :data:`NUMBERED`) and its title (``short``:
    its short one, where the full titles do not all fit)."""
    title = spec.tab if short else spec.title
    return f"{number} {title}" if number <= NUMBERED else title


def reports_read(specs: list[PanelSpec]) -> list[str]:
    """The reports ``specs`` name or read, each once, in order."""
    names: list[str] = []
    for spec in specs:
        names.extend(name for name in (*spec.reports, *spec.also_reads) if name not in names)
    return names


def histogram_metrics(specs: list[PanelSpec]) -> list[str]:
    """The instance metrics ``specs`` bin into histograms, each once, in order."""
    names: list[str] = []
    for spec in specs:
        names.extend(name for name in spec.histograms if name not in names)
    return names


def bin_values(
    store: Store, runs: list[RunInfo], metrics: list[str]
) -> dict[tuple[str, str], charts.Histogram]:
    """The instance values of ``metrics`` binned per (run, metric), one range per metric over
    all runs; instances without a value count as undefined."""
    values = {(v.run_id, v.metric): list(v.values) for v in defined_metric_values(store, metrics)}
    histograms: dict[tuple[str, str], charts.Histogram] = {}
    for metric in metrics:
        of_metric = [v for (_, m), found in values.items() if m == metric for v in found]
        bounds = charts.value_range(of_metric)
        for run in runs:
            found = values.get((run.run_id, metric), [])
            padded = found + [None] * max(0, run.n_done - len(found))
            histograms[(run.run_id, metric)] = charts.histogram(padded, value_range_=bounds)
    return histograms


def kept_report(
    store: Store,
    name: str,
    state: DatabaseState | None,
    library: Mapping[str, NamedQuery] | None = None,
) -> ReportResult:
    """Report ``name`` as read before from the database in the same ``state``
    (:func:`~haf_tui.tui.run_cache.database_state`) with the same SQL (its query in
    ``library``, the named queries as loaded for this read), else read (and kept; ``state``
    None, or its query not in ``library``: read, nothing kept)."""
    query = (library or {}).get(get_report(name).query)
    if state is None or query is None:
        return run_report(store, name)
    key = ("metrics report", state, name, query.sql)
    return RUN_CACHE.computed_once(key, lambda: run_report(store, name))


def load_metrics_data(
    store: Store,
    panes: Sequence[str] | None = None,
    known: MetricsData | None = None,
    state: DatabaseState | None = None,
) -> MetricsData:
    """Read the runs, every report the panels name or read, bin their histogram metrics
    (:func:`bin_values`) and call each panel's loader. Runs in a thread worker.

    ``panes`` (pane ids): only what those panels need (the one shown first; the rest after
    it is on screen), with ``loaded`` saying which; ``known``: data read before for other
    panes, taken as it is (reports and histograms already there are not read again);
    ``state``: the database's state taken before this read: reports read and histograms
    binned from it before are not read again (:func:`kept_report`)."""
    specs = [s for s in panel_specs() if panes is None or s.key in panes]
    runs = (
        known.runs
        if known is not None
        else [  # (the panes read first: the same runs; without the runs list's means)
            RunInfo(
                run.run_id,
                run.model_file,
                run.dataset_id,
                run.status,
                run.n_done,
                run.suites,
                run.label,
                run.n_planned,
            )
            for run in compared_runs(store)
        ]
    )
    reports = dict(known.reports) if known is not None else {}
    library = load_queries() if state is not None else None  # (once: every report's SQL)
    reports.update(
        (name, kept_report(store, name, state, library))
        for name in reports_read(specs)
        if name not in reports
    )
    histograms = dict(known.histograms) if known is not None else {}
    wanted = [m for m in histogram_metrics(specs) if not any(k[1] == m for k in histograms)]
    if wanted and state is not None:  # (binned from the runs and values of this state)
        key = ("metrics histograms", state, tuple(wanted), tuple(runs))
        histograms.update(RUN_CACHE.computed_once(key, lambda: bin_values(store, runs, wanted)))
    elif wanted:
        histograms.update(bin_values(store, runs, wanted))
    extra = dict(known.extra) if known is not None else {}
    extra.update(
        (spec.key, spec.load(store, reports))
        for spec in specs
        if spec.load is not None and spec.key not in extra
    )
    loaded = None
    if panes is not None:
        before = known.loaded if known is not None and known.loaded is not None else frozenset()
        loaded = frozenset(panes) | before
    return MetricsData(runs, reports, histograms, extra, loaded)
