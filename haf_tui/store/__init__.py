"""The DuckDB store of runs, datasets, generations, tokens, reasons and metrics."""

from haf_tui.store.connection import (
    QueryInterruptedError,
    StatementInterrupt,
    StoreError,
    StoreLockedError,
    StoreWriteError,
)
from haf_tui.store.db import Store, default_db_path, open_snapshot, open_store
from haf_tui.store.records import (
    GenerationRecord,
    InstanceRecord,
    InstanceResult,
    ReasonRecord,
    RunRecord,
)
from haf_tui.store.safe_files import TargetExistsError, check_target, write_text_atomically

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
