"""What the comparison view shows, computed off the event loop: the runs, the metrics the
chosen runs' shared suites declare (HAF's six first, in registry order), each chosen run's
means of them with bootstrap intervals, each against the first chosen run (the reference) as a
paired difference on their common instances, and the order instances are stepped through."""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haf_tui.methods.declare import MetricSpec
from haf_tui.methods.registry import metric_specs
from haf_tui.reports.compared_metrics import shared_suites
from haf_tui.reports.comparison import (
    MeanInterval,
    Overlap,
    PairedDifference,
    difference_without_interval,
    mean_intervals,
    mean_without_interval,
    overlap,
    paired_differences,
)
from haf_tui.reports.statistics_files import StatisticsFiles
from haf_tui.store import Store
from haf_tui.store.comparison_readers import (
    ComparedRun,
    DefinedValues,
    RunValues,
    RunVersion,
    compared_runs,
    defined_metric_values,
    run_metric_values,
    run_versions,
)
from haf_tui.tui.compare_shelf import Found, Shelf
from haf_tui.tui.run_cache import RUN_CACHE, VALUES_CACHE


@dataclass(frozen=True)
class CompareData:
    """Every run, and every instance metric its suites declare of every finished instance of
    each, read once."""

    runs: list[ComparedRun]
    values: RunValues
    versions: dict[str, RunVersion] = field(default_factory=dict)
    """Each run's version when its values were read (what its kept statistics are keyed by)."""
    database: str = ""
    """The database file read (with the versions, the key of what is kept)."""
    values_read: bool = True
    """False: only the runs were read yet (``values`` empty): :func:`list_runs`."""


@dataclass(frozen=True)
class RunStatistics:
    """One chosen run: its letter, means with intervals, and (not for the reference, nor a
    run on another dataset) the paired differences against the reference and which finished
    instances only one of the two has; ``metrics``: what the chosen runs compare, the same
    for each (the metrics of their shared suites some chosen run has a value of)."""

    run: ComparedRun
    letter: str
    means: dict[str, MeanInterval]
    paired: dict[str, PairedDifference] | None
    overlap: Overlap | None
    metrics: tuple[MetricSpec, ...] = ()
    pending: frozenset[str] = frozenset()
    """The metrics whose mean's interval is not computed yet (n and the mean are final)."""
    pending_paired: frozenset[str] = frozenset()
    """The metrics whose paired difference's interval and Wilcoxon test are not computed yet
    (n pairs and the mean difference are final)."""
    pairing: bool = False
    """Paired with the reference, the differences not computed yet (``paired`` None: the
    instance values are still being read)."""

    @property
    def computing(self) -> bool:
        """Whether an interval, a test or the paired differences are still being computed."""
        return bool(self.pending or self.pending_paired or self.pairing)

    @property
    def model(self) -> str:
        """The model file's name without ``.gguf``."""
        return Path(self.run.model_file).stem


def declared_metrics(suites: Sequence[str] | None) -> list[MetricSpec]:
    """The per-instance metrics the methods called ``suites`` (None: all) declare, in registry
    order."""
    return [spec for spec in metric_specs(suites).values() if spec.per == "instance"]


def list_runs(store: Store, database: str = "") -> CompareData:
    """The runs and their versions alone (thread worker; a moment even at 5,000 × 4): enough
    to choose runs and show their kept statistics (:func:`kept_statistics`) before their
    values are read; ``values_read`` False."""
    versions = run_versions(store)  # (first: the values read after it are at least as new)
    return CompareData(compared_runs(store), {}, versions, database, values_read=False)


def load_compare_data(
    store: Store, database: str = "", listed: CompareData | None = None
) -> CompareData:
    """Read the runs (those ``listed`` already, with their versions, unless None) and their
    instance values (thread worker); with ``database`` (the file's path) a run's values read
    before at its version are taken from :data:`VALUES_CACHE`."""
    if listed is None:
        listed = list_runs(store, database)
    versions, runs = listed.versions, listed.runs
    held = list(dict.fromkeys(suite for run in runs for suite in run.suites))
    names = tuple(spec.name for spec in declared_metrics(held))

    def key(run_id: str) -> tuple[object, ...]:
        return ("values", database, run_id, versions.get(run_id), names)

    values: RunValues = {}
    for run in runs:
        found = VALUES_CACHE.get(key(run.run_id)) if database else None
        if isinstance(found, dict):
            values[run.run_id] = found
    missing = [run.run_id for run in runs if run.run_id not in values]
    if missing:
        read = run_metric_values(store, missing, names)
        for run_id in missing:
            values[run_id] = read[run_id]
            if database:
                VALUES_CACHE.put(key(run_id), read[run_id])
    return CompareData(runs, {run.run_id: values[run.run_id] for run in runs}, versions, database)


