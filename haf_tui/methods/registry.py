"""The methods a run can hold, by name, in one object: a :class:`MethodRegistry`, which
:func:`haf_tui.methods.loader.load_methods` builds from the built-in methods and every package
that declares an entry point in the ``haf_tui.methods`` group (``name = "package.module:METHOD"``,
a :class:`~haf_tui.methods.declare.Method`), so a researcher's own method installs beside
haf-tui without a fork (as harlequin finds adapters and Inspect finds providers).

A program loads the methods once, where it starts (``haf``'s main, the workbench, the test
session), and installs the registry (:meth:`MethodRegistry.install`): that hands what the
methods contribute to the layers below, which never load a method themselves — the settings
models to :class:`~haf_tui.config.RunConfig`, the reports, named queries' folders and metrics
to :mod:`haf_tui.reports`, the tables' migrations to the store
(:mod:`haf_tui.store.method_tables`). The pipeline and every face ask this module, never a
method by name; the functions below read the installed registry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel

from haf_tui.config import ModelSettings, RunConfig, use_legacy_settings, use_settings_models
from haf_tui.methods.base import Suite, Task
from haf_tui.methods.declare import Method, MetricSpec, PanelSpec, RateUnit
from haf_tui.methods.options import setting_options
from haf_tui.reports.compared_metrics import use_declared_metrics
from haf_tui.reports.queries import use_method_query_dirs
from haf_tui.reports.registry import Report, own_reports, use_method_reports
from haf_tui.store.method_tables import (
    MethodMigration,
    MethodTableError,
    check_method_tables,
    use_method_migrations,
)
from haf_tui.store.records import InstanceRecord
from haf_tui.vocabulary import HafError


class UnknownSuiteError(HafError, ValueError):
    """A run named a suite that is not registered."""


class MethodLoadError(HafError, RuntimeError):
    """A method's package could not be loaded or is not a method."""


class MethodsNotLoadedError(RuntimeError):
    """The program asked for the methods before it loaded them (a bug of the program: its
    start calls :func:`haf_tui.methods.loader.load_methods`)."""


@dataclasses.dataclass(frozen=True, repr=False)
class MethodRegistry:
    """The methods a program loaded, by name in the order a run schedules them, and one line
    for each installed method left out (``left_out``). Everything the methods contribute is
    read from here: their settings models, reports, named queries' folders, metrics and
    tables' migrations. Immutable: :meth:`with_method` gives a new one."""

    methods: Mapping[str, Method[Any]] = dataclasses.field(default_factory=dict)
    left_out: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"MethodRegistry(methods={list(self.methods)}, left_out={len(self.left_out)})"

    @property
    def settings_models(self) -> dict[str, type[BaseModel]]:
        """Each method's settings model, by method name."""
        return {name: m.settings for name, m in self.methods.items() if m.settings is not None}

    @property
    def legacy_settings(self) -> dict[str, tuple[str, str | None]]:
        """Where each method's settings were in a config stored before methods were packages:
        old top-level key → (method name, field; None: the whole settings table)."""
        return {
            key: (name, field)
            for name, m in self.methods.items()
            for key, field in m.legacy_settings.items()
        }

    @property
    def reports(self) -> dict[str, Report]:
        """Every method's reports, by report name."""
        return {r.name: r for method in self.methods.values() for r in method.reports}

    @property
    def query_dirs(self) -> tuple[Path, ...]:
        """The folders of named queries the methods bring, in registry order."""
        return tuple(m.queries_dir for m in self.methods.values() if m.queries_dir is not None)

    @property
    def migrations(self) -> dict[str, tuple[MethodMigration, ...]]:
        """Each method's own tables' migrations, by method name (those that have some)."""
        return {name: tuple(m.migrations) for name, m in self.methods.items() if m.migrations}

    def metric_specs(self, names: Sequence[str] | None = None) -> dict[str, MetricSpec]:
        """Every metric the methods called ``names`` (None: all) declare, by stored name."""
        return {
            spec.name: spec
            for name, method in self.methods.items()
            if names is None or name in names
            for spec in method.metrics
        }

    def with_method(self, method: Method[Any]) -> MethodRegistry:
        """This registry with ``method`` added (one of the same name replaced, in its place);
        :class:`MethodLoadError` (one line) when it cannot stand beside the others: its suite
        is not its own, it reuses a stage, a report name or a flag, or its tables could be
        haf's or another method's."""
        _check(method, {name: m for name, m in self.methods.items() if name != method.name})
        return dataclasses.replace(self, methods={**self.methods, method.name: method})

    def leaving_out(self, line: str) -> MethodRegistry:
        """This registry, saying of one more installed method that it was left out, why."""
        return dataclasses.replace(self, left_out=(*self.left_out, line))

    def check_config(self, data: Mapping[str, Any]) -> RunConfig:
        """A run config read from ``data``, each suite's settings checked by its method's
        settings model (pydantic's ``ValidationError`` when one is not)."""
        return RunConfig.model_validate(dict(data), context={"methods": self})

    def install(self) -> MethodRegistry:
        """Make this the program's registry (what the functions below read) and hand what its
        methods contribute to the layers below, replacing what an earlier one handed over."""
        global _installed
        use_settings_models(self.settings_models)
        use_legacy_settings(self.legacy_settings)
        use_method_reports(self.reports)
        use_method_query_dirs(self.query_dirs)
        use_declared_metrics({name: m.metrics for name, m in self.methods.items()})
        use_method_migrations(self.migrations)
        _installed = self
        return self


