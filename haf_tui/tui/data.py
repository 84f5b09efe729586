"""How the TUI reads the store: one read-only connection (or a snapshot when another process
is writing), shared by the screens; every read runs in a thread worker."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from haf_tui.store import Store, StoreError, default_db_path, open_snapshot, open_store


class StoreReader:
    """Read access to the database for the app; thread-safe (one cursor per call)."""

    def __init__(self, db_path: str | Path | None = None):
        self.path = Path(db_path).expanduser() if db_path else default_db_path()
        self._store: Store | None = None
        self._lock = threading.Lock()
        self.snapshot = False

    def store(self) -> Store:
        """The open store (opened read-only on first use; a snapshot if the file is locked)."""
        with self._lock:
            if self._store is None:
                try:
                    self._store = open_store(self.path, read_only=True)
                except StoreError as exc:
                    if "locked" not in str(exc):
                        raise
                    self._store = open_snapshot(self.path)
                    self.snapshot = True
            return self._store

    def refresh(self) -> None:
        """Re-open (a fresh snapshot sees new rows a writing process committed)."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def query(self, sql: str, parameters: Any = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run read-only SQL on its own cursor."""
        return self.store().query(sql, parameters)

    def close(self) -> None:
        """Close the connection."""
        self.refresh()