def sharing_a_suite(runs: Sequence[ComparedRun], around: str) -> list[str]:
    """The runs to compare with run ``around``: ``around`` (first: the reference) and the
    finished runs that hold its first suite some other finished run holds too (so the chosen
    runs share that suite and have metrics to compare); when no finished run shares one, the
    unfinished runs that do; only ``around`` when no run shares one (an unknown id: none)."""
    this = next((run for run in runs if run.run_id == around), None)
    if this is None:
        return []
    others = [run for run in runs if run.run_id != around]
    finished = [run for run in others if run.status == "finished"]
    for candidates in (finished, others):
        for suite in this.suites:
            sharing = {run.run_id for run in candidates if suite in run.suites}
            if sharing:
                return [around, *(run.run_id for run in runs if run.run_id in sharing)]
    return [around]


def first_choice(
    runs: Sequence[ComparedRun], asked: Sequence[str], around: str | None
) -> list[str]:
    """The runs a comparison opens with, the reference first: those whose id starts with one
    ``asked``, in the order asked (as ``haf report --report compare-ci --run A --run B``
    compares B with A), else those sharing a suite with run ``around``
    (:func:`sharing_a_suite`: ``around`` first), else every finished run (every run if fewer
    than two finished), in the list's order."""
    matches = (run.run_id for a in asked for run in runs if run.run_id.startswith(a))
    wanted = list(dict.fromkeys(matches))
    if not wanted and around is not None:
        wanted = sharing_a_suite(runs, around)
    finished = [run.run_id for run in runs if run.status == "finished"]
    return wanted or (finished if len(finished) > 1 else [run.run_id for run in runs])


