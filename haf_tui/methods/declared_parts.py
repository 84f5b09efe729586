"""The parts a method declares by path (``"module:NAME"``), imported when a face first asks:
its workbench part (``Method.workbench``: Textual, so nothing but the workbench imports it)
and its dataset formats (``Method.dataset_formats``: read only when a dataset is, so
``haf --help`` loads no dataset code). With :mod:`haf_tui.methods.loader` (which imports the
methods themselves) the only modules that import haf's own code by name (a contract).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, TypeVar

from haf_tui.methods.declare import Method
from haf_tui.methods.registry import MethodLoadError, methods
from haf_tui.vocabulary import first_line

if TYPE_CHECKING:
    from haf_tui.datasets.formats import DatasetFormat, RunDataset


PartT = TypeVar("PartT")


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

    return _declared(DatasetFormat, "dataset_formats", "dataset format")


def run_datasets() -> list[RunDataset]:
    """Every method's datasets of a stored run's answers (``Method.run_datasets``, imported
    now), in registry order: what ``haf run --dataset PREFIX:RUN_ID`` reads. One that cannot be
    imported, or is no ``RunDataset``, raises :class:`MethodLoadError` in one line naming it."""
    from haf_tui.datasets.formats import RunDataset  # (haf --help imports no dataset code)

    return _declared(RunDataset, "run_datasets", "run dataset")


def _declared(kind: type[PartT], field: str, what: str) -> list[PartT]:
    """Every method's parts of ``kind`` that its ``Method.<field>`` names, imported, in
    registry order; one that is no ``kind`` is a one-line :class:`MethodLoadError`."""
    found: list[PartT] = []
    for method in methods().values():
        for path in getattr(method, field):
            loaded = _imported(method, path, what)
            if not isinstance(loaded, kind):
                raise MethodLoadError(
                    f"method {method.name!r}: its {what} {path} is a "
                    f"{type(loaded).__name__}, not a {kind.__name__}"
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
