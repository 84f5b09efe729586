"""Which metrics a comparison of runs compares: every per-instance metric the methods declare
for the suites all the compared runs hold, in registry order (HAF's six first, then
classify's, the rationales', the judge's, then a plug-in method's), less those no compared run
has a value for.

The method registry sits above this layer (a method's reports build on it): the registry a
program installs hands its methods' metrics over (:func:`use_declared_metrics`); a caller that
holds the specs already passes them in instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from haf_tui.store.comparison_readers import run_suites

if TYPE_CHECKING:
    from haf_tui.store import Store


class ComparedMetric(Protocol):
    """What a comparison reads of a metric declaration (a method's ``MetricSpec``): its stored
    name, label, better direction (None: neither), whether it is per instance or per reason,
    and its definition as one line."""

    @property
    def name(self) -> str:
        """The name as stored in ``instance_metrics.metric``."""

    @property
    def label(self) -> str:
        """The short label a table shows."""

    @property
    def better(self) -> str | None:
        """``higher``, ``lower`` or None (no better direction)."""

    @property
    def per(self) -> str:
        """``instance`` or ``reason``."""

    @property
    def arrow(self) -> str:
        """↑, ↓ or nothing."""

    def line(self) -> str:
        """The definition as one line."""


def shared_suites(suites_of_runs: Iterable[Sequence[str]]) -> tuple[str, ...]:
    """The suites every run holds (in the first run's order; no runs: none)."""
    found: list[str] | None = None
    for suites in suites_of_runs:
        found = list(suites) if found is None else [s for s in found if s in suites]
    return tuple(found or ())


_DECLARED: dict[str, tuple[ComparedMetric, ...]] = {}
"""Each installed method's metric declarations, by method name in registry order."""


def use_declared_metrics(declared: Mapping[str, Sequence[ComparedMetric]]) -> None:
    """The methods' metric declarations from now on (those handed over before forgotten)."""
    _DECLARED.clear()
    _DECLARED.update({name: tuple(specs) for name, specs in declared.items()})


def declared_metrics(suites: Sequence[str]) -> list[ComparedMetric]:
    """The per-instance metrics the methods called ``suites`` declare, in registry order."""
    specs = {
        spec.name: spec
        for name, of_method in _DECLARED.items()
        if name in suites
        for spec in of_method
    }
    return [spec for spec in specs.values() if spec.per == "instance"]


def run_metrics(store: Store, run_ids: Sequence[str]) -> list[ComparedMetric]:
    """The metrics of the suites the stored runs ``run_ids`` share (see the module)."""
    suites = run_suites(store, run_ids)
    return declared_metrics(shared_suites(suites[r] for r in run_ids if r in suites))


MetricT = TypeVar("MetricT", bound=ComparedMetric)


def with_values(
    metrics: Sequence[MetricT],
    values: Mapping[str, Mapping[str, Mapping[str, float | None]]],
    run_ids: Iterable[str] | None = None,
) -> list[MetricT]:
    """The ``metrics`` some run of ``run_ids`` (None: every run in ``values``) has a defined
    value of, for some instance (``values``: run → instance → metric → value)."""
    runs = list(values) if run_ids is None else list(run_ids)
    found: set[str] = set()
    for run_id in runs:
        for of_instance in values.get(run_id, {}).values():
            found.update(
                name
                for name, value in of_instance.items()
                if value is not None and not math.isnan(value)
            )
    return [metric for metric in metrics if metric.name in found]
