"""Where a program loads the methods, once, as it starts (``haf``'s main, the workbench, the
test session): the built-in methods, imported here from their modules' names
(``haf_tui.methods.BUILT_IN_MODULES``), and every installed package's method from the entry
point group ``haf_tui.methods``, gathered into one
:class:`~haf_tui.methods.registry.MethodRegistry` and installed.

The one place that imports the methods' packages: the layers below never load a method (a
contract in ``pyproject.toml`` forbids ``importlib`` of haf's own modules anywhere else).
"""

from __future__ import annotations

import dataclasses
import importlib
from importlib import metadata
from typing import Any, Final, cast

from haf_tui.methods import BUILT_IN_MODULES, ENTRY_POINT_GROUP
from haf_tui.methods.base import Suite
from haf_tui.methods.declare import Method
from haf_tui.methods.guard import GuardedSuite, guarded
from haf_tui.methods.registry import MethodLoadError, MethodRegistry, installed
from haf_tui.vocabulary import first_line

BUILT_IN: Final[tuple[Method[Any], ...]] = tuple(
    cast(Method[Any], importlib.import_module(module).METHOD) for module in BUILT_IN_MODULES
)
"""The built-in methods (:data:`haf_tui.methods.BUILT_IN_MODULES`), in the order a run
schedules them; methods from entry points come after them, by name."""


def load_methods(*, install: bool = True) -> MethodRegistry:
    """A fresh registry of the built-in methods and every entry point's (``install``: made
    the program's registry). An installed method that cannot be loaded (it raises on import,
    is no :class:`Method`, reuses a stage, could own haf's tables, is named like a built-in
    method or one loaded before it) is left out, with one line saying why in ``left_out``:
    one broken package never locks the user out of the others, nor replaces one unseen."""
    registry = MethodRegistry()
    for method in BUILT_IN:
        registry = registry.with_method(method)
    for entry in _entry_points():
        if entry.name in registry.methods:  # (the first one stays: never replaced unseen)
            registry = registry.leaving_out(_name_taken(entry, registry.methods[entry.name]))
            continue
        try:
            registry = registry.with_method(_load_entry_point(entry))
        except MethodLoadError as error:
            registry = registry.leaving_out(f"{error} — left out, the others work")
        except Exception as error:  # a third-party method's own bug, as it is added
            registry = registry.leaving_out(
                f"method {entry.name!r} ({entry.value}) could not be loaded: "
                f"{type(error).__name__}: {first_line(error)} — left out, the others work"
            )
    return registry.install() if install else registry


def ensure_methods() -> MethodRegistry:
    """The program's registry: the one installed already (a test session's, a caller's), else
    :func:`load_methods`'s. What a program's entry point calls."""
    return installed() or load_methods()


def _name_taken(entry: metadata.EntryPoint, holder: Method[Any]) -> str:
    """The line for an entry point whose name a loaded method has: a built-in one always
    wins (what ``haf`` computes, stores and reports under its name never changes because a
    package was installed), else the plug-in loaded first (entry points in name order)."""
    if any(holder is method for method in BUILT_IN):
        return (
            f"method {entry.name!r} ({entry.value}) is named like the built-in method "
            f"{entry.name!r} — left out, the built-in one is used (rename the plug-in)"
        )
    return (
        f"method {entry.name!r} ({entry.value}) is named like another installed method "
        f"{entry.name!r} — left out, the one loaded first is used (rename one of them)"
    )


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


__all__ = ["BUILT_IN", "ENTRY_POINT_GROUP", "ensure_methods", "load_methods"]
