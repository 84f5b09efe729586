"""The DuckDB store of runs, datasets, generations, tokens, reasons and metrics.

Its names are loaded on first use (PEP 562): ``from haf_tui.store import InstanceRecord``
reads the records alone, not DuckDB, so building ``haf``'s parser stays light (issue 34 §8).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from haf_tui.store.connection import StatementInterrupt
    from haf_tui.store.db import Store, default_db_path, open_snapshot, open_store
    from haf_tui.store.errors import (
        QueryInterruptedError,
        StoreError,
        StoreLockedError,
        StoreWriteError,
    )
    from haf_tui.store.records import (
        GenerationRecord,
        InstanceRecord,
        InstanceResult,
        ReasonRecord,
        RunRecord,
    )
    from haf_tui.store.safe_files import TargetExistsError, check_target, write_text_atomically

_HOMES = {
    "haf_tui.store.connection": ("StatementInterrupt",),
    "haf_tui.store.errors": (
        "QueryInterruptedError",
        "StoreError",
        "StoreLockedError",
        "StoreWriteError",
    ),
    "haf_tui.store.db": ("Store", "default_db_path", "open_snapshot", "open_store"),
    "haf_tui.store.records": (
        "GenerationRecord",
        "InstanceRecord",
        "InstanceResult",
        "ReasonRecord",
        "RunRecord",
    ),
    "haf_tui.store.safe_files": ("TargetExistsError", "check_target", "write_text_atomically"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "GenerationRecord",
    "InstanceRecord",
    "InstanceResult",
    "QueryInterruptedError",
    "ReasonRecord",
    "RunRecord",
    "StatementInterrupt",
    "Store",
    "StoreError",
    "StoreLockedError",
    "StoreWriteError",
    "TargetExistsError",
    "check_target",
    "default_db_path",
    "open_snapshot",
    "open_store",
    "write_text_atomically",
]


def __getattr__(name: str) -> Any:
    """A name of the store, imported from its module on first use."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
