"""The methods a run can hold, by name: the built-in ones and every package that declares an
entry point in the ``haf_tui.methods`` group (``name = "package.module:METHOD"``, a
:class:`~haf_tui.methods.declare.Method`), so a researcher's own method installs beside
haf-tui without a fork (as harlequin finds adapters and Inspect finds providers).

Loading a method registers its settings model with :class:`~haf_tui.config.RunConfig`, its
reports with :mod:`haf_tui.reports`, its named queries' folder and its own tables' migrations
with the store (:mod:`haf_tui.store.method_tables`). The pipeline and every face
ask this module, never a method by name.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any, Final, cast

from pydantic import BaseModel

from haf_tui.config import SETTINGS_MODELS, ModelSettings, RunConfig, register_settings
from haf_tui.methods.base import Suite, Task
from haf_tui.methods.declare import Method, MetricSpec, PanelSpec, RateUnit
from haf_tui.methods.guard import GuardedSuite, guarded
from haf_tui.methods.options import setting_options
from haf_tui.reports.queries import METHOD_QUERY_DIRS, add_queries_dir
from haf_tui.reports.registry import REPORTS, register_report
from haf_tui.store.method_tables import (
    MethodTableError,
    forget_method_migrations,
    register_method_migrations,
)
from haf_tui.store.records import InstanceRecord
from haf_tui.vocabulary import HafError, first_line

if TYPE_CHECKING:
    from haf_tui.datasets.formats import DatasetFormat

ENTRY_POINT_GROUP: Final = "haf_tui.methods"
BUILT_IN: Final = (
    "haf_tui.methods.haf.method",
    "haf_tui.methods.classify.method",
    "haf_tui.methods.rationales.method",
    "haf_tui.methods.judge.method",
)
"""The built-in methods' modules (each defines ``METHOD``), in the order a run schedules them;
methods from entry points come after them, by name."""

_loaded: dict[str, Method[Any]] = {}
_left_out: list[str] = []


class UnknownSuiteError(HafError, ValueError):
    """A run named a suite that is not registered."""


class MethodLoadError(HafError, RuntimeError):
    """A method's package could not be loaded or is not a method."""


def _entry_points() -> list[metadata.EntryPoint]:
    return sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def _load_entry_point(entry: metadata.EntryPoint) -> Method[Any]:
    try:
        found = entry.load()
    except Exception as error:  # any error of a third-party package: one line naming it
        raise MethodLoadError(
            f"method {entry.name!r} ({entry.value}) could not be loaded: "
            f"{type(error).__name__}: {first_line(error)}"
        ) from error
    if not isinstance(found, Method):
        raise MethodLoadError(
            f"method {entry.name!r} ({entry.value}) is a {type(found).__name__}, not a Method"
        )
    if not isinstance(found.name, str) or found.name != entry.name:
        raise MethodLoadError(
            f"method {entry.name!r} ({entry.value}) is called {found.name!r}: "
            "its entry point must bear its name"
        )
    name = found.name
    return dataclasses.replace(
        found,
        suite=cast(Suite, GuardedSuite(found.suite, name)),
        units=guarded(name, "units", found.units) if callable(found.units) else found.units,
        node=guarded(name, "node", found.node) if callable(found.node) else found.node,
        forecast=guarded(name, "forecast", found.forecast) if found.forecast else None,
    )


def _check_reports(method: Method[Any]) -> None:
    """Refuse a method whose report names are taken: by haf's own reports or another
    method's (registering it would replace theirs)."""
    previous = _loaded.get(method.name)
    mine = {report.name for report in previous.reports} if previous else set()
    others = {r.name for name, m in _loaded.items() if name != method.name for r in m.reports}
    taken = others | (set(REPORTS) - others - mine)
    clash = sorted(
        r.name for r in method.reports if r.name in taken and REPORTS.get(r.name) is not r
    )
    if clash:
        raise MethodLoadError(f"method {method.name!r} reuses the report name(s) {clash}")


def _check_settings(method: Method[Any]) -> None:
    """Refuse settings that are no pydantic model, or whose flags are another method's."""
    if method.settings is None:
        return
    if not (isinstance(method.settings, type) and issubclass(method.settings, BaseModel)):
        raise MethodLoadError(f"method {method.name!r}: its settings are not a pydantic model")
    taken = {
        option.flag: name
        for name, other in _loaded.items()
        if name != method.name
        for option in setting_options(other)
    }
    for option in setting_options(method):
        if option.flag in taken:
            raise MethodLoadError(
                f"method {method.name!r}: its flag {option.flag} is the method "
                f"{taken[option.flag]!r}'s"
            )


def _install(method: Method[Any]) -> None:
    if method.suite.name != method.name:
        raise MethodLoadError(f"method {method.name!r} holds the suite {method.suite.name!r}")
    taken = {
        stage
        for name, other in _loaded.items()
        if name != method.name
        for stage in other.suite.stages
    }
    clash = taken.intersection(method.suite.stages)
    if clash:
        raise MethodLoadError(f"method {method.name!r} reuses the stage(s) {sorted(clash)}")
    _check_reports(method)
    _check_settings(method)
    try:
        register_method_migrations(method.name, method.migrations, others=_loaded)
    except MethodTableError as error:
        raise MethodLoadError(str(error)) from error
    if method.settings is not None:
        register_settings(method.name, method.settings)
    for report in method.reports:
        if REPORTS.get(report.name) is not report:
            register_report(report, replace=True)
    if method.queries_dir is not None:
        add_queries_dir(method.queries_dir)
    _loaded[method.name] = method


