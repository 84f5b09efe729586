"""How the TUI reads the store: one read-only connection (or a snapshot when another process
is writing), shared by the screens; every read runs in a thread worker."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from haf_tui.store import (
    Store,
    StoreError,
    StoreLockedError,
    default_db_path,
    open_snapshot,
    open_store,
)


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
                except StoreLockedError:
                    self._store = open_snapshot(self.path)
                    self.snapshot = True
            return self._store

    def writable(self) -> Store:
        """The store opened for writing (a run started in the app); reads go on through
        cursors of the same connection. StoreError when another process holds the file."""
        with self._lock:
            if self._store is not None and not self._store.read_only:  # (a snapshot is read-only)
                return self._store
            if self._store is not None:
                self._store.close()
                self._store = None
            try:
                self._store = open_store(self.path)
            except StoreLockedError:
                raise StoreError(
                    f"another process is writing to {self.path.name}: wait for it to "
                    "finish, or start the app with another --db"
                ) from None
            self.snapshot = False
            return self._store

    def refresh(self) -> None:
        """Take a fresh snapshot when reading one (it sees the rows a writing process committed
        since); an open connection of the file itself already sees every committed row."""
        with self._lock:
            if self._store is not None and not self.snapshot:
                return  # while this connection is open no other process can write the file
            if self._store is not None:
                self._store.close()
                self._store = None

    def query_user(
        self, sql: str, parameters: Any = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run SQL a user wrote: reading statements only, on the locked-down connection."""
        return self.store().query_user(sql, parameters)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
