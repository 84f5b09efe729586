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
from haf_tui.reports import bootstrap
from haf_tui.reports.compared_metrics import shared_suites
from haf_tui.reports.comparison import (
    CONFIDENCE,
    N_RESAMPLES,
    SEED,
    MeanInterval,
    Overlap,
    PairedDifference,
    mean_intervals,
    overlap,
    paired_differences,
)
from haf_tui.reports.statistics_files import Kind, PairStatistics, StatisticsFiles, StatisticsKey
from haf_tui.store import Store
from haf_tui.store.comparison_readers import (
    ComparedRun,
    RunValues,
    RunVersion,
    compared_runs,
    run_metric_values,
    run_versions,
)
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
    """The runs to compare with run ``around``: ``around`` and the finished runs that hold its
    first suite some other finished run holds too (so the chosen runs share that suite and
    have metrics to compare); when no finished run shares one, the unfinished runs that do;
    only ``around`` when no run shares one (an unknown id: none)."""
    this = next((run for run in runs if run.run_id == around), None)
    if this is None:
        return []
    others = [run for run in runs if run.run_id != around]
    finished = [run for run in others if run.status == "finished"]
    for candidates in (finished, others):
        for suite in this.suites:
            sharing = {run.run_id for run in candidates if suite in run.suites}
            if sharing:
                return [run.run_id for run in runs if run.run_id in sharing or run is this]
    return [around]


def first_choice(
    runs: Sequence[ComparedRun], asked: Sequence[str], around: str | None
) -> list[str]:
    """The runs a comparison opens with: those whose id starts with one ``asked``, else those
    sharing a suite with run ``around`` (:func:`sharing_a_suite`), else every finished run
    (every run if fewer than two finished)."""
    wanted = [run.run_id for run in runs if any(run.run_id.startswith(a) for a in asked)]
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


@dataclass
class _Found:
    """What one run's means or one pair's differences hold so far, and how to compute the
    rest (the key None: nothing is kept)."""

    key: StatisticsKey | None
    kept: dict[str, Any]
    split: Overlap | None = None
    changed: bool = False


def _statistics(
    runs: Sequence[ComparedRun],
    values: RunValues | None,
    metrics: Sequence[str] | None,
    versions: dict[str, RunVersion],
    database: str,
    files: StatisticsFiles | None,
) -> list[RunStatistics] | None:
    declared = declared_metrics(shared_suites(run.suites for run in runs))
    names = list(dict.fromkeys([s.name for s in declared] if metrics is None else metrics))
    wanted = list(dict.fromkeys([*names, *(s.name for s in declared)]))
    shelf = _Shelf(database, files)
    means = {run.run_id: shelf.means(run.run_id, versions.get(run.run_id)) for run in runs}
    reference = runs[0] if runs else None
    pairs: dict[str, _Found] = {}
    for run in runs[1:]:
        if reference is not None and run.dataset_id == reference.dataset_id:
            pairs[run.run_id] = shelf.pair(reference.run_id, run.run_id, versions)
    missing_means = [(r, m) for r, found in means.items() for m in wanted if m not in found.kept]
    missing_pairs = [(r, m) for r, found in pairs.items() for m in names if m not in found.kept]
    unsplit = [r for r, found in pairs.items() if found.split is None]
    if missing_means or missing_pairs or unsplit:
        if values is None:
            return None
        _compute(values, means, pairs, missing_means, missing_pairs, reference)
        shelf.keep(means, pairs)
    defined = {m for found in means.values() for m in wanted if found.kept[m].n}
    shown = tuple(spec for spec in declared if spec.name in defined and spec.name in names)
    out: list[RunStatistics] = []
    for index, run in enumerate(runs):
        of_run = {m: means[run.run_id].kept[m] for m in names}
        pair = pairs.get(run.run_id)
        paired = None if pair is None else {m: pair.kept[m] for m in names}
        split = None if pair is None else pair.split
        out.append(RunStatistics(run, letter(index), of_run, paired, split, shown))
    return out


def _compute(
    values: RunValues,
    means: dict[str, _Found],
    pairs: dict[str, _Found],
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


class _Shelf:
    """Where a comparison's statistics are kept: :data:`RUN_CACHE` in front of the files."""

    def __init__(self, database: str, files: StatisticsFiles | None) -> None:
        self.database = database
        self._files: StatisticsFiles | None = files

    @property
    def files(self) -> StatisticsFiles:
        """The files (those under ``$HAF_HOME`` unless told: looked up when first needed)."""
        if self._files is None:
            self._files = StatisticsFiles()
        return self._files

    def key(self, kind: Kind, *runs: tuple[str, RunVersion | None]) -> StatisticsKey | None:
        """The key of ``runs`` at their versions (None: a version unknown, or no database)."""
        if not self.database or any(version is None for _, version in runs):
            return None
        at = tuple((run_id, version) for run_id, version in runs if version is not None)
        method = bootstrap.method_versions()
        return StatisticsKey(kind, self.database, at, SEED, N_RESAMPLES, CONFIDENCE, method)

    def means(self, run_id: str, version: RunVersion | None) -> _Found:
        """A run's kept means (in memory, else in its file)."""
        key = self.key("means", (run_id, version))
        if key is None:
            return _Found(None, {})
        held = RUN_CACHE.get(key)
        if isinstance(held, _Found):
            return _Found(key, dict(held.kept))
        return _Found(key, dict(self.files.read_means(key) or {}))

    def pair(self, first: str, second: str, versions: dict[str, RunVersion]) -> _Found:
        """A pair's kept differences and overlap (in memory, else in its file)."""
        key = self.key("paired", (first, versions.get(first)), (second, versions.get(second)))
        if key is None:
            return _Found(None, {})
        held = RUN_CACHE.get(key)
        if isinstance(held, _Found):
            return _Found(key, dict(held.kept), held.split)
        read = self.files.read_pair(key)
        if read is None:
            return _Found(key, {})
        return _Found(key, dict(read.paired), read.overlap)

    def keep(self, means: dict[str, _Found], pairs: dict[str, _Found]) -> None:
        """Keep what changed, in memory and in its file."""
        for found in means.values():
            if found.key is not None and found.changed:
                RUN_CACHE.put(found.key, _Found(found.key, dict(found.kept)))
                self.files.write_means(found.key, found.kept)
        for found in pairs.values():
            if found.key is not None and found.changed:
                RUN_CACHE.put(found.key, _Found(found.key, dict(found.kept), found.split))
                self.files.write_pair(found.key, PairStatistics(found.kept, found.split))


def _metric(of_run: dict[str, dict[str, float | None]], metric: str) -> dict[str, float | None]:
    return {instance: metrics.get(metric) for instance, metrics in of_run.items()}


def instance_order(run_ids: Sequence[str], values: RunValues) -> list[str]:
    """The finished instances of any of ``run_ids``: the first run's in dataset order, then
    those only later runs have."""
    return list(dict.fromkeys(i for run_id in run_ids for i in values.get(run_id, {})))