def methods() -> dict[str, Method[Any]]:
    """Every method by name: the built-in ones, then those of the entry point group. An
    installed method that cannot be loaded (it raises on import, is no :class:`Method`,
    reuses a stage, could own haf's tables) is left out, and :func:`left_out` says why in one
    line: one broken package never locks the user out of the others, nor of haf."""
    if not _loaded:
        _left_out.clear()
        for module in BUILT_IN:
            _install(importlib.import_module(module).METHOD)
        for entry in _entry_points():
            if entry.name in _loaded:
                continue
            try:
                _install(_load_entry_point(entry))
            except MethodLoadError as error:
                _left_out.append(f"{error} — left out, the others work")
            except Exception as error:  # a third-party method's own bug, as it installs
                _left_out.append(
                    f"method {entry.name!r} ({entry.value}) could not be loaded: "
                    f"{type(error).__name__}: {first_line(error)} — left out, the others work"
                )
    return _loaded


def left_out() -> list[str]:
    """One line for each installed method :func:`methods` left out, saying why."""
    methods()
    return list(_left_out)


def _uninstall(method: Method[Any]) -> None:
    """Undo what loading ``method`` registered: its settings model, reports and queries."""
    if SETTINGS_MODELS.get(method.name) is method.settings:
        SETTINGS_MODELS.pop(method.name, None)
    for report in method.reports:
        if REPORTS.get(report.name) is report:
            del REPORTS[report.name]
    if method.queries_dir is not None and method.queries_dir in METHOD_QUERY_DIRS:
        METHOD_QUERY_DIRS.remove(method.queries_dir)


def reload_methods() -> dict[str, Method[Any]]:
    """Find the methods again (a package installed or removed since): what the methods
    loaded before registered is forgotten first."""
    for method in list(_loaded.values()):
        _uninstall(method)
    _loaded.clear()
    forget_method_migrations()
    return methods()


def register_method(method: Method[Any]) -> Method[Any]:
    """Load a method built at run time (a test's, a notebook's) as the registry loads an
    installed one: its settings, reports, named queries and tables' migrations registered, a
    method of the same name replaced. Returns it."""
    methods()
    _install(method)
    return method


def workbench_of(method: Method[Any]) -> object | None:
    """The workbench part ``method`` declares (``Method.workbench``, ``"module:NAME"``),
    imported now, when the workbench first asks (so nothing but the workbench imports its
    Textual parts); None when it declares none. One that cannot be imported raises
    :class:`MethodLoadError` in one line naming it."""
    if not method.workbench:
        return None
    return _imported(method, method.workbench, "workbench part")


def dataset_formats() -> list[DatasetFormat]:
    """Every method's own dataset formats (``Method.dataset_formats``, imported now), in
    registry order: what ``haf run --dataset NAME --file PATH`` and ``haf datasets import``
    read besides haf's own. One that cannot be imported, or is no ``DatasetFormat``, raises
    :class:`MethodLoadError` in one line naming it."""
    from haf_tui.datasets.formats import DatasetFormat  # (haf --help imports no dataset code)

    found: list[DatasetFormat] = []
    for method in methods().values():
        for path in method.dataset_formats:
            loaded = _imported(method, path, "dataset format")
            if not isinstance(loaded, DatasetFormat):
                raise MethodLoadError(
                    f"method {method.name!r}: its dataset format {path} is a "
                    f"{type(loaded).__name__}, not a DatasetFormat"
                )
            found.append(loaded)
    return found


def _imported(method: Method[Any], path: str, what: str) -> object:
    """The object ``path`` (``"module:NAME"``) names, for ``method``'s ``what``."""
    module, _, name = path.partition(":")
    try:
        found: object = getattr(importlib.import_module(module), name)
        return found
    except Exception as error:  # a third-party method's own bug: one line naming it
        raise MethodLoadError(
            f"method {method.name!r}: its {what} {path} could not be loaded: "
            f"{type(error).__name__}: {first_line(error)}"
        ) from error


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
    return {
        spec.name: spec
        for name, method in methods().items()
        if names is None or name in names
        for spec in method.metrics
    }


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
    "ENTRY_POINT_GROUP",
    "SUITES",
    "MethodLoadError",
    "Suite",
    "UnknownSuiteError",
    "default_suites",
    "first_tasks",
    "left_out",
    "method_named",
    "method_of_stage",
    "methods",
    "methods_of",
    "metric_specs",
    "panels",
    "preferred_parallel",
    "register_method",
    "reload_methods",
    "run_stages",
    "settle_config",
    "stage_titles",
    "stage_units",
    "suite_of_stage",
    "suites_named",
    "summary_reports_of",
]
