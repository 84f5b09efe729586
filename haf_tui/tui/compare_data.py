"""What the comparison view shows, computed off the event loop: the runs, the metrics the
chosen runs' shared suites declare (HAF's six first, in registry order), each chosen run's
means of them with bootstrap intervals, each against the first chosen run (the reference) as a
paired difference on their common instances, and the order instances are stepped through."""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from haf_tui.methods.declare import MetricSpec
from haf_tui.methods.registry import metric_specs
from haf_tui.reports.compared_metrics import shared_suites, with_values
from haf_tui.reports.comparison import (
    CONFIDENCE,
    N_RESAMPLES,
    SEED,
    MeanInterval,
    Overlap,
    PairedDifference,
    mean_interval,
    overlap,
    paired_difference,
)
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

BOOTSTRAP: tuple[int, int, float] = (SEED, N_RESAMPLES, CONFIDENCE)
"""What an interval depends on besides the values: the seed, resamples and confidence (part of
every kept interval's key)."""

T = TypeVar("T")


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


def compared_metrics(
    runs: Sequence[ComparedRun],
    values: RunValues,
    versions: dict[str, RunVersion] | None = None,
    database: str = "",
) -> list[MetricSpec]:
    """The metrics of the suites every one of ``runs`` holds that some of them has a value of
    (with ``versions`` and ``database``: which metrics a run has values of kept per version)."""
    declared = declared_metrics(shared_suites(run.suites for run in runs))
    defined: set[str] = set()
    for run in runs:
        version = (versions or {}).get(run.run_id)
        of_run = {run.run_id: values.get(run.run_id, {})}
        defined.update(
            spec.name
            for spec in _kept(
                ("defined", database, run.run_id, version, tuple(s.name for s in declared)),
                partial(with_values, declared, of_run),
                version is not None and bool(database),
            )
        )
    return [spec for spec in declared if spec.name in defined]


def load_compare_data(store: Store, database: str = "") -> CompareData:
    """Read the runs and their instance values (thread worker); with ``database`` (the file's
    path) a run's values read before at its version are taken from :data:`VALUES_CACHE`."""
    versions = run_versions(store)  # (first: the values read after it are at least as new)
    runs = compared_runs(store)
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
) -> list[RunStatistics]:
    """Means with intervals for each of ``runs`` of the ``metrics`` (stored names; None: every
    metric of the suites the runs share; those shown: :func:`compared_metrics`); each run
    after the first, on the same dataset, paired with the first (thread worker: the bootstrap
    takes a moment at 20k). With ``versions`` and ``database`` (the data's), an interval
    computed before for a run at its version is taken from :data:`RUN_CACHE`."""
    if metrics is None:
        names = [s.name for s in declared_metrics(shared_suites(run.suites for run in runs))]
    else:
        names = list(metrics)
    shown = tuple(
        spec for spec in compared_metrics(runs, values, versions, database) if spec.name in names
    )
    found: list[RunStatistics] = []
    reference = runs[0] if runs else None
    for index, run in enumerate(runs):
        of_run = values.get(run.run_id, {})
        version = (versions or {}).get(run.run_id)
        means = {
            m: _kept(
                ("mean", database, run.run_id, version, m, BOOTSTRAP),
                _mean_of(of_run, m),
                version is not None and bool(database),
            )
            for m in names
        }
        paired = split = None
        if reference is not None and index and run.dataset_id == reference.dataset_id:
            of_reference = values.get(reference.run_id, {})
            split = overlap(of_reference, of_run)
            pair = (reference.run_id, (versions or {}).get(reference.run_id), run.run_id, version)
            paired = {
                m: _kept(
                    ("paired", database, *pair, m, BOOTSTRAP),
                    _paired_of(of_reference, of_run, m),
                    None not in pair and bool(database),
                )
                for m in names
            }
        found.append(RunStatistics(run, letter(index), means, paired, split, shown))
    return found


def _kept(key: tuple[object, ...], compute: Callable[[], T], keep: bool) -> T:
    """``compute()``, kept in :data:`RUN_CACHE` under ``key`` when ``keep``."""
    return RUN_CACHE.computed_once(key, compute) if keep else compute()


def _mean_of(of_run: dict[str, dict[str, float | None]], metric: str) -> Callable[[], MeanInterval]:
    """What computes a run's interval of ``metric`` (called only when it is not kept)."""
    return lambda: mean_interval(_metric(of_run, metric))


def _paired_of(
    of_reference: dict[str, dict[str, float | None]],
    of_run: dict[str, dict[str, float | None]],
    metric: str,
) -> Callable[[], PairedDifference]:
    """What computes a run's paired difference with the reference (called when not kept)."""
    return lambda: paired_difference(_metric(of_reference, metric), _metric(of_run, metric))


def _metric(of_run: dict[str, dict[str, float | None]], metric: str) -> dict[str, float | None]:
    return {instance: metrics.get(metric) for instance, metrics in of_run.items()}


def instance_order(run_ids: Sequence[str], values: RunValues) -> list[str]:
    """The finished instances of any of ``run_ids``: the first run's in dataset order, then
    those only later runs have."""
    return list(dict.fromkeys(i for run_id in run_ids for i in values.get(run_id, {})))