_installed: MethodRegistry | None = None


def installed() -> MethodRegistry | None:
    """The registry the program installed, if any."""
    return _installed


def current() -> MethodRegistry:
    """The registry the program installed; :class:`MethodsNotLoadedError` before any."""
    if _installed is None:
        raise MethodsNotLoadedError(
            "the methods are not loaded: call haf_tui.methods.loader.load_methods() where "
            "the program starts"
        )
    return _installed


def _check(method: Method[Any], others: Mapping[str, Method[Any]]) -> None:
    """Refuse (:class:`MethodLoadError`) a method that cannot stand beside ``others``."""
    if method.suite.name != method.name:
        raise MethodLoadError(f"method {method.name!r} holds the suite {method.suite.name!r}")
    taken = {stage for other in others.values() for stage in other.suite.stages}
    clash = taken.intersection(method.suite.stages)
    if clash:
        raise MethodLoadError(f"method {method.name!r} reuses the stage(s) {sorted(clash)}")
    _check_reports(method, others)
    _check_settings(method, others)
    try:
        check_method_tables(method.name, method.migrations, others=others)
    except MethodTableError as error:
        raise MethodLoadError(str(error)) from error


def _check_reports(method: Method[Any], others: Mapping[str, Method[Any]]) -> None:
    """Refuse a method whose report names are taken: by haf's own reports or another
    method's (adding it would replace theirs)."""
    taken = {**own_reports(), **{r.name: r for m in others.values() for r in m.reports}}
    clash = sorted(r.name for r in method.reports if r.name in taken and taken[r.name] is not r)
    if clash:
        raise MethodLoadError(f"method {method.name!r} reuses the report name(s) {clash}")


def _check_settings(method: Method[Any], others: Mapping[str, Method[Any]]) -> None:
    """Refuse settings that are no pydantic model, or whose flags are another method's."""
    if method.settings is None:
        return
    if not (isinstance(method.settings, type) and issubclass(method.settings, BaseModel)):
        raise MethodLoadError(f"method {method.name!r}: its settings are not a pydantic model")
    taken = {
        option.flag: name for name, other in others.items() for option in setting_options(other)
    }
    for option in setting_options(method):
        if option.flag in taken:
            raise MethodLoadError(
                f"method {method.name!r}: its flag {option.flag} is the method "
                f"{taken[option.flag]!r}'s"
            )


def methods() -> Mapping[str, Method[Any]]:
    """Every method of the installed registry by name: the built-in ones, then those of the
    entry point group that could be loaded (:func:`left_out` says why in one line of each
    that could not: one broken package never locks the user out of the others, nor of haf)."""
    return current().methods


def left_out() -> list[str]:
    """One line for each installed method the registry left out, saying why."""
    return list(current().left_out)


def register_method(method: Method[Any]) -> Method[Any]:
    """Add a method built at run time (a test's, a notebook's) to the installed registry and
    install the result, as :func:`~haf_tui.methods.loader.load_methods` adds an installed
    one: its settings, reports, named queries and tables' migrations handed over, a method of
    the same name replaced. Returns it."""
    current().with_method(method).install()
    return method


def method_named(name: str) -> Method[Any]:
    """The method called ``name``; a one-line error naming the known ones."""
    known = methods()
    if name not in known:
        raise UnknownSuiteError(f"unknown suite {name!r}: choose from {list(known)}")
    return known[name]


class _Suites(Mapping[str, Suite]):
    """The suites of :func:`methods`, by name (read at each use, so entry points count)."""

    def __getitem__(self, name: str) -> Suite:
        return methods()[name].suite

    def __iter__(self) -> Iterator[str]:
        return iter(methods())

    def __len__(self) -> int:
        return len(methods())


SUITES: Final[Mapping[str, Suite]] = _Suites()
"""Every suite by name, in the order a run schedules them."""


