"""The DuckDB store of runs, datasets, generations, tokens, reasons and metrics."""

from haf_tui.store.connection import StoreError, StoreLockedError, StoreWriteError
from haf_tui.store.db import Store, default_db_path, open_snapshot, open_store
from haf_tui.store.records import (
    GenerationRecord,
    InstanceRecord,
    InstanceResult,
    ReasonRecord,
    RunRecord,
)

__all__ = [
    "GenerationRecord",
    "InstanceRecord",
    "InstanceResult",
    "ReasonRecord",
    "RunRecord",
    "Store",
    "StoreError",
    "StoreLockedError",
    "StoreWriteError",
    "default_db_path",
    "open_snapshot",
    "open_store",
]