def letter(index: int) -> str:
    """A, B, …, Z, then A2, B2, …: the short name of the ``index``-th chosen run."""
    letters = string.ascii_uppercase
    suffix = "" if index < len(letters) else str(index // len(letters) + 1)
    return letters[index % len(letters)] + suffix


def run_statistics(
    runs: Sequence[ComparedRun],
    values: RunValues,
    metrics: Sequence[str] | None = None,
    *,
    versions: dict[str, RunVersion] | None = None,
    database: str = "",
    files: StatisticsFiles | None = None,
) -> list[RunStatistics]:
    """Means with intervals for each of ``runs`` of the ``metrics`` (stored names; None: every
    metric of the suites the runs share; those shown: those some run has a value of); each run
    after the first, on the same dataset, paired with the first (thread worker: the bootstrap
    takes a moment at 20k). With ``versions`` and ``database`` (the data's), what was computed
    before for a run at its version is taken from :data:`RUN_CACHE`, else from the files
    (``files``; None: those under ``$HAF_HOME``), and what is computed is kept in both."""
    found = _statistics(runs, values, metrics, versions or {}, database, files)
    assert found is not None  # (with the values, whatever is not kept is computed)
    return found


def statistics_at_once(
    runs: Sequence[ComparedRun],
    values: RunValues | None = None,
    *,
    defined: DefinedValues | None = None,
    versions: dict[str, RunVersion] | None = None,
    database: str = "",
    files: StatisticsFiles | None = None,
) -> list[RunStatistics]:
    """:func:`run_statistics` of every metric without computing an interval: what is kept as
    it is, the rest's n and mean (the same numbers the computation gives) with their intervals
    and tests marked pending (:attr:`RunStatistics.pending`; nothing kept): what a first
    comparison shows while :func:`run_statistics` computes them (a moment at 5,000 × 4).
    From ``defined`` (:func:`read_defined`, before the values are read) instead of ``values``:
    the means and n alone, a pair not kept :attr:`RunStatistics.pairing`."""
    found = _statistics(
        runs, values, None, versions or {}, database, files, at_once=True, defined=defined
    )
    assert found is not None  # (with the values, whatever is not kept is pending)
    return found


def read_defined(store: Store, runs: Sequence[ComparedRun]) -> DefinedValues:
    """The defined values of every metric the ``runs`` compare (thread worker: 60 ms at
    5,000 × 4, where their values take 150–300 ms), for :func:`statistics_at_once`."""
    declared = declared_metrics(shared_suites(run.suites for run in runs))
    return defined_metric_values(store, [run.run_id for run in runs], [s.name for s in declared])


def kept_statistics(
    runs: Sequence[ComparedRun],
    versions: dict[str, RunVersion],
    database: str,
    files: StatisticsFiles | None = None,
) -> list[RunStatistics] | None:
    """:func:`run_statistics` of every metric from what is kept alone (no values read, nothing
    computed: what a comparison opened again shows at once); None when something is not kept
    (a run never compared at its version, or without a version)."""
    return _statistics(runs, None, None, versions, database, files)


def _statistics(
    runs: Sequence[ComparedRun],
    values: RunValues | None,
    metrics: Sequence[str] | None,
    versions: dict[str, RunVersion],
    database: str,
    files: StatisticsFiles | None,
    at_once: bool = False,
    defined: DefinedValues | None = None,
) -> list[RunStatistics] | None:
    declared = declared_metrics(shared_suites(run.suites for run in runs))
    names = list(dict.fromkeys([s.name for s in declared] if metrics is None else metrics))
    wanted = list(dict.fromkeys([*names, *(s.name for s in declared)]))
    shelf = Shelf(database, files)
    means = {run.run_id: shelf.means(run.run_id, versions.get(run.run_id)) for run in runs}
    reference = runs[0] if runs else None
    pairs: dict[str, Found] = {}
    for run in runs[1:]:
        if reference is not None and run.dataset_id == reference.dataset_id:
            pairs[run.run_id] = shelf.pair(reference.run_id, run.run_id, versions)
    missing_means = [(r, m) for r, found in means.items() for m in wanted if m not in found.kept]
    missing_pairs = [(r, m) for r, found in pairs.items() for m in names if m not in found.kept]
    unsplit = [r for r, found in pairs.items() if found.split is None]
    pending: dict[str, set[str]] = {}
    pending_paired: dict[str, set[str]] = {}
    pairing: set[str] = set()
    if (missing_means or missing_pairs or unsplit) and values is None and defined is None:
        return None
    if at_once:
        pairing = _without_intervals(
            values, defined or {}, means, pairs, missing_means, missing_pairs, reference
        )
        for run_id, metric in missing_means:
            pending.setdefault(run_id, set()).add(metric)
        for run_id, metric in missing_pairs:
            pending_paired.setdefault(run_id, set()).add(metric)
    elif values is not None and (missing_means or missing_pairs or unsplit):
        _compute(values, means, pairs, missing_means, missing_pairs, reference)
        shelf.keep(means, pairs)
    some = {m for found in means.values() for m in wanted if found.kept[m].n}
    shown = tuple(spec for spec in declared if spec.name in some and spec.name in names)
    out: list[RunStatistics] = []
    for index, run in enumerate(runs):
        of_run = {m: means[run.run_id].kept[m] for m in names}
        pair = None if run.run_id in pairing else pairs.get(run.run_id)
        paired = None if pair is None else {m: pair.kept[m] for m in names}
        split = None if pair is None else pair.split
        waiting = frozenset(pending.get(run.run_id, ()))
        waiting_paired = frozenset(pending_paired.get(run.run_id, ()))
        found = RunStatistics(
            run, letter(index), of_run, paired, split, shown, waiting, waiting_paired,
            pairing=run.run_id in pairing,
        )  # fmt: skip
        out.append(found)
    return out


def _without_intervals(
    values: RunValues | None,
    defined: DefinedValues,
    means: dict[str, Found],
    pairs: dict[str, Found],
    missing_means: list[tuple[str, str]],
    missing_pairs: list[tuple[str, str]],
    reference: ComparedRun | None,
) -> set[str]:
    """What is not kept without its intervals and tests (n and means only) into ``means`` and
    ``pairs``, marked as not to be kept; from ``defined`` (``values`` None) the means alone:
    the runs whose pair is not kept are returned (their differences wait for the values)."""
    for run_id, metric in missing_means:
        if values is None:
            sample: Any = defined.get(run_id, {}).get(metric, ())
        else:
            sample = _metric(values.get(run_id, {}), metric)
        means[run_id].kept[metric] = mean_without_interval(sample)
    if values is None:
        waiting = {run_id for run_id, _ in missing_pairs}
        return waiting | {run_id for run_id, pair in pairs.items() if pair.split is None}
    of_reference = values.get(reference.run_id, {}) if reference is not None else {}
    for run_id, metric in missing_pairs:
        of_run = _metric(values.get(run_id, {}), metric)
        pairs[run_id].kept[metric] = difference_without_interval(
            _metric(of_reference, metric), of_run
        )
    for paired_id, pair in pairs.items():
        if pair.split is None:
            pair.split = overlap(of_reference, values.get(paired_id, {}))
    return set()


def _compute(
    values: RunValues,
    means: dict[str, Found],
    pairs: dict[str, Found],
    missing_means: list[tuple[str, str]],
    missing_pairs: list[tuple[str, str]],
    reference: ComparedRun | None,
) -> None:
    """Compute what is not kept (every interval at once: those of one size share their
    resamples' indices) into ``means`` and ``pairs``."""
    samples = [_metric(values.get(r, {}), m) for r, m in missing_means]
    for (run_id, metric), interval in zip(missing_means, mean_intervals(samples), strict=True):
        means[run_id].kept[metric] = interval
        means[run_id].changed = True
    of_reference = values.get(reference.run_id, {}) if reference is not None else {}
    compared = [(_metric(of_reference, m), _metric(values.get(r, {}), m)) for r, m in missing_pairs]
    for (run_id, metric), difference in zip(
        missing_pairs, paired_differences(compared), strict=True
    ):
        pairs[run_id].kept[metric] = difference
        pairs[run_id].changed = True
    for run_id, pair in pairs.items():
        if pair.split is None:
            pair.split = overlap(of_reference, values.get(run_id, {}))
            pair.changed = True
    RUN_CACHE.count_computed(len(missing_means) + len(missing_pairs))


def _metric(of_run: dict[str, dict[str, float | None]], metric: str) -> dict[str, float | None]:
    return {instance: metrics.get(metric) for instance, metrics in of_run.items()}


def instance_order(run_ids: Sequence[str], values: RunValues) -> list[str]:
    """The finished instances of any of ``run_ids``: the first run's in dataset order, then
    those only later runs have."""
    return list(dict.fromkeys(i for run_id in run_ids for i in values.get(run_id, {})))