def default_suites() -> tuple[str, ...]:
    """What a new run holds unless told otherwise."""
    return tuple(name for name, method in methods().items() if method.default)


def preferred_parallel(suites: Sequence[str]) -> int:
    """The sequences a run of ``suites`` decodes together unless the user says: the fewest
    their methods ask for (``Method.n_parallel``) when every one of them asks for more than a
    run's default, else the default (a suite of long generations beside one of short forced
    scorings keeps it: its streams would grow to the whole context, n_parallel times). ``haf
    run`` and the wizard both start from it."""
    default = ModelSettings().n_parallel
    wanted = [m.n_parallel for name, m in methods().items() if name in suites]
    if not wanted or any(n is None or n <= default for n in wanted):
        return default
    return min(n for n in wanted if n is not None)


def suites_named(names: Sequence[str]) -> list[Suite]:
    """The suites called ``names``, in registry order; a one-line error for an unknown one."""
    unknown = [name for name in names if name not in SUITES]
    if unknown:
        raise UnknownSuiteError(f"unknown suite(s) {unknown}: choose from {list(SUITES)}")
    if not names:
        raise UnknownSuiteError(f"a run needs at least one suite: choose from {list(SUITES)}")
    return [suite for name, suite in SUITES.items() if name in names]


def methods_of(config: RunConfig) -> list[Method[Any]]:
    """The methods of a run's suites, in registry order (unknown names left out)."""
    return [method for name, method in methods().items() if name in config.suites]


def first_tasks(
    config: RunConfig, instance: InstanceRecord | None = None
) -> list[tuple[Suite, Task]]:
    """The tasks each suite of a run asks of one instance before any answer (``instance``
    None: a placeholder text, for counting them)."""
    instance = instance or InstanceRecord(instance_id="", position=0, text="")
    return [
        (suite, task)
        for suite in suites_named(config.suites)
        for task in suite.plan(instance, config).start()
    ]


def settle_config(config: RunConfig, instances: Sequence[InstanceRecord]) -> RunConfig:
    """The config a new run stores, once each of its suites has filled in what it reads from
    the dataset (a suite may define ``settle(config, instances)``; the rationales suite sets
    Top-Ratio's ratio)."""
    for suite in suites_named(config.suites):
        settle = getattr(suite, "settle", None)
        if callable(settle):
            config = settle(config, instances)
    return config


def run_stages(config: RunConfig) -> list[str]:
    """The stages of a run's suites, in order."""
    return [stage for suite in suites_named(config.suites) for stage in suite.run_stages(config)]


def stage_units(config: RunConfig) -> dict[str, RateUnit]:
    """The rate unit of each stage of a run (its method's declaration), in order."""
    return {stage: method_of_stage(stage).unit(stage, config) for stage in run_stages(config)}


def stage_titles() -> dict[str, str]:
    """Every stage of every suite with its short title, in order."""
    return {stage: title for suite in SUITES.values() for stage, title in suite.titles.items()}


def suite_of_stage(stage: str) -> Suite:
    """The suite whose generations are stored under ``stage``."""
    return method_of_stage(stage).suite


def method_of_stage(stage: str) -> Method[Any]:
    """The method whose generations are stored under ``stage``."""
    for method in methods().values():
        if stage in method.suite.stages:
            return method
    raise UnknownSuiteError(f"no suite has the stage {stage!r}")


def metric_specs(names: Sequence[str] | None = None) -> dict[str, MetricSpec]:
    """Every metric declared by the methods called ``names`` (None: all), by stored name."""
    return current().metric_specs(names)


def panels() -> list[tuple[Method[Any], PanelSpec]]:
    """Every metric panel of every method, in registry order."""
    return [(method, panel) for method in methods().values() for panel in method.panels]


def summary_reports_of(suites: Sequence[str]) -> list[str]:
    """The reports ``haf report`` shows for runs holding ``suites``, each once, in order."""
    shown: list[str] = []
    for name, method in methods().items():
        if name in suites:
            shown.extend(r for r in method.summary_reports if r not in shown)
    return shown


__all__ = [
    "SUITES",
    "MethodLoadError",
    "MethodRegistry",
    "MethodsNotLoadedError",
    "Suite",
    "UnknownSuiteError",
    "current",
    "default_suites",
    "first_tasks",
    "installed",
    "left_out",
    "method_named",
    "method_of_stage",
    "methods",
    "methods_of",
    "metric_specs",
    "panels",
    "preferred_parallel",
    "register_method",
    "run_stages",
    "settle_config",
    "stage_titles",
    "stage_units",
    "suite_of_stage",
    "suites_named",
    "summary_reports_of",
]
